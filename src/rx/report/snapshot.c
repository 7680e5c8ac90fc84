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

static void take_socket(struct receiver *r, unsigned int i, struct snapshot_socket *ss)
{
	struct intake_socket_report is;
	struct sock_counters sc;

	intake_report_socket(&r->intake, i, &is);
	pipeline_socket_counts(&r->pipeline, i, &sc);
	ss->listener = is.listener;
	ss->cookie = is.cookie;
	ss->inode = is.inode;
	ss->rcvbuf = is.rcvbuf;
	ss->received = sc.received;
	ss->bytes = sc.bytes;
	ss->truncated = sc.truncated;
	ss->empty = sc.empty;
	ss->abandoned = sc.abandoned;
	ss->state = is.state;
	ss->have_meminfo = is.have_meminfo;
	ss->so_meminfo_drops = is.so_meminfo_drops;
	ss->queued_bytes = is.queued_bytes;
	ss->traced = is.traced;
	ss->st = is.st;
}

/* Listener k's no-socket drops, added to the run's. */
static void take_no_socket(struct receiver *r, unsigned int k, struct snapshot *s,
			   struct snapshot_listener *l)
{
	struct intake_no_socket ns;

	if (intake_report_no_socket(&r->intake, k, &ns))
		return;
	s->tracer_map_full += ns.map_full;
	l->no_socket_drops = ns.drops;
	s->no_socket_drops += ns.drops;
	for (unsigned int i = 0; i < TRACER_MAX_REASONS; i++) {
		l->no_socket_by_reason[i] = ns.by_reason[i];
		s->no_socket_by_reason[i] += ns.by_reason[i];
	}
}

/* The sums per listener, and each listener's no-socket drops. */
static int take_listeners(struct receiver *r, struct snapshot *s)
{
	unsigned int nl = intake_listeners(&r->intake) ? intake_listeners(&r->intake) : 1;

	s->lis = calloc(nl, sizeof(*s->lis));
	if (!s->lis)
		return -ENOMEM;
	s->nr_lis = nl;
	s->listener_names = r->cfg->listener_names && intake_listeners(&r->intake);
	for (unsigned int k = 0; k < nl; k++) {
		s->lis[k].name = intake_listener_name(&r->intake, k);
		s->lis[k].listen = intake_listeners(&r->intake) ?
					   intake_listener_listen(&r->intake, k) :
					   s->listen;
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
	for (unsigned int k = 0; k < nl; k++)
		take_no_socket(r, k, s, &s->lis[k]);
	return 0;
}

/* What the run was: settings, the spreading, the front end's findings. */
static void take_run(struct receiver *r, struct snapshot *s)
{
	struct intake_run_report run;

	intake_report_run(&r->intake, &run);
	s->cfg = r->cfg;
	s->listen = run.listen;
	s->balance_runs = run.balance_runs;
	s->balance_why = run.balance_why;
	s->balancer = run.balancer;
	s->drops_meminfo = run.drops_meminfo;
	s->traced = run.traced;
	s->by_reason = run.by_reason;
	s->elapsed_ns = receiver_elapsed_ns(r);
	s->preflight = receiver_preflight(r);
	s->advice = receiver_advice(r);
}

/* Per output, and the output state over them all: up when every network
 * output is, stalled when one is. */
static void take_outputs(struct receiver *r, struct snapshot *s)
{
	s->nr_outputs = pipeline_outputs_rows(&r->pipeline, intake_group(&r->intake), s->outputs);
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

/* The pipeline's share: the output stages', the disk buffers' and the
 * window's figures, the sequences, --ordered's merge, the output's state. */
static void take_pipeline(struct receiver *r, struct snapshot *s, bool scrape)
{
	struct pipeline_run_report run;

	pipeline_report_run(&r->pipeline, scrape, &run);
	s->out = run.out;
	s->have_disk = run.have_disk;
	s->disk = run.disk;
	s->window = run.window;
	s->have_seq = run.have_seq;
	s->seq_gaps = run.seq_gaps;
	s->seq = run.seq;
	s->have_reorder = run.have_reorder;
	s->reorder = run.reorder;
	s->have_output_state = run.have_output_state;
	s->output_up = run.output_up;
	s->output_stalled = run.output_stalled;
	s->have_resend = run.have_resend;
	s->output_resent = run.output_resent;
	s->output_uncertain = run.output_uncertain;
	s->output = run.output;
}

static int take_locked(struct receiver *r, struct snapshot *s, bool scrape)
{
	unsigned int n = intake_group(&r->intake)->n;
	uint64_t *steered = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	take_run(r, s);
	s->socks = calloc(n ? n : 1, sizeof(*s->socks));
	if (s->balancer)
		steered = calloc(n ? n : 1, sizeof(*steered));
	if (!s->socks || (s->balancer && !steered)) {
		free(steered);
		snapshot_free(s);
		return -ENOMEM;
	}
	s->n = n;
	if (s->balancer) {
		/* per socket across the slot changes of live resizes */
		s->have_selection = !intake_steered(&r->intake, steered, &s->selection_failures);
		if (!s->have_selection)
			s->selection_failures = 0;
		else
			intake_other_steered(&r->intake, steered, &s->selection_failures);
	}
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
	if (take_listeners(r, s)) {
		snapshot_free(s);
		return -ENOMEM;
	}
	take_pipeline(r, s, scrape);
	fair_share_run_report(r->fair_share, &s->fair_share);
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

	receiver_report_lock(r);
	err = take_locked(r, s, false);
	receiver_report_unlock(r);
	return err;
}

int snapshot_take_scrape(struct receiver *r, struct snapshot *s)
{
	int err;

	receiver_report_lock(r);
	err = take_locked(r, s, true);
	receiver_report_unlock(r);
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
	return tracer_reason_name(intake_listener_tracer(&r->intake, 0), reason);
}

int snapshot_reason_value(struct receiver *r, const char *name)
{
	struct tracer *t = intake_listener_tracer(&r->intake, 0);

	return t ? tracer_reason_value(t, name) : -1;
}
