// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "net/sockinfo.h"
#include "rx/report/sender_cache.h"
#include "rx/report/snapshot.h"
#include "rx/report/snapshot_senders.h"
#include "rx/sink/registry.h"

struct no_socket_ctx {
	struct snapshot *s;
	uint16_t port;
};

static int add_no_socket(uint16_t port, uint32_t reason, uint64_t count, void *arg)
{
	struct no_socket_ctx *c = arg;

	if (port != c->port)
		return 0;
	c->s->no_socket_drops += count;
	if (reason < TRACER_MAX_REASONS)
		c->s->no_socket_by_reason[reason] += count;
	return 0;
}

static void take_socket(struct receiver *r, unsigned int i, struct snapshot_socket *ss)
{
	const struct group_socket *g = &r->group.socks[i];
	const struct sock_counters *sc = &r->counters[i];

	ss->listener = g->listener;
	ss->cookie = g->cookie;
	ss->inode = g->inode;
	ss->rcvbuf = g->rcvbuf;
	/* Written by the owning worker only: relaxed loads see whole values. */
	ss->received = __atomic_load_n(&sc->received, __ATOMIC_RELAXED);
	ss->bytes = __atomic_load_n(&sc->bytes, __ATOMIC_RELAXED);
	ss->truncated = __atomic_load_n(&sc->truncated, __ATOMIC_RELAXED);
	ss->empty = __atomic_load_n(&sc->empty, __ATOMIC_RELAXED);
	ss->abandoned = __atomic_load_n(&sc->abandoned, __ATOMIC_RELAXED);
	ss->state = receiver_socket_state(r, i);
	if (g->fd < 0) { /* closed by a live shrink: its count at close */
		ss->have_meminfo = true;
		ss->so_meminfo_drops = g->drops_at_close;
	} else {
		ss->have_meminfo =
			!sockinfo_meminfo(g->fd, &ss->so_meminfo_drops, &ss->queued_bytes);
	}
	ss->traced = !receiver_traced(r, i, &ss->st);
}

/* What listeners 1.. steered, by their own maps: slot k is their socket
 * first + k (no resize moves them). */
static void other_steered(struct receiver *r, uint64_t *steered, uint64_t *failures)
{
	for (unsigned int k = 1; k < r->nr_lis; k++) {
		const struct rx_listener *l = &r->lis[k];
		uint64_t now[l->n ? l->n : 1], f = 0;

		if (!l->balancer || balancer_slots(l->balancer) != l->n ||
		    balancer_read(l->balancer, now, &f))
			continue;
		for (unsigned int i = 0; i < l->n; i++)
			steered[l->first + i] = now[i] - (l->steered_base ? l->steered_base[i] : 0);
		*failures += f - l->failures_base;
	}
}

/* The sums per listener, and each listener's no-socket drops. */
static int take_listeners(struct receiver *r, struct snapshot *s)
{
	unsigned int nl = r->nr_lis ? r->nr_lis : 1;

	s->lis = calloc(nl, sizeof(*s->lis));
	if (!s->lis)
		return -ENOMEM;
	s->nr_lis = nl;
	s->listener_names = r->cfg->listener_names && r->nr_lis;
	for (unsigned int k = 0; k < nl; k++) {
		s->lis[k].name = r->nr_lis ? r->lis[k].name : NULL;
		s->lis[k].listen = r->nr_lis ? r->lis[k].listen : r->group.listen;
	}
	for (unsigned int i = 0; i < s->n; i++) {
		const struct snapshot_socket *ss = &s->socks[i];
		struct snapshot_listener *l = &s->lis[ss->listener < nl ? ss->listener : 0];

		l->sockets += strcmp(ss->state, "closed") != 0;
		l->received += ss->received;
		l->bytes += ss->bytes;
		l->truncated += ss->truncated;
		l->empty += ss->empty;
		l->abandoned += ss->abandoned;
		l->steered += ss->steered;
		l->kernel_drops += ss->traced ? ss->st.total : 0;
		l->so_meminfo_drops += ss->so_meminfo_drops;
	}
	for (unsigned int k = 1; k < r->nr_lis; k++) {
		struct snapshot_listener *l = &s->lis[k];
		struct snapshot one_port = { 0 };
		struct no_socket_ctx c = { &one_port, r->lis[k].port };

		if (!r->lis[k].tracer)
			continue;
		s->tracer_map_full += tracer_map_full(r->lis[k].tracer);
		tracer_for_each_no_socket(r->lis[k].tracer, add_no_socket, &c);
		l->no_socket_drops = one_port.no_socket_drops;
		s->no_socket_drops += one_port.no_socket_drops;
		for (unsigned int i = 0; i < TRACER_MAX_REASONS; i++) {
			l->no_socket_by_reason[i] = one_port.no_socket_by_reason[i];
			s->no_socket_by_reason[i] += one_port.no_socket_by_reason[i];
		}
	}
	return 0;
}

