// SPDX-License-Identifier: MIT
/* The PROXY protocol pool's numbers (tcp and tls outputs with
 * --proxy-protocol): the summary's "proxy" object and the metrics'
 * syslogrx_proxy_* rows. opens = open + the closes, whatever their reason. */
#include <errno.h>
#include "common/json_writer.h"
#include "common/prom_text.h"
#include "rx/sink/stats.h"

static void summary(struct json_writer *w, const struct sink_stats *st)
{
	const struct sink_pool_stats *ps = &st->pool;

	jw_object_begin(w, "proxy");
	jw_string(w, "protocol", ps->version);
	jw_u64(w, "connections_max", ps->cap);
	jw_u64(w, "connections", ps->open);
	jw_u64(w, "connections_peak", ps->peak);
	jw_u64(w, "opened", ps->opens);
	jw_object_begin(w, "closed");
	for (int i = 0; i < POOL_CLOSE_REASONS; i++)
		jw_u64(w, pool_close_names[i], ps->closes[i]);
	jw_object_end(w);
	jw_object_end(w);
}

static void metrics(struct prom_text *p, const struct sink_stats *st)
{
	const struct sink_pool_stats *ps = &st->pool;
	struct prom_labels l;

	prom_one(p, "syslogrx_proxy_connections", PROM_GAUGE,
		 "Connections open now, one per sender (--proxy-protocol).", ps->open);
	prom_one(p, "syslogrx_proxy_connections_peak", PROM_GAUGE,
		 "The most connections open at once since the start.", ps->peak);
	prom_one(p, "syslogrx_proxy_connections_max", PROM_GAUGE,
		 "The pool's bound (--proxy-connections).", ps->cap);
	prom_one(p, "syslogrx_proxy_opens_total", PROM_COUNTER,
		 "Connections opened, each with its PROXY header.", ps->opens);
	prom_family(p, "syslogrx_proxy_closes_total", PROM_COUNTER,
		    "Connections closed, by reason: idle (--proxy-idle), full (the least "
		    "recently used, for a new sender), lost (ended by the server or stalled, "
		    "opened again), stop.");
	for (int i = 0; i < POOL_CLOSE_REASONS; i++) {
		prom_labels_init(&l);
		prom_label(&l, "reason", pool_close_names[i]);
		prom_u64(p, "syslogrx_proxy_closes_total", &l, ps->closes[i]);
	}
}

static const struct sink_stats_ops ops = {
	.summary = summary,
	.metrics = metrics,
};

int pool_stats_read(struct sink *s, struct sink_stats *st)
{
	if (sink_pool_stats(s, &st->pool))
		return -ENOENT;
	st->ops = &ops;
	return 0;
}
