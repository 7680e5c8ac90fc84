// SPDX-License-Identifier: MIT
/* Picks the sink for --output: each destination lives in its own file. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "common/log.h"
#include "rx/settings/config.h"
#include "rx/sink/sink.h"

static struct sink *open_kind(const struct config *c)
{
	switch (c->output) {
	case OUTPUT_NULL:
	case OUTPUT_STDOUT:
	case OUTPUT_FILE:
		return sink_file_open(c);
	case OUTPUT_TCP:
	case OUTPUT_TLS:
		return sink_tcp_open(c);
	case OUTPUT_KAFKA:
		return sink_kafka_open(c);
	case OUTPUT_OTLP:
		return sink_otlp_open(c);
	default:
		pr_warn("--output %s: not supported in this build\n", c->output_arg);
		errno = ENOTSUP;
		return NULL;
	}
}

struct sink *sink_open(const struct config *c)
{
	struct sink *s = open_kind(c);

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
