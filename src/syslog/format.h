/* SPDX-License-Identifier: MIT */
/*
 * Output formats: one received datagram -> one line ending in '\n'.
 * Pure apart from reading the clock when meta is NULL and the local time
 * zone (rfc5424 of RFC 3164 stamps): no allocation, no I/O.
 *
 * raw      the datagram, escape_line_ctl()d (see escape.h): '\\' '\n' '\r'
 *          NUL backslash-escaped, every other control character (tab, DEL
 *          and C1 included) as rsyslog writes it, "#033"; then '\n'. With
 *          FORMAT_F_EXACT_CONTROL only escape_line() (controls as received).
 *
 * original the datagram's bytes as they came: no parse, no escape. As a line
 *          (the default): its own line end, any run of '\n', '\r' and NUL
 *          that ends it, left off (the '\n' written stands for it), and a
 *          '\n' or NUL inside written as "#012" or "#000", as rsyslog writes
 *          a control byte it receives: syslog-ng's network() ends a message
 *          at either, and one datagram stays one message for it, rsyslog's
 *          imtcp and a log shipper; each such datagram counted at
 *          meta->breaks_escaped. With FORMAT_F_WHOLE every byte as it came,
 *          then '\n' (for a consumer that does not split at line breaks: a
 *          Kafka record, an octet-counted frame).

 * SD      every format writes a sender's STRUCTURED-DATA as syslog/sd.h says:
 *          its syslogrx@32473 element, a repeated SD-ID and elements past
 *          SD_ELEMS_MAX SD-IDs dropped (counted at meta->sd_dropped), values
 *          escaped as RFC 5424 wants them and valid UTF-8.
 *
 * json     one JSON object, valid UTF-8 (every string through escape_json),
 *          keys in this order; a key whose value is absent is OMITTED:
 *            pri, facility, severity   numbers; absent without a valid PRI
 *            version                   1 (RFC 5424) or 0; absent if malformed
 *            timestamp                 the timestamp as written in the message
 *            time_unix_nano            that time normalised (msgtime.h; stamps
 *                                      without an offset in meta->zone, UTC
 *                                      without meta), as OTLP's timeUnixNano;
 *                                      a message without a stamp: the receive
 *                                      time (format_time.h: meta_time_ns)
 *            hostname, app_name, procid, msgid, structured_data, msg
 *                                      strings as parsed (msg without a BOM
 *                                      and without the trailing newline/NUL;
 *                                      structured_data as SD above, absent
 *                                      when no element is left)
 *            sd                        (after structured_data) the structured
 *                                      data parsed: {"SD-ID":{"name":"value"}},
 *                                      values unescaped
 *            malformed                 always: true or false
 *            source                    "1.2.3.4:514" or "[::1]:514" (meta->src)
 *            socket                    meta->socket_index
 *            listener                  meta->listener, when set
 *            received                  "2026-11-22T03:12:00.123456Z" (UTC)
 *            raw                       the whole datagram: always, but with
 *                                      FORMAT_F_JSON_NO_RAW only when malformed
 *          source, socket and received need meta; absent when meta is NULL.
 *          On a malformed datagram only pri/facility/severity (if valid),
 *          malformed, the meta keys and raw are written.
 *
 * rfc5424  "<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD[ MSG]", '-'
 *          for what is absent, MSG escaped as raw is so it stays one line, SD's
 *          control bytes as "#ooo" (escape_ctl: its '\\' escapes kept) (an
 *          RFC 5424 BOM is written back before it, and after one MSG's
 *          invalid UTF-8 as U+FFFD: MSG-UTF8).
 *          - the sender (meta->src): SD starts with [origin ip="ADDR"]
 *            (RFC 5424 7.2.1; "1.2.3.4", "2001:db8::1", an IPv4-mapped
 *            address as IPv4), the message's own elements after it; a
 *            message's own origin element is merged into it, its params
 *            first and the sender's ip last. A message without a HOSTNAME
 *            gets ADDR as HOSTNAME, as syslog-ng fills it. Without meta or
 *            its address, neither.
 *          - no PRI: <13> (user.notice, as syslog-ng and rsyslog do)
 *          - no stamp (Cisco ASA's default, RFC 5424's '-'): the receive
 *            time, "2026-11-22T03:12:00.123456Z" (a malformed message's
 *            stays '-')
 *          - RFC 5424 input: header fields as received (APP-NAME and PROCID
 *            cut to 48 and 128 bytes); a stamp that is not RFC 3339 (no
 *            zone, nine fraction digits) converted as below.
 *          - RFC 3164 input: an RFC 3339 stamp is kept (unless
 *            --guess-timezone may move it); any other is converted: the
 *            instant time_unix_nano has (msgtime.h: the stamp's year or the
 *            receive time's, the zone's offset at the stamp's time, the
 *            guessed zone), written in the offset that instant implies for
 *            the stamp's wall time, fields normalised, fractions cut to 6
 *            digits. Without meta->zone: the wall time as written with the
 *            receiver's local UTC offset (TZ) at the receive time. MSGID and
 *            SD are '-'.
 *          - malformed: "<PRI or 13>1 - ADDR - - - [origin ip="ADDR"] " then
 *            the whole raw datagram escaped as raw is, as MSG: nothing is
 *            lost ("- - - - - - " without a sender).
 *          The receive time is meta->recv_realtime_ns, or the clock when
 *          meta is NULL.
 *          - meta->listener set: the SD element
 *            [syslogrx@32473 listener="NAME"] follows the message's own SD
 *            (or stands for its '-'; a malformed message's too); a sender's
 *            own syslogrx@32473 element never goes out (SD above).
 */
