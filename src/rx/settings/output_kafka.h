/* SPDX-License-Identifier: MIT */
/* The kafka output's settings: --output kafka:BROKERS/TOPIC, --kafka-key,
 * --kafka-opt (rx/sink/kafka.c sends). */
#ifndef SYSLOGRX_OUTPUT_KAFKA_H
#define SYSLOGRX_OUTPUT_KAFKA_H

#include <limits.h>
#include "rx/settings/outputs.h"

/* --kafka-key: what a Kafka record's key is (it picks the partition). */
enum kafka_key { KAFKA_KEY_NONE, KAFKA_KEY_SOURCE, KAFKA_KEY_HOSTNAME, KAFKA_KEY_APP };

#define CONFIG_MAX_KAFKA_OPTS 64
#define CONFIG_KAFKA_OPT_LEN 512
#define CONFIG_KAFKA_TOPIC_MAX 249 /* Kafka's own limit */

struct kafka_options {
	/* --output kafka:BROKERS/TOPIC, split */
	char brokers[PATH_MAX]; /* "host:port[,host:port...]" */
	char topic[CONFIG_KAFKA_TOPIC_MAX + 1];
	enum kafka_key key;
	unsigned int nr_opts; /* --kafka-opt KEY=VALUE, in order */
	char opts[CONFIG_MAX_KAFKA_OPTS][CONFIG_KAFKA_OPT_LEN];
};

extern const struct output_def output_kafka;

/* output_arg "BROKERS/TOPIC" -> kafka.brokers, kafka.topic. */
int parse_kafka_dest(struct config *c);
/* --kafka-key: none | source | hostname | app. */
int parse_kafka_key(const char *arg, enum kafka_key *out);
/* --kafka-key, --kafka-opt: only with the kafka output. */
int kafka_options_check(const struct config *c, char *err, size_t errlen);

#endif
