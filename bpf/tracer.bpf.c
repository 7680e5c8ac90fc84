// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Counts every kernel drop of a UDP datagram, per receiving socket and reason.
 *
 * tp_btf/kfree_skb sees each drop with its reason and (since 6.12) the socket
 * that was to receive it (rx_sk). With rx_sk we count per {cookie, reason};
 * without it (no socket, bad checksum, a socket closing) we count per
 * {destination port, reason} if the skb holds a UDP datagram.
 *
 * With count_senders (--senders) a socket drop is counted once more per
 * {source address, reason} in the LRU map sender_drops, read from the skb's
 * IP header (IPv4 as ::ffff:a.b.c.d); sender_stats says what that map
 * holds of them (include/bpf/tracer.h).
 *
 * tp_btf/udp_fail_queue_rcv_skb fires for a failed enqueue that kfree_skb then
 * reports again with rx_sk set, so it is only a cross-check counter here.
 *
 * tp_btf/sk_data_ready fires after each enqueue (sock_def_readable): there we
 * keep the socket's high-water mark of queued bytes.
 *
 * Nothing is sent per packet: per-CPU maps only, summed by user space. A count
 * lost because a map is full is itself counted in `map_full`.
 *
 * Kernel structs are read directly: tp_btf arguments are BTF pointers, and
 * vmlinux.h's preserve_access_index makes every such access a CO-RE
 * relocation, as BPF_CORE_READ would, without a bpf_probe_read_kernel() call
 * per field (measured: that halves the cost per drop). Only packet bytes,
 * which BTF does not describe, go through bpf_probe_read_kernel().
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "bpf/tracer.h"

#define AF_INET 2
#define AF_INET6 10
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IP_OFFSET 0x1fff
#define EEXIST 17
#define MSG_PEEK 2
#define MSG_ERRQUEUE 0x2000

/* Set by user space before load; 0 = any. */
const volatile __u32 filter_port = 0;	   /* local port, host order */
const volatile __u64 filter_netns = 0;	   /* netns inode number */
const volatile bool count_senders = false; /* drops per source address (--senders) */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, DROPS_MAX_ENTRIES);
	__type(key, struct drops_sock_key);
	__type(value, __u64);
} sock_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, DROPS_MAX_ENTRIES);
	__type(key, struct drops_port_key);
	__type(value, __u64);
} port_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, DROPS_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, struct drops_sock_info);
} sock_info SEC(".maps");

/* Datagrams taken from each socket by recvmsg/recvmmsg (not peeks), keyed by
 * cookie: what a receiver killed with them in hand had taken, to the datagram.
 * Loaded only when asked (syslogrx --supervise): a per-datagram cost. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, DROPS_MAX_ENTRIES);
	__type(key, __u64);
	__type(value, __u64);
} sock_reads SEC(".maps");

/* Socket drops per {source address, reason}: least recently used evicted,
 * max_entries set by user space (include/bpf/tracer.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, DROPS_SENDERS_DEFAULT);
	__type(key, struct drops_sender_key);
	__type(value, __u64);
} sender_drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROPS_SENDERS_NR);
	__type(key, __u32);
	__type(value, __u64);
} sender_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROPS_MAP_NR);
	__type(key, __u32);
	__type(value, __u64);
} map_full SEC(".maps");

static __always_inline void count_map_full(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&map_full, &slot);

	if (v)
		(*v)++;
}

/*
 * This CPU's value for key, created zeroed if missing. NULL only when the map
 * is full, which is then counted in map_full[slot].
 */
static __always_inline void *lookup_or_init(void *map, const void *key, const void *zero,
					    __u32 slot)
{
	void *v = bpf_map_lookup_elem(map, key);
	long err;

	if (v)
		return v;
	err = bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	/* -EEXIST: another CPU created it since our lookup; ours is zeroed. */
	if (err && err != -EEXIST) {
		count_map_full(slot);
		return NULL;
	}
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		count_map_full(slot);
	return v;
}

static __always_inline bool netns_wanted(struct net *net)
{
	if (!filter_netns)
		return true;
	return net && net->ns.inum == filter_netns;
}

