// SPDX-License-Identifier: MIT
#include "common/clock.h"
#include "rx/path/output_msg.h"

void output_count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

enum syslog_parse_result output_msg_take(struct output_stage *o, const struct batch *b, uint32_t i,
					 const char **data, struct syslog_msg *m,
					 struct msg_meta *meta)
{
	const struct msg_rec *r = &b->recs[i];
	enum syslog_parse_result res = SYSLOG_OK_3164;

	*data = b->data + r->off;
	if (o->parse) {
		res = syslog_parse(*data, r->len, m);
		o->bad += res == SYSLOG_MALFORMED;
	}
	if (o->seq)
		seqtrack_observe(o->seq, *data, r->len);
	preformat_meta(o->sink, &o->tz, r, meta);
	meta->sd_dropped = &o->sd_bad;
	meta->breaks_escaped = &o->breaks_bad;
	return res;
}

/* --output-rate: message k is due at start + k/rate; sleep when ahead. */
static void pace(struct output_stage *o, void (*before_sleep)(struct output_stage *o))
{
	uint64_t done = o->done - o->rate_base;
	uint64_t due = o->rate_start_ns + done * NSEC_PER_SEC / o->rate;
	uint64_t now = mono_ns();
	struct timespec ts;

	if (now >= due) {
		/* Idle time is not credit: a slow destination stays slow after a
		 * pause, so restart the schedule when we fall 10 ms behind it. */
		if (now - due > 10000000ULL) {
			o->rate_start_ns = now;
			o->rate_base = o->done;
		}
		return;
	}
	if (before_sleep)
		before_sleep(o);
	output_batch_done(o); /* the counts stay live through a long pause */
	ts = ns_to_timespec(due - now);
	nanosleep(&ts, NULL);
}

void output_batch_done(struct output_stage *o)
{
	/* Only this thread writes processed: a store, not an add. */
	__atomic_store_n(&o->counts.processed, o->done, __ATOMIC_RELAXED);
	if (o->bad)
		output_count(&o->counts.malformed, o->bad);
	o->bad = 0;
	if (o->sd_bad)
		output_count(&o->counts.sd_dropped, o->sd_bad);
	o->sd_bad = 0;
	if (o->breaks_bad)
		output_count(&o->counts.breaks_escaped, o->breaks_bad);
	o->breaks_bad = 0;
}

void output_msg_done(struct output_stage *o, void (*before_sleep)(struct output_stage *o))
{
	o->done++;
	if (o->rate)
		pace(o, before_sleep);
}
