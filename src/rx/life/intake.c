// SPDX-License-Identifier: MIT
/*
 * The receiver's intake (intake.h): opening the listeners, their sockets,
 * the balancer and the tracer; which socket holds which slot; the steered
 * counts; leaving the port and closing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/log.h"
#include "net/sockinfo.h"
#include "rx/life/intake.h"

/* A newcomer without privileges learns what works without them. */
static void say_unprivileged_way(int err, const char *what)
{
	if (err == -EPERM || err == -EACCES)
		pr_warn("%s; without privilege, --balance random (classic BPF) or hash spreads, "
			"and drops are counted from SO_MEMINFO\n",
			what);
}

/* Sockets in the group at start: with a balancer, a pool up to --max-sockets
 * (out of selection until a resize takes them: bound now, while forcing the
 * rcvbuf and binding a low port are still allowed); with the kernel's hash
 * every socket of the group takes traffic, so no spares. */
static unsigned int pool_size(const struct config *c)
{
	if (c->balance == BALANCE_HASH || c->max_sockets <= c->sockets)
		return c->sockets;
	return c->max_sockets;
}

int intake_use_cbpf(struct rx_intake *in, const char *why)
{
	struct socket_group *g = &in->group;
	int err = 0;

	in->cbpf = true;
	in->balance_runs = "classic BPF";
	snprintf(in->balance_why, sizeof(in->balance_why), "%s", why);
	for (unsigned int i = 0; i < g->n && !err; i++)
		err = cbpf_order_join(&in->join_order, i);
	if (!err)
		err = cbpf_balancer_attach(g->socks[0].fd, in->live);
	if (err)
		pr_warn("SO_ATTACH_REUSEPORT_CBPF: %s\n", strerror(-err));
	return err;
}

static int setup_balancer(struct rx_intake *in, int probe_err)
{
	struct socket_group *g = &in->group;
	unsigned int slots = g->n;
	char names[64], what[96];
	uint64_t *cookies;
	int err = 0;

	if (in->cfg->balance == BALANCE_HASH) {
		in->balance_runs = "kernel hash";
		snprintf(in->balance_why, sizeof(in->balance_why), "--balance hash");
		return 0;
	}
	if ((balance_policy_flags(in->cfg->balance) & BALANCE_F_CLASSIC) && probe_err) {
		char why[128];

		snprintf(why, sizeof(why), "no CAP_BPF: loading an SK_REUSEPORT program: %s",
			 strerror(-probe_err));
		return intake_use_cbpf(in, why);
	}
	if (probe_err) {
		/* roundrobin and leastloaded keep state in maps: eBPF only. */
		pr_warn("--balance %s needs eBPF: %s (loading an SK_REUSEPORT program: %s); "
			"without privilege, --balance %s spreads by classic BPF\n",
			balance_policy_name(in->cfg->balance),
			balance_policy_needs(in->cfg->balance), strerror(-probe_err),
			BALANCE_POLICY_LIST(names, BALANCE_F_CLASSIC, 0));
		return probe_err;
	}
	in->balance_runs = "eBPF";
	snprintf(in->balance_why, sizeof(in->balance_why), "CAP_BPF: SK_REUSEPORT program loaded");
	in->balancer = balancer_open(in->cfg->balance, slots);
	if (!in->balancer) {
		err = -errno;
		snprintf(what, sizeof(what), "--balance %s need eBPF",
			 balance_policy_list(names, sizeof(names), ", ", " and ", 0,
					     BALANCE_F_CLASSIC | BALANCE_F_NO_PROGRAM));
		say_unprivileged_way(err, what);
		return err;
	}
	cookies = calloc(slots, sizeof(*cookies));
	if (!cookies)
		return -ENOMEM;
	for (unsigned int i = 0; i < in->live && !err; i++) {
		cookies[i] = g->socks[i].cookie;
		err = balancer_set_socket(in->balancer, i, g->socks[i].fd);
		if (err)
			pr_warn("balancer: socket %u: %s\n", i, strerror(-err));
	}
	/* The group and the map must agree, slot by slot; spares stay out. */
	if (!err)
		err = balancer_verify_live(in->balancer, cookies, in->live);
	if (!err) {
		balancer_set_live(in->balancer, in->live);
		err = balancer_attach(in->balancer, g->socks[0].fd);
		if (err)
			pr_warn("SO_ATTACH_REUSEPORT_EBPF: %s\n", strerror(-err));
	}
	free(cookies);
	return err;
}

