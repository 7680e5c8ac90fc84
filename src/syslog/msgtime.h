/* SPDX-License-Identifier: MIT */
/*
 * A message's own time, normalised to nanoseconds since the epoch (UTC),
 * and the civil-date arithmetic it needs. Pure: no I/O, no clock, no TZ.
 *
 *   Stamps that carry an offset ("Z", "+01:00") have it applied.
 *   Stamps without one are wall-clock times in the zone (--timezone): its
 *   offset at that wall time (offset_at), so a summer stamp read in winter
 *   takes the summer offset, as syslog-ng's mktime() does.
 *   Stamps without a year ("Oct 11 22:14:15") take the receive time's year
 *   in the zone, minus one for a December message received in January, plus
 *   one for a January message received in December; a year in the stamp is
 *   kept.
 *   guess (--guess-timezone, RFC 3164 readings only, as SC4S sets it):
 *   syslog-ng's rule. A stamp less than 24 hours from the receive time and
 *   within 30 s of a whole number of quarter hours from it is taken to be
 *   the device's real time in a zone that far off: the instant becomes the
 *   stamp moved by those quarter hours, when the zone it implies is one that
 *   exists (-12:00..+14:00, whole hours or the listed half and three-quarter
 *   hours).
 *   Fractions are kept to the nanosecond.
 */
#ifndef SYSLOGRX_MSGTIME_H
#define SYSLOGRX_MSGTIME_H

#include <stdbool.h>
#include <stdint.h>
#include "syslog/syslog_parse.h"

/* The zone of stamps without an offset. */
struct msg_zone {
	long gmtoff; /* seconds east of UTC at the receive time */
	/* Seconds east of UTC for a wall-clock time (its seconds since
	 * 1970-01-01 00:00 as if it were UTC); NULL: gmtoff at any time. */
	long (*offset_at)(const struct msg_zone *z, int64_t wall);
	bool guess; /* --guess-timezone */
};

/* The message's time in ns since the epoch; 0 when it has none (or it is
 * before 1970). zone NULL: UTC. */
uint64_t syslog_time_ns_zone(const struct syslog_msg *m, enum syslog_parse_result r,
			     uint64_t recv_ns, const struct msg_zone *zone);
/* The stamp's wall-clock time as seconds since 1970-01-01 00:00 as if UTC,
 * its year guessed as syslog_time_ns does (gmtoff: the zone's at recv_ns). */
int64_t syslog_wall_secs(const struct syslog_tm *tm, uint64_t recv_ns, long gmtoff);

/* The same in a zone of a fixed offset, gmtoff seconds east of UTC. */
uint64_t syslog_time_ns(const struct syslog_msg *m, enum syslog_parse_result r, uint64_t recv_ns,
			long gmtoff);

/* Proleptic Gregorian date of a day count since 1970-01-01, and back. */
void civil_from_days(int64_t z, int *y, unsigned int *m, unsigned int *d);
int64_t days_from_civil(int y, unsigned int m, unsigned int d);

#endif
