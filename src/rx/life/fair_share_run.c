// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/sockaddr.h"
#include "net/fair_share.h"
#include "net/handover.h"
#include "net/sockinfo.h"
#include "rx/life/fair_share_run.h"
#include "rx/life/receiver.h"

struct fair_share_run {
	struct fair_share *fs;
	double next_tick, calm_since; /* calm_since: 0 while not calm */
	/* What the workers can drain, datagrams/s: measured over ticks that
	 * began and ended with datagrams queued (busy workers), averaged over
	 * ~1 s of them; 0 until the first. An idle tick says what arrived, not
	 * what could be drained. */
	double drain_rate;
	unsigned int busy; /* busy ticks measured */
	uint64_t last_taken;
	double last_now;
	bool last_queued;
	bool shedding;
	double level;
	uint64_t episodes, shed_at_start;
	/* The tick's scratch, max_senders entries each. */
	uint64_t *rate;
	uint32_t *weight;
	unsigned int n, cap;
	uint8_t top_addr[16];
	uint64_t top_shed;
};

/* The tick's state, scratch for max_senders senders. */
static struct fair_share_run *run_new(struct receiver *r, uint32_t senders)
{
	struct fair_share_run *run = calloc(1, sizeof(*run));

	if (!run)
		return NULL;
	r->fair_share = run;
	run->cap = senders;
	run->rate = calloc(senders, sizeof(*run->rate));
	run->weight = calloc(senders, sizeof(*run->weight));
	return run->rate && run->weight ? run : NULL;
}

int fair_share_run_open(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	struct fair_share_run *run;
	uint32_t senders = cfg->senders ? cfg->senders : FAIR_SHARE_SENDERS_DEFAULT;
	int err = 0;

	if (!cfg->fair_share)
		return 0;
	run = run_new(r, senders);
	if (!run)
		return -ENOMEM;
	run->fs = fair_share_open(senders);
	if (!run->fs)
		return -errno;
	for (unsigned int i = 0; i < cfg->nr_protect && !err; i++)
		err = fair_share_set_prefix(run->fs, cfg->protect[i].addr,
					    cfg->protect[i].prefixlen, cfg->protect[i].weight);
	for (unsigned int i = 0; i < r->group.n && !err; i++)
		if (r->group.socks[i].fd >= 0)
			err = fair_share_attach(run->fs, r->group.socks[i].fd);
	if (err)
		pr_warn("--fair-share: setting its filter up: %s\n", strerror(-err));
	return err;
}

static uint64_t shed_total(struct fair_share_run *run)
{
	uint64_t st[FAIR_SHARE_NR] = {};

	fair_share_stats(run->fs, st);
	return st[FAIR_SHARE_SHED];
}

static int add_map(const char *name, int fd, void *ctx)
{
	return handover_add(ctx, HANDOVER_MAP, "fair_share", name, fd, -1);
}

int fair_share_run_export(struct receiver *r, struct handover *h)
{
	struct fair_share_run *run = r->fair_share;

	return run && run->fs ? fair_share_export(run->fs, add_map, h) : 0;
}

int fair_share_run_adopt(struct receiver *r, const struct handover *h)
{
	if (h && r->cfg->fair_share) {
		/* The buckets map's size is the old process's. */
		struct fair_share_run *run =
			run_new(r, r->cfg->senders ? r->cfg->senders : FAIR_SHARE_SENDERS_DEFAULT);

		if (!run)
			return -ENOMEM;
		run->fs = fair_share_adopt(h);
		if (!run->fs)
			return -errno;
		/* Shedding goes on at the level handed over until this process
		 * has measured its own drain. */
		fair_share_get(run->fs, &run->shedding, &run->level);
		if (run->shedding)
			run->shed_at_start = shed_total(run);
		return 0;
	}
	for (unsigned int i = 0; i < r->group.n; i++) {
		int err = r->group.socks[i].fd >= 0 ? fair_share_detach(r->group.socks[i].fd) : 0;

		if (err) {
			pr_warn("--fair-share: detaching the filter the process before left on "
				"socket %u: %s\n",
				i, strerror(-err));
			return err;
		}
	}
	return fair_share_run_open(r);
}

int fair_share_run_attach(struct receiver *r, unsigned int idx)
{
	struct fair_share_run *run = r->fair_share;
	int err;

	if (!run || !run->fs)
		return 0;
	err = fair_share_attach(run->fs, r->group.socks[idx].fd);
	if (err)
		pr_warn("--fair-share: attaching its filter to socket %u: %s\n", idx,
			strerror(-err));
	return err;
}

void fair_share_run_close(struct receiver *r)
{
	struct fair_share_run *run = r->fair_share;

	if (!run)
		return;
	if (run->fs && !r->handed_over)
		for (unsigned int i = 0; i < r->group.n; i++)
			if (r->group.socks[i].fd >= 0)
				fair_share_detach(r->group.socks[i].fd);
	fair_share_close(run->fs);
	free(run->rate);
	free(run->weight);
	free(run);
	r->fair_share = NULL;
}

/* The fullest socket's share of its receive buffer; *any: a datagram is
 * queued somewhere. */
