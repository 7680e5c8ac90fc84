/* SPDX-License-Identifier: MIT */
/*
 * src/syslog/: pure code, bytes in and fields out, no I/O and no allocation
 * per message: this parser, format (raw/json/rfc5424 lines), seqtrack
 * (sequence-marker accounting) and msgfmt (sysloggen's messages). Uses
 * common only; fuzzed (tests/fuzz).
 *
 * Syslog datagram parser: a datagram read as Debian's syslog-ng 3.38 reads
 * it when it parses as SC4S does (a strict RFC 5424 parse, else RFC 3164);
 * syslog-ng's modules/syslogformat is the reference, its running binary the
 * oracle (tests/integration/receive/test_parse_vs_syslog_ng.py). Pure: no I/O, no
 * allocation, never reads data[len] or beyond.
 *
 * Results
 *   SYSLOG_OK_5424   "<PRI>1 " and an RFC 5424 header as syslog-ng takes it:
 *                    TIMESTAMP ISO 8601 ('T' or a space, any fraction digits,
 *                    zone optional: TS_NOT_3339 when it is not RFC 3339) or
 *                    "-"; HOSTNAME up to a space, '[' or a ':' no IPv6
 *                    address has; APP-NAME PROCID MSGID any bytes up to a
 *                    space, cut to 48/128/32 (carried when 33..126); SD with
 *                    names of up to 248 bytes (ID) and 255 (ID + PARAM).
 *   SYSLOG_OK_3164   anything else that is not malformed, a "<PRI>1 " header
 *                    syslog-ng rejects included (its SYSLOG_F_ reason set:
 *                    TRUNCATED_HEADER, BAD_TIMESTAMP, BAD_HEADER, BAD_SD).
 *   SYSLOG_MALFORMED exactly these (the receiver counts them in
 *                    totals.malformed and still outputs the raw datagram):
 *                    - empty datagram, also one that is empty after the
 *                      trailing '\n' '\r' NUL are stripped   (SYSLOG_F_EMPTY)
 *                    - starts with '<' but not "<" 1-3 digits ">" with a
 *                      value 0..191: "<999>", "<>", "<1a>", "<13"  (BAD_PRI;
 *                      syslog-ng takes all but "<1a>": docs/outputs.md)
 *
 * Fields
 *   Every syslog_str points into data (or is absent: p NULL, len 0). RFC 5424
 *   NILVALUEs are absent; an empty MSG is absent. Header fields hold bytes of
 *   33..126 only: a token with others is read past but left absent. RFC 5424
 *   fields are within its limits; RFC 3164 HOST, TAG and PID tokens may be
 *   longer, and "-" (syslog-ng keeps them; the rfc5424 format cuts them).
 *   A datagram without PRI has pri 13 (RFC 3164 4.3.3) and SYSLOG_F_NO_PRI.
 *   On SYSLOG_MALFORMED every syslog_str is absent and only pri, facility,
 *   severity (when the PRI was valid), version and flags are set.
 *
 * Repairs, applied before parsing and reported in flags: trailing '\n',
 * '\r' (TRAILING_NEWLINE) and NUL (TRAILING_NUL) bytes are not part of any
 * field. HAS_NUL and INVALID_UTF8 describe what is left.
 *
 * RFC 3164, after the optional <PRI>, in syslog-ng's order:
 *   "SEQ: "                  Cisco's sequence number, digits (maybe none),
 *                            then spaces; kept in seq (SYSLOG_F_SEQUENCE)
 *   '*' or '.'               Cisco's clock mark (synced 0 or 1)
 *   a stamp, by its layout:  YYYY-MM-DD[T ]hh:mm:ss[(.|,)frac][zone]
 *                            Mmm dd yyyy hh:mm:ss[:]   (Cisco PIX/ASA)
 *                            Mmm dd hh:mm:ss yyyy      (Linksys)
 *                            Mmm dd hh:mm:ss[(.|,)frac]
 *                            (Mmm with an upper-case first letter, dd "dd" or
 *                            " d"), then one ':' when there; then spaces
 *   HOST                     after a stamp only: up to a space, '[' or a ':'
 *                            no IPv6 address has, ended by a space; then
 *                            spaces. AIX's "Message forwarded from HOST:" and
 *                            "last message repeated" (no host, no tag) too.
 *   TAG                      up to a space, '[' or ':'; "[PID]" (to ']', a
 *                            space or ':'); then ':' and one space when there
 *   MSG                      the rest
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
	uint32_t flags; /* SYSLOG_F_* */
};

enum syslog_parse_result { SYSLOG_OK_5424, SYSLOG_OK_3164, SYSLOG_MALFORMED };

/* Parses data[0..len) into out (always fully written). */
enum syslog_parse_result syslog_parse(const char *data, size_t len, struct syslog_msg *out);

#endif
