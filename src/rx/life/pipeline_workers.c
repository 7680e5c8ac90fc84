// SPDX-License-Identifier: MIT
/*
 * The pipeline's workers: their counters, starting them over the sockets
 * the intake says to read (intake.h's read order, handed in), and pausing
 * them around a resize or an upgrade.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/signals.h"
#include "rx/life/pipeline.h"
#include "rx/path/senders.h"

unsigned int pipeline_threads(const struct rx_pipeline *p)
{
	return p->threads;
}

void pipeline_set_threads(struct rx_pipeline *p, unsigned int threads)
{
	p->threads = threads;
}

int pipeline_grow_counters(struct rx_pipeline *p, unsigned int cap)
{
	struct sock_counters *c;

	if (cap <= p->counters_cap)
		return 0;
	c = realloc(p->counters, cap * sizeof(*c));
	if (!c)
		return -ENOMEM;
	p->counters = c;
	memset(c + p->counters_cap, 0, (cap - p->counters_cap) * sizeof(*c));
	p->counters_cap = cap;
	p->wsh.counters = p->counters;
	return 0;
}

int pipeline_workers_start(struct rx_pipeline *p, const unsigned int *order, unsigned int n)
{
	struct worker *w;
	int err;

	w = realloc(p->workers, p->threads * sizeof(*w));
	if (!w)
		return -ENOMEM;
	p->workers = w;
	p->wsh.order = order;
	p->wsh.nr_order = n;
	p->wsh.nr_workers = p->threads;
	p->wsh.counters = p->counters;
	p->wsh.senders = p->senders;
	for (unsigned int t = 0; p->senders && t < p->threads && t < CONFIG_MAX_SOCKETS; t++) {
		if (p->senders[t])
			continue;
		p->senders[t] = sender_table_new(p->cfg->senders);
		if (!p->senders[t])
			return -ENOMEM;
		/* Published after it is made: a snapshot reads [0, nr_senders). */
		__atomic_store_n(&p->nr_senders, t + 1, __ATOMIC_RELEASE);
	}
	for (unsigned int t = 0; t < p->threads; t++) {
		err = worker_start(&p->workers[t], t, &p->wsh);
		if (err) {
			pr_warn("worker %u: %s\n", t, strerror(-err));
			return err;
		}
		/* Published after it runs: /healthz reads [0, nr_started) and
		 * may answer while the workers start. */
		__atomic_store_n(&p->nr_started, p->nr_started + 1, __ATOMIC_RELEASE);
	}
	return 0;
}

int pipeline_workers_join(struct rx_pipeline *p)
{
	int err = 0, e;

	for (unsigned int t = 0; t < p->nr_started; t++) {
		e = worker_join(&p->workers[t]);
		if (e && !err) {
			pr_warn("worker %u: %s\n", t, strerror(-e));
			err = e;
		}
	}
	__atomic_store_n(&p->nr_started, 0, __ATOMIC_RELEASE);
	return err;
}

int pipeline_stop_workers(struct rx_pipeline *p)
{
	flag_set(&p->stop, 1);
	return pipeline_workers_join(p);
}

int pipeline_workers_pause(struct rx_pipeline *p)
{
	int err;

	flag_set(&p->regroup, 1);
	err = pipeline_workers_join(p);
	flag_set(&p->regroup, 0);
	return err;
}
