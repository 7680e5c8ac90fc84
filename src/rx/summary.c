// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/json_writer.h"
#include "common/log.h"
#include "net/sockinfo.h"
#include "rx/diskbuf.h"
#include "rx/sink/kafka.h"
#include "rx/summary.h"

int summary_check_drops(struct receiver *r)
{
	struct tracer_sock_stats st;
	int bad = 0;

	if (!r->tracer)
		return 0;
	for (unsigned int i = 0; i < r->group.n; i++) {
		uint64_t kernel = 0;

		if (receiver_traced(r, i, &st) || sockinfo_meminfo(r->group.socks[i].fd, &kernel, NULL))
			continue;
		if (kernel != st.total) {
			pr_warn("socket %u (cookie %llu): traced %llu drops, the kernel counts %llu "
				"(SO_MEMINFO): MISMATCH\n", i,
				(unsigned long long)r->group.socks[i].cookie,
				(unsigned long long)st.total, (unsigned long long)kernel);
			bad++;
		}
	}
	return bad;
}

static void write_reasons(struct json_writer *w, struct receiver *r, const char *key,
			  const uint64_t *by_reason, uint64_t total)
{
	jw_object_begin(w, key);
	jw_u64(w, "total", total);
	for (unsigned int i = 0; i < TRACER_MAX_REASONS; i++)
		if (by_reason[i])
			jw_u64(w, tracer_reason_name(r->tracer, i), by_reason[i]);
	jw_object_end(w);
}

static const char *output_name(const struct config *c, char *buf, size_t len)
{
	static const char *const kinds[] = {
		[OUTPUT_NULL] = "null", [OUTPUT_STDOUT] = "stdout",
		[OUTPUT_FILE] = "file", [OUTPUT_TCP] = "tcp", [OUTPUT_KAFKA] = "kafka",
	};

	if (c->output_arg[0])
		snprintf(buf, len, "%s:%s", kinds[c->output], c->output_arg);
	else
		snprintf(buf, len, "%s", kinds[c->output]);
	return buf;
}

static void write_config(struct json_writer *w, const struct config *c)
{
	char out[PATH_MAX + 16];

	jw_object_begin(w, "config");
	jw_u64(w, "sockets", c->sockets);
	jw_u64(w, "threads", c->threads);
	jw_u64(w, "batch", c->batch);
	if (c->rcvbuf)
		jw_u64(w, "rcvbuf", c->rcvbuf);
	else
		jw_null(w, "rcvbuf");
	jw_u64(w, "window", c->window);
	jw_u64(w, "window_bytes", c->window_bytes);
	jw_string(w, "output", output_name(c, out, sizeof(out)));
	jw_string(w, "format", format_name(c->format));
	jw_u64(w, "cost_ns", c->cost_ns);
	jw_u64(w, "output_rate", c->output_rate);
	jw_bool(w, "trace", c->trace);
	jw_object_end(w);
}

static void write_loss(struct json_writer *w, struct receiver *r, uint64_t kernel_drops)
{
	struct seqtrack_totals t;

	jw_object_begin(w, "loss");
	if (!r->out.seq) {
		jw_object_end(w);
		return;
	}
	seqtrack_totals(r->out.seq, &t);
	jw_u64(w, "sequenced", t.sequenced);
	jw_u64(w, "missing", t.missing);
	jw_u64(w, "duplicates", t.duplicates);
	jw_u64(w, "reordered", t.reordered);
	jw_u64(w, "flows", t.flows);
	/* sent = received + kernel drops, when every message carried a sequence
	 * number (the gaps are then the datagrams the kernel dropped). */
	if (r->tracer && t.sequenced && t.sequenced == r->out.counts.processed)
		jw_bool(w, "gaps_equal_kernel_drops", t.missing == kernel_drops);
	else
		jw_null(w, "gaps_equal_kernel_drops");
	jw_object_end(w);
}

/* "kafka": what the broker acknowledged. delivered + failed.total +
 * undelivered = messages produced; in_flight is what had no delivery report
 * at all when the summary was written (normally 0). */
static void write_kafka(struct json_writer *w, struct receiver *r)
{
	struct sink_kafka_stats ks;

	if (r->cfg->output != OUTPUT_KAFKA || sink_kafka_stats(r->sink, &ks))
		return;
	jw_object_begin(w, "kafka");
	jw_string(w, "brokers", ks.brokers);
	jw_string(w, "topic", ks.topic);
	jw_u64(w, "delivered", ks.delivered);
	jw_object_begin(w, "failed");
	jw_u64(w, "total", ks.failed);
	for (unsigned int i = 0; i < ks.nr_reasons; i++)
		jw_u64(w, ks.reasons[i].name, ks.reasons[i].count);
	jw_object_end(w);
	jw_u64(w, "in_flight", ks.in_flight);
	jw_u64(w, "undelivered", ks.undelivered);
	jw_object_end(w);
}

/* "disk_buffer": what --disk-buffer holds and did. Messages received =
 * written to the sink + discarded + disk_buffer.dropped + disk_buffer.msgs
 * (still on disk for the next run) - duplicates replayed from an earlier run. */
