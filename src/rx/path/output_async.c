// SPDX-License-Identifier: MIT
/*
 * The output stage's path for asynchronous sinks (Kafka, OTLP): each message is
 * produced on its own with its batch's tracker as the opaque, and the batch
 * leaves the input window only when every message of it has a delivery
 * report. Batches may complete in any order: the window counts messages and
 * bytes, not positions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/signals.h"
#include "common/sockaddr.h"
#include "rx/path/output_async.h"
#include "rx/path/output_msg.h"
#include "rx/path/output_source.h"

/* A batch in flight: released when outstanding reaches 0. */
struct batch_track {
	struct batch_track *next; /* free list: recycled, not freed */
	struct batch *batch;
	uint32_t outstanding; /* produced without a report, +1 while producing */
	bool undelivered;     /* a message of it was given up at exit */
	uint32_t kept;	      /* of them, given up by a stop that gave up (force):
			       * saved or counted given_up, not discarded */
};

static struct batch_track *track_get(struct output_stage *o, struct batch *b)
{
	struct batch_track *t = o->free_tracks;

	if (t)
		o->free_tracks = t->next;
	else
		t = malloc(sizeof(*t)); /* only while the number in flight grows */
	if (!t)
		return NULL;
	t->next = NULL;
	t->batch = b;
	t->outstanding = 1; /* the producer's hold: no release mid-batch */
	t->undelivered = false;
	t->kept = 0;
	o->tracks_live++;
	return t;
}

/* Drops one hold on t; the last one gives the batch's room back. */
static void track_put(struct output_stage *o, struct batch_track *t)
{
	if (--t->outstanding)
		return;
	if (t->kept) {
		/* The stop gave up on some of it: the rest were written or
		 * discarded; the batch is kept whole (output_source.c). */
		t->batch->settled = t->batch->count - t->kept;
		output_keep(o, t->batch);
	} else {
		/* Given up at exit: a disk batch stays on disk for the next run. */
		output_release(o, t->batch, !t->undelivered);
	}
	t->batch = NULL;
	t->next = o->free_tracks;
	o->free_tracks = t;
	o->tracks_live--;
}

void output_async_free(struct output_stage *o)
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
	struct batch_track *t = opaque;

	if (res == SINK_UNDELIVERED && flag_get(o->force))
		t->kept++; /* the stop gave up on it: not a failure */
	else if (res == SINK_DELIVERED)
		output_count(&o->counts.written, 1);
	else
		output_count(&o->counts.discarded,
			     1); /* failed or undelivered: the sink says why */
	if (res == SINK_UNDELIVERED)
		((struct batch_track *)opaque)->undelivered = true;
	track_put(o, opaque);
}

/* The record key --kafka-key asks for; 0 bytes = a null key (the field is
 * absent, or the message did not parse). */
