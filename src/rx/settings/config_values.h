/* SPDX-License-Identifier: MIT */
/*
 * The values of the flags that need more than a number, for config.c's
 * parsers: each returns 0, or a negative errno and leaves the message (which
 * names the flag) to its caller, except add_otlp_header, which writes it.
 */
#ifndef SYSLOGRX_CONFIG_VALUES_H
#define SYSLOGRX_CONFIG_VALUES_H

#include <stddef.h>
#include "rx/settings/config.h"

/* --output DEST: the kind and its argument (output_arg). */
int parse_output(struct config *c, const char *arg);
/* otlp:http[s]://HOST:PORT[/PATH]; without a path, OTLP/HTTP's /v1/logs. */
int parse_otlp_url(struct config *c);
/* --timezone: UTC, +HH:MM / -HH:MM, or a zone in the system's tz database. */
int parse_timezone(struct config *c, const char *arg);
/* output_arg "BROKERS/TOPIC" -> kafka_brokers, kafka_topic. */
int parse_kafka_dest(struct config *c);
/* --kafka-key: none | source | hostname | app. */
int parse_kafka_key(const char *arg, enum kafka_key *out);
/* --cost-ns "N" or "N,N,...". */
int parse_cost_ns(struct config *c, const char *arg);
/* One KEY=VALUE OTLP header from where (a flag, or a file's line). */
int add_otlp_header(struct config *c, const char *kv, const char *where, char *err, size_t errlen);
/* add_otlp_header as header_file_read's callback (ctx: the config). */
int add_header_line(const char *kv, const char *where, void *ctx, char *err, size_t errlen);
/* --protect PREFIX[=WEIGHT]: an IPv4 or IPv6 address with an optional /LEN
 * (none: the one address), weight 1..CONFIG_MAX_WEIGHT (none: never shed),
 * appended to c->protect. Host bits set past LEN are refused. */
int add_protect(struct config *c, const char *arg);

#endif
