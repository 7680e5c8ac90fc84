// SPDX-License-Identifier: MIT
/* The kafka output's own numbers: read from its sink into a snapshot, then
 * the summary's "kafka" object and the metrics' syslogrx_kafka_* rows. */
#include <errno.h>
#include "common/json_writer.h"
#include "common/prom_text.h"
#include "rx/sink/stats.h"

/* "kafka": what the broker acknowledged. delivered + failed.total +
 * undelivered = messages produced; in_flight is what had no delivery report
 * at all when the summary was written (normally 0). */
static void summary(struct json_writer *w, const struct sink_stats *st)
{
	const struct sink_kafka_stats *ks = &st->kafka;

	jw_object_begin(w, "kafka");
	jw_string(w, "brokers", ks->brokers);
	jw_string(w, "topic", ks->topic);
	jw_u64(w, "delivered", ks->delivered);
	jw_object_begin(w, "failed");
	jw_u64(w, "total", ks->failed);
	for (unsigned int i = 0; i < ks->nr_reasons; i++)
		jw_u64(w, ks->reasons[i].name, ks->reasons[i].count);
	jw_object_end(w);
	jw_u64(w, "in_flight", ks->in_flight);
	jw_u64(w, "undelivered", ks->undelivered);
	jw_object_end(w);
}

static void metrics(struct prom_text *p, const struct sink_stats *st)
{
	const struct sink_kafka_stats *k = &st->kafka;
	struct prom_labels l;

	prom_one(p, "syslogrx_kafka_delivered_total", PROM_COUNTER,
		 "Messages acknowledged by Kafka.", k->delivered);
	prom_family(p, "syslogrx_kafka_failed_total", PROM_COUNTER,
		    "Messages Kafka refused for good, per librdkafka error name.");
	for (unsigned int i = 0; i < k->nr_reasons; i++) {
		prom_labels_init(&l);
		prom_label(&l, "reason", k->reasons[i].name);
		prom_u64(p, "syslogrx_kafka_failed_total", &l, k->reasons[i].count);
	}
	prom_one(p, "syslogrx_kafka_in_flight_messages", PROM_GAUGE,
		 "Messages produced with no delivery report yet.", k->in_flight);
	prom_one(p, "syslogrx_kafka_undelivered_total", PROM_COUNTER,
		 "Messages given up at exit (--drain-timeout).", k->undelivered);
}

static const struct sink_stats_ops ops = {
	.summary = summary,
	.metrics = metrics,
};

int kafka_stats_read(struct sink *s, struct sink_stats *st)
{
	if (sink_kafka_stats(s, &st->kafka))
		return -ENOENT;
	st->ops = &ops;
	return 0;
}
