// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/signals.h"
#include "common/clock.h"
#include "rx/path/output.h"
#include "rx/path/output_async.h"
#include "rx/path/output_source.h"
#include "rx/path/output_sync.h"

/* This thread's time running or runnable (the scheduler's schedstat: on a
 * CPU, then waiting in its run queue): on a machine shared with the sender a
 * thread that never sleeps still waits to run. Its CPU time alone if the
 * kernel does not say. */
static uint64_t busy_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");
	int n = f ? fscanf(f, "%llu %llu", &run, &wait) : 0;

	if (f)
		fclose(f);
	return n == 2 ? run + wait : clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void *output_main(void *arg)
{
	struct output_stage *o = arg;

	pthread_setname_np(pthread_self(), "output");
	o->rate_start_ns = mono_ns();
	if (o->async)
		output_async_main(o);
	else
		output_sync_main(o);
	/* Ran to its end: everything is written (the sink closes after the
	 * server has it all): held disk records are done. */
	if (!flag_get(o->force))
		output_source_free(o, true);
	o->busy_ns = busy_ns();
	return NULL;
}

int output_stage_start(struct output_stage *o, struct window *w, struct diskbuf *disk,
		       struct sink *sink, enum out_format fmt, unsigned int fmt_flags,
		       uint64_t rate, const struct seqtrack_opts *seq, const volatile int *reopen,
		       const volatile int *force)
{
	unsigned int queue = o->queue;
	int err;

	memset(o, 0, sizeof(*o));
	o->queue = queue;
	o->window = w;
	o->disk = disk;
	o->sink = sink;
	o->format = fmt;
	o->format_flags = fmt_flags;
	o->rate = rate;
	o->reopen = reopen;
	o->force = force;
	o->tz.minute = -1;
	o->async = (sink->ops->produce || sink->ops->produce_msg) && sink->ops->poll &&
		   sink->ops->drain;
	/* Raw and original lines are the datagram's bytes and null writes
	 * nothing: no field is needed, so nothing is parsed (and malformed is
	 * not counted).
	 * Async sinks (kafka, otlp) parse always: a key or a record's
	 * attributes may ask for a field. */
	o->parse = o->async || (fmt != FORMAT_RAW && fmt != FORMAT_ORIGINAL && !sink->discards);
	/* Stream sinks: the workers format, one line per message as this
	 * thread would; paced output stays here (it sleeps per message). */
	o->pre = (struct preformat){
		.format = fmt, .flags = fmt_flags, .parse = o->parse, .sink = sink
	};
	o->preformat = !o->async && !sink->discards && !rate;
	err = o->async ? output_async_init(o) : output_sync_init(o);
	if (!err && seq && !(o->seq = seqtrack_new_opts(seq)))
		err = -ENOMEM;
	if (err) {
		output_stage_free(o);
		return err;
	}
	return -pthread_create(&o->thread, NULL, output_main, o);
}

const struct preformat *output_stage_preformat(const struct output_stage *o)
{
	return o->preformat ? &o->pre : NULL;
}

int output_stage_join(struct output_stage *o)
{
	pthread_join(o->thread, NULL);
	return o->error;
}

void output_stage_free(struct output_stage *o)
{
	output_source_free(o, false); /* after a forced exit: left on disk */
	free(o->buf);
	o->buf = NULL;
	output_async_free(o);
	seqtrack_free(o->seq);
	o->seq = NULL;
}

void output_stage_counts(struct output_stage *o, struct output_counts *out)
{
	out->processed = __atomic_load_n(&o->counts.processed, __ATOMIC_RELAXED);
	out->written = __atomic_load_n(&o->counts.written, __ATOMIC_RELAXED);
	out->malformed = __atomic_load_n(&o->counts.malformed, __ATOMIC_RELAXED);
	out->parsed = o->parse;
	out->sd_dropped = __atomic_load_n(&o->counts.sd_dropped, __ATOMIC_RELAXED);
	out->breaks_escaped = __atomic_load_n(&o->counts.breaks_escaped, __ATOMIC_RELAXED);
	out->discarded = __atomic_load_n(&o->counts.discarded, __ATOMIC_RELAXED);
	out->write_errors = __atomic_load_n(&o->counts.write_errors, __ATOMIC_RELAXED);
	out->given_up = __atomic_load_n(&o->counts.given_up, __ATOMIC_RELAXED);
	out->saved = __atomic_load_n(&o->counts.saved, __ATOMIC_RELAXED);
	out->kept_written = __atomic_load_n(&o->counts.kept_written, __ATOMIC_RELAXED);
}

void output_counts_add(struct output_counts *to, const struct output_counts *c)
{
	to->processed += c->processed;
	to->written += c->written;
	to->malformed += c->malformed;
	to->parsed |= c->parsed;
	to->sd_dropped += c->sd_dropped;
	to->breaks_escaped += c->breaks_escaped;
	to->discarded += c->discarded;
	to->write_errors += c->write_errors;
	to->given_up += c->given_up;
	to->saved += c->saved;
	to->kept_written += c->kept_written;
}
