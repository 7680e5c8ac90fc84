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
#include "net/socket_group.h"

/* One listener's share: its own filter (buckets, level, pressure), over its
 * own sockets only, so that senders to one listener cannot take another's. */
struct fs_listener {
	struct fair_share *fs;
	double calm_since; /* 0 while not calm */
	/* What the workers can drain from this listener's sockets,
	 * datagrams/s: measured over ticks that began and ended with datagrams
	 * queued on them (busy workers), averaged over ~1 s of them; 0 until
	 * the first. An idle tick says what arrived, not what could be
	 * drained. */
	double drain_rate;
	unsigned int busy; /* busy ticks measured */
	uint64_t last_taken;
	bool last_queued;
	bool shedding;
	double level;
	uint64_t episodes, shed_at_start;
};

struct fair_share_run {
	double next_tick, last_now;
	struct fs_listener lis[CONFIG_MAX_LISTENERS];
	unsigned int nl;
	/* The tick's scratch, max_senders entries each. */
	uint64_t *rate;
	uint32_t *weight;
	unsigned int n, cap;
	uint8_t top_addr[16];
	uint64_t top_shed;
};

/* The tick's state, scratch for max_senders senders. */
static struct fair_share_run *run_new(struct fair_share_run **out, unsigned int nl,
				      uint32_t senders)
{
	struct fair_share_run *run = calloc(1, sizeof(*run));

	if (!run)
		return NULL;
	*out = run;
	run->nl = nl ? nl : 1;
	run->cap = senders;
	run->rate = calloc(senders, sizeof(*run->rate));
	run->weight = calloc(senders, sizeof(*run->weight));
	return run->rate && run->weight ? run : NULL;
}

static uint32_t senders_of(const struct config *cfg)
{
	return cfg->senders ? cfg->senders : FAIR_SHARE_SENDERS_DEFAULT;
}

/* Listener k's filter loaded, --protect set, on each of its sockets. */
static int open_listener(struct fair_share_run *run, const struct config *cfg,
			 const struct socket_group *g, unsigned int k)
{
	struct fs_listener *l = &run->lis[k];
	int err = 0;

	l->fs = fair_share_open(senders_of(cfg));
	if (!l->fs)
		return -errno;
	for (unsigned int i = 0; i < cfg->nr_protect && !err; i++)
		err = fair_share_set_prefix(l->fs, cfg->protect[i].addr, cfg->protect[i].prefixlen,
					    cfg->protect[i].weight);
	for (unsigned int i = 0; i < g->n && !err; i++)
		if (g->socks[i].fd >= 0 && g->socks[i].listener == k)
			err = fair_share_attach(l->fs, g->socks[i].fd);
	if (err)
		pr_warn("--fair-share: setting its filter up: %s\n", strerror(-err));
	return err;
}

int fair_share_run_open(struct fair_share_run **out, const struct config *cfg,
			const struct socket_group *g, unsigned int nl)
{
	struct fair_share_run *run;
	int err = 0;

	if (!cfg->fair_share)
		return 0;
	run = run_new(out, nl, senders_of(cfg));
	if (!run)
		return -ENOMEM;
	for (unsigned int k = 0; k < run->nl && !err; k++)
		err = open_listener(run, cfg, g, k);
	return err;
}

static uint64_t shed_total(struct fs_listener *l)
{
	uint64_t st[FAIR_SHARE_NR] = {};

	fair_share_stats(l->fs, st);
	return st[FAIR_SHARE_SHED];
}

/* The hand-over's owner of listener k's maps: "fair_share", "fair_share1"... */
static void owner_of(unsigned int k, char *buf, size_t len)
{
	if (k)
		snprintf(buf, len, "fair_share%u", k);
	else
		snprintf(buf, len, "fair_share");
}

struct export_ctx {
	struct handover *h;
	char owner[24]; /* "fair_share63" at most: k < CONFIG_MAX_LISTENERS */
};

static int add_map(const char *name, int fd, void *ctx)
{
	struct export_ctx *e = ctx;

	return handover_add(e->h, HANDOVER_MAP, e->owner, name, fd, -1);
}

int fair_share_run_export(const struct fair_share_run *run, struct handover *h)
{
	int err = 0;

	for (unsigned int k = 0; run && k < run->nl && !err; k++) {
		struct export_ctx e = { .h = h };

		owner_of(k, e.owner, sizeof(e.owner));
		if (run->lis[k].fs)
			err = fair_share_export(run->lis[k].fs, add_map, &e);
	}
	return err;
}

