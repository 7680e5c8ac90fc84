/* SPDX-License-Identifier: MIT */
/* Shared between bpf/balancer.bpf.c and its user side, src/net/balancer.c. */
#ifndef SYSLOGRX_BPF_BALANCER_H
#define SYSLOGRX_BPF_BALANCER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Largest reuseport group we balance: the kernel's own limit is far higher,
 * this bounds the per-CPU counter arrays. */
#define REUSEPORT_MAX_SOCKETS 4096

/* What the SK_REUSEPORT program does with each datagram. BALANCE_HASH loads no
 * program at all: the kernel's own 4-tuple hash, SC4S's default. */
enum balance_policy {
	BALANCE_HASH = 0,
	BALANCE_RANDOM = 1,
	BALANCE_ROUNDROBIN = 2,
	/* Power of two choices: two sockets at random, the one with fewer bytes
	 * queued. Needs the pressure programs (tp_btf, CAP_PERFMON). */
	BALANCE_LEASTLOADED = 3,
};

/* Per-socket storage (BPF_MAP_TYPE_SK_STORAGE `slot_of`), set by user space
 * for each socket of the group: which slot of `queued` it updates. */
struct balancer_slot {
	__u32 slot;
};

/* Index of the selection-failure counter in the per-CPU `counters` map,
 * after the N per-socket steered counts. */
#define REUSEPORT_FAILURES_SLOT(nr_sockets) (nr_sockets)

#endif
