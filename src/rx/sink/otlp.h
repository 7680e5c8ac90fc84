/* SPDX-License-Identifier: MIT */
/*
 * otlp:http[s]://HOST:PORT[/PATH] sink (libcurl, zlib): an async sink (see
 * sink.h) that encodes each message itself (produce_msg, syslog/otlp_encode.h)
 * into OTLP/HTTP log export requests.
 *
 * Requests: the messages produced since the last one, sent when 1 MiB of
 * records is reached or the oldest waited OTLP_LINGER_MS; at most
 * OTLP_SLOTS requests are outstanding, then produce_msg says -EAGAIN and the
 * input window holds what arrives (back-pressure, as with Kafka). Each is
 * POSTed from the output stage's thread on one keep-alive connection.
 *
 * Delivery: a request's messages complete (done) only on its answer. 2xx:
 * delivered, less a partial success's rejectedLogRecords, which complete as
 * failed, counted per errorMessage. 429, 502, 503, 504 and connection errors:
 * the same request again, after Retry-After (seconds, at most 300) when the
 * server says it, else
 * after an exponential backoff (100 ms doubling to 5 s); for ever, like
 * Kafka's message.timeout.ms=0, until --drain-timeout at exit. Any other
 * status (400, 401, 404, 413, 500, ...): its messages fail, counted per
 * status ("http_400"); never retried.
 */
#ifndef SYSLOGRX_SINK_OTLP_H
#define SYSLOGRX_SINK_OTLP_H

#include <stdint.h>
#include "rx/sink/sink.h"

#define SINK_OTLP_MAX_REASONS 16
#define SINK_OTLP_REASON_LEN 80

struct sink_otlp_stats {
	const char *url;
	const char *encoding;	 /* "protobuf" | "json" */
	const char *compression; /* "gzip" | "none" */
	bool original;		 /* --otlp-original: the body is the datagram */
	uint64_t requests;	 /* answered 2xx */
	uint64_t records;	 /* delivered: in a 2xx answer, not rejected */
	uint64_t bytes_raw;	 /* request bodies before compression (2xx ones) */
	uint64_t bytes_sent;	 /* ... and as sent */
	uint64_t retries;	 /* requests sent again */
	uint64_t failed;	 /* records failed for good, by reason below */
	uint64_t in_flight;	 /* produced, not answered yet */
	uint64_t undelivered;	 /* given up at exit (--drain-timeout) */
	long last_status;	 /* last HTTP status, 0 = none or no answer */
	unsigned int nr_reasons;
	struct {
		const char *name; /* "http_400", "rejected: <errorMessage>" */
		uint64_t count;
	} reasons[SINK_OTLP_MAX_REASONS + 1]; /* + "other" when the table is full */
};

/* The counters of an otlp sink; -EINVAL if s is not one. Safe from another
 * thread (a metrics scrape): each count is read atomically. */
int sink_otlp_stats(struct sink *s, struct sink_otlp_stats *out);

#endif
