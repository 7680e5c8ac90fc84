// SPDX-License-Identifier: MIT
/*
 * The output stage's loop for stream sinks: messages are formatted into one
 * large buffer that goes to the sink whole; a batch leaves the input window
 * once formatted.
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

int output_sync_init(struct output_stage *o)
{
	o->cap = OUT_BUF_BYTES + format_max_len(o->format, 65536);
	o->buf = malloc(o->cap);
	return o->buf ? 0 : -ENOMEM;
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
	output_flushed(o, !err);
}

static void process_batch(struct output_stage *o, const struct batch *b)
{
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
		output_msg_done(o, flush);
	}
	output_batch_done(o);
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
		process_batch(o, b);
		if (o->used >= o->cap / 2)
			flush(o);
		output_release(o, b, true);
	}
	flush(o);
}
