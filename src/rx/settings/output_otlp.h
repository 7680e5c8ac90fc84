/* SPDX-License-Identifier: MIT */
/* The otlp output's settings: --output otlp:URL and --otlp-* (rx/sink/otlp.c
 * exports). */
#ifndef SYSLOGRX_OUTPUT_OTLP_H
#define SYSLOGRX_OUTPUT_OTLP_H

#include <limits.h>
#include <stdbool.h>
#include "rx/settings/outputs.h"

#define CONFIG_MAX_OTLP_HEADERS 16
#define CONFIG_OTLP_HEADER_LEN 1024

/* --output otlp:URL (output_arg is the URL, with /v1/logs added when it has
 * no path) and its flags */
struct otlp_options {
	bool gzip; /* --otlp-compression gzip (default) | none */
	bool json; /* --otlp-encoding json; protobuf by default */
	/* --otlp-original: the body is the datagram as it came */
	bool original;
	char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
	unsigned int nr_headers; /* --otlp-header KEY=VALUE, in order */
	char headers[CONFIG_MAX_OTLP_HEADERS][CONFIG_OTLP_HEADER_LEN];
};

extern const struct output_def output_otlp;

/* otlp:http[s]://HOST:PORT[/PATH]; without a path, OTLP/HTTP's /v1/logs. */
int parse_otlp_url(struct config *c);
/* One KEY=VALUE OTLP header from where (a flag, or a file's line): 0, or
 * -EINVAL with err. */
int add_otlp_header(struct config *c, const char *kv, const char *where, char *err, size_t errlen);
/* --otlp-*: only with the otlp output; its TLS files with https. */
int otlp_options_check(const struct config *c, char *err, size_t errlen);

#endif
