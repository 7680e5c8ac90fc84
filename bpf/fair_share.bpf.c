// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A fair share per sender (--fair-share): a socket filter on every socket
 * of the group. While the group is under pressure, each sender gets at most
 * its share of what the workers drain; the rest is shed here, before it
 * takes queue space. The kernel counts a filter's drop on the socket
 * (sk_drops, /proc/net/udp, SO_MEMINFO) and reports it to kfree_skb with
 * SKB_DROP_REASON_SOCKET_FILTER, so the tracer counts it per socket and per
 * sender apart from buffer-full drops, with no counting of ours on the path.
 *
 * Why a socket filter and not the SK_REUSEPORT balancer: an SK_DROP from the
 * balancer makes the lookup fail, so the datagram is dropped as NO_SOCKET
 * with no socket to count it on, and the sender is sent an ICMP port
 * unreachable. A socket filter also runs with any balance policy, hash
 * included, and on a socket a listener owns alone.
 *
 * User space decides, each tick, whether the group is under pressure and the
 * fair level (datagrams per second for weight 1, max-min fair over the
 * senders active in the last second) and writes both here (.bss, mmapped).
 * Below the pressure level nothing is shed: the filter only keeps the rates
 * user space needs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "bpf/fair_share.h"

/* Written by user space each tick. */
__u32 pressure = 0;	     /* 1: shape to the share */
__u64 level_interval_ns = 0; /* ns between datagrams at weight 1; 0: no shaping */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FAIR_SHARE_SENDERS_DEFAULT); /* set by user space */
	__type(key, struct fair_share_key);
	__type(value, struct fair_share_sender);
} buckets SEC(".maps");

/* Weight per prefix (0: protected), longest match wins; no match: weight 1. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FAIR_SHARE_PREFIXES_MAX);
	__type(key, struct fair_share_prefix);
	__type(value, __u32);
} prefixes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FAIR_SHARE_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		(*v)++;
}

/* The datagram's source address, IPv4 mapped; 0 or -1. */
static __always_inline int source_addr(struct __sk_buff *skb, __u8 addr[16])
{
	__u8 vhl;

	if (bpf_skb_load_bytes_relative(skb, 0, &vhl, 1, BPF_HDR_START_NET))
		return -1;
	if ((vhl >> 4) == 4) {
		__builtin_memset(addr, 0, 10);
		addr[10] = 0xff;
		addr[11] = 0xff;
		return bpf_skb_load_bytes_relative(skb, 12, addr + 12, 4, BPF_HDR_START_NET) ? -1 :
											       0;
	}
	if ((vhl >> 4) == 6)
		return bpf_skb_load_bytes_relative(skb, 8, addr, 16, BPF_HDR_START_NET) ? -1 : 0;
	return -1;
}

static __always_inline __u32 weight_of(const __u8 addr[16])
{
	struct fair_share_prefix k = { .prefixlen = 128 };
	__u32 *w;

	__builtin_memcpy(k.addr, addr, 16);
	w = bpf_map_lookup_elem(&prefixes, &k);
	return w ? *w : 1;
}

static __always_inline struct fair_share_sender *sender_of(const struct fair_share_key *key,
							   __u64 now)
{
	struct fair_share_sender *s = bpf_map_lookup_elem(&buckets, key), fresh = {};
	long err;

	if (s)
		return s;
	fresh.tat = now;
	fresh.win_start = now;
	fresh.weight = weight_of(key->addr);
	err = bpf_map_update_elem(&buckets, key, &fresh, BPF_NOEXIST);
	if (!err)
		count(FAIR_SHARE_INSERTS);
	return bpf_map_lookup_elem(&buckets, key);
}

/* The rate window: a second's count becomes last_rate when the next starts. */
static __always_inline void note_arrival(struct fair_share_sender *s, __u64 now)
{
	__u64 age = now - s->win_start;

	if (age >= FAIR_SHARE_WINDOW_NS) {
		/* A sender silent for a whole window had no rate in it. */
		s->last_rate = age < 2 * FAIR_SHARE_WINDOW_NS ? s->win_count : 0;
		s->win_count = 0;
		s->win_start = now;
	}
	__sync_fetch_and_add(&s->win_count, 1);
	__sync_fetch_and_add(&s->seen, 1);
}

/* Whether the bucket admits one more datagram at interval ns each. */
static __always_inline bool admit(struct fair_share_sender *s, __u64 now, __u64 interval)
{
	__u64 tat = s->tat;

	if (tat < now)
		tat = now;
	if (tat - now > FAIR_SHARE_BURST_NS)
		return false;
	s->tat = tat + interval;
	return true;
}

SEC("socket")
int fair_share(struct __sk_buff *skb)
{
	struct fair_share_key key;
	struct fair_share_sender *s;
	__u64 now = bpf_ktime_get_ns(), level;

	count(FAIR_SHARE_SEEN);
	if (source_addr(skb, key.addr))
		goto unshaped;
	s = sender_of(&key, now);
	if (!s)
		goto unshaped;
	note_arrival(s, now);
	level = *(volatile __u64 *)&level_interval_ns;
	if (!*(volatile __u32 *)&pressure || !level || !s->weight) {
		/* Not shaping: the bucket follows the clock, so shaping starts
		 * with a full burst and no debt. */
		s->tat = now;
		return skb->len;
	}
	if (admit(s, now, level / s->weight))
		return skb->len;
	__sync_fetch_and_add(&s->shed, 1);
	count(FAIR_SHARE_SHED);
	return 0; /* the kernel drops it: SKB_DROP_REASON_SOCKET_FILTER */
unshaped:
	count(FAIR_SHARE_NO_ENTRY);
	return skb->len;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