bool fair_share_run_owner(const char *owner)
{
	return !strncmp(owner, "fair_share", strlen("fair_share"));
}

/* Listener k's filter from the hand-over: its buckets go on. 1: adopted,
 * 0: none handed over, -errno. */
static int adopt_listener(struct fair_share_run *run, unsigned int k, const struct handover *h)
{
	struct fs_listener *l = &run->lis[k];
	char owner[24];

	owner_of(k, owner, sizeof(owner));
	if (handover_find(h, HANDOVER_MAP, owner, "buckets") < 0)
		return 0;
	l->fs = fair_share_adopt(h, owner);
	if (!l->fs)
		return -errno;
	/* Shedding goes on at the level handed over until this process has
	 * measured its own drain. */
	fair_share_get(l->fs, &l->shedding, &l->level);
	if (l->shedding)
		l->shed_at_start = shed_total(l);
	return 1;
}

/* A filter the process before left on listener k's sockets is lifted. */
static int detach_listener(const struct socket_group *g, unsigned int k)
{
	for (unsigned int i = 0; i < g->n; i++) {
		const struct group_socket *s = &g->socks[i];
		int err = s->fd >= 0 && s->listener == k ? fair_share_detach(s->fd) : 0;

		if (err) {
			pr_warn("--fair-share: detaching the filter the process before left on "
				"socket %u: %s\n",
				i, strerror(-err));
			return err;
		}
	}
	return 0;
}

int fair_share_run_adopt(struct fair_share_run **out, const struct config *cfg,
			 const struct socket_group *g, unsigned int nl, const struct handover *h)
{
	struct fair_share_run *run = NULL;
	int err = 0;

	if (cfg->fair_share && !(run = run_new(out, nl, senders_of(cfg))))
		return -ENOMEM;
	for (unsigned int k = 0; k < (nl ? nl : 1) && !err; k++) {
		int got = run && h ? adopt_listener(run, k, h) : 0;

		if (got < 0)
			return got;
		if (got)
			continue;
		err = detach_listener(g, k);
		if (!err && run)
			err = open_listener(run, cfg, g, k);
	}
	return err;
}

int fair_share_run_attach(struct fair_share_run *run, const struct socket_group *g,
			  unsigned int idx)
{
	const struct group_socket *s = &g->socks[idx];
	struct fair_share *fs;
	int err;

	if (!run || s->listener >= run->nl)
		return 0;
	fs = run->lis[s->listener].fs;
	if (!fs)
		return 0;
	err = fair_share_attach(fs, s->fd);
	if (err)
		pr_warn("--fair-share: attaching its filter to socket %u: %s\n", idx,
			strerror(-err));
	return err;
}

void fair_share_run_close(struct fair_share_run *run, const struct socket_group *g,
			  bool handed_over)
{
	if (!run)
		return;
	for (unsigned int k = 0; k < run->nl; k++) {
		if (run->lis[k].fs && !handed_over)
			detach_listener(g, k);
		fair_share_close(run->lis[k].fs);
	}
	free(run->rate);
	free(run->weight);
	free(run);
}

/* The fullest of listener k's sockets' share of its receive buffer; *any: a
 * datagram is queued on one of them. */
