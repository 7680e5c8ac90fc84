/* SPDX-License-Identifier: MIT */
/* The tls output's settings: --output tls:HOST:PORT (RFC 5425) and --tls-*
 * (rx/sink/tcp.c and rx/sink/tls.c send). */
#ifndef SYSLOGRX_OUTPUT_TLS_H
#define SYSLOGRX_OUTPUT_TLS_H

#include "rx/settings/output_def.h"
#include "rx/settings/tls_options.h"

extern const struct output_def output_tls;

/* --tls-*: only with the tls output; a certificate with its key. */
int tls_options_check(const struct config *c, char *err, size_t errlen);
/* A PEM file of an output (--tls-ca, --otlp-key...): readable now, kept by
 * path in dst (PATH_MAX). 0, or EINVAL with err. */
int parse_pem_path(const char *flag, char *dst, const char *arg, char *err, size_t errlen);

#endif