static size_t message_key(struct output_stage *o, const struct msg_rec *r,
			  const struct syslog_msg *m, enum syslog_parse_result res, char *scratch,
			  size_t cap, const char **key)
{
	const struct syslog_str *f = NULL;

	switch (o->sink->key) {
	case KAFKA_KEY_SOURCE:
		*key = scratch;
		return sockaddr_format(scratch, cap, (const struct sockaddr *)&r->src, r->src_len);
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

/* One message for the sink: the formatted line (produce) or the message
 * itself (produce_msg). */
struct produce_args {
	const char *msg, *key;
	size_t len, keylen;
	const char *data;
	size_t data_len;
	const struct syslog_msg *m;
	enum syslog_parse_result res;
	const struct msg_meta *meta;
};

static int produce_call(struct output_stage *o, struct batch_track *t, const struct produce_args *a)
{
	if (o->sink->ops->produce_msg)
		return o->sink->ops->produce_msg(o->sink, a->data, a->data_len, a->m, a->res,
						 a->meta, t);
	return o->sink->ops->produce(o->sink, a->msg, a->len, a->key, a->keylen, a->meta, t);
}

/* Hands one message to the sink, waiting (serving reports) while its queue
 * is full. */
static void produce_one(struct output_stage *o, struct batch_track *t, const struct produce_args *a)
{
	for (;;) {
		int err = produce_call(o, t, a);

		if (!err) {
			t->outstanding++;
			return;
		}
		if (err == -EAGAIN && flag_get(o->force)) {
			t->kept++; /* the stop gave up before the sink took it */
			return;
		}
		if (err != -EAGAIN) {
			/* Permanent: counted by the sink per reason. */
			output_count(&o->counts.discarded, 1);
			return;
		}
		o->sink->ops->poll(o->sink, 100);
	}
}

static void process_batch_async(struct output_stage *o, struct batch *b)
{
	struct batch_track *t;
	char keybuf[SOCKADDR_STRLEN];

	while (!(t = track_get(o, b))) {
		/* Out of memory for a 24-byte tracker: wait for completions. */
		if (flag_get(o->force)) {
			b->settled = 0;
			output_keep(o, b);
			return;
		}
		o->sink->ops->poll(o->sink, 100);
	}
	uint32_t i;

	for (i = 0; i < b->count && !flag_get(o->force); i++) {
		const struct msg_rec *r = &b->recs[i];
		const char *data;
		struct syslog_msg m;
		struct msg_meta meta;
		enum syslog_parse_result res = output_msg_take(o, b, i, &data, &m, &meta);
		struct produce_args a = {
			.data = data, .data_len = r->len, .m = &m, .res = res, .meta = &meta
		};

		if (!o->sink->ops->produce_msg) {
			/* One line in o->buf (sized for the largest datagram);
			 * the record value is the line without its '\n'. */
			a.len = format_message_flags(o->buf, o->format, o->format_flags, data,
						     r->len, &m, res, &meta);
			if (!(o->format_flags & FORMAT_F_OCTET_FRAME))
				a.len = a.len ? a.len - 1 : 0; /* a frame has no '\n' */
			a.msg = o->buf;
			a.keylen = message_key(o, r, &m, res, keybuf, sizeof(keybuf), &a.key);
		}
		o->sink->listener_now = meta.listener;
		produce_one(o, t, &a);
		output_msg_done(o, NULL);
	}
	t->kept += b->count - i; /* never produced: the stop gave up first */
	output_batch_done(o);
	track_put(o, t);
}

void output_async_main(struct output_stage *o)
{
	struct sink *s = o->sink;
	uint64_t lost;

	while (!flag_get(o->force)) {
		struct batch *b = output_pop(o, 0);

		if (!b) {
			s->ops->poll(s, 0);
			if (output_source_done(o))
				break;
			/* With reports to wait for, come back soon to serve them. */
			b = output_pop(o, o->tracks_live ? 5 : 100);
		}
		if (flag_get(o->reopen))
			*(volatile int *)o->reopen = 0; /* nothing to reopen */
		if (b)
			process_batch_async(o, b);
		s->ops->poll(s, 0);
	}
	if (!flag_get(o->force)) {
		/* Everything is produced: wait for the reports, up to
		 * --drain-timeout; what is given up completes as undelivered. */
		lost = s->ops->drain(s);
		output_count(&o->counts.discarded, lost);
	} else {
		/* The sink gives up at once (its abort): what it holds comes
		 * back undelivered and its batches are kept (track_put). */
		output_count(&o->counts.discarded, s->ops->drain(s));
		output_settle(o); /* what the window holds: saved or given up */
	}
}

int output_async_init(struct output_stage *o)
{
	/* One formatted line at a time: the largest datagram in any format. */
	o->cap = format_max_len(o->format, 65536);
	o->buf = malloc(o->cap);
	if (!o->buf)
		return -ENOMEM;
	o->sink->done = on_done;
	o->sink->done_ctx = o;
	return 0;
}