static double max_fill(struct receiver *r, bool *any)
{
	double worst = 0;

	*any = false;
	for (unsigned int i = 0; i < r->group.n; i++) {
		const struct group_socket *s = &r->group.socks[i];
		uint64_t queued;

		if (s->fd < 0 || s->rcvbuf <= 0 || sockinfo_meminfo(s->fd, NULL, &queued))
			continue;
		*any |= queued > 0;
		if ((double)queued / s->rcvbuf > worst)
			worst = (double)queued / s->rcvbuf;
	}
	return worst;
}

static uint64_t taken(struct receiver *r)
{
	uint64_t sum = 0;

	if (!r->counters)
		return 0;
	for (unsigned int i = 0; i < r->group.n && i < r->counters_cap; i++)
		sum += __atomic_load_n(&r->counters[i].received, __ATOMIC_RELAXED);
	return sum;
}

static int collect(const struct fair_share_row *row, void *ctx)
{
	struct fair_share_run *run = ctx;

	if (row->shed > run->top_shed) {
		run->top_shed = row->shed;
		memcpy(run->top_addr, row->addr, 16);
	}
	if (!row->active || run->n >= run->cap)
		return 0;
	run->rate[run->n] = row->rate;
	run->weight[run->n] = row->weight;
	run->n++;
	return 0;
}

static void say_top(struct fair_share_run *run, char *buf, size_t len)
{
	if (!run->top_shed) {
		snprintf(buf, len, "none");
		return;
	}
	format_addr16(run->top_addr, buf, len);
}

void fair_share_run_tick(struct receiver *r, double now)
{
	struct fair_share_run *run = r->fair_share;
	double fill, dt, rate;
	uint64_t t;
	bool pressed, queued, known;
	char who[64];

	if (!run || now < run->next_tick)
		return;
	run->next_tick = now + FAIR_SHARE_TICK_S;
	t = taken(r);
	fill = max_fill(r, &queued);
	dt = now - run->last_now;
	/* Adopted: until the process before stops reading (it does once told
	 * we are ready), what ours read is not what the group drains. */
	if (r->ready_pending)
		queued = false;
	if (run->last_queued && queued && dt > 0) {
		rate = (t - run->last_taken) / dt;
		/* The first busy ticks averaged, then ~1 s of them: one slow
		 * tick (a process before us still reading) does not set it. */
		run->busy++;
		if (run->busy <= FAIR_SHARE_BUSY_TICKS)
			run->drain_rate += (rate - run->drain_rate) / run->busy;
		else
			run->drain_rate += (rate - run->drain_rate) * (dt < 1.0 ? dt : 1.0);
	}
	run->last_taken = t;
	run->last_now = now;
	run->last_queued = queued;
	known = run->busy >= FAIR_SHARE_BUSY_TICKS;

	pressed = fill >= FAIR_SHARE_ON_FILL || (r->window_ready && window_peek_full(&r->window));
	/* Too few busy ticks measured: no level to shed to yet (the queue past
	 * the fill level has room for them), and a level handed over is kept. */
	if (!known)
		pressed = false;
	if (pressed || fill >= FAIR_SHARE_OFF_FILL)
		run->calm_since = 0;
	else if (!run->calm_since)
		run->calm_since = now;

	run->n = 0;
	run->top_shed = 0;
	if (pressed || run->shedding)
		fair_share_read(run->fs, collect, run);

	if (pressed && !run->shedding) {
		run->shedding = true;
		run->episodes++;
		run->shed_at_start = shed_total(run);
		run->level = fair_share_level(run->rate, run->weight, run->n,
					      run->drain_rate * FAIR_SHARE_HEADROOM);
		pr_warn("fair share: shedding starts (queue %.0f%% of its buffer, %u senders "
			"active, %.0f/s drained, level %.0f/s per sender)\n",
			fill * 100, run->n, run->drain_rate, run->level);
	} else if (run->shedding && run->calm_since && now - run->calm_since >= FAIR_SHARE_OFF_S) {
		uint64_t shed = shed_total(run) - run->shed_at_start;

		run->shedding = false;
		say_top(run, who, sizeof(who));
		pr_warn("fair share: shedding stops; %llu datagrams shed, most from %s (%llu in all)\n",
			(unsigned long long)shed, who, (unsigned long long)run->top_shed);
	} else if (run->shedding && known) {
		run->level = fair_share_level(run->rate, run->weight, run->n,
					      run->drain_rate * FAIR_SHARE_HEADROOM);
	}
	fair_share_set(run->fs, run->shedding, run->level);
}

void fair_share_run_report(struct receiver *r, struct fair_share_report *out)
{
	struct fair_share_run *run = r->fair_share;
	uint64_t st[FAIR_SHARE_NR] = {};

	memset(out, 0, sizeof(*out));
	if (!run || !run->fs)
		return;
	out->on = true;
	out->shedding = run->shedding;
	out->level = run->shedding ? run->level : 0;
	out->episodes = run->episodes;
	fair_share_stats(run->fs, st);
	out->seen = st[FAIR_SHARE_SEEN];
	out->shed = st[FAIR_SHARE_SHED];
	out->unshaped = st[FAIR_SHARE_NO_ENTRY];
	out->inserts = st[FAIR_SHARE_INSERTS];
}
