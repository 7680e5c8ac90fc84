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
#include "rx/life/receiver.h"

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

int receiver_use_cbpf(struct receiver *r, const char *why)
{
	struct socket_group *g = &r->intake.group;
	int err = 0;

	r->intake.cbpf = true;
	r->intake.balance_runs = "classic BPF";
	snprintf(r->intake.balance_why, sizeof(r->intake.balance_why), "%s", why);
	for (unsigned int i = 0; i < g->n && !err; i++)
		err = cbpf_order_join(&r->intake.join_order, i);
	if (!err)
		err = cbpf_balancer_attach(g->socks[0].fd, r->intake.live);
	if (err)
		pr_warn("SO_ATTACH_REUSEPORT_CBPF: %s\n", strerror(-err));
	return err;
}

static int setup_balancer(struct receiver *r, int probe_err)
{
	struct socket_group *g = &r->intake.group;
	unsigned int slots = g->n;
	char names[64], what[96];
	uint64_t *cookies;
	int err = 0;

	if (r->cfg->balance == BALANCE_HASH) {
		r->intake.balance_runs = "kernel hash";
		snprintf(r->intake.balance_why, sizeof(r->intake.balance_why), "--balance hash");
		return 0;
	}
	if ((balance_policy_flags(r->cfg->balance) & BALANCE_F_CLASSIC) && probe_err) {
		char why[128];

		snprintf(why, sizeof(why), "no CAP_BPF: loading an SK_REUSEPORT program: %s",
			 strerror(-probe_err));
		return receiver_use_cbpf(r, why);
	}
	if (probe_err) {
		/* roundrobin and leastloaded keep state in maps: eBPF only. */
		pr_warn("--balance %s needs eBPF: %s (loading an SK_REUSEPORT program: %s); "
			"without privilege, --balance %s spreads by classic BPF\n",
			balance_policy_name(r->cfg->balance), balance_policy_needs(r->cfg->balance),
			strerror(-probe_err), BALANCE_POLICY_LIST(names, BALANCE_F_CLASSIC, 0));
		return probe_err;
	}
	r->intake.balance_runs = "eBPF";
	snprintf(r->intake.balance_why, sizeof(r->intake.balance_why),
		 "CAP_BPF: SK_REUSEPORT program loaded");
	r->intake.balancer = balancer_open(r->cfg->balance, slots);
	if (!r->intake.balancer) {
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
	for (unsigned int i = 0; i < r->intake.live && !err; i++) {
		cookies[i] = g->socks[i].cookie;
		err = balancer_set_socket(r->intake.balancer, i, g->socks[i].fd);
		if (err)
			pr_warn("balancer: socket %u: %s\n", i, strerror(-err));
	}
	/* The group and the map must agree, slot by slot; spares stay out. */
	if (!err)
		err = balancer_verify_live(r->intake.balancer, cookies, r->intake.live);
	if (!err) {
		balancer_set_live(r->intake.balancer, r->intake.live);
		err = balancer_attach(r->intake.balancer, g->socks[0].fd);
		if (err)
			pr_warn("SO_ATTACH_REUSEPORT_EBPF: %s\n", strerror(-err));
	}
	free(cookies);
	return err;
}

int receiver_listener_cbpf(struct receiver *r, struct rx_listener *l)
{
	int err = 0;

	l->cbpf = true;
	for (unsigned int i = 0; i < l->n && !err; i++)
		err = cbpf_order_join(&l->join_order, l->first + i);
	return err ? err : cbpf_balancer_attach(r->intake.group.socks[l->first].fd, r->intake.live);
}

/* Listener k >= 1: the same spreading as listener 0 (r->intake.balance_runs says
 * which, decided there), over its own run of sockets: its pool, of which
 * the first r->intake.live are in selection (every listener has as many in
 * selection as listener 0; a live resize changes them all). */
static int spread_listener(struct receiver *r, struct rx_listener *l)
{
	struct socket_group *g = &r->intake.group;
	uint64_t *cookies;
	int err = 0;

	if (r->cfg->balance == BALANCE_HASH)
		return 0;
	if (r->intake.cbpf) {
		err = receiver_listener_cbpf(r, l);
		if (err)
			pr_warn("--listen %s: SO_ATTACH_REUSEPORT_CBPF: %s\n", l->listen,
				strerror(-err));
		return err;
	}
	l->balancer = balancer_open(r->cfg->balance, l->n);
	if (!l->balancer)
		return -errno;
	cookies = calloc(l->n, sizeof(*cookies));
	if (!cookies)
		return -ENOMEM;
	for (unsigned int i = 0; i < r->intake.live && !err; i++) {
		cookies[i] = g->socks[l->first + i].cookie;
		err = balancer_set_socket(l->balancer, i, g->socks[l->first + i].fd);
	}
	if (!err)
		err = balancer_verify_live(l->balancer, cookies, r->intake.live);
	if (!err) {
		balancer_set_live(l->balancer, r->intake.live);
		err = balancer_attach(l->balancer, g->socks[l->first].fd);
	}
	if (err)
		pr_warn("--listen %s: balancer: %s\n", l->listen, strerror(-err));
	free(cookies);
	return err;
}

/* Listeners 1..: tracer first when the port is known (no drop between bind
 * and attach uncounted), sockets, spreading. Listener 0 is open. */
static int open_more_listeners(struct receiver *r, int probe_err)
{
	const struct config *cfg = r->cfg;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int first, err, foreign;

	for (unsigned int k = 1; k < cfg->nr_listeners; k++) {
		struct rx_listener *l = &r->intake.lis[k];
		/* Each listener's tracer counts its own port's drops per sender
		 * (its own bounded map); a supervisor counts what each child
		 * took from every listener. */
		struct tracer_opts topts = { .count_reads = cfg->supervise,
					     .senders = cfg->senders };

		l->name = cfg->listeners[k].name;
		r->intake.nr_lis = k + 1; /* closed by receiver_close from here on */
		if (cfg->trace && !r->intake.drops_meminfo &&
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
		first = socket_group_append(&r->intake.group, cfg->listeners[k].addr,
					    pool_size(cfg), cfg->rcvbuf, k, l->listen,
					    sizeof(l->listen));
		if (first < 0)
			return first;
		l->first = first;
		l->n = pool_size(cfg);
		if (!parse_host_port(l->listen, &addr, &addrlen))
			l->port = sockaddr_port(&addr);
		if (cfg->trace && !r->intake.drops_meminfo && !l->tracer) {
			topts.port = l->port;
			l->tracer = tracer_open(&topts);
			if (!l->tracer)
				return -errno;
		}
		err = spread_listener(r, l);
		if (err)
			return err;
	}
	/* Every listener bound: a socket on one of our ports that is none of
	 * ours could join a group and take part of its traffic. */
	for (unsigned int k = 0; k < r->intake.nr_lis; k++) {
		foreign = socket_group_foreign_port(&r->intake.group, r->intake.lis[k].port);
		if (foreign > 0) {
			pr_warn("--listen %s: %d other socket(s) already bound to this port; "
				"refusing to share the reuseport group\n",
				r->intake.lis[k].listen, foreign);
			return -EADDRINUSE;
		}
	}
	return 0;
}

struct tracer *receiver_listener_tracer(const struct receiver *r, unsigned int k)
{
	return k == 0 ? r->intake.tracer : k < r->intake.nr_lis ? r->intake.lis[k].tracer : NULL;
}

const char *receiver_single_only(const struct receiver *r)
{
	if (r->intake.nr_lis <= 1 || r->cfg->balance != BALANCE_HASH)
		return NULL;
	return "with several --listen and --balance hash, a live change of --sockets is not "
	       "done (the kernel's hash selects every socket of a group, so a socket leaves "
	       "it only by a close): a restart applies it";
}

/* Drops without the tracer: SO_MEMINFO per socket, exact, no reasons. */
static void count_drops_without_tracer(struct receiver *r, const char *why)
{
	r->intake.drops_meminfo = true;
	pr_info("drops per socket from SO_MEMINFO (exact, no reasons): %s\n", why);
}

static int open_tracer(struct receiver *r, uint16_t port, int probe_err)
{
	/* A supervisor counts what each child took from the kernel. */
	struct tracer_opts topts = {
		.port = port,
		.count_reads = r->cfg->supervise,
		.senders = r->cfg->senders,
	};

	if (probe_err == -EPERM || probe_err == -EACCES) {
		count_drops_without_tracer(r, "the tracer needs CAP_BPF and CAP_PERFMON");
		return 0;
	}
	r->intake.tracer = tracer_open(&topts);
	if (!r->intake.tracer) {
		int err = -errno;

		if (err == -EPERM || err == -EACCES) {
			count_drops_without_tracer(r, "the tracer needs CAP_BPF and CAP_PERFMON");
			return 0;
		}
		pr_warn("tracer: %s (--no-trace runs without it)\n", strerror(-err));
		return err;
	}
	return 0;
}

void intake_first_listener(struct receiver *r, const char *name)
{
	r->intake.lis[0] = (struct rx_listener){ .name = name,
						 .port = socket_group_port(&r->intake.group),
						 .n = r->intake.group.n };
	snprintf(r->intake.lis[0].listen, sizeof(r->intake.lis[0].listen), "%s",
		 r->intake.group.listen);
	r->intake.nr_lis = 1;
}

int intake_open(struct receiver *r, int probe_err)
{
	const struct config *cfg = r->cfg;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int err, foreign;

	/* The tracer goes first when the port is known, so that no drop between
	 * bind and attach goes uncounted. */
	if (cfg->trace && !parse_host_port(cfg->listen, &addr, &addrlen) && sockaddr_port(&addr)) {
		err = open_tracer(r, sockaddr_port(&addr), probe_err);
		if (err)
			return err;
	}
	err = socket_group_open(&r->intake.group, cfg->listen, pool_size(cfg), cfg->rcvbuf);
	if (err)
		return err;
	intake_first_listener(r, cfg->listeners[0].name);
	err = intake_set_slots(r, cfg->sockets);
	if (err)
		return err;
	foreign = socket_group_foreign(&r->intake.group);
	if (foreign > 0) {
		/* Same-user sockets with SO_REUSEPORT would join our group and take
		 * part of the traffic: the group would not be the N we balance. */
		pr_warn("--listen %s: %d other socket(s) already bound to this port; "
			"refusing to share the reuseport group\n",
			r->intake.group.listen, foreign);
		return -EADDRINUSE;
	}
	if (cfg->trace && !r->intake.tracer && !r->intake.drops_meminfo) {
		err = open_tracer(r, socket_group_port(&r->intake.group), probe_err);
		if (err)
			return err;
	}
	err = setup_balancer(r, probe_err);
	return err ? err : open_more_listeners(r, probe_err);
}

int intake_set_slots(struct receiver *r, unsigned int live)
{
	r->intake.live = live;
	r->intake.slot_cap = r->intake.group.n > live ? r->intake.group.n : live;
	r->intake.slot_sock = calloc(r->intake.slot_cap, sizeof(*r->intake.slot_sock));
	r->intake.steered_base = calloc(r->intake.slot_cap, sizeof(*r->intake.steered_base));
	if (!r->intake.slot_sock || !r->intake.steered_base)
		return -ENOMEM;
	for (unsigned int k = 0; k < r->intake.live; k++)
		r->intake.slot_sock[k] = k;
	return 0;
}

static bool in_selection(const struct receiver *r, unsigned int idx)
{
	unsigned int k = r->intake.group.socks[idx].listener;

	/* Another listener's: the first r->intake.live of its pool, which never moves. */
	if (k)
		return k < r->intake.nr_lis && idx - r->intake.lis[k].first < r->intake.live;
	for (unsigned int k = 0; k < r->intake.live; k++)
		if (r->intake.slot_sock[k] == idx)
			return true;
	return false;
}

const char *receiver_socket_state(const struct receiver *r, unsigned int idx)
{
	if (r->intake.group.socks[idx].fd < 0)
		return "closed";
	if (in_selection(r, idx))
		return "live";
	/* Connected away but not yet drained: still read, never reused. */
	return r->intake.group.socks[idx].away ? "retiring" : "spare";
}

unsigned int intake_read_order(const struct receiver *r, unsigned int *order)
{
	unsigned int n = 0;

	/* Those in selection first, so that each thread gets its share of them;
	 * then the spares (and sockets still draining), which only a failed
	 * selection or a shrink in progress would feed. */
	for (unsigned int k = 0; k < r->intake.live; k++)
		order[n++] = r->intake.slot_sock[k];
	for (unsigned int i = 0; i < r->intake.group.n; i++)
		if (r->intake.group.socks[i].fd >= 0 && r->intake.group.socks[i].listener &&
		    in_selection(r, i))
			order[n++] = i;
	for (unsigned int i = 0; i < r->intake.group.n; i++)
		if (r->intake.group.socks[i].fd >= 0 && !in_selection(r, i))
			order[n++] = i;
	return n;
}

int intake_grow_steered(struct receiver *r, unsigned int cap)
{
	uint64_t *st;

	if (cap <= r->intake.steered_cap)
		return 0;
	st = realloc(r->intake.sock_steered, cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	r->intake.sock_steered = st;
	memset(st + r->intake.steered_cap, 0, (cap - r->intake.steered_cap) * sizeof(*st));
	r->intake.steered_cap = cap;
	return 0;
}

void receiver_credit_steered(struct receiver *r)
{
	unsigned int slots;
	uint64_t *now, failures;

	if (!r->intake.balancer)
		return;
	slots = balancer_slots(r->intake.balancer);
	now = calloc(slots, sizeof(*now));
	if (!now || balancer_read(r->intake.balancer, now, &failures)) {
		free(now);
		return;
	}
	for (unsigned int k = 0; k < slots && k < r->intake.slot_cap; k++) {
		/* Only a slot in selection is ever picked. */
		if (k < r->intake.live)
			r->intake.sock_steered[r->intake.slot_sock[k]] +=
				now[k] - r->intake.steered_base[k];
		r->intake.steered_base[k] = now[k];
	}
	free(now);
}

int receiver_steered(struct receiver *r, uint64_t *per_socket, uint64_t *failures)
{
	unsigned int slots;
	uint64_t *now;
	int err;

	if (!r->intake.balancer)
		return -ENOENT;
	slots = balancer_slots(r->intake.balancer);
	now = calloc(slots, sizeof(*now));
	if (!now)
		return -ENOMEM;
	err = balancer_read(r->intake.balancer, now, failures);
	if (!err) {
		for (unsigned int i = 0; i < r->intake.group.n; i++)
			per_socket[i] = r->intake.sock_steered[i];
		for (unsigned int k = 0; k < r->intake.live && k < slots; k++)
			per_socket[r->intake.slot_sock[k]] += now[k] - r->intake.steered_base[k];
	}
	free(now);
	return err;
}

/* What listeners 1.. steered, by their own maps: slot k is their socket
 * first + k (no resize moves them). */
void intake_other_steered(struct receiver *r, uint64_t *steered, uint64_t *failures)
{
	for (unsigned int k = 1; k < r->intake.nr_lis; k++) {
		const struct rx_listener *l = &r->intake.lis[k];
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
void intake_leave_the_port(struct receiver *r, bool kept)
{
	struct socket_group *g = &r->intake.group;
	unsigned int left = 0;

	if (r->intake.balancer || kept || !g->socks)
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
		receiver_grace_period();
}

void intake_close(struct receiver *r, bool kept)
{
	/* Handed over: the program stays with the group for the new process.
	 * Supervised: the program stays with the group its supervisor holds. */
	if ((r->intake.balancer || r->intake.cbpf) && r->intake.live && !kept)
		balancer_detach(r->intake.group.socks[r->intake.slot_sock[0]].fd);
	cbpf_order_free(&r->intake.join_order);
	balancer_close(r->intake.balancer);
	tracer_close(r->intake.tracer);
	for (unsigned int k = 1; k < r->intake.nr_lis; k++) {
		struct rx_listener *l = &r->intake.lis[k];

		if ((l->balancer || l->cbpf) && !kept)
			balancer_detach(r->intake.group.socks[l->first].fd);
		cbpf_order_free(&l->join_order);
		free(l->steered_base);
		balancer_close(l->balancer);
		tracer_close(l->tracer);
	}
	socket_group_close(&r->intake.group);
	free(r->intake.slot_sock);
	free(r->intake.steered_base);
	free(r->intake.sock_steered);
}

int receiver_traced(struct receiver *r, unsigned int i, struct tracer_sock_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (r->intake.drops_meminfo) {
		const struct group_socket *s = &r->intake.group.socks[i];

		if (s->fd < 0) { /* closed by a live shrink: its count at close */
			st->total = s->drops_at_close;
			return 0;
		}
		return sockinfo_meminfo(s->fd, &st->total, NULL);
	}
	if (!receiver_listener_tracer(r, r->intake.group.socks[i].listener))
		return -ENOENT;
	return tracer_read_socket(receiver_listener_tracer(r, r->intake.group.socks[i].listener),
				  r->intake.group.socks[i].cookie, st);
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

const struct socket_group *intake_group(const struct receiver *r)
{
	return &r->intake.group;
}

unsigned int intake_live(const struct receiver *r)
{
	return r->intake.live;
}

unsigned int intake_listeners(const struct receiver *r)
{
	return r->intake.nr_lis;
}

const char *intake_listener_name(const struct receiver *r, unsigned int k)
{
	return k < r->intake.nr_lis ? r->intake.lis[k].name : NULL;
}

const char *intake_listener_listen(const struct receiver *r, unsigned int k)
{
	return k < r->intake.nr_lis ? r->intake.lis[k].listen : NULL;
}

const char *intake_balance_runs(const struct receiver *r)
{
	return r->intake.balance_runs;
}

const char *intake_balance_why(const struct receiver *r)
{
	return r->intake.balance_why;
}

bool intake_has_balancer(const struct receiver *r)
{
	return r->intake.balancer != NULL;
}

bool intake_cbpf(const struct receiver *r)
{
	return r->intake.cbpf;
}

bool intake_drops_meminfo(const struct receiver *r)
{
	return r->intake.drops_meminfo;
}
