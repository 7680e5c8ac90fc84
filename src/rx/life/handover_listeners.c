// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/sockaddr.h"
#include "rx/life/handover_listeners.h"

static int add_map(const char *name, int fd, void *ctx, const char *owner)
{
	return handover_add(ctx, HANDOVER_MAP, owner, name, fd, -1);
}

struct export_ctx {
	struct handover *h;
	char owner[24]; /* "balancer63" at most: k < CONFIG_MAX_LISTENERS */
};

static int add_balancer_map(const char *name, int fd, void *ctx)
{
	struct export_ctx *e = ctx;

	return add_map(name, fd, e->h, e->owner);
}

static int add_tracer_obj(int is_link, const char *name, int fd, void *ctx)
{
	struct export_ctx *e = ctx;

	return handover_add(e->h, is_link ? HANDOVER_LINK : HANDOVER_MAP, e->owner, name, fd, -1);
}

int handover_listeners_build(struct receiver *r, struct handover *h)
{
	int err = 0;

	for (unsigned int k = 1; k < r->intake.nr_lis && !err; k++) {
		const struct rx_listener *l = &r->intake.lis[k];
		struct export_ctx e = { .h = h };

		/* Its sockets never move: index i is slot i and join order i;
		 * the first r->intake.live in selection, then its spares. */
		for (unsigned int i = 0; i < l->n && !err; i++)
			err = handover_add(h, HANDOVER_SOCK, NULL, NULL,
					   r->intake.group.socks[l->first + i].fd,
					   (int)(k * HANDOVER_LISTENER_SLOTS + i));
		snprintf(e.owner, sizeof(e.owner), "balancer%u", k);
		if (!err && l->balancer)
			err = balancer_export(l->balancer, add_balancer_map, &e);
		snprintf(e.owner, sizeof(e.owner), "tracer%u", k);
		if (!err && l->tracer)
			err = tracer_export(l->tracer, add_tracer_obj, &e);
	}
	return err;
}

static bool owner_handed(const struct handover *h, const char *owner)
{
	for (unsigned int i = 0; i < h->n; i++)
		if (h->items[i].kind != HANDOVER_SOCK && !strcmp(h->items[i].owner, owner))
			return true;
	return false;
}

/* Listener k's handed sockets, by slot, into fds; how many (0: none). */
static unsigned int handed_sockets(const struct handover *h, unsigned int k, int *fds,
				   unsigned int cap)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < cap; i++) {
		bool found = false;

		for (unsigned int j = 0; j < h->n && !found; j++) {
			if (h->items[j].kind == HANDOVER_SOCK &&
			    h->items[j].slot == (int)(k * HANDOVER_LISTENER_SLOTS + i)) {
				fds[n++] = h->items[j].fd;
				found = true;
			}
		}
		if (!found)
			break;
	}
	return n;
}

/* The listener's spreading as the old process left it: its balancer's maps
 * (checked against its sockets by cookie), or classic BPF attached again for
 * the same count, or the kernel's hash. */
static int adopt_spread(struct receiver *r, struct rx_listener *l, unsigned int k,
			const struct handover *h)
{
	char owner[24]; /* "balancer63" at most: k < CONFIG_MAX_LISTENERS */
	uint64_t *cookies, failures = 0;
	int err = 0;

	if (r->cfg->balance == BALANCE_HASH)
		return 0;
	if (r->intake.cbpf)
		return r->intake.live > l->n ? -EXDEV : intake_listener_cbpf(&r->intake, l);
	snprintf(owner, sizeof(owner), "balancer%u", k);
	l->balancer = balancer_adopt_as(h, owner);
	if (!l->balancer)
		return -errno;
	/* Every listener has listener 0's count in selection (a resize
	 * changes them all); the rest of its pool are spares. */
	if (r->intake.live > l->n) {
		pr_warn("hand-over: --listen %s: %u sockets handed over, %u in selection\n",
			l->listen, l->n, r->intake.live);
		return -EXDEV;
	}
	cookies = calloc(l->n, sizeof(*cookies));
	if (!cookies)
		return -ENOMEM;
	for (unsigned int i = 0; i < l->n; i++)
		cookies[i] = r->intake.group.socks[l->first + i].cookie;
	err = balancer_verify_live(l->balancer, cookies, r->intake.live);
	free(cookies);
	/* What the process before steered is its own: counted from here. */
	l->steered_base = calloc(l->n, sizeof(*l->steered_base));
	if (!err && (!l->steered_base || balancer_read(l->balancer, l->steered_base, &failures)))
		err = -ENOMEM;
	l->failures_base = failures;
	if (!err && balancer_get_live(l->balancer) != r->intake.live)
		err = -EXDEV;
	if (err)
		pr_warn("hand-over: --listen %s: the balancer's map does not hold the sockets handed "
			"over\n",
			l->listen);
	return err;
}