static double max_fill(const struct socket_group *g, unsigned int k, bool *any)
{
	double worst = 0;

	*any = false;
	for (unsigned int i = 0; i < g->n; i++) {
		const struct group_socket *s = &g->socks[i];
		uint64_t queued;

		if (s->fd < 0 || s->listener != k || s->rcvbuf <= 0 ||
		    sockinfo_meminfo(s->fd, NULL, &queued))
			continue;
		*any |= queued > 0;
		if ((double)queued / s->rcvbuf > worst)
			worst = (double)queued / s->rcvbuf;
	}
	return worst;
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

/* " on NAME" for the log lines with several listeners; "" with one. */
static void say_listener(const struct fair_share_input *in, unsigned int k, char *buf, size_t len)
{
	buf[0] = 0;
	if (in->label[k])
		snprintf(buf, len, " on %s", in->label[k]);
}

/* Listener k's drain measured over the tick of dt seconds that ends now. */
static void measure(struct fs_listener *l, uint64_t t, double dt, bool queued)
{
	if (l->last_queued && queued && dt > 0) {
		double rate = (t - l->last_taken) / dt;

		/* The first busy ticks averaged, then ~1 s of them: one slow
		 * tick (a process before us still reading) does not set it. */
		l->busy++;
		if (l->busy <= FAIR_SHARE_BUSY_TICKS)
			l->drain_rate += (rate - l->drain_rate) / l->busy;
		else
			l->drain_rate += (rate - l->drain_rate) * (dt < 1.0 ? dt : 1.0);
	}
	l->last_taken = t;
	l->last_queued = queued;
}

static void tick_listener(struct fair_share_run *run, unsigned int k, double now, double dt,
			  const struct fair_share_input *in)
{
	struct fs_listener *l = &run->lis[k];
	double fill;
	bool pressed, queued, known;
	char who[64], on[96];

	if (!l->fs)
		return;
	fill = max_fill(in->group, k, &queued);
	/* Adopted: until the process before stops reading (it does once told
	 * we are ready), what ours read is not what the group drains. */
	if (in->adopting)
		queued = false;
	measure(l, in->taken[k], dt, queued);
	known = l->busy >= FAIR_SHARE_BUSY_TICKS;

	pressed = fill >= FAIR_SHARE_ON_FILL || in->window_full;
	/* Too few busy ticks measured: no level to shed to yet (the queue past
	 * the fill level has room for them), and a level handed over is kept. */
	if (!known)
		pressed = false;
	if (pressed || fill >= FAIR_SHARE_OFF_FILL)
		l->calm_since = 0;
	else if (!l->calm_since)
		l->calm_since = now;

	run->n = 0;
	run->top_shed = 0;
	if (pressed || l->shedding)
		fair_share_read(l->fs, collect, run);

	say_listener(in, k, on, sizeof(on));
	if (pressed && !l->shedding) {
		l->shedding = true;
		l->episodes++;
		l->shed_at_start = shed_total(l);
		l->level = fair_share_level(run->rate, run->weight, run->n,
					    l->drain_rate * FAIR_SHARE_HEADROOM);
		pr_warn("fair share: shedding starts%s (queue %.0f%% of its buffer, %u senders "
			"active, %.0f/s drained, level %.0f/s per sender)\n",
			on, fill * 100, run->n, l->drain_rate, l->level);
	} else if (l->shedding && l->calm_since && now - l->calm_since >= FAIR_SHARE_OFF_S) {
		uint64_t shed = shed_total(l) - l->shed_at_start;

		l->shedding = false;
		say_top(run, who, sizeof(who));
		pr_warn("fair share: shedding stops%s; %llu datagrams shed, most from %s (%llu in "
			"all)\n",
			on, (unsigned long long)shed, who, (unsigned long long)run->top_shed);
	} else if (l->shedding && known) {
		l->level = fair_share_level(run->rate, run->weight, run->n,
					    l->drain_rate * FAIR_SHARE_HEADROOM);
	}
	fair_share_set(l->fs, l->shedding, l->level);
}

bool fair_share_run_due(const struct fair_share_run *run, double now)
{
	return run && now >= run->next_tick;
}

void fair_share_run_tick(struct fair_share_run *run, double now, const struct fair_share_input *in)
{
	double dt;

	if (!run || now < run->next_tick)
		return;
	run->next_tick = now + FAIR_SHARE_TICK_S;
	dt = now - run->last_now;
	run->last_now = now;
	for (unsigned int k = 0; k < run->nl; k++)
		tick_listener(run, k, now, dt, in);
}

void fair_share_run_report(const struct fair_share_run *run, struct fair_share_report *out)
{
	memset(out, 0, sizeof(*out));
	if (!run)
		return;
	for (unsigned int k = 0; k < run->nl; k++) {
		const struct fs_listener *l = &run->lis[k];
		uint64_t st[FAIR_SHARE_NR] = {};

		if (!l->fs)
			continue;
		out->on = true;
		/* The strictest share of the listeners shedding. */
		if (l->shedding && (!out->shedding || l->level < out->level))
			out->level = l->level;
		out->shedding |= l->shedding;
		out->episodes += l->episodes;
		fair_share_stats(l->fs, st);
		out->seen += st[FAIR_SHARE_SEEN];
		out->shed += st[FAIR_SHARE_SHED];
		out->unshaped += st[FAIR_SHARE_NO_ENTRY];
		out->inserts += st[FAIR_SHARE_INSERTS];
	}
}
