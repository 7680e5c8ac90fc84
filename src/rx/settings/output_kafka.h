/* SPDX-License-Identifier: MIT */
/* The kafka output's settings: --output kafka:BROKERS/TOPIC, --kafka-key,
 * --kafka-opt (rx/sink/kafka.c sends). */
#ifndef SYSLOGRX_OUTPUT_KAFKA_H
#define SYSLOGRX_OUTPUT_KAFKA_H

#include "rx/settings/output_def.h"
#include "rx/settings/kafka_options.h"

extern const struct output_def output_kafka;

/* output_arg "BROKERS/TOPIC" -> kafka.brokers, kafka.topic. */
int parse_kafka_dest(struct config *c);
/* --kafka-key: none | source | hostname | app. */
int parse_kafka_key(const char *arg, enum kafka_key *out);
/* --kafka-key, --kafka-opt: only with the kafka output. */
int kafka_options_check(const struct config *c, char *err, size_t errlen);

#endif
