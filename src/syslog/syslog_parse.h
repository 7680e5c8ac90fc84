/* SPDX-License-Identifier: MIT */
/*
 * src/syslog/: pure code, bytes in and fields out, no I/O and no allocation
 * per message: this parser, format (raw/json/rfc5424 lines), seqtrack
 * (sequence-marker accounting) and msgfmt (sysloggen's messages). Uses
 * common only; fuzzed (tests/fuzz).
 *
 * Syslog datagram parser: RFC 5424, RFC 3164 and the real-world variants in
 * between. Pure: no I/O, no allocation, never reads data[len] or beyond.
 *
 * Results
 *   SYSLOG_OK_5424   the datagram starts "<PRI>1 " and the whole RFC 5424
 *                    header (TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD) is
 *                    well formed.
 *   SYSLOG_OK_3164   anything else that is not malformed: RFC 3164 and its
 *                    relatives (no PRI, no or odd timestamps, Cisco, ...).
 *                    Parsing is best effort: whatever is not recognised as
 *                    timestamp, hostname or tag is message.
 *   SYSLOG_MALFORMED exactly these (the receiver counts them in
 *                    totals.malformed and still outputs the raw datagram):
 *                    - empty datagram, also one that is empty after the
 *                      trailing '\n' '\r' NUL are stripped   (SYSLOG_F_EMPTY)
 *                    - starts with '<' but not "<" 1-3 digits ">" with a
 *                      value 0..191: "<999>", "<>", "<1a>", "<13"  (BAD_PRI)
 *                    - starts "<PRI>1 " and then the RFC 5424 header is
 *                      broken: ends before the SD (TRUNCATED_HEADER), a bad
 *                      TIMESTAMP (BAD_TIMESTAMP), a header field with bytes
 *                      outside 33..126 or longer than RFC 5424 allows
 *                      (BAD_HEADER), or bad STRUCTURED-DATA (BAD_SD: syntax,
 *                      or a '\n' '\r' NUL inside it, which could not stay on
 *                      one output line without changing its meaning).
 *                    A datagram without PRI is not malformed: it is a legacy
 *                    message (SYSLOG_OK_3164 with SYSLOG_F_NO_PRI).
 *
 * Fields
 *   Every syslog_str points into data (or is absent: p NULL, len 0). Fields
 *   that are "-" (NILVALUE) in RFC 5424 are absent; an empty MSG is absent.
 *   Header fields (hostname, app_name, procid, msgid) are always 1..N bytes
 *   of 33..126 within the RFC 5424 limits (255, 48, 128, 32), also when they
 *   come from an RFC 3164 message: a 3164 token that does not fit is left in
 *   msg instead, and so does a 3164 token "-" (it would read as NILVALUE).
 *   So they can be re-emitted as RFC 5424 as they are.
 *   On SYSLOG_MALFORMED every syslog_str is absent and only pri, facility,
 *   severity (when the PRI was valid), version and flags are set.
 *
 * Repairs, applied before parsing and reported in flags: trailing '\n',
 * '\r' (TRAILING_NEWLINE) and NUL (TRAILING_NUL) bytes are not part of any
 * field. HAS_NUL and INVALID_UTF8 describe what is left.
 *
 * RFC 3164 shapes recognised (after an optional <PRI>):
 *   Mmm dd hh:mm:ss HOST TAG: MSG      day "dd", " d" or "d"; month names in
 *                                      any case; TAG is APP or APP[PROCID]
 *   Mmm dd yyyy hh:mm:ss[.frac] ...    with year, with fractions (1-9 digits)
 *   2023-10-11T22:14:15.003Z ...       RFC 3339 timestamp (ISO_TIMESTAMP_3164)
 *   timestamp followed by ':'          Cisco ASA "Oct 11 2023 22:14:15: %ASA-.."
 *   SEQ: [HOST: ][*|.]Mmm dd hh:mm:ss[.frac][ TZ]: MSG    Cisco IOS (SEQUENCE);
 *                                      also without "SEQ: " when the '*' or '.'
 *                                      (clock not authoritative) is there. TZ is
 *                                      1-5 letters, part of timestamp; only
 *                                      UTC/GMT set tm.has_tz. SEQ is in no field.
 *   no timestamp: TAG: MSG, or just MSG (NO_TIMESTAMP; no hostname is guessed)
 *   HOST is taken only after a timestamp, and only when the token is
 *   followed by a space, fits the header rules and does not look like a tag
 *   (no trailing ':' and no '['). The TAG needs its ':'; one space after it
 *   is not part of msg.
 */
