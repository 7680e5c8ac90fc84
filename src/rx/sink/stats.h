/* SPDX-License-Identifier: MIT */
/*
 * An output's own numbers (the kafka and otlp outputs keep some): read from
 * its sink into a snapshot by sink_stats_read (rx/sink/registry.h), and
 * written by the output's own code as its summary object and its metrics
 * rows, so that report/ writes them without knowing the kind.
 */
#ifndef SYSLOGRX_SINK_STATS_H
#define SYSLOGRX_SINK_STATS_H

#include "rx/sink/kafka.h"
#include "rx/sink/otlp.h"
#include "rx/sink/tcp_pool.h"

struct json_writer;
struct prom_text;
struct sink_stats;

struct sink_stats_ops {
	/* The summary's object for the output ("kafka": {...}). */
	void (*summary)(struct json_writer *w, const struct sink_stats *st);
	/* Its metrics rows (syslogrx_kafka_*). */
	void (*metrics)(struct prom_text *p, const struct sink_stats *st);
};

struct sink_stats {
	const struct sink_stats_ops *ops; /* NULL: no numbers of its own (or no sink) */
	union {
		struct sink_kafka_stats kafka;
		struct sink_otlp_stats otlp;
		struct sink_pool_stats pool;
	};
};

/* Each fills st from its own sink: 0, or -ENOENT (s is not one). */
int kafka_stats_read(struct sink *s, struct sink_stats *st);
int otlp_stats_read(struct sink *s, struct sink_stats *st);
int pool_stats_read(struct sink *s, struct sink_stats *st);

#endif
