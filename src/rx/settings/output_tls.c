// SPDX-License-Identifier: MIT
/* The tls output's settings: its flags and their checks (the destination is
 * tcp's HOST:PORT). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common/array.h"
#include "rx/settings/config.h"
#include "rx/settings/config_options.h"
#include "rx/settings/output_tls.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return EINVAL;                      \
	} while (0)

/* A PEM file of the otlp or the tls output: readable now, kept by path. */
int parse_pem_path(const char *flag, char *dst, const char *arg, char *err, size_t errlen)
{
	if (strlen(arg) >= PATH_MAX || access(arg, R_OK))
		FAIL("%s %s: cannot read it: %s", flag, arg, strerror(errno ?: ENAMETOOLONG));
	snprintf(dst, PATH_MAX, "%s", arg);
	return 0;
}

static int parse_opt(struct config *c, int key, const char *arg, char *err, size_t errlen)
{
	bool ok;

	switch (key) {
	case OPT_TLS_CA:
		return parse_pem_path("--tls-ca", c->tls.ca, arg, err, errlen);
	case OPT_TLS_CERT:
		return parse_pem_path("--tls-cert", c->tls.cert, arg, err, errlen);
	case OPT_TLS_KEY:
		return parse_pem_path("--tls-key", c->tls.key, arg, err, errlen);
	case OPT_TLS_NAME:
		ok = *arg && strlen(arg) < sizeof(c->tls.name);
		for (const char *p = arg; ok && *p; p++)
			ok = isalnum((unsigned char)*p) || strchr(".-_:*", *p);
		if (!ok)
			FAIL("--tls-name %s: expected a DNS name or an IP address (letters, digits, "
			     "'.', '-', '_', ':', '*'; under %zu bytes)",
			     arg, sizeof(c->tls.name));
		snprintf(c->tls.name, sizeof(c->tls.name), "%s", arg);
		return 0;
	}
	return -1;
}

int tls_options_check(const struct config *c, char *err, size_t errlen)
{
	if (c->output != OUTPUT_TLS &&
	    (c->tls.ca[0] || c->tls.cert[0] || c->tls.key[0] || c->tls.name[0]))
		FAIL("--tls-ca, --tls-cert, --tls-key and --tls-name need --output "
		     "tls:HOST:PORT");
	if (!c->tls.cert[0] != !c->tls.key[0])
		FAIL("--tls-cert and --tls-key go together");
	return 0;
}

static void print(const struct config *c, FILE *f)
{
	output_print_str(f, "tls-ca", c->tls.ca);
	output_print_str(f, "tls-cert", c->tls.cert);
	output_print_str(f, "tls-key", c->tls.key);
	output_print_str(f, "tls-name", c->tls.name);
}

static const struct restart_field restart[] = {
	RESTART_STRING("tls-ca", tls.ca),
	RESTART_STRING("tls-cert", tls.cert),
	RESTART_STRING("tls-key", tls.key),
	RESTART_STRING("tls-name", tls.name),
};

/* tcp over TLS (RFC 5425) */
const struct output_def output_tls = {
	.kind = OUTPUT_TLS,
	.name = "tls",
	.usage = "tls:HOST:PORT",
	.has_arg = true,
	.network = true,
	.stream = true,
	.parse_opt = parse_opt,
	.check = tls_options_check,
	.print = print,
	.restart = restart,
	.nr_restart = ARRAY_SIZE(restart),
};
