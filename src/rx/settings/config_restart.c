// SPDX-License-Identifier: MIT
/* Which settings a SIGHUP re-read cannot apply live: the restart's list. */
#include <stddef.h>
#include <string.h>
#include "common/array.h"
#include "rx/settings/config.h"

/* The settings only a restart applies, by the flag that sets them (each
 * output lists its own in its struct output_def: output_def.h). */
#define FIELD RESTART_FIELD
#define STRING RESTART_STRING
static const struct restart_field restart_fields[] = {
	FIELD("max-sockets", max_sockets),
	FIELD("supervise", supervise),
	FIELD("balance", balance),
	FIELD("rcvbuf", rcvbuf),
	FIELD("batch", batch),
	FIELD("output", output),
	STRING("output", output_arg),
	FIELD("output", nr_routes),
	FIELD("output", routes),
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
	FIELD("drain-timeout", drain_timeout),
	FIELD("stop-timeout", stop_timeout),
	FIELD("stall-timeout", stall_timeout),
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

static bool field_differs(const struct restart_field *f, const struct config *a,
			  const struct config *b)
{
	const char *pa = (const char *)a + f->off, *pb = (const char *)b + f->off;
	unsigned int na, nb;

	switch (f->how) {
	case RESTART_STRING: /* compare up to the NUL: the rest may differ */
		return strcmp(pa, pb);
	case RESTART_STRINGS:
		memcpy(&na, (const char *)a + f->count_off, sizeof(na));
		memcpy(&nb, (const char *)b + f->count_off, sizeof(nb));
		if (na != nb)
			return true;
		for (unsigned int k = 0; k < na; k++)
			if (strcmp(pa + k * f->size, pb + k * f->size))
				return true;
		return false;
	default:
		return memcmp(pa, pb, f->size);
	}
}

static unsigned int fields_changed(const struct restart_field *fields, unsigned int nr,
				   const struct config *a, const struct config *b,
				   const char **last, void (*fn)(const char *flag, void *ctx),
				   void *ctx)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nr; i++) {
		const struct restart_field *f = &fields[i];

		/* One flag, one report (output and output_arg, cost-ns, ordered). */
		if (!field_differs(f, a, b) || (*last && !strcmp(*last, f->flag)))
			continue;
		*last = f->flag;
		n++;
		if (fn)
			fn(f->flag, ctx);
	}
	return n;
}

unsigned int config_restart_changes(const struct config *a, const struct config *b,
				    void (*fn)(const char *flag, void *ctx), void *ctx)
{
	const char *last = NULL;
	unsigned int n = 0;

	/* --listen: the first's address, then every listener */
	if (strcmp(a->listen, b->listen) || a->nr_listeners != b->nr_listeners ||
	    memcmp(a->listeners, b->listeners, a->nr_listeners * sizeof(a->listeners[0]))) {
		last = "listen";
		n++;
		if (fn)
			fn(last, ctx);
	}
	n += fields_changed(restart_fields, ARRAY_SIZE(restart_fields), a, b, &last, fn, ctx);
	for (const struct output_def *const *d = outputs; *d; d++)
		n += fields_changed((*d)->restart, (*d)->nr_restart, a, b, &last, fn, ctx);
	return n;
}
