// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Picks the socket of a SO_REUSEPORT group for each UDP datagram.
 *
 * The group's sockets sit in `socks` (REUSEPORT_SOCKARRAY, slot i = socket i).
 * When bpf_sk_select_reuseport() fails (empty slot, a socket of the wrong
 * family, a socket no longer in the group), the kernel silently falls back to
 * its own hash: we count that in the last slot of `counters` so it is never
 * silent for us.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "balancer.h"

/* Set by user space before load. */
const volatile __u32 nr_sockets = 1;
const volatile __u32 policy = BALANCE_RANDOM;

/* Sockets in selection, slots [0, live_sockets): a live resize changes it
 * without reloading (.bss is mmapped, so this works with no capability left).
 * 0 or more than nr_sockets (the map's size) means all nr_sockets. */
__u32 live_sockets = 0;

/* Round-robin position: shared by all CPUs so shares are exactly equal. */
__u64 rr_next = 0;

struct {
	__uint(type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
	__uint(max_entries, 1);		/* resized to nr_sockets before load */
	__type(key, __u32);
	__type(value, __u64);
} socks SEC(".maps");

/* [0, nr_sockets): datagrams steered to socket i; [nr_sockets]: failures. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);		/* resized to nr_sockets + 1 before load */
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &slot);

	if (v)
		(*v)++;		/* per-CPU: no atomic needed */
}

SEC("sk_reuseport")
int select_socket(struct sk_reuseport_md *md)
{
	__u32 n = *(volatile __u32 *)&live_sockets;
	__u32 idx;

	if (!n || n > nr_sockets)
		n = nr_sockets;

	if (policy == BALANCE_ROUNDROBIN)
		idx = __sync_fetch_and_add(&rr_next, 1) % n;
	else
		idx = bpf_get_prandom_u32() % n;

	if (bpf_sk_select_reuseport(md, &socks, &idx, 0) == 0)
		count(idx);
	else
		count(REUSEPORT_FAILURES_SLOT(nr_sockets));
	/* SK_PASS without a selection lets the kernel hash: the datagram is kept. */
	return SK_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
