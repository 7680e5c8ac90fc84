/* SPDX-License-Identifier: MIT */
/*
 * A message's own time, normalised to nanoseconds since the epoch (UTC),
 * and the civil-date arithmetic it needs. Pure: no I/O, no clock, no TZ.
 *
 *   RFC 5424 and RFC 3339 stamps carry their offset: it is applied.
 *   RFC 3164 stamps ("Oct 11 22:14:15") carry no year and no zone: the year
 *   is the receive time's in the zone (gmtoff), minus one for a December
 *   message received in January, plus one for a January message received in
 *   December; the zone is gmtoff (--timezone), except Cisco's "UTC"/"GMT".
 *   Fractions are kept to the nanosecond.
 */
#ifndef SYSLOGRX_MSGTIME_H
#define SYSLOGRX_MSGTIME_H

#include <stdint.h>
#include "syslog/syslog_parse.h"

/* The message's time in ns since the epoch; 0 when it has none (or it is
 * before 1970). gmtoff: seconds east of UTC of the zone for stamps without
 * one, at the receive time recv_ns. */
uint64_t syslog_time_ns(const struct syslog_msg *m, enum syslog_parse_result r, uint64_t recv_ns,
			long gmtoff);

/* Proleptic Gregorian date of a day count since 1970-01-01, and back. */
void civil_from_days(int64_t z, int *y, unsigned int *m, unsigned int *d);
int64_t days_from_civil(int y, unsigned int m, unsigned int d);

#endif
