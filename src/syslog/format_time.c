// SPDX-License-Identifier: MIT
/*
 * The times the output formats write (syslog/format.h): the receive time in
 * UTC, and a message's stamp as RFC 3339 at the instant msgtime.h gives it.
 * Numbers written by hand, not with snprintf; localtime_r once a minute per
 * thread.
 */
#include <string.h>
#include <time.h>
#include "common/clock.h"
#include "syslog/format_time.h"
#include "syslog/msgtime.h"

/* v as exactly width digits (zero padded). */
static char *put_fixed(char *d, unsigned int v, int width)
{
	for (int k = width - 1; k >= 0; k--) {
		d[k] = '0' + v % 10;
		v /= 10;
	}
	return d + width;
}

/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" */
char *format_put_utc_us(char *d, uint64_t ns)
{
	uint64_t sec = ns / 1000000000, day_sec = sec % 86400;
	unsigned int mon, mday;
	int year;

	civil_from_days(sec / 86400, &year, &mon, &mday);
	d = put_fixed(d, year, 4);
	*d++ = '-';
	d = put_fixed(d, mon, 2);
	*d++ = '-';
	d = put_fixed(d, mday, 2);
	*d++ = 'T';
	d = put_fixed(d, day_sec / 3600, 2);
	*d++ = ':';
	d = put_fixed(d, day_sec / 60 % 60, 2);
	*d++ = ':';
	d = put_fixed(d, day_sec % 60, 2);
	*d++ = '.';
	d = put_fixed(d, ns % 1000000000 / 1000, 6);
	*d++ = 'Z';
	return d;
}

uint64_t format_recv_ns(const struct msg_meta *meta)
{
	return meta ? meta->recv_realtime_ns : clock_ns(CLOCK_REALTIME);
}

uint64_t meta_time_ns(const struct syslog_msg *m, enum syslog_parse_result r,
		      const struct msg_meta *meta)
{
	/* No stamp (Cisco ASA's default): the kernel's receive time, not the
	 * time a receiver behind us reads it, which an outage or the disk
	 * buffer may make hours later. */
	if (r != SYSLOG_MALFORMED && !m->timestamp.p)
		return format_recv_ns(meta);
	if (meta && meta->zone)
		return syslog_time_ns_zone(m, r, meta->recv_realtime_ns, meta->zone);
	return syslog_time_ns(m, r, format_recv_ns(meta), meta ? meta->tz_gmtoff : 0);
}

/* Local year, month and UTC offset at a time; localtime_r once a minute per thread. */
struct local_now {
	int64_t minute;
	int year, mon; /* mon 1..12 */
	long gmtoff;   /* seconds east of UTC */
	bool valid;
};

static const struct local_now *local_at(uint64_t ns)
{
	static __thread struct local_now cache;
	time_t t = ns / 1000000000;
	struct tm tm;

	if (cache.valid && cache.minute == t / 60)
		return &cache;
	cache.minute = t / 60;
	cache.valid = true;
	if (localtime_r(&t, &tm)) {
		cache.year = tm.tm_year + 1900;
		cache.mon = tm.tm_mon + 1;
		cache.gmtoff = tm.tm_gmtoff;
	} else {
		cache.year = 1970;
		cache.mon = 1;
		cache.gmtoff = 0;
	}
	return &cache;
}

static char *put_offset(char *d, long off)
{
	if (!off) {
		*d++ = 'Z';
		return d;
	}
	*d++ = off < 0 ? '-' : '+';
	if (off < 0)
		off = -off;
	d = put_fixed(d, off / 3600 % 100, 2);
	*d++ = ':';
	return put_fixed(d, off / 60 % 60, 2);
}

static char *put_frac(char *d, const struct syslog_tm *tm)
{
	unsigned int frac = tm->frac, digits = tm->frac_digits;

	if (!digits)
		return d;
	for (; digits > 6; digits--)
		frac /= 10;
	*d++ = '.';
	return put_fixed(d, frac, digits);
}

/*
 * A stamp as RFC 3339 at the instant the json and OTLP times have (msgtime.h:
 * the zone's offset at the stamp's time, --guess-timezone), in the offset
 * that instant implies for the wall time; fields out of range (06:59:75)
 * come out normalised. 0 when there is no such instant (before 1970).
 */
char *format_put_instant_3339(char *d, const struct syslog_msg *m, enum syslog_parse_result r,
			      const struct msg_meta *meta)
{
	uint64_t ns = meta_time_ns(m, r, meta);
	int64_t secs = (int64_t)(ns / 1000000000), wall;
	long off;
	unsigned int mon, mday;
	int year;

	if (!ns)
		return NULL;
	off = syslog_wall_secs(&m->tm, meta->recv_realtime_ns, meta->zone->gmtoff) - secs;
	if (off <= -86400 || off >= 86400)
		return NULL;
	wall = secs + off;
	if (wall < 0)
		return NULL;
	civil_from_days(wall / 86400, &year, &mon, &mday);
	if (year > 9999)
		return NULL;
	d = put_fixed(d, year, 4);
	*d++ = '-';
	d = put_fixed(d, mon, 2);
	*d++ = '-';
	d = put_fixed(d, mday, 2);
	*d++ = 'T';
	d = put_fixed(d, wall % 86400 / 3600, 2);
	*d++ = ':';
	d = put_fixed(d, wall % 3600 / 60, 2);
	*d++ = ':';
	d = put_fixed(d, wall % 60, 2);
	d = put_frac(d, &m->tm);
	return put_offset(d, off);
}

/* An RFC 3164 BSD stamp as RFC 3339 (rules in format.h). */
char *format_put_bsd_as_3339(char *d, const struct syslog_tm *tm, const struct msg_meta *meta)
{
	const struct local_now *now = local_at(format_recv_ns(meta));
	int year = tm->year;
	long off;

	if (!year) {
		year = now->year;
		if (tm->mon == 12 && now->mon == 1)
			year--;
		else if (tm->mon == 1 && now->mon == 12)
			year++;
	}
	d = put_fixed(d, year, 4);
	*d++ = '-';
	d = put_fixed(d, tm->mon, 2);
	*d++ = '-';
	d = put_fixed(d, tm->mday, 2);
	*d++ = 'T';
	d = put_fixed(d, tm->hour, 2);
	*d++ = ':';
	d = put_fixed(d, tm->min, 2);
	*d++ = ':';
	d = put_fixed(d, tm->sec, 2);
	d = put_frac(d, tm);
	off = tm->has_tz ? tm->tz_min * 60L : now->gmtoff;
	return put_offset(d, off);
}
