/* SPDX-License-Identifier: MIT */
/*
 * The UDP drop tracer (bpf/tracer.bpf.c) from user space: load, attach, read.
 *
 * Counts start at zero when tracer_open() returns: every drop after that of a
 * UDP datagram is counted, per receiving socket (by cookie, SO_COOKIE) and
 * reason, or per destination port and reason when no socket took it.
 */
#ifndef SYSLOGRX_TRACER_H
#define SYSLOGRX_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracer_opts {
	uint16_t port;	    /* local / destination port, 0 = any */
	uint64_t netns_ino; /* network namespace inode, 0 = any */
	bool count_reads;   /* also count datagrams taken per socket (a cost per datagram) */
	uint32_t senders;   /* drops per source address: LRU entries; 0 = not counted */
};

struct tracer;

/* Loads and attaches. NULL + errno on failure; on EPERM it has already logged
 * that CAP_BPF and CAP_PERFMON are needed. */
struct tracer *tracer_open(const struct tracer_opts *opts);
void tracer_close(struct tracer *t);

#define TRACER_MAX_REASONS 256
#define TRACER_MAX_LINKS 8

/* Calls fn for each map (is_link 0) and each attached program's link (1), by
 * libbpf name, to hand them to another process. */
int tracer_export(struct tracer *t, int (*fn)(int is_link, const char *name, int fd, void *ctx),
		  void *ctx);
/* The other side: the same maps and links from a checked hand-over (owner
 * "tracer");
 * loads and attaches nothing, so no capability is needed and no drop goes
 * uncounted. NULL + errno, logged. */
struct handover;
struct tracer *tracer_adopt(const struct handover *h);

struct tracer_sock_stats {
	uint64_t total;				/* all drops with this socket as rx_sk */
	uint64_t by_reason[TRACER_MAX_REASONS]; /* reasons >= TRACER_MAX_REASONS only in total */
	uint64_t enqueue_failures;		/* udp_fail_queue_rcv_skb, a cross-check */
	uint64_t enqueue_failure_bytes;		/* their truesize: the memory that did not fit */
	uint64_t queue_hwm_bytes;		/* max bytes queued seen at enqueue */
	uint64_t rcvbuf;			/* sk_rcvbuf seen with it, 0 if never */
};

/* 0 or -errno; all zero if the socket was never seen. */
int tracer_read_socket(struct tracer *t, uint64_t cookie, struct tracer_sock_stats *out);

/* Every socket cookie seen (drops or enqueues), in cookie order. A non-zero
 * return of fn stops the walk and is returned; else 0 or -errno. */
int tracer_for_each_socket(struct tracer *t,
			   int (*fn)(uint64_t cookie, const struct tracer_sock_stats *s, void *ctx),
			   void *ctx);

/* Drops of UDP datagrams with no receiving socket, per destination port and
 * reason (non-zero counts only). Return convention as above. */
int tracer_for_each_no_socket(struct tracer *t,
			      int (*fn)(uint16_t port, uint32_t reason, uint64_t count, void *ctx),
			      void *ctx);

/* "SOCKET_RCVBUFF": the running kernel's enum skb_drop_reason name without
 * its SKB_DROP_REASON_ prefix; "REASON_<n>" if unknown. Never NULL. */
const char *tracer_reason_name(const struct tracer *t, uint32_t reason);
/* The reverse, for a reason below TRACER_MAX_REASONS: its value, or -1 when
 * the running kernel has no reason of that name. */
int tracer_reason_value(const struct tracer *t, const char *name);

/* Deletes the counters of sockets that are gone (cookies sorted ascending),
 * so the maps do not fill with the dead. A live socket's counts would
 * restart from zero. 0 or -errno. */
int tracer_forget_sockets(struct tracer *t, const uint64_t *cookies, size_t n);

/* Datagrams taken from the socket by recvmsg/recvmmsg since it was first seen
 * (counted in the kernel, before the call returns: exact even for a process
 * killed on its way back). -ENOENT without count_reads. */
int tracer_socket_reads(struct tracer *t, uint64_t cookie, uint64_t *reads);

/*
 * Socket drops per sender (--senders), kept in an LRU map of opts.senders
 * entries: addr is 16 bytes, IPv4 as ::ffff:a.b.c.d (include/bpf/tracer.h).
 * fn gets each {address, reason} with a non-zero count, each key once, in
 * key order. -ENOENT when senders were not counted.
 */
int tracer_for_each_sender(struct tracer *t,
			   int (*fn)(const uint8_t addr[16], uint32_t reason, uint64_t count,
				     void *ctx),
			   void *ctx);

/* How complete the per-sender drops are. Read apart from a walk: while drops
 * come in they need not add up; when they stop,
 *   attributed = in_table + evicted drops, attributed + unattributed = every
 *   socket drop counted (all sockets the filters pass). */
struct tracer_sender_totals {
	uint32_t max_entries;  /* the LRU's bound */
	uint64_t attributed;   /* socket drops counted per sender */
	uint64_t unattributed; /* socket drops with no readable source address */
	uint64_t inserts;      /* keys created; minus entries = keys evicted */
	uint64_t entries;      /* keys in the map now */
	uint64_t in_table;     /* drops the keys in the map hold now */
};
/* 0, -ENOENT when senders were not counted, or -errno. */
int tracer_sender_totals(struct tracer *t, struct tracer_sender_totals *out);

/* tracer_sender_totals and tracer_for_each_sender from one read of the
 * map (out or fn may be NULL). */
int tracer_read_senders(struct tracer *t, struct tracer_sender_totals *out,
			int (*fn)(const uint8_t addr[16], uint32_t reason, uint64_t count,
				  void *ctx),
			void *ctx);

/* Counts lost because a map was full (0 if none was ever lost). */
uint64_t tracer_map_full(struct tracer *t);

#endif
