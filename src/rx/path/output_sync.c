// SPDX-License-Identifier: MIT
/*
 * The output stage's loop for stream sinks: messages are formatted into one
 * large buffer that goes to the sink whole (or, formatted by the workers,
 * copied there, or written as they are when a batch's lines are large); a
 * batch leaves the input window once its lines are written (or counted
 * discarded): a stop that gives up still has it to save or count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/signals.h"
#include "common/log.h"
#include "common/no_follow.h"
#include "rx/path/output_msg.h"
#include "rx/path/output_source.h"
#include "rx/path/output_sync.h"

/* One write(2) per this much output: large enough to amortise the syscall,
 * small enough to stay in cache. */
#define OUT_BUF_BYTES (1 << 20)
/* How long an idle-looking output stage waits for a batch to gather. */
#define COALESCE_US 2000
/* A formatted batch this large is written as it is, not copied first. */
#define DIRECT_BYTES (OUT_BUF_BYTES / 16)

int output_sync_init(struct output_stage *o)
{
	o->cap = OUT_BUF_BYTES + format_max_len(o->format, 65536);
	o->buf = malloc(o->cap);
	return o->buf ? 0 : -ENOMEM;
}

/* Hands the sink n messages' lines; counted written or discarded. Once the
 * stop gives up (force), nothing more: the lines' batches stay held for
 * output_settle, neither written nor discarded. */
static void write_lines(struct output_stage *o, const char *buf, size_t len, uint64_t n)
{
	int err;

	if (flag_get(o->force))
		return;
	err = len ? o->sink->ops->write(o->sink, buf, len) : 0;
	if (err && flag_get(o->force))
		return; /* the sink stopped retrying: given up, not failed */
	if (err) {
		/* Counted, never silent; the next buffer tries again. */
		if (!o->counts.write_errors)
			pr_warn("%s: write failed: %s (messages counted as discarded)\n",
				o->sink->name, strerror(-err));
		output_count(&o->counts.write_errors, 1);
		output_count(&o->counts.discarded, n);
	} else {
		output_count(&o->counts.written, n);
	}
	if (o->cur) { /* part of the batch being formatted went with these */
		o->cur->settled += o->cur_buffered;
		o->cur_buffered = 0;
	}
	output_hold_done(o);
	output_flushed(o, !err);
}

static void flush(struct output_stage *o)
{
	if (!o->pending)
		return;
	write_lines(o, o->buf, o->used, o->pending);
	o->used = 0;
	o->pending = 0;
}

/* A batch its worker formatted (rx/path/preformat.h): its lines as they
 * are, after what is buffered. The sequence accounting still sees each
 * message here, in the order they are written. */
static bool take_formatted(struct output_stage *o, struct batch *b)
{
	for (uint32_t i = 0; o->seq && i < b->count; i++)
		seqtrack_observe(o->seq, b->data + b->recs[i].off, b->recs[i].len);
	/* A disk buffer's record is settled by the flush of the buffer that
	 * holds its lines (output_flushed): always buffered. */
	bool direct = b->out_used >= DIRECT_BYTES && !b->disk_seg;

	o->bad += b->out_bad;
	o->sd_bad += b->out_sd_dropped;
	o->breaks_bad += b->out_breaks_escaped;
	o->done += b->count;
	if (o->used + b->out_used > o->cap || direct)
		flush(o);
	if (direct) {
		output_hold(o, b);
		write_lines(o, b->out, b->out_used, b->count);
	} else {
		memcpy(o->buf + o->used, b->out, b->out_used);
		o->used += b->out_used;
		o->pending += b->count;
	}
	output_batch_done(o);
	return direct;
}

/* True when b is held already (written directly). */
static bool process_batch(struct output_stage *o, struct batch *b)
{
	/* A disk record's lines past the buffer (never under load: 1 MiB of
	 * lines in one batch) are formatted here, as if never formatted. */
	b->settled = 0;
	if (b->formatted && (!b->disk_seg || b->out_used <= OUT_BUF_BYTES))
		return take_formatted(o, b);
	o->cur = b;
	for (uint32_t i = 0; i < b->count && !flag_get(o->force); i++) {
		const char *data;
		struct syslog_msg m;
		struct msg_meta meta;
		enum syslog_parse_result res = output_msg_take(o, b, i, &data, &m, &meta);

		if (!o->sink->discards) {
			uint32_t len = b->recs[i].len;
			size_t need = format_max_len(o->format, len);

			if (o->used + need > o->cap)
				flush(o);
			if (need > o->cap) {
				/* Never: cap holds the largest datagram in any format. */
				output_count(&o->counts.discarded, 1);
				continue;
			}
			o->used += format_message_flags(o->buf + o->used, o->format,
							o->format_flags, data, len, &m, res, &meta);
		}
		o->pending++;
		o->cur_buffered++;
		output_msg_done(o, flush);
	}
	output_batch_done(o);
	o->cur = NULL;
	o->cur_buffered = 0;
	return false;
}

static void reopen(struct output_stage *o)
{
	int err;

	flush(o);
	err = o->sink->ops->reopen(o->sink);
	if (err)
		pr_warn("%s: reopen failed: %s (still writing to the old one)\n", o->sink->name,
			no_follow_strerror(-err));
	flag_set((volatile int *)o->reopen, 0);
}

void output_sync_main(struct output_stage *o)
{
	bool busy = false;

	while (!flag_get(o->force)) {
		/* Take what is queued without waiting; when nothing is, flush
		 * (low latency at low rates) and then wait. */
		struct batch *b = output_pop(o, 0);

		if (!b && busy) {
			/* Let a batch gather rather than wake per datagram: at
			 * 50,000/s a wake-up and a write per message cost more
			 * than the messages. Adds at most COALESCE_US latency. */
			struct timespec ts = { 0, COALESCE_US * 1000L };

			nanosleep(&ts, NULL);
			b = output_pop(o, 0);
		}
		busy = b != NULL;
		if (!b) {
			flush(o);
			if (output_source_done(o))
				break;
			b = output_pop(o, 100);
		}
		if (flag_get(o->reopen))
			reopen(o);
		if (!b)
			continue;
		/* Held until its lines are written (a direct write holds it
		 * itself, before it writes). */
		if (!process_batch(o, b))
			output_hold(o, b);
		if (o->used >= o->cap / 2)
			flush(o);
	}
	flush(o);
	if (flag_get(o->force))
		output_settle(o);
}
