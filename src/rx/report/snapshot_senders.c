// SPDX-License-Identifier: MIT
/* The per-sender rows of a snapshot, read from the tables. */
#include <errno.h>
#include <string.h>
#include "rx/path/senders.h"
#include "rx/report/snapshot_senders.h"

static void add_sender_totals(struct tracer_sender_totals *sum,
			      const struct tracer_sender_totals *one)
{
	sum->max_entries += one->max_entries;
	sum->attributed += one->attributed;
	sum->unattributed += one->unattributed;
	sum->inserts += one->inserts;
	sum->entries += one->entries;
	sum->in_table += one->in_table;
}

static int add_received(const uint8_t addr[16], uint64_t count, void *ctx)
{
	return sender_view_add(ctx, addr, count, 0);
}

int snapshot_senders_take(struct receiver *r, struct snapshot_senders *ss)
{
	unsigned int nl = intake_listeners(&r->intake) ? intake_listeners(&r->intake) : 1;
	struct sender_table_stats st;
	int err;

	memset(ss, 0, sizeof(*ss));
	ss->on = pipeline_counts_senders(&r->pipeline);
	/* every worker's table */
	err = pipeline_senders_read(&r->pipeline, &st, add_received, &ss->view);
	ss->received = st.received;
	ss->evicted = st.evicted;
	ss->received_evicted = st.evicted_received;
	for (unsigned int k = 0; !err && k < nl; k++) {
		struct tracer *t = intake_listener_tracer(&r->intake, k);
		struct tracer_sender_totals one;

		if (!t)
			continue;
		/* Each listener's tracer holds its own port's drops per sender. */
		err = sender_view_add_tracer(&ss->view, t, &one);
		ss->traced = !err;
		add_sender_totals(&ss->drops, &one);
	}
	if (err == -ENOENT) /* --senders 0 */
		err = 0;
	if (ss->drops.attributed > ss->drops.in_table)
		ss->drops_evicted = ss->drops.attributed - ss->drops.in_table;
	if (ss->drops.inserts > ss->drops.entries)
		ss->drop_entries_evicted = ss->drops.inserts - ss->drops.entries;
	sender_view_finish(&ss->view);
	ss->tracked = ss->view.n;
	ss->top = r->cfg->senders_top < ss->view.n ? r->cfg->senders_top : ss->view.n;
	sender_view_sum(&ss->view, ss->top, &ss->rest_received, &ss->rest_dropped);
	if (err)
		snapshot_senders_free(ss);
	return err;
}

void snapshot_senders_free(struct snapshot_senders *ss)
{
	sender_view_free(&ss->view);
}
