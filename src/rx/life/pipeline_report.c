// SPDX-License-Identifier: MIT
/*
 * What the pipeline tells the reports: whether it runs, its threads'
 * heartbeats, the output stages', disk buffers' and window's figures, the
 * workers' counts, and its share of report/'s snapshot. Safe from any
 * thread while it runs (see rx/report/snapshot.h).
 */
#include <string.h>
#include "rx/life/pipeline.h"
#include "rx/settings/output_routes.h"
#include "rx/sink/registry.h"

bool pipeline_running(const struct rx_pipeline *p)
{
	return p->window_ready && __atomic_load_n(&p->out_ready, __ATOMIC_ACQUIRE) &&
	       pipeline_workers_started(p);
}

unsigned int pipeline_workers_started(const struct rx_pipeline *p)
{
	return __atomic_load_n(&p->nr_started, __ATOMIC_ACQUIRE);
}

uint64_t pipeline_worker_beat_ns(const struct rx_pipeline *p, unsigned int i)
{
	return __atomic_load_n(&p->workers[i].beat_ns, __ATOMIC_RELAXED);
}

uint64_t pipeline_in_flight(struct rx_pipeline *p)
{
	struct window_stats ws;

	if (!p->window_ready)
		return 0;
	window_get_stats(&p->window, &ws);
	if (p->ordered_ready) {
		struct window_stats os;

		window_get_stats(&p->ordered_window, &os);
		return ws.msgs + os.msgs;
	}
	return ws.msgs;
}

bool pipeline_output_counts(struct rx_pipeline *p, struct output_counts *c)
{
	if (!__atomic_load_n(&p->out_ready, __ATOMIC_ACQUIRE))
		return false;
	output_stage_counts(&p->out, c);
	/* with outputs per listener: the sums over them */
	for (unsigned int i = 0; i < p->nr_routes; i++) {
		struct output_counts o;

		if (!__atomic_load_n(&p->routes[i].ready, __ATOMIC_ACQUIRE))
			continue;
		output_stage_counts(&p->routes[i].out, &o);
		output_counts_add(c, &o);
	}
	return true;
}

/* A named output's DIR/LISTENER added to the figures of those before. */
static void disk_stats_add(struct diskbuf_stats *to, const struct diskbuf_stats *d)
{
	to->max_bytes += d->max_bytes;
	to->bytes += d->bytes;
	to->msgs += d->msgs;
	to->batches += d->batches;
	to->queued_msgs += d->queued_msgs;
	to->segments += d->segments;
	if (d->oldest_age_seconds > to->oldest_age_seconds)
		to->oldest_age_seconds = d->oldest_age_seconds;
	to->recovered_msgs += d->recovered_msgs;
	to->written_msgs += d->written_msgs;
	to->written_batches += d->written_batches;
	to->written_bytes += d->written_bytes;
	to->replayed_msgs += d->replayed_msgs;
	to->read_back_msgs += d->read_back_msgs;
	to->dropped_msgs += d->dropped_msgs;
	to->dropped_batches += d->dropped_batches;
	to->corrupt_records += d->corrupt_records;
	to->corrupt_bytes += d->corrupt_bytes;
	to->corrupt_msgs += d->corrupt_msgs;
	to->corrupt_uncounted += d->corrupt_uncounted;
	to->segments_refused += d->segments_refused;
	to->syncs += d->syncs;
}

bool pipeline_disk_stats(struct rx_pipeline *p, struct diskbuf_stats *d)
{
	struct diskbuf_stats one;

	if (!p->disk)
		return false;
	diskbuf_get_stats(p->disk, d);
	/* every output's DIR: opened before the stages start, closed after */
	for (unsigned int i = 0; i < __atomic_load_n(&p->nr_routes, __ATOMIC_ACQUIRE); i++) {
		struct diskbuf *rd = __atomic_load_n(&p->routes[i].disk, __ATOMIC_ACQUIRE);

		if (!rd)
			continue;
		diskbuf_get_stats(rd, &one);
		disk_stats_add(d, &one);
	}
	return true;
}

/* The first output (the unnamed, then the named ones) that is so. */
static const char *first_output(const struct rx_pipeline *p, bool (*is)(const struct sink *))
{
	if (p->sink && is(p->sink))
		return p->sink->name;
	for (unsigned int i = 0; i < p->nr_routes; i++)
		if (p->routes[i].sink && is(p->routes[i].sink))
			return p->routes[i].sink->name;
	return NULL;
}

