// SPDX-License-Identifier: MIT
/*
 * What the intake tells report/'s snapshot (intake.h): the spreading, each
 * socket's identity, state, queue and drops, each listener's no-socket
 * drops. report/ copies these into its own rows.
 */
#include <errno.h>
#include <string.h>
#include "net/sockinfo.h"
#include "rx/life/receiver.h"

void intake_report_run(const struct receiver *r, struct intake_run_report *run)
{
	run->listen = r->intake.group.listen;
	run->balance_runs = r->intake.balance_runs;
	run->balance_why = r->intake.balance_why;
	run->balancer = r->intake.balancer != NULL;
	run->drops_meminfo = r->intake.drops_meminfo;
	run->traced = r->intake.tracer != NULL || r->intake.drops_meminfo;
	run->by_reason = r->intake.tracer != NULL;
}

void intake_report_socket(struct receiver *r, unsigned int i, struct intake_socket_report *s)
{
	const struct group_socket *g = &r->intake.group.socks[i];

	memset(s, 0, sizeof(*s));
	s->listener = g->listener;
	s->cookie = g->cookie;
	s->inode = g->inode;
	s->rcvbuf = g->rcvbuf;
	s->state = receiver_socket_state(r, i);
	if (g->fd < 0) { /* closed by a live shrink: its count at close */
		s->have_meminfo = true;
		s->so_meminfo_drops = g->drops_at_close;
	} else {
		s->have_meminfo = !sockinfo_meminfo(g->fd, &s->so_meminfo_drops, &s->queued_bytes);
	}
	s->traced = !receiver_traced(r, i, &s->st);
}

struct no_socket_ctx {
	struct intake_no_socket *ns;
	uint16_t port;
};

static int add_no_socket(uint16_t port, uint32_t reason, uint64_t count, void *arg)
{
	struct no_socket_ctx *c = arg;

	if (port != c->port)
		return 0;
	c->ns->drops += count;
	if (reason < TRACER_MAX_REASONS)
		c->ns->by_reason[reason] += count;
	return 0;
}

int intake_report_no_socket(const struct receiver *r, unsigned int k, struct intake_no_socket *ns)
{
	struct tracer *t = receiver_listener_tracer(r, k);
	struct no_socket_ctx c = { ns, 0 };

	memset(ns, 0, sizeof(*ns));
	if (!t)
		return -ENOENT;
	c.port = k ? r->intake.lis[k].port : socket_group_port(&r->intake.group);
	ns->map_full = tracer_map_full(t);
	tracer_for_each_no_socket(t, add_no_socket, &c);
	return 0;
}
