/* SPDX-License-Identifier: MIT */
/*
 * The times syslog/format.c writes, apart from the formats themselves: the
 * receive time in UTC ("received"), and an RFC 3164 or RFC 5424 stamp as
 * RFC 3339 (the rules are format.h's rfc5424 ones). Each writes at d and
 * returns the end; none allocates.
 */
#ifndef SYSLOGRX_FORMAT_TIME_H
#define SYSLOGRX_FORMAT_TIME_H

#include <stdint.h>
#include "syslog/format.h"

/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" */
char *format_put_utc_us(char *d, uint64_t ns);
/* meta's receive time, or the clock's when meta is NULL */
uint64_t format_recv_ns(const struct msg_meta *meta);
/* The message's normalised time (msgtime.h) in meta's zone; for a parsed
 * message without a stamp the receive time (format_recv_ns). */
uint64_t meta_time_ns(const struct syslog_msg *m, enum syslog_parse_result r,
		      const struct msg_meta *meta);
/* the stamp at the instant meta_time_ns() gives it; NULL when it has none */
char *format_put_instant_3339(char *d, const struct syslog_msg *m, enum syslog_parse_result r,
			      const struct msg_meta *meta);
/* an RFC 3164 BSD stamp as RFC 3339 in the receiver's local offset */
char *format_put_bsd_as_3339(char *d, const struct syslog_tm *tm, const struct msg_meta *meta);

#endif
