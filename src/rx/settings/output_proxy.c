// SPDX-License-Identifier: MIT
/* The tcp and tls outputs' PROXY protocol settings: a connection per sender,
 * opened with a PROXY header naming it (rx/sink/tcp_pool.c). */
#include <errno.h>
#include <stdio.h>
#include "common/parse_num.h"
#include "rx/settings/config.h"
#include "rx/settings/config_options.h"
#include "rx/settings/output_proxy.h"
#include "net/sender_pool.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return EINVAL;                      \
	} while (0)

int proxy_parse_opt(struct config *c, int key, const char *arg, char *err, size_t errlen)
{
	uint64_t n;

	switch (key) {
	case OPT_PROXY_PROTOCOL:
		if (proxy_version_parse(arg, &c->proxy.version))
			FAIL("--proxy-protocol %s: expected v1 or v2", arg);
		return 0;
	case OPT_PROXY_CONNECTIONS:
		if (parse_u64(arg, 1, SENDER_POOL_MAX, &n))
			FAIL("--proxy-connections %s: expected 1 to %u", arg, SENDER_POOL_MAX);
		c->proxy.connections = (unsigned int)n;
		return 0;
	case OPT_PROXY_IDLE:
		if (parse_seconds(arg, 0.1, 86400.0, &c->proxy.idle))
			FAIL("--proxy-idle %s: expected seconds from 0.1 to 86400", arg);
		return 0;
	}
	return -1;
}

void proxy_defaults(struct config *c)
{
	c->proxy.connections = PROXY_CONNECTIONS_DEF;
	c->proxy.idle = PROXY_IDLE_DEF;
}

/* What a connection per sender cannot be: a Kafka or OTLP record, a file's
 * line has no connection to open; the reasons are said. */
int proxy_options_check(const struct config *c, char *err, size_t errlen)
{
	if (!c->proxy.version) {
		if (c->proxy.connections != PROXY_CONNECTIONS_DEF ||
		    c->proxy.idle != PROXY_IDLE_DEF)
			FAIL("--proxy-connections and --proxy-idle need --proxy-protocol v1|v2");
		return 0;
	}
	if (c->output != OUTPUT_TCP && c->output != OUTPUT_TLS)
		FAIL("--proxy-protocol needs --output tcp:HOST:PORT or tls:HOST:PORT (a PROXY "
		     "header opens a TCP connection; a file, Kafka or OTLP has none: Kafka's "
		     "--kafka-key source and OTLP's attributes carry the sender)");
	if (c->output_rate)
		FAIL("--proxy-protocol and --output-rate cannot be used together: the pace is "
		     "kept by the one-connection output only");
	return 0;
}

void proxy_print(const struct config *c, FILE *f)
{
	if (!c->proxy.version)
		return;
	fprintf(f, "proxy-protocol = %s\n", proxy_version_name(c->proxy.version));
	fprintf(f, "proxy-connections = %u\n", c->proxy.connections);
	fprintf(f, "proxy-idle = %g\n", c->proxy.idle);
}

const struct restart_field proxy_restart[PROXY_NR_RESTART] = {
	RESTART_FIELD("proxy-protocol", proxy.version),
	RESTART_FIELD("proxy-connections", proxy.connections),
	RESTART_FIELD("proxy-idle", proxy.idle),
};
