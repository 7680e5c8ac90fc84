/* SPDX-License-Identifier: MIT */
/*
 * Shared between bpf/tracer.bpf.c and its user side, src/net/tracer.c.
 *
 * Every counter lives in a per-CPU map and is summed by user space; keys are
 * hashed byte by byte, so their padding is explicit and always zero.
 */
#ifndef SYSLOGRX_BPF_TRACER_H
#define SYSLOGRX_BPF_TRACER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Entries per hash map: sockets x reasons seen, ports x reasons seen. */
#define DROPS_MAX_ENTRIES 16384

/* Slots of the per-CPU `map_full` array: counts lost because a map was full. */
enum drops_map_id {
	DROPS_MAP_SOCK_DROPS = 0, /* sock_drops: a drop with rx_sk set */
	DROPS_MAP_PORT_DROPS = 1, /* port_drops: a drop with no socket */
	DROPS_MAP_SOCK_INFO = 2,  /* sock_info: a high-water mark or enqueue failure */
	DROPS_MAP_SOCK_READS = 3, /* sock_reads: a datagram taken by recvmsg */
	DROPS_MAP_NR = 4,
};

/* sock_drops key: the receiving socket and why it dropped. */
struct drops_sock_key {
	__u64 cookie; /* bpf_get_socket_cookie() == SO_COOKIE */
	__u32 reason; /* enum skb_drop_reason */
	__u32 pad;
};
_Static_assert(sizeof(struct drops_sock_key) == 16, "drops_sock_key layout");

/* port_drops key: a UDP datagram dropped with no receiving socket. */
struct drops_port_key {
	__u32 port;   /* destination port, host order */
	__u32 reason; /* enum skb_drop_reason */
};
_Static_assert(sizeof(struct drops_port_key) == 8, "drops_port_key layout");

/* sock_info value, keyed by socket cookie (__u64). */
struct drops_sock_info {
	__u64 queue_hwm_bytes;	     /* max sk_rmem_alloc seen at enqueue, on this CPU */
	__u64 rcvbuf;		     /* sk_rcvbuf when that max was seen */
	__u64 enqueue_failures;	     /* udp_fail_queue_rcv_skb hits (also in sock_drops) */
	__u64 enqueue_failure_bytes; /* their skb->truesize, what rcvbuf is charged */
};
_Static_assert(sizeof(struct drops_sock_info) == 32, "drops_sock_info layout");

/*
 * Drops per sender (--senders): an LRU per-CPU hash keyed by the source
 * address and reason, max_entries set by user space (--senders), so a sender
 * forging many addresses costs at most that map's fixed memory. An evicted
 * entry takes its counts with it: `sender_stats` says how much that was.
 *
 * Addresses are 16 bytes: IPv6 as is, IPv4 as the IPv4-mapped ::ffff:a.b.c.d,
 * which is also how a dual-stack socket reports an IPv4 sender to recvmmsg.
 * So a genuine IPv6 datagram from ::ffff:a.b.c.d (only ever forged) counts as
 * the IPv4 sender a.b.c.d: one key either way, and user space needs no
 * family rules to match the kernel's drops with what it received.
 */
#define DROPS_SENDERS_DEFAULT 4096

struct drops_sender_key {
	__u8 addr[16]; /* source address, IPv4 mapped */
	__u32 reason;  /* enum skb_drop_reason */
	__u32 pad;
};
_Static_assert(sizeof(struct drops_sender_key) == 24, "drops_sender_key layout");

/* Slots of the per-CPU `sender_stats` array. attributed - (the sum over
 * sender_drops) = drops whose entry was evicted; inserts - (entries now) =
 * entries evicted. attributed + unattributed = every socket drop counted. */
enum drops_sender_stat {
	DROPS_SENDERS_ATTRIBUTED = 0,	/* a socket drop counted in sender_drops */
	DROPS_SENDERS_INSERTS = 1,	/* a new sender_drops key created */
	DROPS_SENDERS_UNATTRIBUTED = 2, /* a socket drop with no readable source address */
	DROPS_SENDERS_NR = 3,
};

#endif