#ifndef SYSLOGRX_SYSLOG_PARSE_H
#define SYSLOGRX_SYSLOG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFC 5424 field length limits */
#define SYSLOG_HOSTNAME_MAX 255
#define SYSLOG_APP_NAME_MAX 48
#define SYSLOG_PROCID_MAX 128
#define SYSLOG_MSGID_MAX 32
#define SYSLOG_SD_NAME_MAX 32

/* flags: what was missing, odd or repaired */
#define SYSLOG_F_NO_PRI (1u << 0)	      /* no <PRI>: legacy */
#define SYSLOG_F_BAD_PRI (1u << 1)	      /* malformed */
#define SYSLOG_F_NO_TIMESTAMP (1u << 2)	      /* none, or "-" in 5424 */
#define SYSLOG_F_ISO_TIMESTAMP_3164 (1u << 3) /* RFC 3339 stamp in a 3164 header */
#define SYSLOG_F_TS_YEAR (1u << 4)	      /* 3164 stamp carries a year */
#define SYSLOG_F_TRAILING_NEWLINE (1u << 5)   /* trailing '\n'/'\r' stripped */
#define SYSLOG_F_TRAILING_NUL (1u << 6)	      /* trailing NUL stripped */
#define SYSLOG_F_HAS_NUL (1u << 7)	      /* NUL byte(s) inside */
#define SYSLOG_F_INVALID_UTF8 (1u << 8)	      /* not valid UTF-8 */
#define SYSLOG_F_TRUNCATED_HEADER (1u << 9)   /* malformed: 5424 header ends early */
#define SYSLOG_F_BAD_TIMESTAMP (1u << 10)     /* malformed: 5424 TIMESTAMP */
#define SYSLOG_F_BAD_HEADER (1u << 11)	      /* malformed: 5424 field bytes/length */
#define SYSLOG_F_BAD_SD (1u << 12)	      /* malformed: 5424 STRUCTURED-DATA */
#define SYSLOG_F_EMPTY (1u << 13)	      /* malformed: nothing there */
#define SYSLOG_F_SEQUENCE (1u << 14)	      /* Cisco "SEQ: " prefix (in seq) */
#define SYSLOG_F_NO_HOSTNAME (1u << 15)	      /* 3164 without HOSTNAME */
#define SYSLOG_F_TS_NOT_3339 (1u << 16)	      /* 5424 stamp syslog-ng takes, not RFC 3339 */

struct syslog_str {
	const char *p; /* into the datagram; NULL when absent */
	uint32_t len;  /* 0 when absent */
};

/* The timestamp's parts, valid when syslog_msg.timestamp.p != NULL. */
struct syslog_tm {
	uint16_t year;		/* 0: not in the message (RFC 3164) */
	uint8_t mon;		/* 1..12 */
	uint8_t mday;		/* 1..31 */
	uint8_t hour, min, sec; /* sec may be 60 (leap second) */
	uint8_t frac_digits;	/* digits after '.', 0..9 */
	uint32_t frac;		/* their value: ".003" -> 3 with frac_digits 3 */
	bool has_tz;		/* Z, an offset or Cisco's "UTC"/"GMT" */
	int16_t tz_min;		/* offset east of UTC, minutes (when has_tz) */
};

struct syslog_msg {
	int pri;		/* -1 when absent */
	int facility, severity; /* -1 when no PRI */
	int version;		/* 1 for RFC 5424, 0 for RFC 3164/legacy */
	struct syslog_str timestamp, hostname, app_name, procid, msgid, structured_data, msg;
	struct syslog_tm tm; /* timestamp, parsed */
	bool bom;	     /* RFC 5424 MSG started with the UTF-8 BOM (not included in msg) */
	/* Cisco's "SEQ: " digits (RFC 3164; SYSLOG_F_SEQUENCE: there, maybe
	 * empty) and its clock mark before the stamp: 0 '*', 1 '.', -1 none.
	 * syslog-ng keeps them as meta.sequenceId and timeQuality.isSynced. */
	struct syslog_str seq;
	int8_t synced;
	uint32_t flags;	     /* SYSLOG_F_* */
};

enum syslog_parse_result { SYSLOG_OK_5424, SYSLOG_OK_3164, SYSLOG_MALFORMED };

/* Parses data[0..len) into out (always fully written). */
enum syslog_parse_result syslog_parse(const char *data, size_t len, struct syslog_msg *out);

#endif