const char *pipeline_output_stalled(const struct rx_pipeline *p)
{
	return first_output(p, sink_is_stalled);
}

const char *pipeline_output_down(const struct rx_pipeline *p)
{
	return first_output(p, sink_is_down);
}

bool pipeline_window_full(struct rx_pipeline *p)
{
	return p->window_ready && window_peek_full(&p->window);
}

bool pipeline_counts_senders(const struct rx_pipeline *p)
{
	return p->senders != NULL;
}

int pipeline_senders_read(struct rx_pipeline *p, struct sender_table_stats *sum,
			  int (*fn)(const uint8_t addr[16], uint64_t count, void *ctx), void *ctx)
{
	unsigned int n = __atomic_load_n(&p->nr_senders, __ATOMIC_ACQUIRE);
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	for (unsigned int t = 0; p->senders && t < n && !err; t++) {
		struct sender_table_stats st;

		err = sender_table_read(p->senders[t], &st, fn, ctx);
		sum->received += st.received;
		sum->evicted += st.evicted;
		sum->evicted_received += st.evicted_received;
	}
	return err;
}

void pipeline_socket_counts(const struct rx_pipeline *p, unsigned int i, struct sock_counters *c)
{
	const struct sock_counters *sc = &p->counters[i];

	/* Written by the owning worker only: relaxed loads see whole values. */
	c->received = __atomic_load_n(&sc->received, __ATOMIC_RELAXED);
	c->bytes = __atomic_load_n(&sc->bytes, __ATOMIC_RELAXED);
	c->truncated = __atomic_load_n(&sc->truncated, __ATOMIC_RELAXED);
	c->empty = __atomic_load_n(&sc->empty, __ATOMIC_RELAXED);
	c->abandoned = __atomic_load_n(&sc->abandoned, __ATOMIC_RELAXED);
}

uint64_t pipeline_taken_by(const struct rx_pipeline *p, const struct socket_group *g,
			   unsigned int k)
{
	uint64_t sum = 0;

	if (!p->counters)
		return 0;
	for (unsigned int i = 0; i < g->n && i < p->counters_cap; i++)
		if (g->socks[i].listener == k)
			sum += __atomic_load_n(&p->counters[i].received, __ATOMIC_RELAXED);
	return sum;
}

/* Datagrams the listeners routed to queue q took from the kernel. */
static uint64_t received_by(const struct rx_pipeline *p, const struct socket_group *g,
			    unsigned int q)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < g->n && p->counters; i++) {
		uint32_t l = g->socks[i].listener;

		if (l < WINDOW_MAX_LISTENERS && p->window.route[l] == q)
			n += __atomic_load_n(&p->counters[i].received, __ATOMIC_RELAXED);
	}
	return n;
}

/* The output's own disk buffer's figures (d NULL: none). */
static void fill_disk(struct output_row *row, struct diskbuf *d)
{
	struct diskbuf_stats st;

	row->disk = d;
	if (!d)
		return;
	diskbuf_get_stats(d, &st);
	row->disk_recovered = st.recovered_msgs;
	row->disk_written = st.written_msgs;
	row->disk_replayed = st.replayed_msgs;
	row->disk_dropped = st.dropped_msgs;
	row->disk_msgs = st.msgs;
}

static void fill_row(struct rx_pipeline *p, const struct socket_group *g, struct output_row *row,
		     struct output_stage *o, const struct sink *s, bool started, unsigned int q)
{
	memset(&row->c, 0, sizeof(row->c));
	if (started)
		output_stage_counts(o, &row->c);
	row->received = received_by(p, g, q);
	row->up = s && !sink_is_down(s);
	row->stalled = s && sink_is_stalled(s);
	row->resends = s && s->resends;
	row->resent = s ? sink_counted(&s->resent) : 0;
	row->uncertain = s ? sink_counted(&s->uncertain) : 0;
}

unsigned int pipeline_outputs_rows(struct rx_pipeline *p, const struct socket_group *g,
				   struct output_row *rows)
{
	bool ready = __atomic_load_n(&p->out_ready, __ATOMIC_ACQUIRE);

