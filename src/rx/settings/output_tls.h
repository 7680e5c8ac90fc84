/* SPDX-License-Identifier: MIT */
/* The tls output's settings: --output tls:HOST:PORT (RFC 5425) and --tls-*
 * (rx/sink/tcp.c and rx/sink/tls.c send). */
#ifndef SYSLOGRX_OUTPUT_TLS_H
#define SYSLOGRX_OUTPUT_TLS_H

#include <limits.h>
#include "rx/settings/outputs.h"

/* The CA to verify the server with ("" = the system's), the client's
 * certificate and key ("" = none), the name its certificate must hold
 * ("" = HOST) */
struct tls_options {
	char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
	char name[256];
};

extern const struct output_def output_tls;

/* --tls-*: only with the tls output; a certificate with its key. */
int tls_options_check(const struct config *c, char *err, size_t errlen);
/* A PEM file of an output (--tls-ca, --otlp-key...): readable now, kept by
 * path in dst (PATH_MAX). 0, or EINVAL with err. */
int parse_pem_path(const char *flag, char *dst, const char *arg, char *err, size_t errlen);

#endif
