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

uint64_t syslog_time_ns(const struct syslog_msg *m, enum syslog_parse_result r, uint64_t recv_ns,
			long gmtoff)
{
	const struct syslog_tm *tm = &m->tm;
	int year = tm->year;
	int64_t secs;
	uint64_t frac = tm->frac;

	if (r == SYSLOG_MALFORMED || !m->timestamp.p || tm->mon < 1 || tm->mon > 12)
		return 0;
	if (!year) {
		int64_t local = (int64_t)(recv_ns / 1000000000) + gmtoff;
		unsigned int mon, mday;

		civil_from_days(floor_div(local, 86400), &year, &mon, &mday);
		if (tm->mon == 12 && mon == 1)
			year--;
		else if (tm->mon == 1 && mon == 12)
			year++;
	}
	secs = days_from_civil(year, tm->mon, tm->mday) * 86400 + tm->hour * 3600 + tm->min * 60 +
	       tm->sec;
	secs -= tm->has_tz ? tm->tz_min * 60L : gmtoff;
	if (secs < 0)
		return 0;
	for (unsigned int k = tm->frac_digits; k < 9; k++)
		frac *= 10;
	return (uint64_t)secs * 1000000000ULL + frac;
}
