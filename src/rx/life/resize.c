// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/signals.h"
#include "net/sockinfo.h"
#include "common/log.h"
#include "rx/life/resize.h"
#include "rx/life/fair_share_run.h"
#include "rx/life/upgrade.h"

/* Bound on waiting for the workers to empty a retiring socket. Nothing new
 * arrives on it; only a full input window (a slow output) makes this long. */
#define SHRINK_DRAIN_MS 30000

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A spare of listener 0's pool (the others' never change hands). */
static bool is_spare(const struct receiver *r, unsigned int idx)
{
	return !r->intake.group.socks[idx].listener &&
	       !strcmp(intake_socket_state(&r->intake, idx), "spare");
}

/* Classic BPF: the program for n sockets, attached through a socket that
 * stays (slot 0's); the one it replaces may run on until a grace period. */
static int attach_cbpf(struct receiver *r, unsigned int n)
{
	int err = cbpf_balancer_attach(r->intake.group.socks[r->intake.slot_sock[0]].fd, n);

	if (err)
		pr_warn("resize: SO_ATTACH_REUSEPORT_CBPF for %u sockets: %s\n", n, strerror(-err));
	return err;
}

/*
 * Listeners 1..: each its own group, balancer (or classic BPF program) and
 * pool bound at start, of which the first r->intake.live are in selection, slot k
 * being its socket first + k (its sockets never move). They follow listener
 * 0's steps: out of selection before its grace period, filled while the
 * workers are paused, selected once read.
 *
 * Here: each listener's program selects its first `want` sockets; with a
 * map, slots [want, was) emptied (a shrink: before the grace period; a
 * grow: once the workers read them); classic BPF, attached for want.
 */
static int listeners_select(struct receiver *r, unsigned int want, unsigned int was)
{
	int err = 0, e;

	for (unsigned int k = 1; k < r->intake.nr_lis; k++) {
		struct rx_listener *l = &r->intake.lis[k];

		e = 0;
		if (l->balancer) {
			balancer_set_live(l->balancer, want);
			for (unsigned int i = want; i < was && !e; i++)
				e = balancer_clear_socket(l->balancer, i);
		} else if (l->cbpf) {
			e = cbpf_balancer_attach(r->intake.group.socks[l->first].fd, want);
		}
		if (e)
			pr_warn("resize: --listen %s: selecting %u sockets: %s\n", l->listen, want,
				strerror(-e));
		if (e && !err)
			err = e;
	}
	return err;
}

/* Workers paused: slots [live, want) of each listener's map hold its spares. */
static int listeners_fill(struct receiver *r, unsigned int want)
{
	uint64_t cookies[want ? want : 1];
	int err = 0;

	for (unsigned int k = 1; k < r->intake.nr_lis && !err; k++) {
		struct rx_listener *l = &r->intake.lis[k];

		if (!l->balancer)
			continue;
		for (unsigned int i = 0; i < want; i++)
			cookies[i] = r->intake.group.socks[l->first + i].cookie;
		for (unsigned int i = r->intake.live; i < want && !err; i++)
			err = balancer_set_socket(l->balancer, i,
						  r->intake.group.socks[l->first + i].fd);
		if (!err)
			err = balancer_verify_live(l->balancer, cookies, want);
		if (err)
			pr_warn("resize: --listen %s: balancer slots: %s\n", l->listen,
				strerror(-err));
	}
	return err;
}

/* Several listeners: what a resize of their groups cannot do, said; NULL
 * when it can. Each grows into its pool only (bound at start, with the
 * rcvbuf forced): a socket bound later would join its group at the end. */
static const char *listeners_refuse(const struct receiver *r, const struct resize_request *req,
				    char *buf, size_t len)
{
	if (r->intake.nr_lis <= 1 || req->sockets == r->intake.live)
		return NULL;
	if (req->naive)
		return "--shrink-naive acts on one group; with several --listen nothing changed";
	for (unsigned int k = r->intake.nr_lis - 1; k > 0; k--) {
		if (req->sockets > r->intake.lis[k].n) {
			snprintf(buf, len,
				 "sockets %u is more than the %u each listener bound at start "
				 "(--max-sockets); nothing changed",
				 req->sockets, r->intake.lis[k].n);
			return buf;
		}
	}
	return NULL;
}