int intake_listener_cbpf(struct rx_intake *in, struct rx_listener *l)
{
	int err = 0;

	l->cbpf = true;
	for (unsigned int i = 0; i < l->n && !err; i++)
		err = cbpf_order_join(&l->join_order, l->first + i);
	return err ? err : cbpf_balancer_attach(in->group.socks[l->first].fd, in->live);
}

/* Listener k >= 1: the same spreading as listener 0 (in->balance_runs says
 * which, decided there), over its own run of sockets: its pool, of which
 * the first in->live are in selection (every listener has as many in
 * selection as listener 0; a live resize changes them all). */
static int spread_listener(struct rx_intake *in, struct rx_listener *l)
{
	struct socket_group *g = &in->group;
	uint64_t *cookies;
	int err = 0;

	if (in->cfg->balance == BALANCE_HASH)
		return 0;
	if (in->cbpf) {
		err = intake_listener_cbpf(in, l);
		if (err)
			pr_warn("--listen %s: SO_ATTACH_REUSEPORT_CBPF: %s\n", l->listen,
				strerror(-err));
		return err;
	}
	l->balancer = balancer_open(in->cfg->balance, l->n);
	if (!l->balancer)
		return -errno;
	cookies = calloc(l->n, sizeof(*cookies));
	if (!cookies)
		return -ENOMEM;
	for (unsigned int i = 0; i < in->live && !err; i++) {
		cookies[i] = g->socks[l->first + i].cookie;
		err = balancer_set_socket(l->balancer, i, g->socks[l->first + i].fd);
	}
	if (!err)
		err = balancer_verify_live(l->balancer, cookies, in->live);
	if (!err) {
		balancer_set_live(l->balancer, in->live);
		err = balancer_attach(l->balancer, g->socks[l->first].fd);
	}
	if (err)
		pr_warn("--listen %s: balancer: %s\n", l->listen, strerror(-err));
	free(cookies);
	return err;
}

/* Listeners 1..: tracer first when the port is known (no drop between bind
 * and attach uncounted), sockets, spreading. Listener 0 is open. */
static int open_more_listeners(struct rx_intake *in, int probe_err)
{
	const struct config *cfg = in->cfg;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int first, err, foreign;

	for (unsigned int k = 1; k < cfg->nr_listeners; k++) {
		struct rx_listener *l = &in->lis[k];
		/* Each listener's tracer counts its own port's drops per sender
		 * (its own bounded map); a supervisor counts what each child
		 * took from every listener. */
		struct tracer_opts topts = { .count_reads = cfg->supervise,
					     .senders = cfg->senders };

		l->name = cfg->listeners[k].name;
		in->nr_lis = k + 1; /* closed by receiver_close from here on */
		if (cfg->trace && !in->drops_meminfo &&
		    !parse_host_port(cfg->listeners[k].addr, &addr, &addrlen) &&
		    sockaddr_port(&addr)) {
			topts.port = sockaddr_port(&addr);
			l->tracer = tracer_open(&topts);
			if (!l->tracer) {
				pr_warn("--listen %s: tracer: %s\n", cfg->listeners[k].addr,
					strerror(errno));
				return -errno;
			}
		}
		first = socket_group_append(&in->group, cfg->listeners[k].addr, pool_size(cfg),
					    cfg->rcvbuf, k, l->listen, sizeof(l->listen));
		if (first < 0)
			return first;
		l->first = first;
		l->n = pool_size(cfg);
		if (!parse_host_port(l->listen, &addr, &addrlen))
			l->port = sockaddr_port(&addr);
		if (cfg->trace && !in->drops_meminfo && !l->tracer) {
			topts.port = l->port;
			l->tracer = tracer_open(&topts);
			if (!l->tracer)
				return -errno;
		}
		err = spread_listener(in, l);
		if (err)
			return err;
	}
	/* Every listener bound: a socket on one of our ports that is none of
	 * ours could join a group and take part of its traffic. */
	for (unsigned int k = 0; k < in->nr_lis; k++) {
		foreign = socket_group_foreign_port(&in->group, in->lis[k].port);
		if (foreign > 0) {
			pr_warn("--listen %s: %d other socket(s) already bound to this port; "
				"refusing to share the reuseport group\n",
				in->lis[k].listen, foreign);
			return -EADDRINUSE;
		}
	}
	return 0;
}

