/* SPDX-License-Identifier: MIT */
/*
 * kafka:BROKERS/TOPIC sink (librdkafka): an async sink (see sink.h). Each
 * message is one record whose value is the formatted line without its '\n'.
 * Defaults: acks=all, enable.idempotence=true, linger.ms=5,
 * message.timeout.ms=0 (transient errors are retried for ever: while the
 * broker is away the input window fills and back-pressure reaches the
 * kernel), queue.buffering.max.messages = the window + one batch. Every
 * --kafka-opt KEY=VALUE is applied after these.
 */
#ifndef SYSLOGRX_SINK_KAFKA_H
#define SYSLOGRX_SINK_KAFKA_H

#include <stdint.h>
#include "rx/sink/sink.h"

#define SINK_KAFKA_MAX_REASONS 32

struct sink_kafka_stats {
	const char *brokers;
	const char *topic;
	uint64_t delivered;   /* acknowledged by Kafka */
	uint64_t failed;      /* permanent errors, by reason below */
	uint64_t in_flight;   /* produced, no delivery report yet */
	uint64_t undelivered; /* given up at exit (--drain-timeout) */
	unsigned int nr_reasons;
	struct {
		const char *name; /* rd_kafka_err2name(), e.g. "MSG_SIZE_TOO_LARGE" */
		uint64_t count;
	} reasons[SINK_KAFKA_MAX_REASONS + 1]; /* + "OTHER" when the table is full */
};

/* The counters of a kafka sink; -EINVAL if s is not one. Safe while the
 * output stage runs (a metrics scrape): each count is read atomically. */
int sink_kafka_stats(struct sink *s, struct sink_kafka_stats *out);

#endif
