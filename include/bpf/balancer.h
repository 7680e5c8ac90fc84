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

/*
 * The policies: what the SK_REUSEPORT program does with each datagram. One
 * line each, in the order --help lists them: P(ID, value, "name", flags).
 * The value is what the program's `policy` holds (kept across versions: an
 * upgrade adopts a running program). syslogrx's --balance, udpbalance's
 * --policy and their help and errors all read this table (src/net/balancer.c).
 */
#define BALANCE_F_NO_PROGRAM 0x1 /* loads no program: the kernel's own hash */
#define BALANCE_F_CLASSIC 0x2	 /* runs as classic BPF too, without privilege */
#define BALANCE_F_PRESSURE 0x4	 /* needs the pressure programs (tp_btf, CAP_PERFMON) */
#define BALANCE_POLICIES(P)                                               \
	P(RANDOM, 1, "random", BALANCE_F_CLASSIC)                         \
	P(ROUNDROBIN, 2, "roundrobin", 0)                                 \
	/* Power of two choices: of two sockets at random, the emptier */ \
	P(LEASTLOADED, 3, "leastloaded", BALANCE_F_PRESSURE)              \
	/* The kernel's own 4-tuple hash, SC4S's default. */              \
	P(HASH, 0, "hash", BALANCE_F_NO_PROGRAM)

#define BALANCE_ENUM(id, value, name, flags) BALANCE_##id = value,
enum balance_policy { BALANCE_POLICIES(BALANCE_ENUM) };
#undef BALANCE_ENUM

/* Per-socket storage (BPF_MAP_TYPE_SK_STORAGE `slot_of`), set by user space
 * for each socket of the group: which slot of `queued` it updates. */
struct balancer_slot {
	__u32 slot;
};

/* Index of the selection-failure counter in the per-CPU `counters` map,
 * after the N per-socket steered counts. */
#define REUSEPORT_FAILURES_SLOT(nr_sockets) (nr_sockets)

#endif
