/* SPDX-License-Identifier: MIT */
/* Shared between bpf/fair_share.bpf.c and its user side, src/net/fair_share.c. */
#ifndef SYSLOGRX_BPF_FAIR_SHARE_H
#define SYSLOGRX_BPF_FAIR_SHARE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Senders the buckets map holds by default (--fair-share-senders): least
 * recently seen evicted, so a million forged sources cost this fixed map. */
#define FAIR_SHARE_SENDERS_DEFAULT 4096

/* Prefixes --protect and --weight may name. */
#define FAIR_SHARE_PREFIXES_MAX 256

/* A sender counts as active while it sent in the last rate window. */
#define FAIR_SHARE_WINDOW_NS 1000000000ULL

/* How far ahead of its share a sender may run under pressure before its
 * datagrams are shed: the burst a bucket holds, in time at its share. */
#define FAIR_SHARE_BURST_NS 100000000ULL

/* buckets key: the source address, IPv4 as ::ffff:a.b.c.d (as the tracer). */
struct fair_share_key {
	__u8 addr[16];
};

/* buckets value. The bucket is a virtual clock (GCRA): tat is when the
 * sender's next datagram is due at its share; one more is admitted while
 * tat is no further than FAIR_SHARE_BURST_NS ahead of now. Fields written
 * from several CPUs at once may lose an update: a bucket is approximate, the
 * counts (atomic adds) are not. */
struct fair_share_sender {
	__u64 tat;	 /* ns, bpf_ktime_get_ns() clock */
	__u64 win_start; /* ns, start of the current rate window */
	__u64 win_count; /* datagrams seen in it */
	__u64 last_rate; /* datagrams per second in the window before */
	__u64 seen;	 /* every datagram from this sender, while in the map */
	__u64 shed;	 /* the ones shed */
	__u32 weight;	 /* 0: protected (never shed); else share = weight x level */
	__u32 pad;
};

/* prefixes value (LPM trie keyed by struct fair_share_prefix). */
struct fair_share_prefix {
	__u32 prefixlen; /* bits of addr, IPv4 prefixes + 96 */
	__u8 addr[16];
};

/* Slots of the per-CPU `stats` array. */
enum fair_share_stat {
	FAIR_SHARE_SEEN = 0,	 /* datagrams the filter ran on */
	FAIR_SHARE_SHED = 1,	 /* datagrams it shed */
	FAIR_SHARE_NO_ENTRY = 2, /* passed unshaped: no address, or map full */
	FAIR_SHARE_INSERTS = 3,	 /* new senders in buckets (evictions = inserts - entries) */
	FAIR_SHARE_NR = 4,
};

#endif
