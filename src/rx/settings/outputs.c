// SPDX-License-Identifier: MIT
/* The outputs' table, and what the rest of the program asks of the output
 * a config names. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common/redact.h"
#include "rx/settings/config.h"
#include "rx/settings/output_def.h"
#include "rx/settings/output_kafka.h"
#include "rx/settings/output_otlp.h"
#include "rx/settings/output_proxy.h"
#include "rx/settings/output_tls.h"

static const struct output_def output_null = {
	.kind = OUTPUT_NULL,
	.name = "null",
	.usage = "null",
	.discards = true,
};

static const struct output_def output_stdout = {
	.kind = OUTPUT_STDOUT,
	.name = "stdout",
	.usage = "stdout",
};

static const struct output_def output_file = {
	.kind = OUTPUT_FILE,
	.name = "file",
	.usage = "file:PATH",
	.has_arg = true,
	.path = true,
};

static const struct output_def output_tcp = {
	.kind = OUTPUT_TCP,
	.name = "tcp",
	.usage = "tcp:HOST:PORT",
	.has_arg = true,
	.network = true,
	.stream = true,
	/* --proxy-protocol and its pool, for tls too (every output's
	 * parse_opt and check run whatever the output is) */
	.parse_opt = proxy_parse_opt,
	.defaults = proxy_defaults,
	.check = proxy_options_check,
	.print = proxy_print,
	.restart = proxy_restart,
	.nr_restart = PROXY_NR_RESTART,
};

/* One line per output, by kind: the sinks' open table in rx/sink/registry.c
 * follows the same kinds. */
const struct output_def *const outputs[] = {
	[OUTPUT_NULL] = &output_null,	[OUTPUT_STDOUT] = &output_stdout,
	[OUTPUT_FILE] = &output_file,	[OUTPUT_TCP] = &output_tcp,
	[OUTPUT_KAFKA] = &output_kafka, [OUTPUT_OTLP] = &output_otlp,
	[OUTPUT_TLS] = &output_tls,	[OUTPUT_KINDS] = NULL,
};

const struct output_def *output_of(const struct config *c)
{
	return outputs[c->output];
}

const struct output_def *output_match(const char *spec, const char **arg)
{
	for (const struct output_def *const *d = outputs; *d; d++) {
		size_t nl = strlen((*d)->name);

		if (strncmp(spec, (*d)->name, nl))
			continue;
		if (!(*d)->has_arg) {
			if (spec[nl])
				continue;
		} else if (spec[nl] != ':' || !spec[nl + 1]) {
			continue;
		}
		*arg = (*d)->has_arg ? spec + nl + 1 : "";
		return *d;
	}
	return NULL;
}

/* --output NAME or NAME:ARG: the kind and its argument (output_arg). */
static const struct output_def *parse_kind(struct config *c, const char *spec)
{
	const char *arg;
	const struct output_def *d = output_match(spec, &arg);

	if (!d || strlen(arg) >= sizeof(c->output_arg))
		return NULL;
	c->output = d->kind;
	snprintf(c->output_arg, sizeof(c->output_arg), "%s", arg);
	return d;
}

int outputs_parse(struct config *c, const char *arg, char *err, size_t errlen)
{
	const struct output_def *d = parse_kind(c, arg);
	char shown[sizeof(c->output_arg)];
	size_t n = 0;

	if (d)
		return d->parse_arg ? d->parse_arg(c, arg, err, errlen) : 0;
	n += snprintf(err, errlen, "--output %s: expected ", redact_url(shown, sizeof(shown), arg));
	for (const struct output_def *const *o = outputs; *o && n < errlen; o++)
		n += snprintf(err + n, errlen - n, "%s%s",
			      o == outputs ? "" :
			      o[1]	   ? ", " :
					     " or ",
			      (*o)->usage);
	return EINVAL;
}

void outputs_defaults(struct config *c)
{
	c->output = OUTPUT_STDOUT; /* someone who starts it and sends a message sees it */
	for (const struct output_def *const *d = outputs; *d; d++)
		if ((*d)->defaults)
			(*d)->defaults(c);
}

int outputs_parse_opt(struct config *c, int key, const char *arg, char *err, size_t errlen)
{
	int ret = -1;

	for (const struct output_def *const *d = outputs; *d && ret < 0; d++)
		if ((*d)->parse_opt)
			ret = (*d)->parse_opt(c, key, arg, err, errlen);
	return ret;
}

void outputs_print(const struct config *c, FILE *f)
{
	for (const struct output_def *const *d = outputs; *d; d++)
		if ((*d)->print)
			(*d)->print(c, f);
}

bool config_output_is_network(const struct config *c)
{
	return output_of(c)->network;
}

enum out_framing config_framing(const struct config *c)
{
	if (c->framing != FRAMING_DEFAULT)
		return c->framing;
	return c->format == FORMAT_ORIGINAL ? FRAMING_NEWLINE : FRAMING_OCTET;
}

unsigned int config_format_flags(const struct config *c)
{
	bool stream = output_of(c)->stream;
	bool octet = stream && config_framing(c) == FRAMING_OCTET;
	unsigned int f = 0;

	if (!c->escape_control)
		f |= FORMAT_F_EXACT_CONTROL;
	if (!c->json_raw)
		f |= FORMAT_F_JSON_NO_RAW;
	if (octet)
		f |= FORMAT_F_OCTET_FRAME;
	/* A frame or a Kafka record holds any bytes: original keeps them all. */
	if (octet || output_of(c)->whole)
		f |= FORMAT_F_WHOLE;
	return f;
}

const char *config_output_name(const struct config *c, char *buf, size_t len)
{
	char shown[sizeof(c->output_arg)];

	/* a URL's userinfo is a secret: never in the summary or a log line */
	if (c->output_arg[0])
		snprintf(buf, len, "%s:%s", output_of(c)->name,
			 redact_url(shown, sizeof(shown), c->output_arg));
	else
		snprintf(buf, len, "%s", output_of(c)->name);
	return buf;
}