struct tracer *intake_listener_tracer(const struct rx_intake *in, unsigned int k)
{
	return k == 0 ? in->tracer : k < in->nr_lis ? in->lis[k].tracer : NULL;
}

const char *intake_single_only(const struct rx_intake *in)
{
	if (in->nr_lis <= 1 || in->cfg->balance != BALANCE_HASH)
		return NULL;
	return "with several --listen and --balance hash, a live change of --sockets is not "
	       "done (the kernel's hash selects every socket of a group, so a socket leaves "
	       "it only by a close): a restart applies it";
}

/* Drops without the tracer: SO_MEMINFO per socket, exact, no reasons. */
static void count_drops_without_tracer(struct rx_intake *in, const char *why)
{
	in->drops_meminfo = true;
	pr_info("drops per socket from SO_MEMINFO (exact, no reasons): %s\n", why);
}

static int open_tracer(struct rx_intake *in, uint16_t port, int probe_err)
{
	/* A supervisor counts what each child took from the kernel. */
	struct tracer_opts topts = {
		.port = port,
		.count_reads = in->cfg->supervise,
		.senders = in->cfg->senders,
	};

	if (probe_err == -EPERM || probe_err == -EACCES) {
		count_drops_without_tracer(in, "the tracer needs CAP_BPF and CAP_PERFMON");
		return 0;
	}
	in->tracer = tracer_open(&topts);
	if (!in->tracer) {
		int err = -errno;

		if (err == -EPERM || err == -EACCES) {
			count_drops_without_tracer(in, "the tracer needs CAP_BPF and CAP_PERFMON");
			return 0;
		}
		pr_warn("tracer: %s (--no-trace runs without it)\n", strerror(-err));
		return err;
	}
	return 0;
}

void intake_first_listener(struct rx_intake *in, const char *name)
{
	in->lis[0] = (struct rx_listener){ .name = name,
					   .port = socket_group_port(&in->group),
					   .n = in->group.n };
	snprintf(in->lis[0].listen, sizeof(in->lis[0].listen), "%s", in->group.listen);
	in->nr_lis = 1;
}

int intake_open(struct rx_intake *in, const struct config *cfg, int probe_err)
{
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int err, foreign;

	in->cfg = cfg;
	/* The tracer goes first when the port is known, so that no drop between
	 * bind and attach goes uncounted. */
	if (cfg->trace && !parse_host_port(cfg->listen, &addr, &addrlen) && sockaddr_port(&addr)) {
		err = open_tracer(in, sockaddr_port(&addr), probe_err);
		if (err)
			return err;
	}
	err = socket_group_open(&in->group, cfg->listen, pool_size(cfg), cfg->rcvbuf);
	if (err)
		return err;
	intake_first_listener(in, cfg->listeners[0].name);
	err = intake_set_slots(in, cfg->sockets);
	if (err)
		return err;
	foreign = socket_group_foreign(&in->group);
	if (foreign > 0) {
		/* Same-user sockets with SO_REUSEPORT would join our group and take
		 * part of the traffic: the group would not be the N we balance. */
		pr_warn("--listen %s: %d other socket(s) already bound to this port; "
			"refusing to share the reuseport group\n",
			in->group.listen, foreign);
		return -EADDRINUSE;
	}
	if (cfg->trace && !in->tracer && !in->drops_meminfo) {
		err = open_tracer(in, socket_group_port(&in->group), probe_err);
		if (err)
			return err;
	}
	err = setup_balancer(in, probe_err);
	return err ? err : open_more_listeners(in, probe_err);
}