/* What the run was: settings, the spreading, the front end's findings. */
static void take_run(struct receiver *r, struct snapshot *s)
{
	s->cfg = r->cfg;
	s->listen = r->group.listen;
	s->balance_runs = r->balance_runs;
	s->balance_why = r->balance_why;
	s->balancer = r->balancer != NULL;
	s->drops_meminfo = r->drops_meminfo;
	s->elapsed_ns = __atomic_load_n(&r->stop_ns, __ATOMIC_RELAXED) -
			__atomic_load_n(&r->start_ns, __ATOMIC_RELAXED);
	s->preflight = r->preflight;
	s->advice = r->advice;
}

/* Per output, and the output state over them all: up when every network
 * output is, stalled when one is. */
static void take_outputs(struct receiver *r, struct snapshot *s)
{
	s->nr_outputs = receiver_outputs_rows(r, s->outputs);
	s->output_up = true;
	s->output_stalled = false;
	s->output_resent = s->output_uncertain = 0;
	for (unsigned int i = 0; i < s->nr_outputs; i++) {
		const struct output_row *o = &s->outputs[i];

		if (!o->network)
			continue;
		s->have_output_state = true;
		s->output_up &= o->up;
		s->output_stalled |= o->stalled;
		s->have_resend |= o->resends;
		s->output_resent += o->resent;
		s->output_uncertain += o->uncertain;
	}
}

