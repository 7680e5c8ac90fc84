// SPDX-License-Identifier: MIT
/*
 * The receiver's workers: their counters, starting them over the sockets
 * the intake says to read (intake.h), and pausing them around a resize or
 * an upgrade.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/signals.h"
#include "rx/life/receiver.h"
#include "rx/life/receiver_workers.h"
#include "rx/path/senders.h"

int receiver_grow_counters(struct receiver *r)
{
	const struct socket_group *g = intake_group(&r->intake);
	unsigned int cap = g->cap > g->n ? g->cap : g->n;
	struct sock_counters *c;
	unsigned int *order;
	int err;

	if (cap <= r->counters_cap)
		return 0;
	c = realloc(r->counters, cap * sizeof(*c));
	if (c)
		r->counters = c;
	order = realloc(r->order, cap * sizeof(*order));
	if (order)
		r->order = order;
	err = intake_grow_steered(&r->intake, cap);
	if (!c || !order || err)
		return -ENOMEM;
	memset(c + r->counters_cap, 0, (cap - r->counters_cap) * sizeof(*c));
	r->counters_cap = cap;
	r->wsh.counters = r->counters;
	return 0;
}

int receiver_workers_resume(struct receiver *r)
{
	unsigned int n = intake_read_order(&r->intake, r->order);
	struct worker *w;
	int err;

	w = realloc(r->workers, r->threads * sizeof(*w));
	if (!w)
		return -ENOMEM;
	r->workers = w;
	r->wsh.order = r->order;
	r->wsh.nr_order = n;
	r->wsh.nr_workers = r->threads;
	r->wsh.counters = r->counters;
	r->wsh.senders = r->senders;
	for (unsigned int t = 0; r->senders && t < r->threads && t < CONFIG_MAX_SOCKETS; t++) {
		if (r->senders[t])
			continue;
		r->senders[t] = sender_table_new(r->cfg->senders);
		if (!r->senders[t])
			return -ENOMEM;
		/* Published after it is made: a snapshot reads [0, nr_senders). */
		__atomic_store_n(&r->nr_senders, t + 1, __ATOMIC_RELEASE);
	}
	for (unsigned int t = 0; t < r->threads; t++) {
		err = worker_start(&r->workers[t], t, &r->wsh);
		if (err) {
			pr_warn("worker %u: %s\n", t, strerror(-err));
			return err;
		}
		/* Published after it runs: /healthz reads [0, nr_started) and
		 * may answer while the workers start. */
		__atomic_store_n(&r->nr_started, r->nr_started + 1, __ATOMIC_RELEASE);
	}
	return 0;
}

int receiver_join_workers(struct receiver *r)
{
	int err = 0, e;

	for (unsigned int t = 0; t < r->nr_started; t++) {
		e = worker_join(&r->workers[t]);
		if (e && !err) {
			pr_warn("worker %u: %s\n", t, strerror(-e));
			err = e;
		}
	}
	__atomic_store_n(&r->nr_started, 0, __ATOMIC_RELEASE);
	return err;
}

int receiver_workers_pause(struct receiver *r)
{
	int err;

	flag_set(&r->regroup, 1);
	err = receiver_join_workers(r);
	flag_set(&r->regroup, 0);
	return err;
}
