// SPDX-License-Identifier: MIT
/* Which settings a SIGHUP re-read cannot apply live: the restart's list. */
#include <stddef.h>
#include <string.h>
#include "common/array.h"
#include "rx/settings/config.h"

/* The settings only a restart applies, by the flag that sets them. */
#define FIELD(flag, f)                                                                   \
	{                                                                                \
		flag, offsetof(struct config, f), sizeof(((struct config *)0)->f), false \
	}
#define STRING(flag, f)                                   \
	{                                                 \
		flag, offsetof(struct config, f), 0, true \
	}
static const struct restart_field {
	const char *flag;
	size_t off, size;
	bool string; /* compare up to the NUL: the rest may differ */
} restart_fields[] = {
	STRING("listen", listen),
	FIELD("max-sockets", max_sockets),
	FIELD("supervise", supervise),
	FIELD("balance", balance),
	FIELD("rcvbuf", rcvbuf),
	FIELD("batch", batch),
	FIELD("output", output),
	STRING("output", output_arg),
	FIELD("format", format),
	FIELD("framing", framing),
	STRING("summary", summary),
	FIELD("duration", duration),
	FIELD("cost-ns", cost_ns),
	FIELD("cost-ns", nr_cost_ns),
	FIELD("window", window),
	FIELD("window-bytes", window_bytes),
	FIELD("output-rate", output_rate),
	FIELD("no-trace", trace),
	FIELD("stats-interval", stats_interval),
	FIELD("verbose", verbose),
	FIELD("kafka-key", kafka_key),
	FIELD("kafka-opt", kafka_nr_opts),
	FIELD("drain-timeout", drain_timeout),
	FIELD("stop-timeout", stop_timeout),
	FIELD("stall-timeout", stall_timeout),
	FIELD("otlp-compression", otlp_gzip),
	FIELD("otlp-encoding", otlp_json),
	STRING("otlp-ca", otlp_ca),
	STRING("otlp-cert", otlp_cert),
	STRING("otlp-key", otlp_key),
	FIELD("otlp-header", otlp_nr_headers),
	STRING("tls-ca", tls_ca),
	STRING("tls-cert", tls_cert),
	STRING("tls-key", tls_key),
	STRING("tls-name", tls_name),
	FIELD("otlp-original", otlp_original),
	STRING("timezone", timezone),
	FIELD("guess-timezone", guess_tz),
	STRING("metrics", metrics),
	STRING("health", health),
	STRING("user", user),
	STRING("env-file", env_file),
	FIELD("ordered", ordered),
	FIELD("ordered", ordered_hold_ms),
	FIELD("senders", senders),
	FIELD("senders-top", senders_top),
	FIELD("sequences", sequences),
	FIELD("fair-share", fair_share),
	FIELD("protect", nr_protect),
	FIELD("protect", protect),
	FIELD("no-escape-control", escape_control),
	FIELD("json-raw", json_raw),
	FIELD("sequence-flows", sequence_flows),
	FIELD("sequence-jump", sequence_jump),
};
#undef FIELD
#undef STRING

unsigned int config_restart_changes(const struct config *a, const struct config *b,
				    void (*fn)(const char *flag, void *ctx), void *ctx)
{
	const char *last = NULL;
	unsigned int n = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(restart_fields); i++) {
		const struct restart_field *f = &restart_fields[i];
		const char *pa = (const char *)a + f->off, *pb = (const char *)b + f->off;
		bool differ = f->string ? strcmp(pa, pb) : memcmp(pa, pb, f->size);

		if (!strcmp(f->flag, "listen") && !differ)
			differ = a->nr_listeners != b->nr_listeners ||
				 memcmp(a->listeners, b->listeners,
					a->nr_listeners * sizeof(a->listeners[0]));
		if (!strcmp(f->flag, "kafka-opt") && !differ)
			for (unsigned int k = 0; k < a->kafka_nr_opts && !differ; k++)
				differ = strcmp(a->kafka_opts[k], b->kafka_opts[k]);
		if (!strcmp(f->flag, "otlp-header") && !differ)
			for (unsigned int k = 0; k < a->otlp_nr_headers && !differ; k++)
				differ = strcmp(a->otlp_headers[k], b->otlp_headers[k]);
		/* One flag, one report (output and output_arg, cost-ns, ordered). */
		if (!differ || (last && !strcmp(last, f->flag)))
			continue;
		last = f->flag;
		n++;
		if (fn)
			fn(f->flag, ctx);
	}
	return n;
}