static int take_locked(struct receiver *r, struct snapshot *s, bool scrape)
{
	unsigned int n = r->group.n;
	uint64_t *steered = NULL, ns0, ns0_by_reason[TRACER_MAX_REASONS];
	struct seqtrack *seq;
	int err;

	memset(s, 0, sizeof(*s));
	take_run(r, s);
	s->socks = calloc(n ? n : 1, sizeof(*s->socks));
	if (r->balancer)
		steered = calloc(n ? n : 1, sizeof(*steered));
	if (!s->socks || (r->balancer && !steered)) {
		free(steered);
		snapshot_free(s);
		return -ENOMEM;
	}
	s->n = n;
	if (r->balancer) {
		/* per socket across the slot changes of live resizes */
		s->have_selection = !receiver_steered(r, steered, &s->selection_failures);
		if (!s->have_selection)
			s->selection_failures = 0;
		else
			other_steered(r, steered, &s->selection_failures);
	}
	s->traced = r->tracer != NULL || r->drops_meminfo;
	s->by_reason = r->tracer != NULL;
	s->drops_match_so_meminfo = true;
	for (unsigned int i = 0; i < n; i++) {
		struct snapshot_socket *ss = &s->socks[i];

		take_socket(r, i, ss);
		ss->have_steered = s->have_selection;
		ss->steered = s->have_selection ? steered[i] : 0;
		s->received += ss->received;
		s->bytes += ss->bytes;
		s->truncated += ss->truncated;
		s->empty += ss->empty;
		s->abandoned += ss->abandoned;
		if (!ss->traced)
			continue;
		s->kernel_drops += ss->st.total;
		for (unsigned int k = 0; k < TRACER_MAX_REASONS; k++)
			s->kernel_drops_by_reason[k] += ss->st.by_reason[k];
		if (ss->have_meminfo && ss->so_meminfo_drops != ss->st.total)
			s->drops_match_so_meminfo = false;
	}
	free(steered);
	if (r->tracer) {
		struct no_socket_ctx c = { s, socket_group_port(&r->group) };

		s->tracer_map_full = tracer_map_full(r->tracer);
		tracer_for_each_no_socket(r->tracer, add_no_socket, &c);
	}
	/* listener 0's port's, before the others' */
	ns0 = s->no_socket_drops;
	memcpy(ns0_by_reason, s->no_socket_by_reason, sizeof(ns0_by_reason));
	if (take_listeners(r, s)) {
		snapshot_free(s);
		return -ENOMEM;
	}
	s->lis[0].no_socket_drops = ns0;
	memcpy(s->lis[0].no_socket_by_reason, ns0_by_reason, sizeof(ns0_by_reason));
	/* Before the output stage starts (a scrape right after bind) its
	 * counts are not there yet: zero. */
	receiver_output_counts(r, &s->out);
	if (r->disk) { /* its lock is held for a copy of its counters, no I/O */
		s->have_disk = true;
		diskbuf_get_stats(r->disk, &s->disk);
	}
	if (r->window_ready)
		window_peek_stats(&r->window, &s->window);
	/* Set by the output stage's start (before out_ready), freed after
	 * the summary: a pointer read once. */
	seq = __atomic_load_n(&r->out_ready, __ATOMIC_ACQUIRE) ? r->out.seq : NULL;
	if (seq) {
		s->have_seq = true;
		s->seq_gaps = seqtrack_missing(seq);
		if (!scrape)
			seqtrack_totals(seq, &s->seq);
	}
	fair_share_run_report(r, &s->fair_share);
	if (r->reorder && !scrape) {
		s->have_reorder = true;
		reorder_get_stats(r->reorder, &s->reorder);
	}
	if (r->sink && config_output_is_network(r->cfg)) {
		s->have_output_state = true;
		s->output_up = !sink_is_down(r->sink);
		s->output_stalled = sink_is_stalled(r->sink);
		s->have_resend = r->sink->resends;
		s->output_resent = sink_counted(&r->sink->resent);
		s->output_uncertain = sink_counted(&r->sink->uncertain);
	}
	sink_stats_read(r->cfg, r->sink, &s->output);
	if (r->cfg->nr_routes)
		take_outputs(r, s);
	err = scrape ? sender_cache_read(r, &s->senders) : -ENOENT;
	if (err == -ENOENT) /* no cache: read the tables */
		err = snapshot_senders_take(r, &s->senders);
	if (err) {
		/* The rest of the report stands without it: senders null. */
		pr_warn("the per-sender tables could not be read: %s\n", strerror(-err));
		memset(&s->senders, 0, sizeof(s->senders));
	}
	return 0;
}

int snapshot_take(struct receiver *r, struct snapshot *s)
{
	int err;

	pthread_mutex_lock(&r->report_lock);
	err = take_locked(r, s, false);
	pthread_mutex_unlock(&r->report_lock);
	return err;
}

int snapshot_take_scrape(struct receiver *r, struct snapshot *s)
{
	int err;

	pthread_mutex_lock(&r->report_lock);
	err = take_locked(r, s, true);
	pthread_mutex_unlock(&r->report_lock);
	return err;
}

void snapshot_free(struct snapshot *s)
{
	free(s->socks);
	s->socks = NULL;
	free(s->lis);
	s->lis = NULL;
	s->nr_lis = 0;
	snapshot_senders_free(&s->senders);
	s->n = 0;
}

const char *snapshot_reason_name(struct receiver *r, unsigned int reason)
{
	return tracer_reason_name(r->tracer, reason);
}

int snapshot_reason_value(struct receiver *r, const char *name)
{
	return r->tracer ? tracer_reason_value(r->tracer, name) : -1;
}