static int adopt_one(struct receiver *r, const struct config *cfg, const struct handover *h,
		     unsigned int k, int *fds)
{
	struct rx_listener *l = &r->intake.lis[k];
	struct sockaddr_storage want;
	socklen_t wl;
	char want_text[80], owner[24];
	unsigned int n = handed_sockets(h, k, fds, CONFIG_MAX_SOCKETS);
	struct sockaddr_storage got;
	socklen_t gl = sizeof(got);
	int first;

	l->name = cfg->listeners[k].name;
	r->intake.nr_lis = k + 1; /* closed by receiver_close from here on */
	if (!n) {
		pr_warn("hand-over: --listen %s: no socket handed over for it (adding a listener "
			"needs a restart)\n",
			cfg->listeners[k].addr);
		return -EINVAL;
	}
	first = socket_group_adopt_more(&r->intake.group, fds, n, k);
	if (first < 0)
		return first;
	l->first = first;
	l->n = n;
	if (getsockname(fds[0], (struct sockaddr *)&got, &gl))
		return -errno;
	format_host_port((struct sockaddr *)&got, l->listen, sizeof(l->listen));
	l->port = sockaddr_port(&got);
	if (parse_host_port(cfg->listeners[k].addr, &want, &wl))
		return -EINVAL;
	format_host_port((struct sockaddr *)&want, want_text, sizeof(want_text));
	if (sockaddr_port(&want) && strcmp(want_text, l->listen)) {
		pr_warn("hand-over: --listen %s, but the sockets handed over for listener %u are "
			"bound to %s\n",
			want_text, k, l->listen);
		return -EINVAL;
	}
	snprintf(owner, sizeof(owner), "tracer%u", k);
	if (cfg->trace && !r->intake.drops_meminfo && owner_handed(h, owner)) {
		l->tracer = tracer_adopt_as(h, owner);
		if (!l->tracer)
			return -errno;
	}
	return adopt_spread(r, l, k, h);
}

/* systemd's fd store names each socket's listener, not its slot: listener
 * k's balancer map says it (with the kernel's hash, any order will do); its
 * spares (out of selection after a shrink) come after, in any order. */
static int fdstore_slots(struct handover *h, unsigned int k, enum balance_policy balance)
{
	struct balancer *b = NULL;
	unsigned int live = 0, next = 0;
	char owner[24]; /* "balancer63" at most: k < CONFIG_MAX_LISTENERS */

	if (balance != BALANCE_HASH) {
		snprintf(owner, sizeof(owner), "balancer%u", k);
		b = balancer_adopt_as(h, owner);
		if (!b)
			return -errno;
		live = balancer_get_live(b);
	}
	for (unsigned int i = 0; i < h->n; i++) {
		struct handover_item *it = &h->items[i];
		uint64_t cookie;

		if (it->kind != HANDOVER_SOCK || it->listener != k)
			continue;
		it->slot = -1;
		if (!b)
			it->slot = (int)(k * HANDOVER_LISTENER_SLOTS + next++);
		for (unsigned int s = 0; b && s < live; s++)
			if (!balancer_slot_cookie(b, s, &cookie) && cookie == it->id)
				it->slot = (int)(k * HANDOVER_LISTENER_SLOTS + s);
	}
	next = live;
	for (unsigned int i = 0; b && i < h->n; i++)
		if (h->items[i].kind == HANDOVER_SOCK && h->items[i].listener == k &&
		    h->items[i].slot < 0)
			h->items[i].slot = (int)(k * HANDOVER_LISTENER_SLOTS + next++);
	balancer_close(b);
	return 0;
}

int handover_listeners_adopt(struct receiver *r, const struct config *cfg, struct handover *h)
{
	int *fds = calloc(CONFIG_MAX_SOCKETS, sizeof(*fds));
	int err = 0;

	if (!fds)
		return -ENOMEM;
	for (unsigned int k = 1; h->from_fdstore && k < cfg->nr_listeners && !err; k++)
		err = fdstore_slots(h, k, cfg->balance);
	for (unsigned int k = 1; k < cfg->nr_listeners && !err; k++)
		err = adopt_one(r, cfg, h, k, fds);
	free(fds);
	/* Sockets of a listener this configuration does not have. */
	for (unsigned int i = 0; i < h->n && !err; i++) {
		if (h->items[i].kind == HANDOVER_SOCK &&
		    (h->items[i].slot >= (int)(cfg->nr_listeners * HANDOVER_LISTENER_SLOTS) ||
		     h->items[i].listener >= cfg->nr_listeners)) {
			pr_warn("hand-over: the process before had more listeners than the %u "
				"--listen given (removing a listener needs a restart)\n",
				cfg->nr_listeners);
			err = -EINVAL;
		}
	}
	return err;
}
