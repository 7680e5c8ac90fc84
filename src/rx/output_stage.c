// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/log.h"
#include "rx/output_async.h"
#include "rx/output_stage.h"
#include "syslog/syslog_parse.h"

/* One write(2) per this much output: large enough to amortise the syscall,
 * small enough to stay in cache. */
#define OUT_BUF_BYTES (1 << 20)
/* How long an idle-looking output stage waits for a batch to gather. */
#define COALESCE_US 2000

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void output_count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static void flush(struct output_stage *o)
{
	int err;

	if (!o->pending)
		return;
	err = o->used ? o->sink->ops->write(o->sink, o->buf, o->used) : 0;
	if (err) {
		/* Counted, never silent; the next buffer tries again. */
		if (!o->counts.write_errors)
			pr_warn("%s: write failed: %s (messages counted as discarded)\n",
				o->sink->name, strerror(-err));
		output_count(&o->counts.write_errors, 1);
		output_count(&o->counts.discarded, o->pending);
	} else {
		output_count(&o->counts.written, o->pending);
	}
	o->used = 0;
	o->pending = 0;
}

/* --output-rate: message k is due at start + k/rate; sleep when ahead. */
void output_pace(struct output_stage *o)
{
	uint64_t done = o->counts.processed - o->rate_base;
	uint64_t due = o->rate_start_ns + done * 1000000000ULL / o->rate;
	uint64_t now = mono_ns();

	if (now >= due) {
		/* Idle time is not credit: a slow destination stays slow after a
		 * pause, so restart the schedule when we fall 10 ms behind it. */
		if (now - due > 10000000ULL) {
			o->rate_start_ns = now;
			o->rate_base = o->counts.processed;
		}
		return;
	}
	flush(o);	/* what is formatted goes out before we sleep */
	struct timespec ts = { .tv_sec = (due - now) / 1000000000ULL,
			       .tv_nsec = (due - now) % 1000000000ULL };
	nanosleep(&ts, NULL);
}

static void process_batch(struct output_stage *o, const struct batch *b)
{
	for (uint32_t i = 0; i < b->count && !*o->force; i++) {
		const struct msg_rec *r = &b->recs[i];
		const char *data = b->data + r->off;
		struct syslog_msg m;
		enum syslog_parse_result res = syslog_parse(data, r->len, &m);

		if (res == SYSLOG_MALFORMED)
			output_count(&o->counts.malformed, 1);
		if (o->seq)
			seqtrack_observe(o->seq, data, r->len);
		if (!o->sink->discards) {
			struct msg_meta meta = {
				.src = (const struct sockaddr *)&r->src,
				.src_len = r->src_len,
				.recv_realtime_ns = r->recv_ns,
				.socket_index = r->sock,
			};
			size_t need = format_max_len(o->format, r->len);

			if (o->used + need > o->cap)
				flush(o);
			if (need > o->cap) {
				/* Never: cap holds the largest datagram in any format. */
				output_count(&o->counts.discarded, 1);
				continue;
			}
			o->used += format_message(o->buf + o->used, o->format, data, r->len,
						  &m, res, &meta);
		}
		o->pending++;
		output_count(&o->counts.processed, 1);
		if (o->rate)
			output_pace(o);
	}
}

static void *output_main(void *arg)
{
	struct output_stage *o = arg;
	bool busy = false;

	o->rate_start_ns = mono_ns();
	if (o->async)
		return output_async_main(o);
	while (!*o->force) {
		/* Take what is queued without waiting; when nothing is, flush
		 * (low latency at low rates) and then wait. */
		struct batch *b = window_pop(o->window, 0);

		if (!b && busy) {
			/* Let a batch gather rather than wake per datagram: at
			 * 50,000/s a wake-up and a write per message cost more
			 * than the messages. Adds at most COALESCE_US latency. */
			struct timespec ts = { 0, COALESCE_US * 1000L };

			nanosleep(&ts, NULL);
			b = window_pop(o->window, 0);
		}
		busy = b != NULL;
		if (!b) {
			flush(o);
			if (window_done(o->window))
				break;
			b = window_pop(o->window, 100);
		}
		if (*o->reopen) {
			int err;

			flush(o);
			err = o->sink->ops->reopen(o->sink);
			if (err)
				pr_warn("%s: reopen failed: %s (still writing to the old one)\n",
					o->sink->name, strerror(-err));
			*(volatile int *)o->reopen = 0;
		}
		if (!b)
			continue;
		process_batch(o, b);
		if (o->used >= o->cap / 2)
			flush(o);
		window_release(o->window, b);
	}
	flush(o);
	return NULL;
}

int output_stage_start(struct output_stage *o, struct window *w, struct sink *sink,
		       enum out_format fmt, uint64_t rate, const volatile int *reopen,
		       const volatile int *force)
{
	memset(o, 0, sizeof(*o));
	o->window = w;
	o->sink = sink;
	o->format = fmt;
	o->rate = rate;
	o->reopen = reopen;
	o->force = force;
	o->async = sink->ops->produce && sink->ops->poll && sink->ops->drain;
	if (o->async)
		output_async_attach(o);
	o->cap = OUT_BUF_BYTES + format_max_len(fmt, 65536);
	o->buf = malloc(o->cap);
	o->seq = seqtrack_new();
	if (!o->buf || !o->seq) {
		free(o->buf);
		seqtrack_free(o->seq);
		return -ENOMEM;
	}
	return -pthread_create(&o->thread, NULL, output_main, o);
}

int output_stage_join(struct output_stage *o)
{
	pthread_join(o->thread, NULL);
	free(o->buf);
	o->buf = NULL;
	output_async_free(o);
	return o->error;
}

void output_stage_counts(struct output_stage *o, struct output_counts *out)
{
	out->processed = __atomic_load_n(&o->counts.processed, __ATOMIC_RELAXED);
	out->written = __atomic_load_n(&o->counts.written, __ATOMIC_RELAXED);
	out->malformed = __atomic_load_n(&o->counts.malformed, __ATOMIC_RELAXED);
	out->discarded = __atomic_load_n(&o->counts.discarded, __ATOMIC_RELAXED);
	out->write_errors = __atomic_load_n(&o->counts.write_errors, __ATOMIC_RELAXED);
}
