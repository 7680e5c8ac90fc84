// SPDX-License-Identifier: MIT
/* The otlp output's own numbers: read from its sink into a snapshot, then
 * the summary's "otlp" object and the metrics' syslogrx_otlp_* rows. */
#include <errno.h>
#include "common/json_writer.h"
#include "common/prom_text.h"
#include "rx/sink/stats.h"

/* "otlp": what the collector answered. records + failed.total + undelivered
 * + in_flight = messages produced; bytes before/after compression count the
 * requests answered 2xx. */
static void summary(struct json_writer *w, const struct sink_stats *st)
{
	const struct sink_otlp_stats *o = &st->otlp;

	jw_object_begin(w, "otlp");
	jw_string(w, "url", o->url);
	jw_string(w, "encoding", o->encoding);
	jw_string(w, "compression", o->compression);
	jw_bool(w, "original", o->original);
	jw_u64(w, "batches", o->requests);
	jw_u64(w, "records", o->records);
	jw_u64(w, "bytes_raw", o->bytes_raw);
	jw_u64(w, "bytes_sent", o->bytes_sent);
	jw_u64(w, "retries", o->retries);
	jw_object_begin(w, "failed");
	jw_u64(w, "total", o->failed);
	for (unsigned int i = 0; i < o->nr_reasons; i++)
		jw_u64(w, o->reasons[i].name, o->reasons[i].count);
	jw_object_end(w);
	jw_u64(w, "in_flight", o->in_flight);
	jw_u64(w, "undelivered", o->undelivered);
	jw_i64(w, "last_http_status", o->last_status);
	jw_object_end(w);
}

static void metrics(struct prom_text *p, const struct sink_stats *st)
{
	const struct sink_otlp_stats *o = &st->otlp;
	struct prom_labels l;

	prom_one(p, "syslogrx_otlp_batches_total", PROM_COUNTER,
		 "OTLP export requests the collector answered 2xx.", o->requests);
	prom_one(p, "syslogrx_otlp_records_total", PROM_COUNTER,
		 "Log records the collector accepted (2xx, not rejected).", o->records);
	prom_one(p, "syslogrx_otlp_raw_bytes_total", PROM_COUNTER,
		 "Bytes of accepted request bodies before compression.", o->bytes_raw);
	prom_one(p, "syslogrx_otlp_sent_bytes_total", PROM_COUNTER,
		 "Bytes of accepted request bodies as sent (after compression).", o->bytes_sent);
	prom_one(p, "syslogrx_otlp_retries_total", PROM_COUNTER,
		 "Requests sent again after 429/502/503/504 or a connection error.", o->retries);
	prom_family(p, "syslogrx_otlp_failed_total", PROM_COUNTER,
		    "Log records failed for good, per reason (HTTP status or rejection message).");
	for (unsigned int i = 0; i < o->nr_reasons; i++) {
		prom_labels_init(&l);
		prom_label(&l, "reason", o->reasons[i].name);
		prom_u64(p, "syslogrx_otlp_failed_total", &l, o->reasons[i].count);
	}
	prom_one(p, "syslogrx_otlp_in_flight_records", PROM_GAUGE,
		 "Log records produced with no answer yet.", o->in_flight);
	prom_one(p, "syslogrx_otlp_undelivered_total", PROM_COUNTER,
		 "Log records given up at exit (--drain-timeout).", o->undelivered);
	prom_one(p, "syslogrx_otlp_last_http_status", PROM_GAUGE,
		 "The last HTTP status the collector answered (0: none, or no answer).",
		 (uint64_t)o->last_status);
}

static const struct sink_stats_ops ops = {
	.summary = summary,
	.metrics = metrics,
};

int otlp_stats_read(struct sink *s, struct sink_stats *st)
{
	if (sink_otlp_stats(s, &st->otlp))
		return -ENOENT;
	st->ops = &ops;
	return 0;
}
