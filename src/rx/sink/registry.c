// SPDX-License-Identifier: MIT
/* Picks the sink for --output: each destination lives in its own file. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "common/log.h"
#include "common/sockaddr.h"
#include "rx/settings/output_routes.h"
#include "rx/sink/registry.h"
#include "rx/sink/tcp_pool.h"
#include "rx/sink/tls.h"

/* tcp:/tls: HOST:PORT as the output will parse it. */
static unsigned int check_host_port(const struct config *c)
{
	char shown[PATH_MAX + 16];
	struct sockaddr_storage a;
	socklen_t alen;

	if (!parse_host_port(c->output_arg, &a, &alen))
		return 0;
	pr_err("--output %s: expected HOST:PORT with a numeric address\n",
	       config_output_name(c, shown, sizeof(shown)));
	return 1;
}

/* The PEM files of the tls output, read as a TLS client reads them (each
 * logs its refusal). */
static unsigned int check_tls(const struct config *c)
{
	return check_host_port(c) +
	       !!tls_files_check(&(struct tls_files){ .ca = c->tls.ca,
						      .cert = c->tls.cert,
						      .key = c->tls.key,
						      .ca_flag = "--tls-ca",
						      .cert_flag = "--tls-cert",
						      .key_flag = "--tls-key" });
}

/* The otlp output's, when it has any. */
static unsigned int check_otlp(const struct config *c)
{
	return (c->otlp.ca[0] || c->otlp.cert[0]) &&
	       tls_files_check(&(struct tls_files){ .ca = c->otlp.ca,
						    .cert = c->otlp.cert,
						    .key = c->otlp.key,
						    .ca_flag = "--otlp-ca",
						    .cert_flag = "--otlp-cert",
						    .key_flag = "--otlp-key" });
}

static const struct sink_kind {
	struct sink *(*open)(const struct config *c);
	unsigned int (*check)(const struct config *c);	     /* --check-config */
	int (*stats)(struct sink *s, struct sink_stats *st); /* its own numbers */
} kinds[OUTPUT_KINDS] = {
	[OUTPUT_NULL] = { sink_file_open },
	[OUTPUT_STDOUT] = { sink_file_open },
	[OUTPUT_FILE] = { sink_file_open },
	[OUTPUT_TCP] = { sink_tcp_open, check_host_port, pool_stats_read },
	[OUTPUT_KAFKA] = { sink_kafka_open, NULL, kafka_stats_read },
	[OUTPUT_OTLP] = { sink_otlp_open, check_otlp, otlp_stats_read },
	[OUTPUT_TLS] = { sink_tcp_open, check_tls, pool_stats_read },
};

void sink_stats_read(const struct config *c, struct sink *s, struct sink_stats *st)
{
	st->ops = NULL;
	if (s && kinds[c->output].stats && kinds[c->output].stats(s, st))
		st->ops = NULL;
}

unsigned int sink_check(const struct config *c)
{
	unsigned int n = kinds[c->output].check ? kinds[c->output].check(c) : 0;
	struct config *one;

	/* each --output LISTENER=DEST as its sink will read it */
	if (!c->nr_routes || !(one = malloc(sizeof(*one))))
		return n;
	for (unsigned int i = 0; i < c->nr_routes; i++) {
		*one = *c;
		output_route_apply(one, i);
		n += kinds[one->output].check ? kinds[one->output].check(one) : 0;
	}
	free(one);
	return n;
}

struct sink *sink_open(const struct config *c)
{
	struct sink *s;

	if (!kinds[c->output].open) {
		pr_warn("--output %s: not supported in this build\n", c->output_arg);
		errno = ENOTSUP;
		return NULL;
	}
	/* --proxy-protocol: a connection per sender (tcp_pool.c) */
	s = c->proxy.version ? sink_tcp_pool_open(c) : kinds[c->output].open(c);
	if (!s)
		return NULL;
	/* A named --timezone is the process's local zone from here on
	 * (localtime_r in the output stage; the rfc5424 format's too). */
	if (c->tz_kind == TZ_NAMED) {
		setenv("TZ", c->timezone, 1);
		tzset();
	}
	s->tz_kind = c->tz_kind;
	s->tz_offset = c->tz_offset;
	s->guess_tz = c->guess_tz;
	if (c->listener_names) {
		s->listeners = c->listeners;
		s->nr_listeners = c->nr_listeners;
	}
	return s;
}