/* Workers paused. Fills slots [live, want) with spares, else new sockets. */
static int grow(struct receiver *r, unsigned int want)
{
	struct socket_group *g = &r->intake.group;
	uint64_t *cookies;
	unsigned int k;
	int err = 0;

	if (want > r->intake.slot_cap) {
		unsigned int *ss = realloc(r->intake.slot_sock, want * sizeof(*ss));
		uint64_t *sb = ss ? realloc(r->intake.steered_base, want * sizeof(*sb)) : NULL;

		if (ss)
			r->intake.slot_sock = ss;
		if (!sb)
			return -ENOMEM;
		memset(sb + r->intake.slot_cap, 0, (want - r->intake.slot_cap) * sizeof(*sb));
		r->intake.steered_base = sb;
		r->intake.slot_cap = want;
	}
	for (k = r->intake.live; k < want; k++) {
		unsigned int idx = g->n;

		if (r->intake.cbpf) {
			/* The program picks by join order: slot k is whatever socket
			 * holds index k, a spare (it was never selected), else one
			 * bound now, which joins at the end. */
			if (k < r->intake.join_order.nr)
				idx = r->intake.join_order.id[k];
			if (idx < g->n && !is_spare(r, idx)) {
				pr_warn("resize: the group's index %u is socket %u, which is %s, "
					"not a spare\n",
					k, idx, intake_socket_state(&r->intake, idx));
				err = -EXDEV;
				break;
			}
		} else {
			for (unsigned int i = 0; i < g->n; i++)
				if (is_spare(r, i)) {
					idx = i;
					break;
				}
		}
		if (idx == g->n) {
			err = socket_group_add(g, r->cfg->rcvbuf);
			if (err < 0)
				break;
			if (!r->intake.cbpf) /* not in the store: upgrade_fdstore_put */
				upgrade_fdstore_socket(&g->socks[idx], true);
			err = receiver_grow_counters(r);
			if (!err)
				err = fair_share_run_attach(r->fair_share, g, idx);
			if (!err && r->intake.cbpf)
				err = cbpf_order_join(&r->intake.join_order, idx);
			if (err)
				break;
		}
		if (r->intake.balancer) {
			err = balancer_set_socket(r->intake.balancer, k, g->socks[idx].fd);
			if (err) {
				pr_warn("resize: balancer slot %u: %s\n", k, strerror(-err));
				break;
			}
		}
		r->intake.slot_sock[k] = idx;
		/* In selection from here on for the worker assignment; the program
		 * picks it only once balancer_set_live() says so. */
		r->intake.live = k + 1;
	}
	if (!r->intake.balancer)
		return err < 0 ? err : 0;
	cookies = calloc(r->intake.live, sizeof(*cookies));
	if (!cookies)
		return -ENOMEM;
	for (k = 0; k < r->intake.live; k++)
		cookies[k] = g->socks[r->intake.slot_sock[k]].cookie;
	if (!err || err > 0)
		err = balancer_verify_live(r->intake.balancer, cookies, r->intake.live);
	free(cookies);
	return err < 0 ? err : 0;
}

/* With a balancer: out of selection and an RCU grace period, and the socket
 * is a spare again. It stays bound and read (workers read spares too), so
 * nothing queued on it is lost, and it keeps the receive buffer forced at
 * start: a later grow takes it back instead of opening a socket that, after
 * the capability drop, could get no more than 2 x net.core.rmem_max. */
static void shrink_to_spares(struct receiver *r, unsigned int want)
{
	listeners_select(r, want, r->intake.live);
	if (r->intake.cbpf) {
		/* The retiring sockets hold indices [want, live): a program for
		 * want sockets never picks them, nor the spares past them. */
		if (!attach_cbpf(r, want))
			intake_grace_period();
		return;
	}
	balancer_set_live(r->intake.balancer, want);
	for (unsigned int k = want; k < r->intake.live; k++) {
		int err = balancer_clear_socket(r->intake.balancer, k);

		if (err)
			pr_warn("resize: emptying balancer slot %u: %s\n", k, strerror(-err));
	}
	intake_grace_period();
	/* The counts of the retired slots are final now. */
	intake_credit_steered(&r->intake);
}

/* The kernel's hash (no balancer) selects every socket of the group, so a
 * socket leaves it for good. Workers running: connected away, drained.
 * Returns 0 once the retiring sockets (slots [want, live)) are empty. */
static int shrink_prepare(struct receiver *r, unsigned int want)
{
	struct socket_group *g = &r->intake.group;
	unsigned int old = r->intake.live;
	int err;

	for (unsigned int k = want; k < old; k++) {
		err = socket_group_connect_away(g, r->intake.slot_sock[k]);
		if (err) {
			pr_warn("resize: connect() of retiring socket %u: %s\n",
				r->intake.slot_sock[k], strerror(-err));
			return err;
		}
	}
	/* A lookup that found a retiring socket before its connect() may still
	 * be queueing to it: after this, nothing more arrives on them. */
	intake_grace_period();
	for (unsigned int waited = 0;; waited++) {
		unsigned int busy = 0;

		for (unsigned int k = want; k < old; k++)
			if (socket_group_queued(g, r->intake.slot_sock[k]) != 0)
				busy++;
		if (!busy)
			return 0;
		if (waited * 2 >= SHRINK_DRAIN_MS || receiver_stopping(r)) {
			pr_warn("resize: %u retiring socket(s) not drained after %d ms; they stay "
				"open, read, and out of selection\n",
				busy, SHRINK_DRAIN_MS);
			return -ETIMEDOUT;
		}
		sleep_ms(2);
	}
}

/* Workers paused: close the retiring sockets, counting what a naive close
 * throws away (the tracer counts it too, per destination port). */
