// SPDX-License-Identifier: MIT
/*
 * The receiver's workers and what they read: which sockets are in selection
 * (live), spare or retiring, the order the threads split them in, starting
 * and pausing the threads around a resize or an upgrade, and the balancer's
 * per-socket steering counts carried across such changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/log.h"
#include "common/signals.h"
#include "rx/life/receiver.h"
#include "rx/life/receiver_workers.h"
#include "rx/path/senders.h"

int receiver_grow_counters(struct receiver *r)
{
	unsigned int cap = r->group.cap > r->group.n ? r->group.cap : r->group.n;
	struct sock_counters *c;
	unsigned int *order;
	uint64_t *st;

	if (cap <= r->counters_cap)
		return 0;
	c = realloc(r->counters, cap * sizeof(*c));
	if (c)
		r->counters = c;
	order = realloc(r->order, cap * sizeof(*order));
	if (order)
		r->order = order;
	st = realloc(r->sock_steered, cap * sizeof(*st));
	if (st)
		r->sock_steered = st;
	if (!c || !order || !st)
		return -ENOMEM;
	memset(c + r->counters_cap, 0, (cap - r->counters_cap) * sizeof(*c));
	memset(st + r->counters_cap, 0, (cap - r->counters_cap) * sizeof(*st));
	r->counters_cap = cap;
	r->wsh.counters = r->counters;
	return 0;
}

static bool in_selection(const struct receiver *r, unsigned int idx)
{
	unsigned int k = r->group.socks[idx].listener;

	/* Another listener's: the first r->live of its pool, which never moves. */
	if (k)
		return k < r->nr_lis && idx - r->lis[k].first < r->live;
	for (unsigned int k = 0; k < r->live; k++)
		if (r->slot_sock[k] == idx)
			return true;
	return false;
}

const char *receiver_socket_state(const struct receiver *r, unsigned int idx)
{
	if (r->group.socks[idx].fd < 0)
		return "closed";
	if (in_selection(r, idx))
		return "live";
	/* Connected away but not yet drained: still read, never reused. */
	return r->group.socks[idx].away ? "retiring" : "spare";
}

int receiver_workers_resume(struct receiver *r)
{
	struct worker *w;
	unsigned int n = 0;
	int err;

	/* Those in selection first, so that each thread gets its share of them;
	 * then the spares (and sockets still draining), which only a failed
	 * selection or a shrink in progress would feed. */
	for (unsigned int k = 0; k < r->live; k++)
		r->order[n++] = r->slot_sock[k];
	for (unsigned int i = 0; i < r->group.n; i++)
		if (r->group.socks[i].fd >= 0 && r->group.socks[i].listener && in_selection(r, i))
			r->order[n++] = i;
	for (unsigned int i = 0; i < r->group.n; i++)
		if (r->group.socks[i].fd >= 0 && !in_selection(r, i))
			r->order[n++] = i;
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

void receiver_credit_steered(struct receiver *r)
{
	unsigned int slots;
	uint64_t *now, failures;

	if (!r->balancer)
		return;
	slots = balancer_slots(r->balancer);
	now = calloc(slots, sizeof(*now));
	if (!now || balancer_read(r->balancer, now, &failures)) {
		free(now);
		return;
	}
	for (unsigned int k = 0; k < slots && k < r->slot_cap; k++) {
		/* Only a slot in selection is ever picked. */
		if (k < r->live)
			r->sock_steered[r->slot_sock[k]] += now[k] - r->steered_base[k];
		r->steered_base[k] = now[k];
	}
	free(now);
}

int receiver_steered(struct receiver *r, uint64_t *per_socket, uint64_t *failures)
{
	unsigned int slots;
	uint64_t *now;
	int err;

	if (!r->balancer)
		return -ENOENT;
	slots = balancer_slots(r->balancer);
	now = calloc(slots, sizeof(*now));
	if (!now)
		return -ENOMEM;
	err = balancer_read(r->balancer, now, failures);
	if (!err) {
		for (unsigned int i = 0; i < r->group.n; i++)
			per_socket[i] = r->sock_steered[i];
		for (unsigned int k = 0; k < r->live && k < slots; k++)
			per_socket[r->slot_sock[k]] += now[k] - r->steered_base[k];
	}
	free(now);
	return err;
}

void receiver_grace_period(void)
{
	int err = socket_group_rcu_grace_period();

	if (err) {
		/* nohz_full kernels refuse MEMBARRIER_CMD_GLOBAL: a grace period
		 * is far shorter than this on any kernel we know. */
		pr_warn("membarrier: %s; waiting 200 ms for an RCU grace period instead\n",
			strerror(-err));
		nanosleep(&(struct timespec){ 0, 200000000L }, NULL);
	}
}
