// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "log.h"
#include "output_stage.h"
#include "syslog_parse.h"

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

static void add(uint64_t *counter, uint64_t n)
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
		add(&o->counts.write_errors, 1);
		add(&o->counts.discarded, o->pending);
	} else {
		add(&o->counts.written, o->pending);
	}
	o->used = 0;
	o->pending = 0;
}

/* --output-rate: message k is due at start + k/rate; sleep when ahead. */
static void pace(struct output_stage *o)
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
			add(&o->counts.malformed, 1);
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
				add(&o->counts.discarded, 1);
				continue;
			}
			o->used += format_message(o->buf + o->used, o->format, data, r->len,
						  &m, res, &meta);
		}
		o->pending++;
		add(&o->counts.processed, 1);
		if (o->rate)
			pace(o);
	}
}

/* ---- async sinks (kafka) ---------------------------------------------- */

static struct batch_track *track_get(struct output_stage *o, struct batch *b)
{
	struct batch_track *t = o->free_tracks;

	if (t)
		o->free_tracks = t->next;
	else
		t = malloc(sizeof(*t));	/* only while the number in flight grows */
	if (!t)
		return NULL;
	t->next = NULL;
	t->batch = b;
	t->outstanding = 1;	/* the producer's hold: no release mid-batch */
	o->tracks_live++;
	return t;
}

/* Drops one hold on t; the last one gives the batch's room back. */
static void track_put(struct output_stage *o, struct batch_track *t)
{
	if (--t->outstanding)
		return;
	window_release(o->window, t->batch);
	t->batch = NULL;
	t->next = o->free_tracks;
	o->free_tracks = t;
	o->tracks_live--;
}

static void free_tracks(struct output_stage *o)
{
	while (o->free_tracks) {
		struct batch_track *t = o->free_tracks;

		o->free_tracks = t->next;
		free(t);
	}
}

/* The sink's delivery report for one message (from poll or drain, on this
 * thread). */
static void on_done(void *ctx, void *opaque, enum sink_result res)
{
	struct output_stage *o = ctx;

	if (res == SINK_DELIVERED)
		add(&o->counts.written, 1);
	else
		add(&o->counts.discarded, 1);	/* failed or undelivered: the sink says why */
	track_put(o, opaque);
}

/* "1.2.3.4:514" or "[::1]:514", as the json format writes "source". */
static size_t source_key(char *d, size_t cap, const struct msg_rec *r)
{
	const struct sockaddr *sa = (const struct sockaddr *)&r->src;
	char ip[INET6_ADDRSTRLEN];
	int n;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		if (!inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip)))
			return 0;
		n = snprintf(d, cap, "%s:%u", ip, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		if (!inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip)))
			return 0;
		n = snprintf(d, cap, "[%s]:%u", ip, ntohs(in6->sin6_port));
	} else {
		return 0;
	}
	return n > 0 && (size_t)n < cap ? n : 0;
}

/* The record key --kafka-key asks for; 0 bytes = a null key (the field is
 * absent, or the message did not parse). */
static size_t message_key(struct output_stage *o, const struct msg_rec *r,
			  const struct syslog_msg *m, enum syslog_parse_result res,
			  char *scratch, size_t cap, const char **key)
{
	const struct syslog_str *f = NULL;

	switch (o->sink->key) {
	case KAFKA_KEY_SOURCE:
		*key = scratch;
		return source_key(scratch, cap, r);
	case KAFKA_KEY_HOSTNAME:
		f = &m->hostname;
		break;
	case KAFKA_KEY_APP:
		f = &m->app_name;
		break;
	default:
		return 0;
	}
	if (res == SYSLOG_MALFORMED || !f->p)
		return 0;
	*key = f->p;
	return f->len;
}

/* Hands one message to the sink, waiting (serving reports) while its queue
 * is full. */
static void produce_one(struct output_stage *o, struct batch_track *t, const char *msg,
			size_t len, const char *key, size_t keylen)
{
	for (;;) {
		int err = o->sink->ops->produce(o->sink, msg, len, key, keylen, t);

		if (!err) {
			t->outstanding++;
			return;
		}
		if (err != -EAGAIN || *o->force) {
			/* Permanent (counted by the sink per reason) or leaving now. */
			add(&o->counts.discarded, 1);
			return;
		}
		o->sink->ops->poll(o->sink, 100);
	}
}

static void process_batch_async(struct output_stage *o, struct batch *b)
{
	struct batch_track *t;
	char keybuf[INET6_ADDRSTRLEN + 16];

	while (!(t = track_get(o, b))) {
		/* Out of memory for a 24-byte tracker: wait for completions. */
		if (*o->force) {
			window_release(o->window, b);
			return;
		}
		o->sink->ops->poll(o->sink, 100);
	}
	for (uint32_t i = 0; i < b->count && !*o->force; i++) {
		const struct msg_rec *r = &b->recs[i];
		const char *data = b->data + r->off;
		struct syslog_msg m;
		enum syslog_parse_result res = syslog_parse(data, r->len, &m);
		struct msg_meta meta = {
			.src = (const struct sockaddr *)&r->src,
			.src_len = r->src_len,
			.recv_realtime_ns = r->recv_ns,
			.socket_index = r->sock,
		};
		const char *key = NULL;
		size_t len, keylen;

		if (res == SYSLOG_MALFORMED)
			add(&o->counts.malformed, 1);
		if (o->seq)
			seqtrack_observe(o->seq, data, r->len);
		/* One line in o->buf (sized for the largest datagram); the
		 * record value is the line without its '\n'. */
		len = format_message(o->buf, o->format, data, r->len, &m, res, &meta);
		keylen = message_key(o, r, &m, res, keybuf, sizeof(keybuf), &key);
		produce_one(o, t, o->buf, len ? len - 1 : 0, key, keylen);
		add(&o->counts.processed, 1);
		if (o->rate)
			pace(o);
	}
	track_put(o, t);
}

static void *output_async_main(struct output_stage *o)
{
	struct sink *s = o->sink;
	uint64_t lost;

	while (!*o->force) {
		struct batch *b = window_pop(o->window, 0);

		if (!b) {
			s->ops->poll(s, 0);
			if (window_done(o->window))
				break;
			/* With reports to wait for, come back soon to serve them. */
			b = window_pop(o->window, o->tracks_live ? 5 : 100);
		}
		if (*o->reopen)
			*(volatile int *)o->reopen = 0;	/* nothing to reopen */
		if (b)
			process_batch_async(o, b);
		s->ops->poll(s, 0);
	}
	if (!*o->force) {
		/* Everything is produced: wait for the reports, up to
		 * --drain-timeout; what is given up completes as undelivered. */
		lost = s->ops->drain(s);
		add(&o->counts.discarded, lost);
	}
	return NULL;
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
	if (o->async) {
		sink->done = on_done;
		sink->done_ctx = o;
	}
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
	free_tracks(o);
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