int intake_set_slots(struct rx_intake *in, unsigned int live)
{
	in->live = live;
	in->slot_cap = in->group.n > live ? in->group.n : live;
	in->slot_sock = calloc(in->slot_cap, sizeof(*in->slot_sock));
	in->steered_base = calloc(in->slot_cap, sizeof(*in->steered_base));
	if (!in->slot_sock || !in->steered_base)
		return -ENOMEM;
	for (unsigned int k = 0; k < in->live; k++)
		in->slot_sock[k] = k;
	return 0;
}

static bool in_selection(const struct rx_intake *in, unsigned int idx)
{
	unsigned int k = in->group.socks[idx].listener;

	/* Another listener's: the first in->live of its pool, which never moves. */
	if (k)
		return k < in->nr_lis && idx - in->lis[k].first < in->live;
	for (unsigned int k = 0; k < in->live; k++)
		if (in->slot_sock[k] == idx)
			return true;
	return false;
}

const char *intake_socket_state(const struct rx_intake *in, unsigned int idx)
{
	if (in->group.socks[idx].fd < 0)
		return "closed";
	if (in_selection(in, idx))
		return "live";
	/* Connected away but not yet drained: still read, never reused. */
	return in->group.socks[idx].away ? "retiring" : "spare";
}

unsigned int intake_read_order(const struct rx_intake *in, unsigned int *order)
{
	unsigned int n = 0;

	/* Those in selection first, so that each thread gets its share of them;
	 * then the spares (and sockets still draining), which only a failed
	 * selection or a shrink in progress would feed. */
	for (unsigned int k = 0; k < in->live; k++)
		order[n++] = in->slot_sock[k];
	for (unsigned int i = 0; i < in->group.n; i++)
		if (in->group.socks[i].fd >= 0 && in->group.socks[i].listener &&
		    in_selection(in, i))
			order[n++] = i;
	for (unsigned int i = 0; i < in->group.n; i++)
		if (in->group.socks[i].fd >= 0 && !in_selection(in, i))
			order[n++] = i;
	return n;
}