static void shrink_close(struct receiver *r, unsigned int want)
{
	struct socket_group *g = &r->intake.group;

	for (unsigned int k = want; k < r->intake.live; k++) {
		unsigned int idx = r->intake.slot_sock[k];
		uint64_t drops = 0;

		if (socket_group_queued(g, idx) > 0)
			pr_warn("resize: socket %u closed with datagrams queued: the kernel frees "
				"them (the tracer counts them as no-socket drops)\n",
				idx);
		if (!sockinfo_meminfo(g->socks[idx].fd, &drops, NULL))
			g->socks[idx].drops_at_close = drops;
		if (!r->intake.cbpf)
			upgrade_fdstore_socket(&g->socks[idx], false);
		socket_group_close_one(g, idx);
		/* Out of the group: the last socket takes its index. */
		if (r->intake.cbpf)
			cbpf_order_leave(&r->intake.join_order, idx);
	}
	r->intake.live = want;
}

static int resize_locked(struct receiver *r, const struct resize_request *req)
{
	unsigned int want = req->sockets, threads = req->threads;
	char why[160];
	int err = 0, e;

	if (threads > want) {
		pr_warn("resize: threads %u is more than sockets %u: each thread owns at least one "
			"socket; nothing changed\n",
			threads, want);
		return -EINVAL;
	}
	if (listeners_refuse(r, req, why, sizeof(why))) {
		pr_warn("resize: %s\n", listeners_refuse(r, req, why, sizeof(why)));
		return -EINVAL;
	}
	if (r->intake.balancer && want > balancer_slots(r->intake.balancer)) {
		pr_warn("resize: sockets %u is more than --max-sockets %u (the balancer's map was "
			"sized at start); nothing changed\n",
			want, balancer_slots(r->intake.balancer));
		return -EINVAL;
	}
	if (want == r->intake.live && threads == pipeline_threads(&r->pipeline))
		return 0;
	pr_info("resize: %u -> %u sockets, %u -> %u threads%s\n", r->intake.live, want,
		pipeline_threads(&r->pipeline), threads,
		req->naive && want < r->intake.live ? " (naive shrink)" : "");

	if (want < r->intake.live && req->naive) {
		/* The negative control: stop reading, out of selection, close at
		 * once with whatever is queued (what a restart by stop/start does). */
		e = receiver_workers_pause(r);
		if (e)
			pr_warn("resize: a worker had failed: %s\n", strerror(-e));
		if (r->intake.balancer) {
			balancer_set_live(r->intake.balancer, want);
			for (unsigned int k = want; k < r->intake.live; k++)
				balancer_clear_socket(r->intake.balancer, k);
			intake_credit_steered(&r->intake);
		} else if (r->intake.cbpf) {
			attach_cbpf(r, want);
		}
		shrink_close(r, want);
		pipeline_set_threads(&r->pipeline, threads);
		return receiver_workers_resume(r);
	}
	if (want < r->intake.live && (r->intake.balancer || r->intake.cbpf)) {
		shrink_to_spares(r, want);
	} else if (want < r->intake.live) {
		err = shrink_prepare(r, want);
		if (err && err != -ETIMEDOUT)
			return err;
	}
	e = receiver_workers_pause(r);
	if (e)
		pr_warn("resize: a worker had failed: %s\n", strerror(-e));
	if (want < r->intake.live && (r->intake.balancer || r->intake.cbpf)) {
		r->intake.live = want; /* spares from here on: still bound and read */
	} else if (want < r->intake.live && err == -ETIMEDOUT) {
		r->intake.live = want; /* left open and read: nothing lost */
		err = 0;
	} else if (want < r->intake.live) {
		shrink_close(r, want);
	} else if (want > r->intake.live) {
		intake_credit_steered(&r->intake);
		err = listeners_fill(r, want);
		if (!err)
			err = grow(r, want);
		if (err)
			pr_warn("resize: grew to %u sockets, not %u: %s\n", r->intake.live, want,
				strerror(-err));
	}
	pipeline_set_threads(&r->pipeline, threads <= r->intake.live ? threads : r->intake.live);
	e = receiver_workers_resume(r);
	if (e) {
		pr_warn("resize: restarting the workers: %s\n", strerror(-e));
		return e;
	}
	/* Selected only now that a worker reads them. */
	if (r->intake.balancer)
		balancer_set_live(r->intake.balancer, r->intake.live);
	else if (r->intake.cbpf && (e = attach_cbpf(r, r->intake.live)) && !err)
		err = e;
	if ((e = listeners_select(r, r->intake.live, r->intake.live)) && !err)
		err = e;
	return err;
}

int receiver_resize(struct receiver *r, const struct resize_request *req)
{
	struct resize_request threads_only = *req;
	int err;

	/* Several listeners with the kernel's hash: the threads change live
	 * (they read every listener's sockets); the sockets do not. */
	if (intake_single_only(&r->intake) && req->sockets != r->intake.live) {
		pr_warn("SIGHUP: --sockets %u not applied: %s\n", req->sockets,
			intake_single_only(&r->intake));
		threads_only.sockets = r->intake.live;
		req = &threads_only;
	}
	pthread_mutex_lock(&r->report_lock);
	err = resize_locked(r, req);
	pthread_mutex_unlock(&r->report_lock);
	return err;
}
