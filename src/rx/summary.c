// SPDX-License-Identifier: MIT
#include <errno.h>
#include <linux/sock_diag.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/json_writer.h"
#include "common/log.h"
#include "rx/sink/kafka.h"
#include "rx/summary.h"

int socket_kernel_drops(int fd, uint64_t *drops, uint64_t *rmem_alloc)
{
	__u32 mem[SK_MEMINFO_VARS] = {};
	socklen_t len = sizeof(mem);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len))
		return -errno;
	if (drops)
		*drops = mem[SK_MEMINFO_DROPS];
	if (rmem_alloc)
		*rmem_alloc = mem[SK_MEMINFO_RMEM_ALLOC];
	return 0;
}

static int traced(struct receiver *r, unsigned int i, struct tracer_sock_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!r->tracer)
		return -ENOENT;
	return tracer_read_socket(r->tracer, r->group.socks[i].cookie, st);
}

int summary_check_drops(struct receiver *r)
{
	struct tracer_sock_stats st;
	int bad = 0;

	if (!r->tracer)
		return 0;
	for (unsigned int i = 0; i < r->group.n; i++) {
		uint64_t kernel = 0;

		if (traced(r, i, &st) || socket_kernel_drops(r->group.socks[i].fd, &kernel, NULL))
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
	jw_u64(w, "received", t.received);
	/* per flow: sent - received once its end marker arrived, else the gaps */
	jw_u64(w, "missing", t.missing);
	jw_u64(w, "duplicates", t.duplicates);
	jw_u64(w, "reordered", t.reordered);
	jw_u64(w, "flows", t.flows);
	jw_u64(w, "flows_closed", t.flows_closed);
	if (t.flows_closed == t.flows && t.flows)
		jw_u64(w, "sent", t.sent);
	else
		jw_null(w, "sent");
	jw_u64(w, "end_markers", t.end_markers);
	jw_u64(w, "end_markers_lost", t.end_markers_lost);
	/* sent = received + kernel drops, when every datagram carried a marker
	 * (data or end): then the missing messages and the lost end markers are
	 * the datagrams the kernel dropped, to the last one when every flow was
	 * closed by its end marker. */
	if (r->tracer && t.sequenced &&
	    t.sequenced + t.end_markers == r->out.counts.processed)
		jw_bool(w, "gaps_equal_kernel_drops",
			t.missing + t.end_markers_lost == kernel_drops);
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
		bool have_kernel = !socket_kernel_drops(s->fd, &kernel, NULL);

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
		if (!traced(r, i, &st)) {
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
	jw_object_end(&w);
	jw_finish(&w);
	free(steered);
	if (f != stdout && fclose(f)) {
		pr_warn("--summary %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

int stats_line_init(struct stats_line *s, unsigned int nr_sockets)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->last_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	s->last_received = calloc(nr_sockets, sizeof(uint64_t));
	s->last_drops = calloc(nr_sockets, sizeof(uint64_t));
	return s->last_received && s->last_drops ? 0 : -ENOMEM;
}

void stats_line_free(struct stats_line *s)
{
	free(s->last_received);
	free(s->last_drops);
}

/* One line per interval: totals, then per socket received/dropped in the
 * interval and bytes queued now. Each counter is read once, so the totals
 * are the sum of the columns. */
void stats_line_print(struct stats_line *s, struct receiver *r, FILE *f)
{
	char cols[4096];
	size_t used = 0;
	struct window_stats ws;
	struct timespec ts;
	uint64_t now, rx_sum = 0, drop_sum = 0;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	secs = (now - s->last_ns) / 1e9;
	s->last_ns = now;
	window_get_stats(&r->window, &ws);
	cols[0] = '\0';

	for (unsigned int i = 0; i < r->group.n; i++) {
		uint64_t rx = __atomic_load_n(&r->counters[i].received, __ATOMIC_RELAXED);
		struct tracer_sock_stats st;
		uint64_t drops = 0, queued = 0;

		if (!traced(r, i, &st))
			drops = st.total;
		socket_kernel_drops(r->group.socks[i].fd, NULL, &queued);
		if (used < sizeof(cols))
			used += snprintf(cols + used, sizeof(cols) - used, " s%u rx=%llu drop=%llu q=%llu", i,
					 (unsigned long long)(rx - s->last_received[i]),
					 (unsigned long long)(drops - s->last_drops[i]),
					 (unsigned long long)queued);
		rx_sum += rx - s->last_received[i];
		drop_sum += drops - s->last_drops[i];
		s->last_received[i] = rx;
		s->last_drops[i] = drops;
	}
	fprintf(f, "stats: %.1fs rx %llu/s drops %llu window %llu/%llu |%s\n",
		secs, (unsigned long long)(secs > 0 ? rx_sum / secs : 0),
		(unsigned long long)drop_sum, (unsigned long long)ws.msgs,
		(unsigned long long)ws.size, cols);
	fflush(f);
}
