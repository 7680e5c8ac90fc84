/* SPDX-License-Identifier: MIT */
/* The otlp output's options in struct config (rx/settings/output_otlp.c
 * parses and checks them). */
#ifndef SYSLOGRX_OTLP_OPTIONS_H
#define SYSLOGRX_OTLP_OPTIONS_H

#include <limits.h>
#include <stdbool.h>

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

#endif
