// SPDX-License-Identifier: MIT
/*
 * What the intake tells report/'s snapshot (intake.h): the spreading, each
 * socket's identity, state, queue and drops, each listener's no-socket
 * drops. report/ copies these into its own rows.
 */
#include <errno.h>
#include <string.h>
#include "net/sockinfo.h"
#include "rx/life/intake.h"

void intake_report_run(const struct rx_intake *in, struct intake_run_report *run)
{
	run->listen = in->group.listen;
	run->balance_runs = in->balance_runs;
	run->balance_why = in->balance_why;
	run->balancer = in->balancer != NULL;
	run->drops_meminfo = in->drops_meminfo;
	run->traced = in->tracer != NULL || in->drops_meminfo;
	run->by_reason = in->tracer != NULL;
}

void intake_report_socket(struct rx_intake *in, unsigned int i, struct intake_socket_report *s)
{
	const struct group_socket *g = &in->group.socks[i];

	memset(s, 0, sizeof(*s));
	s->listener = g->listener;
	s->cookie = g->cookie;
	s->inode = g->inode;
	s->rcvbuf = g->rcvbuf;
	s->state = intake_socket_state(in, i);
	if (g->fd < 0) { /* closed by a live shrink: its count at close */
		s->have_meminfo = true;
		s->so_meminfo_drops = g->drops_at_close;
	} else {
		s->have_meminfo = !sockinfo_meminfo(g->fd, &s->so_meminfo_drops, &s->queued_bytes);
	}
	s->traced = !intake_traced(in, i, &s->st);
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

int intake_report_no_socket(const struct rx_intake *in, unsigned int k, struct intake_no_socket *ns)
{
	struct tracer *t = intake_listener_tracer(in, k);
	struct no_socket_ctx c = { ns, 0 };

	memset(ns, 0, sizeof(*ns));
	if (!t)
		return -ENOENT;
	c.port = k ? in->lis[k].port : socket_group_port(&in->group);
	ns->map_full = tracer_map_full(t);
	tracer_for_each_no_socket(t, add_no_socket, &c);
	return 0;
}
