// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Picks the socket of a SO_REUSEPORT group for each UDP datagram.
 *
 * The group's sockets sit in `socks` (REUSEPORT_SOCKARRAY, slot i = socket i).
 * When bpf_sk_select_reuseport() fails (empty slot, a socket of the wrong
 * family, a socket no longer in the group), the kernel silently falls back to
 * its own hash: we count that in the last slot of `counters` so it is never
 * silent for us.
 *
 * leastloaded (power of two choices) needs each socket's queue, which an
 * SK_REUSEPORT program cannot read: a REUSEPORT_SOCKARRAY refuses lookups
 * from programs. So two tracepoint programs keep `queued[slot]` = the bytes
 * the socket holds (sk_rmem_alloc, what the kernel compares with the receive
 * buffer before it drops): after every enqueue (sk_data_ready) and after
 * every read (sock_recv_length, once per datagram of a recvmmsg). A socket
 * finds its slot in its own storage (`slot_of`, SK_STORAGE, filled by user
 * space per fd): sockets of other programs have none and cost one NULL test.
 * These programs are loaded only for leastloaded (tp_btf needs CAP_PERFMON).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "bpf/balancer.h"

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
	__uint(max_entries, 1); /* resized to nr_sockets before load */
	__type(key, __u32);
	__type(value, __u64);
} socks SEC(".maps");

/* [0, nr_sockets): datagrams steered to socket i; [nr_sockets]: failures. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2); /* resized to nr_sockets + 1 before load */
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Bytes queued per slot, last value seen at enqueue or read. Plain stores:
 * the latest writer wins, which is what a load estimate wants. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized to nr_sockets before load */
	__type(key, __u32);
	__type(value, __u32);
} queued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct balancer_slot);
} slot_of SEC(".maps");

static __always_inline void count(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &slot);

	if (v)
		(*v)++; /* per-CPU: no atomic needed */
}

/* Two distinct slots at random; the one with fewer bytes queued (a tie keeps
 * the first, itself random). A missing value reads as empty. */
static __always_inline __u32 least_loaded_of_two(__u32 n)
{
	__u32 r = bpf_get_prandom_u32();
	__u32 a = r % n, b = (r / n) % (n - 1);
	__u32 *qa, *qb;

	if (b >= a)
		b++;
	qa = bpf_map_lookup_elem(&queued, &a);
	qb = bpf_map_lookup_elem(&queued, &b);
	if (qa && qb && *qb < *qa)
		return b;
	return a;
}

static __always_inline void note_queued(const struct sock *sk)
{
	struct balancer_slot *s = bpf_sk_storage_get(&slot_of, (void *)sk, 0, 0);
	__u32 *q;

	if (!s)
		return; /* not one of our sockets */
	q = bpf_map_lookup_elem(&queued, &s->slot);
	if (q)
		*q = sk->sk_backlog.rmem_alloc.counter;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(pressure_enqueue, const struct sock *sk)
{
	note_queued(sk);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(pressure_dequeue, struct sock *sk, int ret, int flags)
{
	note_queued(sk);
	return 0;
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
	else if (policy == BALANCE_LEASTLOADED && n > 1)
		idx = least_loaded_of_two(n);
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
