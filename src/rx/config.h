/* SPDX-License-Identifier: MIT */
/* syslogrx's command line: every flag, its default, its validation. */
#ifndef SYSLOGRX_CONFIG_H
#define SYSLOGRX_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "syslog/format.h"
#include "bpf/balancer.h"

#define CONFIG_MAX_SOCKETS  REUSEPORT_MAX_SOCKETS
#define CONFIG_MAX_BATCH    1024

enum output_kind { OUTPUT_NULL, OUTPUT_STDOUT, OUTPUT_FILE, OUTPUT_TCP, OUTPUT_KAFKA };

/* --kafka-key: what a Kafka record's key is (it picks the partition). */
enum kafka_key { KAFKA_KEY_NONE, KAFKA_KEY_SOURCE, KAFKA_KEY_HOSTNAME, KAFKA_KEY_APP };

#define CONFIG_MAX_KAFKA_OPTS	64
#define CONFIG_KAFKA_OPT_LEN	512
#define CONFIG_KAFKA_TOPIC_MAX	249	/* Kafka's own limit */

struct config {
	char listen[128];
	unsigned int sockets;
	unsigned int threads;
	enum balance_policy balance;
	uint64_t rcvbuf;		/* 0: the kernel's default */
	unsigned int batch;		/* recvmmsg batch: the fetch limit */
	enum output_kind output;
	char output_arg[PATH_MAX];	/* file path, HOST:PORT for tcp, BROKERS/TOPIC for kafka */
	enum out_format format;
	char summary[PATH_MAX];		/* "" = none */
	double duration;		/* 0 = until a signal */
	uint64_t cost_ns;		/* lab knob: CPU spent per message by the worker */
	uint64_t window;		/* input window, messages */
	uint64_t window_bytes;		/* input window, bytes (soft: + one batch) */
	uint64_t output_rate;		/* lab knob: output stage cap, msgs/s; 0 = none */
	bool trace;			/* count kernel drops with bpf/tracer.bpf.c */
	double stats_interval;		/* 0 = no periodic stats line */
	bool verbose;
	/* --output kafka:BROKERS/TOPIC, split */
	char kafka_brokers[PATH_MAX];	/* "host:port[,host:port...]" */
	char kafka_topic[CONFIG_KAFKA_TOPIC_MAX + 1];
	enum kafka_key kafka_key;
	unsigned int kafka_nr_opts;	/* --kafka-opt KEY=VALUE, in order */
	char kafka_opts[CONFIG_MAX_KAFKA_OPTS][CONFIG_KAFKA_OPT_LEN];
	double drain_timeout;		/* seconds to wait for outstanding deliveries at exit */
	/* --disk-buffer (rx/diskbuf.h): "" = none */
	char disk_buffer[PATH_MAX];
	uint64_t disk_buffer_size;	/* bytes, all segment files together */
	int disk_buffer_mode;		/* enum diskbuf_mode: 0 spill, 1 reliable */
	unsigned int disk_buffer_sync_ms;	/* fdatasync interval; 0 = every batch */
};

/*
 * Parses argv into c (defaults first). flags are argp_parse flags: 0 in the
 * program (argp prints and exits on --help and unknown flags), ARGP_NO_EXIT |
 * ARGP_NO_ERRS in tests. Returns 0, or an errno with a one-line message in err
 * naming the flag.
 */
int config_parse(struct config *c, int argc, char **argv, unsigned int flags, char *err, size_t errlen);

#endif