/* A UDP socket (v4 or v6) that passes the filters. */
static __always_inline bool sk_wanted(const struct sock *sk)
{
	__u16 family;

	if (sk->sk_protocol != IPPROTO_UDP)
		return false;
	family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return false;
	if (filter_port && sk->__sk_common.skc_num != filter_port)
		return false;
	return netns_wanted(sk->__sk_common.skc_net.net);
}

static __always_inline void count_sender_stat(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&sender_stats, &slot);

	if (v)
		(*v)++;
}

/* The skb's source address into addr (IPv4 mapped); 0, or -1 if unreadable. */
static __always_inline int skb_saddr(struct sk_buff *skb, __u8 addr[16])
{
	unsigned char *head = skb->head;
	__u16 proto = bpf_ntohs(skb->protocol);
	__u16 nh = skb->network_header;

	if (nh == (__u16)~0U)
		return -1;
	if (proto == ETH_P_IP) {
		struct iphdr iph;

		if (bpf_probe_read_kernel(&iph, sizeof(iph), head + nh) || iph.version != 4)
			return -1;
		__builtin_memset(addr, 0, 10);
		addr[10] = 0xff;
		addr[11] = 0xff;
		__builtin_memcpy(addr + 12, &iph.saddr, 4);
		return 0;
	}
	if (proto == ETH_P_IPV6) {
		struct ipv6hdr ip6h;

		if (bpf_probe_read_kernel(&ip6h, sizeof(ip6h), head + nh) || ip6h.version != 6)
			return -1;
		__builtin_memcpy(addr, &ip6h.saddr, 16);
		return 0;
	}
	return -1;
}

/*
 * The drop again, per sender: in the LRU map, so a new key may evict the
 * least recently used. A drop that could not be placed (no address, or the
 * entry evicted between our update and lookup) is counted unattributed, so
 * attributed + unattributed is every socket drop.
 */
static __always_inline void count_sender_drop(struct sk_buff *skb, __u32 reason)
{
	struct drops_sender_key key = {};
	__u64 zero = 0, *v;
	long err;

	if (skb_saddr(skb, key.addr))
		goto unattributed;
	key.reason = reason;
	v = bpf_map_lookup_elem(&sender_drops, &key);
	if (!v) {
		err = bpf_map_update_elem(&sender_drops, &key, &zero, BPF_NOEXIST);
		if (!err)
			count_sender_stat(DROPS_SENDERS_INSERTS);
		else if (err != -EEXIST)
			goto unattributed;
		v = bpf_map_lookup_elem(&sender_drops, &key);
		if (!v)
			goto unattributed;
	}
	(*v)++;
	count_sender_stat(DROPS_SENDERS_ATTRIBUTED);
	return;
unattributed:
	count_sender_stat(DROPS_SENDERS_UNATTRIBUTED);
}

static __always_inline void count_socket_drop(struct sock *sk, struct sk_buff *skb, __u32 reason)
{
	struct drops_sock_key key = {};
	__u64 zero = 0, *v;

	if (!sk_wanted(sk))
		return;
	key.cookie = bpf_get_socket_cookie(sk);
	key.reason = reason;
	key.pad = 0;
	v = lookup_or_init(&sock_drops, &key, &zero, DROPS_MAP_SOCK_DROPS);
	if (v)
		(*v)++; /* per-CPU: no atomic needed */
	if (count_senders)
		count_sender_drop(skb, reason);
}

