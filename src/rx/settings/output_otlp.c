// SPDX-License-Identifier: MIT
/* The otlp output's settings: its URL, its flags, their checks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common/array.h"
#include "common/redact.h"
#include "rx/settings/config.h"
#include "rx/settings/config_options.h"
#include "rx/settings/header_file.h"
#include "rx/settings/output_otlp.h"
#include "rx/settings/output_tls.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return EINVAL;                      \
	} while (0)

/* One KEY=VALUE header, from a flag or a --otlp-header-file line (where
 * names it). An error never shows the value: it is a secret as often as
 * not (Authorization=Bearer ...). */
int add_otlp_header(struct config *c, const char *kv, const char *where, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char shown[64];

	if (c->otlp.nr_headers >= CONFIG_MAX_OTLP_HEADERS) {
		snprintf(err, errlen, "%s: at most %d headers", where, CONFIG_MAX_OTLP_HEADERS);
		return -EINVAL;
	}
	if (!eq || eq == kv || strlen(kv) >= CONFIG_OTLP_HEADER_LEN || memchr(kv, ':', eq - kv) ||
	    memchr(kv, ' ', eq - kv)) {
		snprintf(err, errlen,
			 "%s %s: expected KEY=VALUE (shorter than %d bytes, no ':' in KEY)", where,
			 eq && eq - kv < 48 ? redact_header(shown, sizeof(shown), kv) : REDACTED,
			 CONFIG_OTLP_HEADER_LEN);
		return -EINVAL;
	}
	if (strpbrk(kv, "\r\n")) {
		snprintf(err, errlen, "%s: a header cannot hold a line break", where);
		return -EINVAL;
	}
	snprintf(c->otlp.headers[c->otlp.nr_headers++], CONFIG_OTLP_HEADER_LEN, "%s", kv);
	return 0;
}

/* add_otlp_header as header_file_read's callback (ctx: the config). */
static int add_header_line(const char *kv, const char *where, void *ctx, char *err, size_t errlen)
{
	return add_otlp_header(ctx, kv, where, err, errlen);
}

/* otlp:http[s]://HOST:PORT[/PATH]; without a path, OTLP/HTTP's /v1/logs. */
int parse_otlp_url(struct config *c)
{
	const char *u = c->output_arg, *host, *slash;
	size_t hl;

	if (!strncmp(u, "http://", 7))
		host = u + 7;
	else if (!strncmp(u, "https://", 8))
		host = u + 8;
	else
		return -EINVAL;
	slash = strchr(host, '/');
	hl = slash ? (size_t)(slash - host) : strlen(host);
	if (!hl || !memchr(host, ':', hl))
		return -EINVAL;
	if ((!slash || !slash[1]) && strlen(u) + sizeof("/v1/logs") > sizeof(c->output_arg))
		return -EINVAL;
	if (!slash)
		strcat(c->output_arg, "/v1/logs");
	else if (!slash[1])
		strcat(c->output_arg, "v1/logs");
	return 0;
}

static int parse_arg(struct config *c, const char *given, char *err, size_t errlen)
{
	char shown[sizeof(c->output_arg)];

	if (parse_otlp_url(c))
		FAIL("--output %s: expected otlp:http://HOST:PORT[/PATH] or "
		     "otlp:https://HOST:PORT[/PATH]",
		     redact_url(shown, sizeof(shown), given));
	return 0;
}

static int parse_opt(struct config *c, int key, const char *arg, char *err, size_t errlen)
{
	switch (key) {
	case OPT_OTLP_COMPRESSION:
		if (strcmp(arg, "gzip") && strcmp(arg, "none"))
			FAIL("--otlp-compression %s: expected gzip or none", arg);
		c->otlp.gzip = !strcmp(arg, "gzip");
		return 0;
	case OPT_OTLP_ENCODING:
		if (strcmp(arg, "protobuf") && strcmp(arg, "json"))
			FAIL("--otlp-encoding %s: expected protobuf or json", arg);
		c->otlp.json = !strcmp(arg, "json");
		return 0;
	case OPT_OTLP_CA:
		return parse_pem_path("--otlp-ca", c->otlp.ca, arg, err, errlen);
	case OPT_OTLP_CERT:
		return parse_pem_path("--otlp-cert", c->otlp.cert, arg, err, errlen);
	case OPT_OTLP_KEY:
		return parse_pem_path("--otlp-key", c->otlp.key, arg, err, errlen);
	case OPT_OTLP_HEADER:
		if (add_otlp_header(c, arg, "--otlp-header", err, errlen))
			return EINVAL;
		return 0;
	case OPT_OTLP_HEADER_FILE:
		if (header_file_read(arg, add_header_line, c, err, errlen))
			return EINVAL;
		return 0;
	case OPT_OTLP_ORIGINAL:
		c->otlp.original = true;
		return 0;
	}
	return -1;
}

