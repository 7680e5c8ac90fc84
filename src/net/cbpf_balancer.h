/* SPDX-License-Identifier: MIT */
/*
 * Random spreading with no privilege: a classic BPF program attached to a
 * reuseport group (SO_ATTACH_REUSEPORT_CBPF), and the group's join order that
 * its indices follow. Shared by syslogrx and udpbalance.
 *
 * The program is three instructions: `ld #rand` (the SKF_AD_RANDOM ancillary
 * load), `mod #N`, `ret a`. The kernel reads the value as an index into the
 * group's own array of sockets (net/core/sock_reuseport.c, run_bpf_filter):
 * index k is the k-th socket still in the group in join order; an index past
 * the group falls back to the kernel's hash. So N and the group must agree:
 * every grow and shrink attaches a new program.
 *
 * The join order: a socket that binds joins at the end; a socket that leaves
 * (close(), or connect() on kernels that rehash it, which 6.18 does even for
 * a socket bound to one address) is replaced in its place by the last one
 * (reuseport_detach_sock). struct cbpf_order keeps that array as the kernel
 * does, by the caller's socket ids, so that a resize knows which socket an
 * index names. Nothing here needs a capability.
 */
#ifndef SYSLOGRX_CBPF_BALANCER_H
#define SYSLOGRX_CBPF_BALANCER_H

#include <stddef.h>
#include <linux/filter.h>

/* Instructions in the program. */
#define CBPF_BALANCER_LEN 3

/* Writes the program for n sockets (1 <= n) to prog. 0 or -EINVAL. */
int cbpf_balancer_build(unsigned int n, struct sock_filter prog[CBPF_BALANCER_LEN]);
/* Attaches the program for n sockets to the reuseport group of fd (any
 * member), replacing the one it had. 0 or -errno. */
int cbpf_balancer_attach(int fd, unsigned int n);

/* The group's array of sockets, as the kernel keeps it. */
struct cbpf_order {
	unsigned int nr;  /* sockets in the group */
	size_t cap;	  /* allocated entries */
	unsigned int *id; /* id[k]: the caller's id of the socket at index k */
};

/* Socket id bound into the group: it is at index nr. 0 or -ENOMEM. */
int cbpf_order_join(struct cbpf_order *o, unsigned int id);
/* Socket id left the group: the last one takes its index. Returns the
 * index it had, or -ENOENT. */
int cbpf_order_leave(struct cbpf_order *o, unsigned int id);
/* The index of socket id, or -ENOENT. */
int cbpf_order_index(const struct cbpf_order *o, unsigned int id);
void cbpf_order_free(struct cbpf_order *o);

#endif
