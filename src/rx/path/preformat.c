// SPDX-License-Identifier: MIT
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include "common/clock.h"
#include "rx/path/preformat.h"
#include "syslog/syslog_parse.h"

/* The area grows by doubling from this, and is kept when the batch is
 * recycled: a steady flow allocates nothing. */
#define OUT_MIN_BYTES 65536

_Static_assert(PREFORMAT_MAX_BYTES == (4u << 20), "WINDOW_BATCH_MAX counts it as 4 MiB");

static long offset_of(time_t t, long dflt)
{
	struct tm tm;

	return localtime_r(&t, &tm) ? tm.tm_gmtoff : dflt;
}

/*
 * A named zone's offset at a wall-clock time, as syslog-ng's mktime() takes
 * it: an offset o with which the wall time is an instant of offset o; of
 * two (the hour the clocks go back) the larger, summer's; of none (the hour
 * they skip) the larger too. The candidates are the offsets around the
 * instant the wall time is with the receive time's. Offsets change on the
 * hour: one lookup per wall-clock hour.
 */
static long named_offset_at(const struct msg_zone *z, int64_t wall)
{
	struct tz_cache *tz = (struct tz_cache *)((char *)z - offsetof(struct tz_cache, zone));
	int64_t hour = wall / 3600 - (wall % 3600 < 0);
	long near = offset_of(wall - z->gmtoff, z->gmtoff), best = LONG_MIN, any = LONG_MIN;
	const long probe[3] = { 0, -3 * 3600, 3 * 3600 };

	if (tz->wall_hour == hour)
		return tz->wall_off;
	for (int k = 0; k < 3; k++) {
		long o = offset_of(wall - near + probe[k], near);

		if (o > any)
			any = o;
		if (o > best && offset_of(wall - o, o) == o)
			best = o;
	}
	tz->wall_hour = hour;
	tz->wall_off = best != LONG_MIN ? best : any;
	return tz->wall_off;
}

static long tz_gmtoff(const struct sink *s, struct tz_cache *tz, uint64_t recv_ns)
{
	time_t t = recv_ns / NSEC_PER_SEC;
	struct tm tm;

	tz->zone.guess = s->guess_tz;
	if (s->tz_kind != TZ_NAMED && s->tz_kind != TZ_LOCAL) {
		tz->zone.offset_at = NULL;
		tz->zone.gmtoff = s->tz_kind == TZ_FIXED ? s->tz_offset : 0;
		return tz->zone.gmtoff;
	}
	if (tz->minute != t / 60) {
		tz->minute = t / 60;
		tz->gmtoff = localtime_r(&t, &tm) ? tm.tm_gmtoff : 0;
		/* the offsets of wall times are looked up afresh each minute */
		tz->wall_hour = INT64_MIN;
	}
	tz->zone.offset_at = named_offset_at;
	tz->zone.gmtoff = tz->gmtoff;
	return tz->gmtoff;
}

void preformat_meta(const struct sink *s, struct tz_cache *tz, const struct msg_rec *r,
		    struct msg_meta *meta)
{
	*meta = (struct msg_meta){
		.src = (const struct sockaddr *)&r->src,
		.src_len = r->src_len,
		.recv_realtime_ns = r->recv_ns,
		.socket_index = r->sock,
		.tz_gmtoff = tz_gmtoff(s, tz, r->recv_ns),
		.zone = &tz->zone,
	};
	if (r->listener < s->nr_listeners)
		meta->listener = s->listeners[r->listener].name;
	else if (s->listener_name) /* read back from a disk buffer: as recorded */
		meta->listener = s->listener_name(s->listener_ctx, r->listener);
}

/* Room for need more bytes in b->out, within PREFORMAT_MAX_BYTES. */
static bool out_room(struct batch *b, size_t need)
{
	size_t cap = b->out_cap ? b->out_cap : OUT_MIN_BYTES;
	char *p;

	if (b->out_used + need <= b->out_cap)
		return true;
	while (cap < b->out_used + need)
		cap *= 2;
	if (cap > PREFORMAT_MAX_BYTES)
		return false;
	p = realloc(b->out, cap);
	if (!p)
		return false;
	b->out = p;
	b->out_cap = cap;
	return true;
}

/* An area a quarter used or less (a burst of long lines is over) shrinks,
 * so the byte bound counts what the batch holds, not its past. */
static void out_fit(struct batch *b)
{
	size_t cap = b->out_cap;
	char *p;

	while (cap / 2 >= OUT_MIN_BYTES && cap / 2 >= 2 * b->out_used)
		cap /= 2;
	if (cap == b->out_cap)
		return;
	p = realloc(b->out, cap);
	if (!p)
		return; /* still valid, counted at its old size */
	b->out = p;
	b->out_cap = cap;
}

void batch_preformat(const struct preformat *pf, struct tz_cache *tz, struct batch *b)
{
	uint32_t bad = 0, sd_dropped = 0, breaks = 0;

	b->out_used = 0;
	b->formatted = false;
	for (uint32_t i = 0; i < b->count; i++) {
		const struct msg_rec *r = &b->recs[i];
		const char *data = b->data + r->off;
		enum syslog_parse_result res = SYSLOG_OK_3164;
		struct syslog_msg m;
		struct msg_meta meta;

		if (!out_room(b, format_max_len(pf->format, r->len))) {
			b->out_used = 0;
			return;
		}
		if (pf->parse) {
			res = syslog_parse(data, r->len, &m);
			bad += res == SYSLOG_MALFORMED;
		}
		preformat_meta(pf->sink, tz, r, &meta);
		meta.sd_dropped = &sd_dropped;
		meta.breaks_escaped = &breaks;
		b->out_used += format_message_flags(b->out + b->out_used, pf->format, pf->flags,
						    data, r->len, &m, res, &meta);
	}
	b->out_bad = bad;
	b->out_sd_dropped = sd_dropped;
	b->out_breaks_escaped = breaks;
	b->formatted = true;
	out_fit(b);
}
