// SPDX-License-Identifier: MIT
/* A message's own time, normalised (see msgtime.h). */
#include "syslog/msgtime.h"

/* Hinnant's algorithms (public domain "chrono-compatible low-level date
 * algorithms"), written out for int64 day counts. */
void civil_from_days(int64_t z, int *y, unsigned int *m, unsigned int *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned int doe = (unsigned int)(z - era * 146097);
	unsigned int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned int mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int)(yoe + era * 400) + (*m <= 2);
}

int64_t days_from_civil(int y, unsigned int m, unsigned int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned int yoe = (unsigned int)(y - era * 400);
	unsigned int doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/* syslog-ng's list of the offsets that are not whole hours (zones of this
 * century): half and three-quarter hours. */
static bool offset_exists(long off)
{
	static const int16_t odd[] = { -34200 / 60, -16200 / 60, -12600 / 60, -9000 / 60,
				       12600 / 60,  16200 / 60,	 19800 / 60,  20700 / 60,
				       23400 / 60,  30600 / 60,	 31500 / 60,  34200 / 60,
				       35100 / 60,  37800 / 60,	 41400 / 60,  45900 / 60,
				       49500 / 60 };

	if (off < -12 * 3600 || off > 14 * 3600)
		return false;
	if (off % 3600 == 0)
		return true;
	for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++)
		if (off == odd[k] * 60L)
			return true;
	return false;
}

/* syslog-ng's rounding of n / d: halves away from zero. */
static int64_t div_round(int64_t n, int64_t d)
{
	return n < 0 ? (n - d / 2) / d : (n + d / 2) / d;
}

/* The instant secs (read with offset off) moved to the receive time's
 * quarter hour, when that is what it is (see msgtime.h). */
static int64_t guess_zone(int64_t secs, long off, int64_t now)
{
	int64_t diff = now - secs, quarters;

	if (diff <= -86400 || diff >= 86400)
		return secs;
	quarters = div_round(diff, 900) * 900;
	if (diff - quarters > 30 || diff - quarters < -30 || !offset_exists(off - quarters))
		return secs;
	return secs + quarters;
}

int64_t syslog_wall_secs(const struct syslog_tm *tm, uint64_t recv_ns, long gmtoff)
{
	int64_t now = (int64_t)(recv_ns / 1000000000);
	int year = tm->year;

	if (!year) {
		unsigned int mon, mday;

		civil_from_days(floor_div(now + gmtoff, 86400), &year, &mon, &mday);
		if (tm->mon == 12 && mon == 1)
			year--;
		else if (tm->mon == 1 && mon == 12)
			year++;
	}
	return days_from_civil(year, tm->mon, tm->mday) * 86400 + tm->hour * 3600 + tm->min * 60 +
	       tm->sec;
}

uint64_t syslog_time_ns_zone(const struct syslog_msg *m, enum syslog_parse_result r,
			     uint64_t recv_ns, const struct msg_zone *zone)
{
	const struct syslog_tm *tm = &m->tm;
	long gmtoff = zone ? zone->gmtoff : 0, off;
	int64_t now = (int64_t)(recv_ns / 1000000000), secs;
	uint64_t frac = tm->frac;

	if (r == SYSLOG_MALFORMED || !m->timestamp.p || tm->mon < 1 || tm->mon > 12)
		return 0;
	secs = syslog_wall_secs(tm, recv_ns, gmtoff);
	if (tm->has_tz)
		off = tm->tz_min * 60L;
	else if (zone && zone->offset_at)
		off = zone->offset_at(zone, secs);
	else
		off = gmtoff;
	secs -= off;
	if (zone && zone->guess && r == SYSLOG_OK_3164)
		secs = guess_zone(secs, off, now);
	if (secs < 0)
		return 0;
	for (unsigned int k = tm->frac_digits; k < 9; k++)
		frac *= 10;
	return (uint64_t)secs * 1000000000ULL + frac;
}

uint64_t syslog_time_ns(const struct syslog_msg *m, enum syslog_parse_result r, uint64_t recv_ns,
			long gmtoff)
{
	const struct msg_zone zone = { .gmtoff = gmtoff };

	return syslog_time_ns_zone(m, r, recv_ns, &zone);
}
