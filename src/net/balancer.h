/* SPDX-License-Identifier: MIT */
/*
 * User side of bpf/balancer.bpf.c: load the SK_REUSEPORT program for a group
 * of N sockets, fill its REUSEPORT_SOCKARRAY, attach it, read its counters.
 * Shared by syslogrx and udpbalance.
 */
#ifndef SYSLOGRX_BALANCER_H
#define SYSLOGRX_BALANCER_H

#include <stdint.h>
#include "bpf/balancer.h"

struct balancer;

/* A policy's name (bpf/balancer.h's table) -> policy; -EINVAL for anything else. */
int balance_policy_from_name(const char *name, enum balance_policy *out);
const char *balance_policy_name(enum balance_policy p);
/* Its BALANCE_F_* flags. */
unsigned int balance_policy_flags(enum balance_policy p);
/* The names of the policies that have every flag of with and none of
 * without, in the table's order, for help and errors: "random, roundrobin or
 * hash" with sep ", " and last " or ". Returns buf. */
const char *balance_policy_list(char *buf, size_t len, const char *sep, const char *last,
				unsigned int with, unsigned int without);
/* The same into a char array, "a, b or c". */
#define BALANCE_POLICY_LIST(buf, with, without) \
	balance_policy_list(buf, sizeof(buf), ", ", " or ", with, without)
/* What loading p's program needs: "CAP_BPF", "CAP_BPF and CAP_PERFMON". */
const char *balance_policy_needs(enum balance_policy p);

/*
 * Whether an SK_REUSEPORT program can be loaded here: 0, or -errno (-EPERM
 * without CAP_BPF, in a user namespace included). Loads a two-instruction
 * program and closes it; logs nothing, so that a caller can choose classic
 * BPF instead (net/cbpf_balancer.h) and say why.
 */
int balancer_probe(void);

/*
 * Loads the program for nr_sockets sockets (policy must not be BALANCE_HASH:
 * hash means no program). NULL + errno on failure; on EPERM it has logged
 * that CAP_BPF is needed (and CAP_PERFMON for leastloaded, whose pressure
 * programs are attached here, before any socket is set).
 */
struct balancer *balancer_open(enum balance_policy policy, unsigned int nr_sockets);
void balancer_close(struct balancer *b);

/* Puts the socket fd in slot idx (and, for leastloaded, tags the socket with
 * its slot). The socket must be bound with SO_REUSEPORT. */
int balancer_set_socket(struct balancer *b, unsigned int idx, int fd);

/*
 * Checks that every slot holds the socket with cookies[idx] (the kernel
 * returns a slot's socket cookie on lookup). -ENOENT for an empty slot,
 * -EXDEV for another socket, with the slot logged.
 */
int balancer_verify(struct balancer *b, const uint64_t *cookies, unsigned int n);

/*
 * For a live resize: slots [0, live) hold cookies[i], slots [live, slots)
 * are empty. -ENOENT / -EXDEV as above, -EEXIST for a filled slot past live.
 */
int balancer_verify_live(struct balancer *b, const uint64_t *cookies, unsigned int live);
/* The cookie of the socket in slot idx; -ENOENT if empty. */
int balancer_slot_cookie(struct balancer *b, unsigned int idx, uint64_t *cookie);
/* Empties slot idx (already empty is not an error). */
int balancer_clear_socket(struct balancer *b, unsigned int idx);
/* The program picks among slots [0, live) from its next run on; 0 = all. A
 * run that started before may still pick from the old range: wait out an RCU
 * grace period before relying on it. Needs no capability. */
void balancer_set_live(struct balancer *b, unsigned int live);
unsigned int balancer_get_live(const struct balancer *b);

/* Calls fn for each of the loaded object's maps (by libbpf name), to hand
 * them to another process. */
int balancer_export(struct balancer *b, int (*fn)(const char *name, int fd, void *ctx), void *ctx);
/* The other side: the same maps, from a checked hand-over (owner
 * "balancer"), loading nothing (no capability needed); the program stays
 * attached to the group of the handed-over sockets. NULL + errno, logged. */
struct handover;
struct balancer *balancer_adopt(const struct handover *h);
/* The same for maps handed over under another owner name (a second
 * listener's balancer: "balancer1"...). */
struct balancer *balancer_adopt_as(const struct handover *h, const char *owner);

/* The map's size, the most sockets that can be in selection. */
unsigned int balancer_slots(const struct balancer *b);

/* Attaches the program to the reuseport group of fd (SO_ATTACH_REUSEPORT_EBPF). */
int balancer_attach(struct balancer *b, int fd);
/* Detaches whatever program the group of fd has: the kernel hash is back. */
int balancer_detach(int fd);

/* Per-socket steered counts (n = nr_sockets) and selection failures, summed over CPUs. */
int balancer_read(struct balancer *b, uint64_t *steered, uint64_t *failures);

/* leastloaded: the bytes each slot's socket held at its last enqueue or read,
 * as the program sees them; -ENOENT for other policies. */
int balancer_read_queued(struct balancer *b, uint64_t *queued);

#endif
