/* SPDX-License-Identifier: MIT */
/*
 * Handing the receiving objects to another process (an upgrade in place):
 * sockets, BPF maps and BPF links pass by exec inheritance, described by a
 * small text in a memfd whose number is in $SYSLOGRX_HANDOVER. The receiving
 * side never trusts an fd number: a socket is checked by SO_COOKIE, a map or
 * a link by the id the kernel gives it (bpf_obj_get_info_by_fd).
 *
 *     syslogrx-handover 1
 *     listen [::1]:5514
 *     threads 2
 *     ready FD
 *     ledger FD                    supervised: the receiver's own state, shared
 *     sock FD COOKIE SLOT          SLOT: its place in the balancer map, -1 = spare
 *     map OWNER NAME FD ID         OWNER: balancer | tracer
 *     link OWNER NAME FD ID
 *     tcp OWNER NAME FD COOKIE     a listening TCP socket (OWNER metrics: --metrics)
 */
#ifndef SYSLOGRX_HANDOVER_H
#define SYSLOGRX_HANDOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HANDOVER_ENV "SYSLOGRX_HANDOVER"
#define HANDOVER_NAME_LEN 48

enum handover_kind { HANDOVER_SOCK, HANDOVER_MAP, HANDOVER_LINK, HANDOVER_TCP };

struct handover_item {
	enum handover_kind kind;
	char owner[16];
	char name[HANDOVER_NAME_LEN];
	int fd;
	uint64_t id; /* SO_COOKIE for a socket, the kernel's id for a map or link */
	int slot;    /* sockets: balancer slot, -1 = spare */
	/* sockets from systemd's fd store: the listener (0 = the first) its
	 * name says, its slot yet to be read from that listener's map */
	unsigned int listener;
};

/* A socket of listener k > 0 goes over as slot k * HANDOVER_LISTENER_SLOTS
 * + its slot in that listener's group (rx/life/handover_listeners.h). */
#define HANDOVER_LISTENER_SLOTS 65536

struct handover {
	char listen[80];
	unsigned int threads;
	int ready_fd;	   /* the new process writes "ready\n" here */
	int ledger_fd;	   /* a supervisor's shared memory, -1 if none */
	bool from_fdstore; /* systemd's fd store: slots from the balancer map */
	struct handover_item *items;
	unsigned int n;
	size_t cap;
};

void handover_init(struct handover *h);
void handover_free(struct handover *h);

/* Adds fd, reading its identity from the kernel (cookie / map or link id). */
int handover_add(struct handover *h, enum handover_kind kind, const char *owner, const char *name,
		 int fd, int slot);

/* Writes h into a new memfd (not close-on-exec); returns its fd or -errno. */
int handover_to_memfd(const struct handover *h);
/* Clears FD_CLOEXEC on every fd of h (call in the child, before exec). */
int handover_inherit(const struct handover *h);

/* Reads $SYSLOGRX_HANDOVER's memfd and checks every fd's identity. 1 and h
 * filled if there is a hand-over, 0 if not, -errno with one line logged if
 * it is bad (the new process then exits; the old one goes on). */
int handover_receive(struct handover *h);

/*
 * systemd's file descriptor store: each fd is stored under a name that says
 * what it is (FDNAME: no ':'): srx-sock-COOKIE, srx-map-OWNER-ID-NAME,
 * srx-link-OWNER-ID-NAME, srx-tcp-OWNER-COOKIE-NAME. On a restart systemd passes them back as fds 3...
 * with $LISTEN_FDS, $LISTEN_FDNAMES (':'-separated) and $LISTEN_PID.
 */
void handover_fdname(const struct handover_item *it, char *buf, size_t len);
/* 1 and h filled (sockets with slot -2: ask the balancer map), 0 if there is
 * no such hand-over for us, -errno (logged) if it does not check out. */
int handover_from_listen_fds(struct handover *h);

/* The fd of a handed map or link named owner/name, -ENOENT if none. */
int handover_find(const struct handover *h, enum handover_kind kind, const char *owner,
		  const char *name);

struct bpf_object;
struct bpf_map;
/* Points every map of an opened (not loaded) object at the handed map of the
 * same name, owner's; optional may be missing (a .rodata only the program
 * reads), and a map set not to be created (bpf_map__set_autocreate false:
 * one an older sender's object did not have) is skipped. Loads nothing, so
 * needs no capability. 0 or -errno, logged. */
int handover_reuse_maps(struct bpf_object *obj, const char *owner, const struct handover *h,
			const struct bpf_map *optional);
/* Calls fn with each created map of a loaded object (libbpf name, fd): what
 * an owner hands over. 0 or fn's error. */
int handover_export_maps(struct bpf_object *obj, int (*fn)(const char *name, int fd, void *ctx),
			 void *ctx);
/* A shared, writable mapping of an adopted object's .bss map (what its
 * program reads), *len its length; NULL + errno, logged with what. */
void *handover_map_bss(const struct bpf_map *bss, size_t *len, const char *what);

/* The kernel's id of a BPF map or link fd (0 if not one). */
uint64_t handover_bpf_id(int fd);

#endif
