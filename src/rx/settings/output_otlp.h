/* SPDX-License-Identifier: MIT */
/* The otlp output's settings: --output otlp:URL and --otlp-* (rx/sink/otlp.c
 * exports). */
#ifndef SYSLOGRX_OUTPUT_OTLP_H
#define SYSLOGRX_OUTPUT_OTLP_H

#include "rx/settings/output_def.h"
#include "rx/settings/otlp_options.h"

extern const struct output_def output_otlp;

/* otlp:http[s]://HOST:PORT[/PATH]; without a path, OTLP/HTTP's /v1/logs. */
int parse_otlp_url(struct config *c);
/* One KEY=VALUE OTLP header from where (a flag, or a file's line): 0, or
 * -EINVAL with err. */
int add_otlp_header(struct config *c, const char *kv, const char *where, char *err, size_t errlen);
/* --otlp-*: only with the otlp output; its TLS files with https. */
int otlp_options_check(const struct config *c, char *err, size_t errlen);

#endif
