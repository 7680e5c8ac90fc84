/* SPDX-License-Identifier: MIT */
/*
 * OTLP logs, encoded here from the wire format of the OpenTelemetry
 * protocol (opentelemetry-proto: collector/logs/v1/logs_service.proto,
 * logs/v1/logs.proto, common/v1/common.proto), in protobuf and in the
 * OTLP/JSON mapping. Pure: bytes in, bytes out, no I/O, no allocation
 * (src/syslog/, next to the other formats: the sink only frames and sends).
 *
 * One syslog message is one LogRecord:
 *   timeUnixNano          the message's own time (msgtime.h); absent if none
 *   observedTimeUnixNano  the kernel's receive stamp
 *   severityNumber/Text   from the PRI's severity, as the collector's syslog
 *                         receiver maps it: emerg 21, alert 19, crit 18,
 *                         err 17, warning 13, notice 10, info 9, debug 5
 *   body                  MSG; a malformed datagram's body is the whole
 *                         datagram, and so is every body with original set
 *                         (--otlp-original). A string when it is valid UTF-8
 *                         without NUL, else bytesValue: byte for byte.
 *   attributes            the collector syslog receiver's names: priority,
 *                         facility, version (5424), hostname, appname,
 *                         proc_id, msg_id, structured_data (a map of SD-ID to
 *                         a map of its params, each param its own key; the
 *                         elements syslog/sd.h's sd_walk keeps: no sender's
 *                         syslogrx@32473, each SD-ID once),
 *                         net.transport "IP.UDP", net.peer.ip, net.peer.port
 *                         (a string, as the collector writes it); a
 *                         malformed datagram has syslogrx.malformed true;
 *                         syslogrx.listener: the --listen it came by, when
 *                         records name it.
 * Every protobuf string is valid UTF-8 (proto3 requires it; a strict decoder
 * rejects the whole request otherwise): invalid sequences in attribute
 * values, SD-IDs, param names and values are replaced with U+FFFD, one per
 * byte, as the json format and OTLP/JSON (escape_json) replace them.
 * A request is ExportLogsServiceRequest { ResourceLogs { ScopeLogs {
 *   scope { name "syslogrx" }, logRecords... } } }.
 */
#ifndef SYSLOGRX_OTLP_ENCODE_H
#define SYSLOGRX_OTLP_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "syslog/syslog_parse.h"

enum otlp_encoding { OTLP_PROTOBUF, OTLP_JSON };

struct otlp_rec {
	const char *data; /* the datagram */
	size_t len;
	const struct syslog_msg *m; /* syslog_parse() of data */
	enum syslog_parse_result r;
	uint64_t time_ns;	    /* the message's own time, 0 = none */
	uint64_t observed_ns;	    /* received */
	const struct sockaddr *src; /* may be NULL */
	socklen_t src_len;
	bool original;	      /* --otlp-original: the body is the datagram as it came */
	const char *listener; /* msg_meta.listener: NULL, or [a-z0-9_.-]{1,32} */
	uint32_t *sd_dropped; /* msg_meta.sd_dropped: SD elements dropped (sd.h) */
};

/* Worst case of one record of a datagram of len bytes, either encoding. */
#define OTLP_RECORD_MAX(len) (20 * (size_t)(len) + 1024)
/* Worst case of a request's head and tail around its records. */
#define OTLP_FRAME_MAX 128

/* One record at dst: protobuf, as ScopeLogs field 2 (tag, length, LogRecord). */
size_t otlp_pb_record(char *dst, const struct otlp_rec *rec);
/* One record at dst: OTLP/JSON, one object "{...}" (no separator). */
size_t otlp_json_record(char *dst, const struct otlp_rec *rec);

/* A request's head for records_len bytes of records (joined with ',' in
 * JSON), written at dst; the records follow it, then the tail. */
size_t otlp_head(char *dst, enum otlp_encoding enc, size_t records_len);
size_t otlp_tail(char *dst, enum otlp_encoding enc);

/* ExportLogsServiceResponse: rejected log records of a partial success and
 * its message (into msg, NUL-terminated, cut to cap). 0 if parsed (rejected
 * may be 0), -1 if the body is not one. */
int otlp_parse_response(const char *body, size_t len, enum otlp_encoding enc, uint64_t *rejected,
			char *msg, size_t cap);

/* The OpenTelemetry severity number and text of a syslog severity 0..7. */
int otlp_severity_number(int severity);
const char *otlp_severity_text(int severity);

#endif