int intake_grow_steered(struct rx_intake *in, unsigned int cap)
{
	uint64_t *st;

	if (cap <= in->steered_cap)
		return 0;
	st = realloc(in->sock_steered, cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	in->sock_steered = st;
	memset(st + in->steered_cap, 0, (cap - in->steered_cap) * sizeof(*st));
	in->steered_cap = cap;
	return 0;
}

void intake_credit_steered(struct rx_intake *in)
{
	unsigned int slots;
	uint64_t *now, failures;

	if (!in->balancer)
		return;
	slots = balancer_slots(in->balancer);
	now = calloc(slots, sizeof(*now));
	if (!now || balancer_read(in->balancer, now, &failures)) {
		free(now);
		return;
	}
	for (unsigned int k = 0; k < slots && k < in->slot_cap; k++) {
		/* Only a slot in selection is ever picked. */
		if (k < in->live)
			in->sock_steered[in->slot_sock[k]] += now[k] - in->steered_base[k];
		in->steered_base[k] = now[k];
	}
	free(now);
}

int intake_steered(struct rx_intake *in, uint64_t *per_socket, uint64_t *failures)
{
	unsigned int slots;
	uint64_t *now;
	int err;

	if (!in->balancer)
		return -ENOENT;
	slots = balancer_slots(in->balancer);
	now = calloc(slots, sizeof(*now));
	if (!now)
		return -ENOMEM;
	err = balancer_read(in->balancer, now, failures);
	if (!err) {
		for (unsigned int i = 0; i < in->group.n; i++)
			per_socket[i] = in->sock_steered[i];
		for (unsigned int k = 0; k < in->live && k < slots; k++)
			per_socket[in->slot_sock[k]] += now[k] - in->steered_base[k];
	}
	free(now);
	return err;
}

/* What listeners 1.. steered, by their own maps: slot k is their socket
 * first + k (no resize moves them). */
void intake_other_steered(struct rx_intake *in, uint64_t *steered, uint64_t *failures)
{
	for (unsigned int k = 1; k < in->nr_lis; k++) {
		const struct rx_listener *l = &in->lis[k];
		uint64_t now[l->n ? l->n : 1], f = 0;

		if (!l->balancer || balancer_slots(l->balancer) != l->n ||
		    balancer_read(l->balancer, now, &f))
			continue;
		for (unsigned int i = 0; i < l->n; i++)
			steered[l->first + i] = now[i] - (l->steered_base ? l->steered_base[i] : 0);
		*failures += f - l->failures_base;
	}
}

/*
 * A final stop, without the eBPF balancer: no process reads these sockets
 * after us, so they leave the port before the final drain. Connected away
 * (socket_group_connect_away), a socket takes nothing more; once the last
 * one has left, a datagram for the port finds no socket and the kernel
 * counts it (Udp NoPorts, the tracer's NO_SOCKET), as after the exit. What
 * they hold is the drain's: none is freed uncounted by the close. (With
 * the eBPF balancer a socket that leaves would fail its selections while
 * the others leave; there the tracer counts what the close frees.)
 */
void intake_leave_the_port(struct rx_intake *in, bool kept)
{
	struct socket_group *g = &in->group;
	unsigned int left = 0;

	if (in->balancer || kept || !g->socks)
		return;
	for (unsigned int i = 0; i < g->n; i++) {
		int err;

		if (g->socks[i].fd < 0 || g->socks[i].away)
			continue;
		err = socket_group_connect_away(g, i);
		/* The summary says what each socket was while receiving (live,
		 * spare), not "retiring". */
		g->socks[i].away = 0;
		if (err)
			pr_warn("stop: connect() of socket %u away from the port: %s; what "
				"arrives before its close is freed uncounted\n",
				i, strerror(-err));
		else
			left++;
	}
	/* A lookup that found a socket before its connect() may still be
	 * queueing to it: after this, the drain sees all there is. */
	if (left)
		intake_grace_period();
}

void intake_close(struct rx_intake *in, bool kept)
{
	/* Handed over: the program stays with the group for the new process.
	 * Supervised: the program stays with the group its supervisor holds. */
	if ((in->balancer || in->cbpf) && in->live && !kept)
		balancer_detach(in->group.socks[in->slot_sock[0]].fd);
	cbpf_order_free(&in->join_order);
	balancer_close(in->balancer);
	tracer_close(in->tracer);
	for (unsigned int k = 1; k < in->nr_lis; k++) {
		struct rx_listener *l = &in->lis[k];

		if ((l->balancer || l->cbpf) && !kept)
			balancer_detach(in->group.socks[l->first].fd);
		cbpf_order_free(&l->join_order);
		free(l->steered_base);
		balancer_close(l->balancer);
		tracer_close(l->tracer);
	}
	socket_group_close(&in->group);
	free(in->slot_sock);
	free(in->steered_base);
	free(in->sock_steered);
}

int intake_traced(struct rx_intake *in, unsigned int i, struct tracer_sock_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (in->drops_meminfo) {
		const struct group_socket *s = &in->group.socks[i];

		if (s->fd < 0) { /* closed by a live shrink: its count at close */
			st->total = s->drops_at_close;
			return 0;
		}
		return sockinfo_meminfo(s->fd, &st->total, NULL);
	}
	if (!intake_listener_tracer(in, in->group.socks[i].listener))
		return -ENOENT;
	return tracer_read_socket(intake_listener_tracer(in, in->group.socks[i].listener),
				  in->group.socks[i].cookie, st);
}

void intake_grace_period(void)
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

const struct socket_group *intake_group(const struct rx_intake *in)
{
	return &in->group;
}

unsigned int intake_live(const struct rx_intake *in)
{
	return in->live;
}

unsigned int intake_listeners(const struct rx_intake *in)
{
	return in->nr_lis;
}

const char *intake_listener_name(const struct rx_intake *in, unsigned int k)
{
	return k < in->nr_lis ? in->lis[k].name : NULL;
}

const char *intake_listener_listen(const struct rx_intake *in, unsigned int k)
{
	return k < in->nr_lis ? in->lis[k].listen : NULL;
}

const char *intake_balance_runs(const struct rx_intake *in)
{
	return in->balance_runs;
}

const char *intake_balance_why(const struct rx_intake *in)
{
	return in->balance_why;
}

bool intake_has_balancer(const struct rx_intake *in)
{
	return in->balancer != NULL;
}

bool intake_cbpf(const struct rx_intake *in)
{
	return in->cbpf;
}

bool intake_drops_meminfo(const struct rx_intake *in)
{
	return in->drops_meminfo;
}