/* Destination port of the UDP datagram in skb, or -1 if it is not one. */
static __always_inline int udp_dport(struct sk_buff *skb)
{
	unsigned char *head = skb->head;
	__u16 proto = bpf_ntohs(skb->protocol);
	__u16 nh = skb->network_header;
	unsigned char *l4;
	struct udphdr uh;

	if (nh == (__u16)~0U)
		return -1;
	if (proto == ETH_P_IP) {
		struct iphdr iph;

		if (bpf_probe_read_kernel(&iph, sizeof(iph), head + nh))
			return -1;
		if (iph.version != 4 || iph.protocol != IPPROTO_UDP)
			return -1;
		/* A later fragment carries no UDP header. */
		if (bpf_ntohs(iph.frag_off) & IP_OFFSET)
			return -1;
		l4 = head + nh + iph.ihl * 4;
	} else if (proto == ETH_P_IPV6) {
		struct ipv6hdr ip6h;

		if (bpf_probe_read_kernel(&ip6h, sizeof(ip6h), head + nh))
			return -1;
		/* Extension headers are not walked: UDP must follow directly. */
		if (ip6h.version != 6 || ip6h.nexthdr != IPPROTO_UDP)
			return -1;
		l4 = head + nh + sizeof(ip6h);
	} else {
		return -1;
	}
	if (bpf_probe_read_kernel(&uh, sizeof(uh), l4))
		return -1;
	return bpf_ntohs(uh.dest);
}

static __always_inline void count_port_drop(struct sk_buff *skb, __u32 reason)
{
	struct drops_port_key key = {};
	__u64 zero = 0, *v;
	int port = udp_dport(skb);

	if (port < 0)
		return;
	if (filter_port && (__u32)port != filter_port)
		return;
	if (filter_netns) {
		struct net_device *dev = skb->dev;

		/* Without a device the namespace is unknown: not ours to count. */
		if (!dev || !netns_wanted(dev->nd_net.net))
			return;
	}
	key.port = port;
	key.reason = reason;
	v = lookup_or_init(&port_drops, &key, &zero, DROPS_MAP_PORT_DROPS);
	if (v)
		(*v)++;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(on_kfree_skb, struct sk_buff *skb, void *location, enum skb_drop_reason reason,
	     struct sock *rx_sk)
{
	/* Not a drop, should it ever come this way. */
	if (reason == bpf_core_enum_value(enum skb_drop_reason, SKB_CONSUMED) ||
	    reason == bpf_core_enum_value(enum skb_drop_reason, SKB_NOT_DROPPED_YET))
		return 0;
	if (rx_sk)
		count_socket_drop(rx_sk, skb, reason);
	else
		count_port_drop(skb, reason);
	return 0;
}

SEC("tp_btf/udp_fail_queue_rcv_skb")
int BPF_PROG(on_udp_fail_queue_rcv_skb, int rc, struct sock *sk, struct sk_buff *skb)
{
	struct drops_sock_info zero = {}, *info;
	__u64 cookie;

	if (!sk || !sk_wanted(sk))
		return 0;
	cookie = bpf_get_socket_cookie(sk);
	info = lookup_or_init(&sock_info, &cookie, &zero, DROPS_MAP_SOCK_INFO);
	if (info) {
		info->enqueue_failures++;
		/* What a larger buffer would have had to hold (sizing advice). */
		if (skb)
			info->enqueue_failure_bytes += skb->truesize;
	}
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(on_sk_data_ready, const struct sock *sk)
{
	struct drops_sock_info zero = {}, *info;
	__u64 cookie, queued;

	if (!sk || !sk_wanted(sk))
		return 0;
	/* Bytes queued, the skb just enqueued included. */
	queued = (__u32)sk->sk_backlog.rmem_alloc.counter;
	cookie = bpf_get_socket_cookie((void *)sk);
	info = lookup_or_init(&sock_info, &cookie, &zero, DROPS_MAP_SOCK_INFO);
	if (info && queued > info->queue_hwm_bytes) {
		info->queue_hwm_bytes = queued;
		info->rcvbuf = (__u32)sk->sk_rcvbuf;
	}
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(on_sock_recv_length, struct sock *sk, int ret, int flags)
{
	__u64 zero = 0, cookie, *v;

	/* ret < 0: nothing taken; a peek leaves the datagram queued. */
	if (ret < 0 || (flags & (MSG_PEEK | MSG_ERRQUEUE)) || !sk || !sk_wanted(sk))
		return 0;
	cookie = bpf_get_socket_cookie(sk);
	v = lookup_or_init(&sock_reads, &cookie, &zero, DROPS_MAP_SOCK_READS);
	if (v)
		(*v)++;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
