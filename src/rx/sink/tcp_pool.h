/* SPDX-License-Identifier: MIT */
/*
 * The tcp and tls outputs with --proxy-protocol: a connection per sender
 * address, each opened with a PROXY header that names the sender and the
 * listener it came by, in a bounded pool (tcp_pool.c).
 */
#ifndef SYSLOGRX_SINK_TCP_POOL_H
#define SYSLOGRX_SINK_TCP_POOL_H

#include <stdint.h>
#include "rx/sink/sink.h"

/* Why a sender's connection closed. */
enum pool_close {
	POOL_CLOSE_IDLE, /* nothing to send for --proxy-idle */
	POOL_CLOSE_FULL, /* least recently used, for a new sender (--proxy-connections) */
	POOL_CLOSE_LOST, /* the server ended it, or it stalled: opened again */
	POOL_CLOSE_STOP, /* at the stop */
	POOL_CLOSE_REASONS,
};

extern const char *const pool_close_names[POOL_CLOSE_REASONS];

struct sink_pool_stats {
	const char *version; /* "v1" | "v2" */
	uint64_t cap;	     /* --proxy-connections */
	uint64_t open;	     /* connections open now */
	uint64_t peak;	     /* the most open at once */
	uint64_t opens;	     /* connections opened (each with its PROXY header) */
	uint64_t closes[POOL_CLOSE_REASONS];
};

struct sink *sink_tcp_pool_open(const struct config *c);

/* The pool's counters; -EINVAL if s is not a pool. Safe from another
 * thread (relaxed atomics). */
int sink_pool_stats(struct sink *s, struct sink_pool_stats *out);

#endif
