/* SPDX-License-Identifier: MIT */
/*
 * Where formatted lines go. One small interface, one file per destination:
 * file.c (null, stdout, file), tcp.c, kafka.c, otlp.c. A stream sink
 * is handed large buffers of whole lines (write) and never sees one message.
 *
 * An async sink (kafka) is handed messages one by one instead (produce), each
 * with an opaque pointer, and reports each message's fate later, from poll()
 * or drain(), through the done callback the output stage installed: that is
 * how the output stage keeps a batch in the input window until every message
 * of it is acknowledged (at-least-once).
 */
#ifndef SYSLOGRX_SINK_H
#define SYSLOGRX_SINK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/log.h"
#include "common/signals.h"
#include "rx/settings/config.h"

struct sink;

/* What became of one produced message. */
enum sink_result {
	SINK_DELIVERED,	  /* acknowledged by the destination */
	SINK_FAILED,	  /* permanent error, counted by the sink per reason */
	SINK_UNDELIVERED, /* still outstanding when drain() gave up */
};

typedef void (*sink_done_fn)(void *ctx, void *opaque, enum sink_result res);

struct sink_ops {
	/* Writes all of buf (whole lines) or fails with -errno. */
	int (*write)(struct sink *s, const char *buf, size_t len);
	/* Reopens the destination (SIGHUP, logrotate). */
	int (*reopen)(struct sink *s);
	/* Optional, at the stop after the last write and before the summary:
	 * ends the stream (bounded) and counts what the destination may not
	 * have (uncertain). close() does it when the stop did not. */
	void (*finish)(struct sink *s);
	void (*close)(struct sink *s);

	/* Async sinks only (NULL for stream sinks). */
	/*
	 * Queues one message (no trailing newline) with an optional key and
	 * its meta (kafka: the sender as the record's "source" header).
	 * 0: queued, done() will be called with opaque exactly once.
	 * -EAGAIN: the sink's queue is full: poll() and try again.
	 * Other -errno: not queued and never will be (a permanent error, already
	 * counted by the sink); done() is not called.
	 */
	int (*produce)(struct sink *s, const char *msg, size_t len, const char *key, size_t keylen,
		       const struct msg_meta *meta, void *opaque);
	/*
	 * Instead of produce, for an async sink that encodes each message
	 * itself (otlp): the datagram, its parse and its meta, no formatted
	 * line. Same contract as produce.
	 */
	int (*produce_msg)(struct sink *s, const char *data, size_t len, const struct syslog_msg *m,
			   enum syslog_parse_result r, const struct msg_meta *meta, void *opaque);
	/* Serves completions (calls done), waiting up to timeout_ms for one.
	 * Returns how many were served. */
	int (*poll)(struct sink *s, int timeout_ms);
	/* At exit: waits for every outstanding message, up to the sink's drain
	 * timeout, then gives up on the rest: they complete through done() as
	 * SINK_UNDELIVERED. Returns how many could not even be completed that
	 * way (no report at all; the sink counts them as undelivered too). */
	uint64_t (*drain)(struct sink *s);
};

struct sink {
	const struct sink_ops *ops;
	bool discards;		   /* null: formatting can be skipped */
	const volatile int *abort; /* set: give up retrying (second signal) */
	char name[PATH_MAX + 8];   /* for messages: "file:/var/log/x" */
	sink_done_fn done;	   /* async sinks: set by the output stage */
	void *done_ctx;
	enum kafka_key key; /* async sinks: which key produce() is given */
	/* --timezone, for the output stage's normalised times (msg_meta.tz_gmtoff) */
	enum tz_kind tz_kind;
	long tz_offset; /* TZ_FIXED: seconds east of UTC */
	bool guess_tz;	/* --guess-timezone */
	/* Stream sinks: how long after a successful write the destination may
	 * still lose it and the sink would resend it (tcp: as far back as its
	 * history reaches, at least a second; the output thread writes it at
	 * each write). The disk buffer keeps a record that long. */
	uint64_t settle_ns;
	/* The --listen names a record's listener index picks (msg_meta.listener);
	 * NULL when records name none (one unnamed listener). */
	const struct listener_spec *listeners;
	unsigned int nr_listeners;
	/* The name of a listener index past those (a record read back from a
	 * disk buffer that names a listener this run does not have), or NULL:
	 * set by whoever opens the disk buffer; NULL = none. Any thread. */
	const char *(*listener_name)(const void *ctx, uint32_t listener);
	const void *listener_ctx;
	/* The listener of the message being produced (msg_meta.listener), set
	 * by the output stage before each produce; NULL = none. */
	const char *listener_now;
	/* Network sinks: 1 while the destination cannot be reached (the last
	 * connection or delivery attempt failed and none has worked since).
	 * The output thread writes it, a scrape reads it (relaxed atomics). */
	int down;
	/* Stream sinks: 1 while the destination is connected but has taken
	 * nothing of what the sink holds for the stall timeout (--stall-timeout),
	 * until it takes everything again. Written and read as down is. */
	int stalled;
	/* Stream sinks over a connection (tcp, tls): messages sent again on a
	 * new connection because the last one ended with them maybe unread
	 * (resent), and messages written that a connection ended or a stop
	 * closed with, maybe unread, and that were not sent again (uncertain).
	 * Written by the output thread, read by a scrape (relaxed atomics).
	 * resends: the sink keeps these two (set at open). */
	uint64_t resent, uncertain;
	bool resends;
};

static inline void sink_set_down(struct sink *s, bool down)
{
	__atomic_store_n(&s->down, down, __ATOMIC_RELAXED);
}

static inline bool sink_is_down(const struct sink *s)
{
	return __atomic_load_n(&s->down, __ATOMIC_RELAXED);
}

static inline bool sink_aborted(const struct sink *s)
{
	return s->abort && flag_get(s->abort);
}

/* An async sink's drain, giving up on left messages ("record(s)" for what):
 * the one warning, whether --drain-timeout ran out or the stop gave up (the
 * output stage then saves or counts them, given_up). */
static inline void sink_say_unacknowledged(const struct sink *s, uint64_t left, const char *what,
					   double drain_timeout)
{
	if (sink_aborted(s))
		pr_warn("%s: %llu %s not acknowledged when the stop gave up\n", s->name,
			(unsigned long long)left, what);
	else
		pr_warn("%s: %llu %s not acknowledged within --drain-timeout %gs: counted as "
			"undelivered\n",
			s->name, (unsigned long long)left, what, drain_timeout);
}

static inline void sink_set_stalled(struct sink *s, bool stalled)
{
	__atomic_store_n(&s->stalled, stalled, __ATOMIC_RELAXED);
}

static inline bool sink_is_stalled(const struct sink *s)
{
	return __atomic_load_n(&s->stalled, __ATOMIC_RELAXED);
}

static inline void sink_count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static inline uint64_t sink_counted(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

struct sink *sink_file_open(const struct config *c);
struct sink *sink_kafka_open(const struct config *c);
struct sink *sink_tcp_open(const struct config *c);
struct sink *sink_otlp_open(const struct config *c);

#endif
