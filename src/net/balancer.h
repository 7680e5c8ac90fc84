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

/* "random" | "roundrobin" | "leastloaded" | "hash" -> policy; -EINVAL for anything else. */
int balance_policy_from_name(const char *name, enum balance_policy *out);
const char *balance_policy_name(enum balance_policy p);

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