static void defaults(struct config *c)
{
	c->otlp.gzip = true;
}

int otlp_options_check(const struct config *c, char *err, size_t errlen)
{
	if (c->output != OUTPUT_OTLP && (!c->otlp.gzip || c->otlp.json || c->otlp.ca[0] ||
					 c->otlp.cert[0] || c->otlp.key[0] || c->otlp.nr_headers))
		FAIL("--otlp-compression, -encoding, -ca, -cert, -key and -header need "
		     "--output otlp:URL");
	if (c->output != OUTPUT_OTLP && c->otlp.original)
		FAIL("--otlp-original needs --output otlp:URL (the other outputs carry the "
		     "datagram already: --format raw, and json's \"raw\" with --json-raw)");
	if (c->output == OUTPUT_OTLP && c->format == FORMAT_ORIGINAL)
		FAIL("--format original does not apply to --output otlp: each message is one OTLP "
		     "log record; --otlp-original makes the datagram its body, byte for byte");
	if (c->output == OUTPUT_OTLP && c->format != FORMAT_RAW)
		FAIL("--format %s does not apply to --output otlp: each message is one OTLP "
		     "log record (see --otlp-encoding)",
		     format_name(c->format));
	if (!c->otlp.cert[0] != !c->otlp.key[0])
		FAIL("--otlp-cert and --otlp-key go together");
	if (c->output == OUTPUT_OTLP && !strncmp(c->output_arg, "http://", 7) &&
	    (c->otlp.ca[0] || c->otlp.cert[0]))
		FAIL("--otlp-ca, --otlp-cert and --otlp-key need an https:// URL");
	return 0;
}

static void print(const struct config *c, FILE *f)
{
	char shown[CONFIG_OTLP_HEADER_LEN];

	if (c->output == OUTPUT_OTLP) {
		fprintf(f, "otlp-compression = %s\n", c->otlp.gzip ? "gzip" : "none");
		fprintf(f, "otlp-encoding = %s\n", c->otlp.json ? "json" : "protobuf");
		for (unsigned int i = 0; i < c->otlp.nr_headers; i++)
			fprintf(f, "otlp-header = %s\n",
				redact_header(shown, sizeof(shown), c->otlp.headers[i]));
	}
	output_print_str(f, "otlp-ca", c->otlp.ca);
	output_print_str(f, "otlp-cert", c->otlp.cert);
	output_print_str(f, "otlp-key", c->otlp.key);
}

static const struct restart_field restart[] = {
	RESTART_FIELD("otlp-compression", otlp.gzip),
	RESTART_FIELD("otlp-encoding", otlp.json),
	RESTART_STRING("otlp-ca", otlp.ca),
	RESTART_STRING("otlp-cert", otlp.cert),
	RESTART_STRING("otlp-key", otlp.key),
	RESTART_STRINGS("otlp-header", otlp.headers, otlp.nr_headers),
	RESTART_FIELD("otlp-original", otlp.original),
};

const struct output_def output_otlp = {
	.kind = OUTPUT_OTLP,
	.name = "otlp",
	.usage = "otlp:http[s]://HOST:PORT[/PATH]",
	.has_arg = true,
	.network = true,
	.acknowledges = true,
	.records = true,
	.parse_arg = parse_arg,
	.parse_opt = parse_opt,
	.defaults = defaults,
	.check = otlp_options_check,
	.print = print,
	.restart = restart,
	.nr_restart = ARRAY_SIZE(restart),
};