static void write_disk_buffer(struct json_writer *w, struct receiver *r)
{
	struct diskbuf_stats ds;

	if (!r->disk)
		return;
	diskbuf_get_stats(r->disk, &ds);
	jw_object_begin(w, "disk_buffer");
	jw_string(w, "dir", r->cfg->disk_buffer);
	jw_string(w, "mode", diskbuf_mode_name(r->cfg->disk_buffer_mode));
	jw_u64(w, "size", ds.max_bytes);
	jw_u64(w, "sync_ms", r->cfg->disk_buffer_sync_ms);
	jw_u64(w, "bytes", ds.bytes);
	jw_u64(w, "msgs", ds.msgs);
	jw_u64(w, "segments", ds.segments);
	jw_double(w, "oldest_age_seconds", ds.oldest_age_seconds, 3);
	jw_u64(w, "recovered", ds.recovered_msgs);
	jw_u64(w, "written", ds.written_msgs);
	jw_u64(w, "written_bytes", ds.written_bytes);
	jw_u64(w, "replayed", ds.replayed_msgs);
	jw_u64(w, "dropped", ds.dropped_msgs);
	jw_u64(w, "dropped_batches", ds.dropped_batches);
	jw_u64(w, "corrupt", ds.corrupt_records);
	jw_u64(w, "corrupt_bytes", ds.corrupt_bytes);
	jw_u64(w, "syncs", ds.syncs);
	jw_object_end(w);
}

int summary_write(struct receiver *r, const char *path)
{
	const struct config *c = r->cfg;
	unsigned int n = r->group.n;
	uint64_t *steered = calloc(n, sizeof(*steered));
	uint64_t failures = 0, rx = 0, bytes = 0, trunc = 0, empty = 0, drops = 0, abandoned = 0;
	uint64_t reasons[TRACER_MAX_REASONS] = {};
	struct output_counts oc;
	struct window_stats ws;
	struct json_writer w;
	bool have_steered = false, drops_match = true;
	FILE *f;

	if (!steered)
		return -ENOMEM;
	if (r->balancer)
		have_steered = !balancer_read(r->balancer, steered, &failures);
	f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!f) {
		int err = -errno;

		pr_warn("--summary %s: %s\n", path, strerror(errno));
		free(steered);
		return err;
	}
	output_stage_counts(&r->out, &oc);
	window_get_stats(&r->window, &ws);

	jw_init(&w, f, true);
	jw_object_begin(&w, NULL);
	jw_u64(&w, "version", 1);
	jw_string(&w, "listen", r->group.listen);
	jw_string(&w, "balance", balance_policy_name(c->balance));
	write_config(&w, c);
	jw_double(&w, "elapsed_seconds", (r->stop_ns - r->start_ns) / 1e9, 3);

	jw_array_begin(&w, "sockets");
	for (unsigned int i = 0; i < n; i++) {
		const struct group_socket *s = &r->group.socks[i];
		const struct sock_counters *sc = &r->counters[i];
		struct tracer_sock_stats st;
		uint64_t kernel = 0;
		bool have_kernel = !sockinfo_meminfo(s->fd, &kernel, NULL);

		jw_object_begin(&w, NULL);
		jw_u64(&w, "index", i);
		jw_u64(&w, "cookie", s->cookie);
		jw_u64(&w, "inode", s->inode);
		jw_u64(&w, "rcvbuf", s->rcvbuf);
		jw_u64(&w, "received", sc->received);
		jw_u64(&w, "bytes", sc->bytes);
		jw_u64(&w, "truncated", sc->truncated);
		jw_u64(&w, "empty", sc->empty);
		jw_u64(&w, "abandoned", sc->abandoned);
		if (have_steered)
			jw_u64(&w, "steered", steered[i]);
		else
			jw_null(&w, "steered");
		if (have_kernel)
			jw_u64(&w, "so_meminfo_drops", kernel);
		else
			jw_null(&w, "so_meminfo_drops");
		if (!receiver_traced(r, i, &st)) {
			write_reasons(&w, r, "kernel_drops", st.by_reason, st.total);
			jw_u64(&w, "queue_hwm_bytes", st.queue_hwm_bytes);
			drops += st.total;
			for (unsigned int k = 0; k < TRACER_MAX_REASONS; k++)
				reasons[k] += st.by_reason[k];
			if (have_kernel && kernel != st.total)
				drops_match = false;
		} else {
			jw_null(&w, "kernel_drops");
			jw_null(&w, "queue_hwm_bytes");
		}
		jw_object_end(&w);
		rx += sc->received;
		bytes += sc->bytes;
		trunc += sc->truncated;
		empty += sc->empty;
		abandoned += sc->abandoned;
	}
	jw_array_end(&w);

	jw_object_begin(&w, "totals");
	jw_u64(&w, "received", rx);
	jw_u64(&w, "bytes", bytes);
	jw_u64(&w, "written", oc.written);
	jw_u64(&w, "malformed", oc.malformed);
	jw_u64(&w, "truncated", trunc);
	jw_u64(&w, "empty", empty);
	jw_u64(&w, "abandoned", abandoned);
	jw_u64(&w, "discarded", oc.discarded);
	if (r->balancer)
		jw_u64(&w, "selection_failures", failures);
	else
		jw_null(&w, "selection_failures");	/* hash: no program to fail */
	if (r->tracer) {
		write_reasons(&w, r, "kernel_drops", reasons, drops);
		jw_bool(&w, "kernel_drops_match_so_meminfo", drops_match);
		jw_u64(&w, "tracer_map_full", tracer_map_full(r->tracer));
	} else {
		jw_null(&w, "kernel_drops");
		jw_null(&w, "kernel_drops_match_so_meminfo");
	}
	jw_object_end(&w);

	jw_object_begin(&w, "window");
	jw_u64(&w, "size", ws.size);
	jw_u64(&w, "size_bytes", ws.size_bytes);
	jw_u64(&w, "hwm", ws.hwm);
	jw_double(&w, "full_seconds", ws.full_seconds, 3);
	jw_object_end(&w);

	write_loss(&w, r, drops);
	write_kafka(&w, r);
	write_disk_buffer(&w, r);
	jw_object_end(&w);
	jw_finish(&w);
	free(steered);
	if (f != stdout && fclose(f)) {
		pr_warn("--summary %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}
