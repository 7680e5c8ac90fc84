/* SPDX-License-Identifier: MIT */
/* The kafka output's options in struct config (rx/settings/output_kafka.c
 * parses and checks them). */
#ifndef SYSLOGRX_KAFKA_OPTIONS_H
#define SYSLOGRX_KAFKA_OPTIONS_H

#include <limits.h>

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

#endif