#ifndef SYSLOGRX_FORMAT_H
#define SYSLOGRX_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "syslog/msgtime.h"
#include "syslog/syslog_parse.h"

enum out_format { FORMAT_RAW, FORMAT_JSON, FORMAT_RFC5424, FORMAT_ORIGINAL };

/* "raw" | "json" | "rfc5424" | "original": 0 and *out set; -EINVAL else. */
int format_from_name(const char *name, enum out_format *out);
/* The reverse. */
const char *format_name(enum out_format fmt);

struct msg_meta {
	const struct sockaddr *src; /* sender address (AF_INET/AF_INET6), may be NULL */
	socklen_t src_len;
	uint64_t recv_realtime_ns; /* when received (CLOCK_REALTIME) */
	uint32_t socket_index;	   /* which socket of the group */
	long tz_gmtoff; /* --timezone at recv time, seconds east of UTC (RFC 3164 stamps) */
	const struct msg_zone *zone; /* that zone in full (msgtime.h); NULL: tz_gmtoff */
	/* The --listen it came by, NULL = not written: up to FORMAT_LISTENER_MAX
	 * bytes of [a-z0-9_.-] (rx/settings/listeners.h checks it), so no
	 * format escapes it. */
	const char *listener;
	/* Where format_message() adds the sender's SD elements it dropped
	 * (sd.h: syslogrx's own SD-ID, a repeated SD-ID, past SD_ELEMS_MAX);
	 * NULL: not counted. */
	uint32_t *sd_dropped;
	/* Where format_message() counts the datagrams whose line breaks it
	 * escaped (original as a line); NULL: not counted. */
	uint32_t *breaks_escaped;
};

#define FORMAT_LISTENER_MAX 32

/* Worst-case bytes format_message() writes for a datagram of len bytes
 * (including the trailing '\n', or an octet-counted frame's prefix). */
size_t format_max_len(enum out_format fmt, size_t len);

/*
 * Formats one message as one line ending in '\n' into dst (at least
 * format_max_len(fmt, len) bytes). m and r are syslog_parse()'s for the same
 * data and len (not used by FORMAT_RAW: they may be NULL / anything there).
 * meta may be NULL. Returns bytes written.
 */
size_t format_message(char *dst, enum out_format fmt, const char *data, size_t len,
		      const struct syslog_msg *m, enum syslog_parse_result r,
		      const struct msg_meta *meta);

/* --no-escape-control: control bytes written as received (raw, rfc5424). */
#define FORMAT_F_EXACT_CONTROL 1u
/* json: no "raw" key but for a malformed datagram (the receiver's default;
 * --json-raw writes it for every message). */
#define FORMAT_F_JSON_NO_RAW 2u

/* original: every byte as it came, line breaks and line end too. */
#define FORMAT_F_WHOLE 4u
/* Each message as an RFC 6587 octet-counted frame, "LEN SP MSG" with no
 * '\n' after it (MSG: the line without its '\n'), for a tcp or tls
 * output with --framing octet: the formatter frames, since only it knows
 * where a message that holds a '\n' (original, FORMAT_F_WHOLE) ends. */
#define FORMAT_F_OCTET_FRAME 8u
/* The longest "LEN SP" prefix: a datagram is at most 64 KiB. */
#define FORMAT_FRAME_PREFIX_MAX 11

/* How many messages format_message_flags() wrote in buf, len bytes of
 * them one after another with the same flags: '\n'-ended lines, or with
 * FORMAT_F_OCTET_FRAME "LEN SP MSG" frames. */
uint64_t format_count_messages(const char *buf, size_t len, unsigned int flags);

/* format_message() with FORMAT_F_* flags (format_message's are 0). */
size_t format_message_flags(char *dst, enum out_format fmt, unsigned int flags, const char *data,
			    size_t len, const struct syslog_msg *m, enum syslog_parse_result r,
			    const struct msg_meta *meta);

/* escape_json() of src at d, byte for byte, at close to memcpy speed for
 * plain text (the json format's own escaper, for the OTLP/JSON encoder).
 * Returns the end of what it wrote (at most ESCAPE_JSON_MAX(len) bytes). */
char *format_put_json(char *d, const char *src, size_t len);
/* The same for a STRUCTURED-DATA value (raw, sd.h), its escapes undone first. */
char *format_put_json_sd_value(char *d, const struct syslog_str *raw);

#endif