	rows[0].name = "default";
	config_output_name(p->cfg, rows[0].dest, sizeof(rows[0].dest));
	rows[0].network = config_output_is_network(p->cfg);
	fill_row(p, g, &rows[0], &p->out, p->sink, ready, 0);
	fill_disk(&rows[0], p->disk);
	for (unsigned int i = 0; i < p->nr_routes; i++) {
		struct rx_route *rt = &p->routes[i];
		struct output_row *row = &rows[i + 1];

		row->name = p->cfg->routes[i].listener;
		output_route_name(p->cfg, i, row->dest, sizeof(row->dest));
		row->network = config_output_is_network(&rt->cfg);
		fill_row(p, g, row, &rt->out, rt->sink,
			 __atomic_load_n(&rt->ready, __ATOMIC_ACQUIRE), i + 1);
		fill_disk(row, __atomic_load_n(&rt->disk, __ATOMIC_ACQUIRE));
	}
	return 1 + p->nr_routes;
}

/* The unnamed output's state, when it is a network one. */
static void report_output(struct rx_pipeline *p, struct pipeline_run_report *run)
{
	if (p->sink && config_output_is_network(p->cfg)) {
		run->have_output_state = true;
		run->output_up = !sink_is_down(p->sink);
		run->output_stalled = sink_is_stalled(p->sink);
		run->have_resend = p->sink->resends;
		run->output_resent = sink_counted(&p->sink->resent);
		run->output_uncertain = sink_counted(&p->sink->uncertain);
	}
	sink_stats_read(p->cfg, p->sink, &run->output);
}

void pipeline_report_run(struct rx_pipeline *p, bool scrape, struct pipeline_run_report *run)
{
	struct seqtrack *seq;

	memset(run, 0, sizeof(*run));
	/* Before the output stage starts (a scrape right after bind) its
	 * counts are not there yet: zero. */
	pipeline_output_counts(p, &run->out);
	/* each DIR's lock is held for a copy of its counters, no I/O */
	run->have_disk = pipeline_disk_stats(p, &run->disk);
	if (p->window_ready)
		window_peek_stats(&p->window, &run->window);
	/* Set by the output stage's start (before out_ready), freed after
	 * the summary: a pointer read once. */
	seq = __atomic_load_n(&p->out_ready, __ATOMIC_ACQUIRE) ? p->out.seq : NULL;
	if (seq) {
		run->have_seq = true;
		run->seq_gaps = seqtrack_missing(seq);
		if (!scrape)
			seqtrack_totals(seq, &run->seq);
	}
	if (p->reorder && !scrape) {
		run->have_reorder = true;
		reorder_get_stats(p->reorder, &run->reorder);
	}
	report_output(p, run);
}

unsigned int pipeline_nr_workers(const struct rx_pipeline *p)
{
	return p->wsh.nr_workers ? p->wsh.nr_workers : p->cfg->threads;
}

void pipeline_worker_times(const struct rx_pipeline *p, uint64_t *busy, unsigned int nr,
			   uint64_t *first_ns, uint64_t *last_ns)
{
	uint64_t first = 0, last = 0;

	for (unsigned int t = 0; t < nr && p->workers; t++) {
		const struct worker *w = &p->workers[t];

		busy[t] = w->busy_ns;
		if (w->first_ns && (!first || w->first_ns < first))
			first = w->first_ns;
		if (w->last_ns > last)
			last = w->last_ns;
	}
	*first_ns = first;
	*last_ns = last;
}

void pipeline_window_stats(struct rx_pipeline *p, struct window_stats *ws)
{
	window_get_stats(&p->window, ws);
}

uint64_t pipeline_output_busy_ns(const struct rx_pipeline *p)
{
	return p->out.busy_ns;
}

void pipeline_ledger_read(const struct rx_pipeline *p, struct pipeline_ledger *l)
{
	l->taken = __atomic_load_n(&p->taken, __ATOMIC_ACQUIRE);
	l->written = __atomic_load_n(&p->out.counts.written, __ATOMIC_RELAXED);
	l->discarded = __atomic_load_n(&p->out.counts.discarded, __ATOMIC_RELAXED);
	l->disk_written = __atomic_load_n(&p->disk_tally.written, __ATOMIC_RELAXED);
	l->disk_replayed = __atomic_load_n(&p->disk_tally.replayed, __ATOMIC_RELAXED);
	l->disk_dropped = __atomic_load_n(&p->disk_tally.dropped, __ATOMIC_RELAXED);
}
