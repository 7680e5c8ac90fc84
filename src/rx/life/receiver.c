// SPDX-License-Identifier: MIT
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/signals.h"
#include <unistd.h>
#include "common/clock.h"
#include "common/caps.h"
#include "common/log.h"
#include "net/arrival_stamp.h"
#include "net/sockinfo.h"
#include "rx/path/diskbuf.h"
#include "rx/path/diskbuf_lock.h"
#include "rx/settings/paths_check.h"
#include "rx/life/receiver.h"
#include "rx/sink/registry.h"
#include "rx/life/receiver_outputs.h"
#include "rx/life/fair_share_run.h"
#include "rx/life/receiver_workers.h"
#include "rx/path/senders.h"

/* Bound on reading what the kernel queued before exit: under a sender that
 * never stops, "drain until empty" would never end. */
#define FINAL_DRAIN_MS 2000
/* An upgrade with a disk buffer: how long the new process waits for the old
 * one to write what it holds and let DIR go. */
#define DISK_HANDOVER_WAIT_MS 120000

/* A newcomer without privileges learns what works without them. */
static void say_unprivileged_way(int err, const char *what)
{
	if (err == -EPERM || err == -EACCES)
		pr_warn("%s; without privilege, --balance random (classic BPF) or hash spreads, "
			"and drops are counted from SO_MEMINFO\n",
			what);
}

/* --user: looked up first, so a wrong name or a missing privilege is said
 * before anything is bound. */
static int lookup_user(const char *name, struct caps_user *u)
{
	int err = caps_user_lookup(name, u);

	if (err == -ENOENT) {
		pr_warn("--user %s: no such user\n", name);
		return -EINVAL;
	}
	if (err) {
		pr_warn("--user %s: %s\n", name, strerror(-err));
		return err;
	}
	if (!caps_is_user(u) && (!caps_have(CAP_SETUID) || !caps_have(CAP_SETGID))) {
		pr_warn("--user %s: switching user needs CAP_SETUID and CAP_SETGID (run as root, "
			"or start as that user with the capabilities instead)\n",
			name);
		return -EPERM;
	}
	return 0;
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
	struct socket_group *g = &r->group;
	int err = 0;

	r->cbpf = true;
	r->balance_runs = "classic BPF";
	snprintf(r->balance_why, sizeof(r->balance_why), "%s", why);
	for (unsigned int i = 0; i < g->n && !err; i++)
		err = cbpf_order_join(&r->join_order, i);
	if (!err)
		err = cbpf_balancer_attach(g->socks[0].fd, r->live);
	if (err)
		pr_warn("SO_ATTACH_REUSEPORT_CBPF: %s\n", strerror(-err));
	return err;
}

static int setup_balancer(struct receiver *r, int probe_err)
{
	struct socket_group *g = &r->group;
	unsigned int slots = g->n;
	char names[64], what[96];
	uint64_t *cookies;
	int err = 0;

	if (r->cfg->balance == BALANCE_HASH) {
		r->balance_runs = "kernel hash";
		snprintf(r->balance_why, sizeof(r->balance_why), "--balance hash");
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
	r->balance_runs = "eBPF";
	snprintf(r->balance_why, sizeof(r->balance_why), "CAP_BPF: SK_REUSEPORT program loaded");
	r->balancer = balancer_open(r->cfg->balance, slots);
	if (!r->balancer) {
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
	for (unsigned int i = 0; i < r->live && !err; i++) {
		cookies[i] = g->socks[i].cookie;
		err = balancer_set_socket(r->balancer, i, g->socks[i].fd);
		if (err)
			pr_warn("balancer: socket %u: %s\n", i, strerror(-err));
	}
	/* The group and the map must agree, slot by slot; spares stay out. */
	if (!err)
		err = balancer_verify_live(r->balancer, cookies, r->live);
	if (!err) {
		balancer_set_live(r->balancer, r->live);
		err = balancer_attach(r->balancer, g->socks[0].fd);
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
	return err ? err : cbpf_balancer_attach(r->group.socks[l->first].fd, r->live);
}

/* Listener k >= 1: the same spreading as listener 0 (r->balance_runs says
 * which, decided there), over its own run of sockets: its pool, of which
 * the first r->live are in selection (every listener has as many in
 * selection as listener 0; a live resize changes them all). */
static int spread_listener(struct receiver *r, struct rx_listener *l)
{
	struct socket_group *g = &r->group;
	uint64_t *cookies;
	int err = 0;

	if (r->cfg->balance == BALANCE_HASH)
		return 0;
	if (r->cbpf) {
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
	for (unsigned int i = 0; i < r->live && !err; i++) {
		cookies[i] = g->socks[l->first + i].cookie;
		err = balancer_set_socket(l->balancer, i, g->socks[l->first + i].fd);
	}
	if (!err)
		err = balancer_verify_live(l->balancer, cookies, r->live);
	if (!err) {
		balancer_set_live(l->balancer, r->live);
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
		struct rx_listener *l = &r->lis[k];
		/* Each listener's tracer counts its own port's drops per sender
		 * (its own bounded map); a supervisor counts what each child
		 * took from every listener. */
		struct tracer_opts topts = { .count_reads = cfg->supervise,
					     .senders = cfg->senders };

		l->name = cfg->listeners[k].name;
		r->nr_lis = k + 1; /* closed by receiver_close from here on */
		if (cfg->trace && !r->drops_meminfo &&
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
		first = socket_group_append(&r->group, cfg->listeners[k].addr, pool_size(cfg),
					    cfg->rcvbuf, k, l->listen, sizeof(l->listen));
		if (first < 0)
			return first;
		l->first = first;
		l->n = pool_size(cfg);
		if (!parse_host_port(l->listen, &addr, &addrlen))
			l->port = sockaddr_port(&addr);
		if (cfg->trace && !r->drops_meminfo && !l->tracer) {
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
	for (unsigned int k = 0; k < r->nr_lis; k++) {
		foreign = socket_group_foreign_port(&r->group, r->lis[k].port);
		if (foreign > 0) {
			pr_warn("--listen %s: %d other socket(s) already bound to this port; "
				"refusing to share the reuseport group\n",
				r->lis[k].listen, foreign);
			return -EADDRINUSE;
		}
	}
	return 0;
}

struct tracer *receiver_listener_tracer(const struct receiver *r, unsigned int k)
{
	return k == 0 ? r->tracer : k < r->nr_lis ? r->lis[k].tracer : NULL;
}

const char *receiver_single_only(const struct receiver *r)
{
	if (r->nr_lis <= 1 || r->cfg->balance != BALANCE_HASH)
		return NULL;
	return "with several --listen and --balance hash, a live change of --sockets is not "
	       "done (the kernel's hash selects every socket of a group, so a socket leaves "
	       "it only by a close): a restart applies it";
}

/* --ordered's merge is never forced: when the stop gives up (r->force) it
 * hands on all it holds, and the output stage saves or counts it. */
static const volatile int merge_never_forced;

/* --ordered: a reorder stage between the input window and the output, which
 * merges the sockets by their arrival stamps. */
static int setup_ordered(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	int err;

	err = window_init(&r->ordered_window, cfg->window, cfg->window_bytes, cfg->batch);
	if (err)
		return err;
	r->ordered_ready = true;
	r->reorder = reorder_new(&r->window, &r->ordered_window, cfg->ordered_hold_ms * 1000000ULL,
				 &merge_never_forced);
	return r->reorder ? 0 : -ENOMEM;
}

/* Drops without the tracer: SO_MEMINFO per socket, exact, no reasons. */
static void count_drops_without_tracer(struct receiver *r, const char *why)
{
	r->drops_meminfo = true;
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
	r->tracer = tracer_open(&topts);
	if (!r->tracer) {
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

int receiver_open(struct receiver *r, const struct config *cfg)
{
	int err = receiver_acquire(r, cfg);

	return err ? err : receiver_open_rest(r);
}

int receiver_check_user_paths(struct receiver *r, unsigned int *refused)
{
	int err;

	if (r->cfg->user[0] && !r->user_known) {
		err = lookup_user(r->cfg->user, &r->user);
		if (err)
			return err;
		r->user_known = true;
	}
	/* What will be written later, checked as whom will write it. */
	return paths_check(r->cfg, r->user_known ? &r->user : NULL, refused);
}

int receiver_acquire(struct receiver *r, const struct config *cfg)
{
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int err, foreign, probe_err;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->report_lock, NULL);
	r->cfg = cfg;
	r->metrics_fd = -1;
	r->health_fd = -1;
	/* Can eBPF be loaded here at all? If not, classic BPF and SO_MEMINFO
	 * take over, said once each, with no failed load logged first. */
	probe_err = cfg->balance != BALANCE_HASH || cfg->trace ? balancer_probe() : 0;
	/* A wrong name, or a path the user cannot write, fails before
	 * anything is bound. */
	err = receiver_check_user_paths(r, NULL);
	if (err)
		return err;
	/* The tracer goes first when the port is known, so that no drop between
	 * bind and attach goes uncounted. */
	if (cfg->trace && !parse_host_port(cfg->listen, &addr, &addrlen) && sockaddr_port(&addr)) {
		err = open_tracer(r, sockaddr_port(&addr), probe_err);
		if (err)
			return err;
	}
	err = socket_group_open(&r->group, cfg->listen, pool_size(cfg), cfg->rcvbuf);
	if (err)
		return err;
	r->lis[0] = (struct rx_listener){ .name = cfg->listeners[0].name,
					  .port = socket_group_port(&r->group),
					  .n = r->group.n };
	snprintf(r->lis[0].listen, sizeof(r->lis[0].listen), "%s", r->group.listen);
	r->nr_lis = 1;
	err = receiver_set_slots(r, cfg->sockets, cfg->threads);
	if (err)
		return err;
	foreign = socket_group_foreign(&r->group);
	if (foreign > 0) {
		/* Same-user sockets with SO_REUSEPORT would join our group and take
		 * part of the traffic: the group would not be the N we balance. */
		pr_warn("--listen %s: %d other socket(s) already bound to this port; "
			"refusing to share the reuseport group\n",
			r->group.listen, foreign);
		return -EADDRINUSE;
	}
	if (cfg->trace && !r->tracer && !r->drops_meminfo) {
		err = open_tracer(r, socket_group_port(&r->group), probe_err);
		if (err)
			return err;
	}
	err = setup_balancer(r, probe_err);
	if (!err)
		err = open_more_listeners(r, probe_err);
	return err ? err : fair_share_run_open(r);
}

int receiver_set_slots(struct receiver *r, unsigned int live, unsigned int threads)
{
	r->live = live;
	r->threads = threads;
	r->slot_cap = r->group.n > live ? r->group.n : live;
	r->slot_sock = calloc(r->slot_cap, sizeof(*r->slot_sock));
	r->steered_base = calloc(r->slot_cap, sizeof(*r->steered_base));
	if (!r->slot_sock || !r->steered_base)
		return -ENOMEM;
	for (unsigned int k = 0; k < r->live; k++)
		r->slot_sock[k] = k;
	return 0;
}

int receiver_drop_privileges(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	int err;

	if (cfg->user[0]) {
		/* Adopted sockets (an upgrade) skip receiver_acquire. */
		err = r->user_known ? 0 : lookup_user(cfg->user, &r->user);
		if (!err)
			err = caps_switch_user(&r->user);
		if (err) {
			pr_warn("--user %s: switching to uid %u gid %u: %s\n", cfg->user,
				(unsigned int)r->user.uid, (unsigned int)r->user.gid,
				strerror(-err));
			return err;
		}
		return 0;
	}
	/* Fail closed: a receiver that could not give its capabilities up
	 * does not start. */
	err = caps_drop_all();
	if (err)
		pr_warn("dropping capabilities: %s; not starting with them\n", strerror(-err));
	return err;
}

void receiver_say_ready(struct receiver *r)
{
	if (!r->ready_pending)
		return;
	if (write(r->ready_fd, "ready\n", 6) != 6)
		pr_warn("upgrade: telling the old process: %s\n", strerror(errno));
	close(r->ready_fd);
	r->ready_pending = false;
}

static void say_ready_for_lock(void *ctx)
{
	receiver_say_ready(ctx);
}

/* DIR/lock first: held by the process we take over from, we say ready and
 * wait until it has written its last record and let DIR go (the kernel
 * queues hold what arrives meanwhile); held by any other, refused. */
static int open_disk_buffer(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	struct diskbuf_opts dopts = {
		.dir = cfg->disk_buffer,
		.max_bytes = cfg->disk_buffer_size,
		.sync_ms = cfg->disk_buffer_sync_ms,
		.mode = cfg->disk_buffer_mode,
		.tally = &r->disk_tally,
		.listeners = cfg->listeners,
		.nr_listeners = cfg->nr_listeners,
		.listener_names = cfg->listener_names,
	};
	int fd;

	/* Reliable mode leaves the window empty (every batch goes to disk):
	 * the hand-off holds what the window would, in its place. */
	if (cfg->disk_buffer_mode == DISKBUF_RELIABLE) {
		dopts.handoff_msgs = cfg->window;
		dopts.handoff_bytes = cfg->window_bytes;
	}
	fd = diskbuf_lock_take(cfg->disk_buffer, r->ready_pending ? say_ready_for_lock : NULL, r,
			       DISK_HANDOVER_WAIT_MS);
	if (fd < 0)
		return fd == -EBUSY ? -EADDRINUSE : fd;
	r->disk_lock_fd = fd;
	r->disk_locked = true;
	r->disk = diskbuf_open(&dopts);
	if (!r->disk)
		return -errno;
	/* A record read back may name a listener this run does not have. */
	r->sink->listener_name = diskbuf_listener_name;
	r->sink->listener_ctx = r->disk;
	return 0;
}

void receiver_say_identity(const struct config *cfg)
{
	/* Under systemd the unit says who runs it; started by hand, say it. */
	if (cfg->user[0] || geteuid() != 0 || getenv("NOTIFY_SOCKET") || getenv("INVOCATION_ID"))
		return;
	pr_note("running as uid 0 (with no capability left); --user USER "
		"runs as USER\n");
}

int receiver_open_rest(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	int err;

	/* Everything privileged is done: sockets bound, rcvbuf forced, BPF
	 * loaded and attached. Capabilities are per thread: drop them before
	 * any thread exists, the disk buffer's writer and librdkafka's
	 * included; what is opened from here on is opened as the user. */
	err = receiver_drop_privileges(r);
	if (err)
		return err;
	err = receiver_grow_counters(r);
	if (err)
		return err;
	if (cfg->senders) {
		r->senders = calloc(CONFIG_MAX_SOCKETS, sizeof(*r->senders));
		if (!r->senders)
			return -ENOMEM;
	}
	err = window_init(&r->window, cfg->window, cfg->window_bytes, cfg->batch);
	if (err)
		return err;
	r->window_ready = true;
	/* A message without a stamp of its own carries its arrival time, and
	 * --ordered merges by it: ready once the kernel stamps on arrival (the
	 * group's sockets ask for stamps; net/arrival_stamp.h says why wait). */
	if (arrival_stamps_wait(1000))
		pr_warn("not seen that the kernel stamps datagrams on arrival: the first ones "
			"may carry the time they were read\n");
	if (cfg->ordered) {
		err = setup_ordered(r);
		if (err)
			return err;
	}
	r->sink = sink_open(cfg);
	if (!r->sink)
		return -errno;
	r->sink->abort = &r->force;
	err = receiver_routes_open(r);
	if (err)
		return err;
	/* Last, everything else being open: in an upgrade the old process lets
	 * DIR go only once it is told we are ready. */
	return cfg->disk_buffer[0] ? open_disk_buffer(r) : 0;
}

int receiver_start(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	const struct seqtrack_opts seq_opts = {
		.flows_max = cfg->sequence_flows,
		.jump_max = cfg->sequence_jump,
	};
	int err;

	r->wsh = (struct worker_shared){
		.group = &r->group,
		.window = &r->window,
		.disk = r->disk,
		.counters = r->counters,
		.nr_workers = r->threads,
		.batch = cfg->batch,
		.cost_ns = cfg->cost_ns,
		.nr_cost_ns = cfg->nr_cost_ns,
		.cost_makeup = cfg->cost_makeup,
		.stop = &r->stop,
		.force = &r->force,
		/* An output that acknowledges (Kafka, OTLP) may be slow to take the
		 * window: give the read of the kernel queues the deliveries' time. */
		.drain_ms = output_of(cfg)->acknowledges &&
					    cfg->drain_timeout * 1000 > FINAL_DRAIN_MS ?
				    (int)(cfg->drain_timeout * 1000) :
				    FINAL_DRAIN_MS,
		.regroup = &r->regroup,
		.taken = &r->taken,
		.queues_outlive = r->queues_kept ? r->queues_kept : &r->handed_over,
	};
	err = output_stage_start(&r->out, r->reorder ? &r->ordered_window : &r->window, r->disk,
				 r->sink, cfg->format, config_format_flags(cfg), cfg->output_rate,
				 cfg->sequences ? &seq_opts : NULL, &r->reopen, &r->force);
	if (err)
		return err;
	/* The workers format for a stream sink; --ordered's merge takes
	 * message by message, and outputs per listener format each their
	 * own: there the output stages format. */
	r->wsh.pre = r->reorder || r->nr_routes ? NULL : output_stage_preformat(&r->out);
	/* a scrape reads the output's counts from here on (snapshot_take) */
	r->out_started = true;
	__atomic_store_n(&r->out_ready, true, __ATOMIC_RELEASE);
	err = receiver_routes_start(r);
	if (err)
		return err;
	if (r->reorder) {
		err = reorder_start(r->reorder);
		if (err)
			return err;
	}
	/* a scrape may read it already: the endpoints serve before this */
	__atomic_store_n(&r->start_ns, mono_ns(), __ATOMIC_RELAXED);
	return receiver_workers_resume(r);
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
static void leave_the_port(struct receiver *r)
{
	struct socket_group *g = &r->group;
	unsigned int left = 0;

	if (r->balancer || r->handed_over || r->supervised || r->queues_kept || !g->socks)
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

int receiver_stop(struct receiver *r)
{
	int err = 0, e;

	if (!flag_get(&r->stop))
		leave_the_port(r);
	flag_set(&r->stop, 1);
	err = receiver_join_workers(r);
	__atomic_store_n(&r->stop_ns, mono_ns(), __ATOMIC_RELAXED);
	/* The destination is down: what the output holds goes to the disk
	 * buffer now, not after --stop-timeout (the workers' final drain has
	 * put what the kernel queued there or in the window). */
	if (r->disk && r->sink && sink_is_down(r->sink) && !flag_get(&r->force)) {
		pr_warn("stop: %s cannot reach its destination: saving what the output holds to "
			"the disk buffer\n",
			r->sink->name);
		flag_set(&r->force, 1);
	}
	if (r->window_ready)
		window_close(&r->window);
	if (r->reorder) {
		/* Writes what it holds, then closes the output's window. */
		e = reorder_join(r->reorder);
		if (e && !err)
			err = e;
	}
	if (r->ordered_ready)
		window_close(&r->ordered_window);
	if (r->out_started) {
		e = output_stage_join(&r->out);
		if (e && !err)
			err = e;
		r->out_started = false;
	}
	e = receiver_routes_join(r);
	if (e && !err)
		err = e;
	receiver_outputs_say_kept(r);
	/* The stream ended before the summary counts what it could not confirm. */
	if (r->sink && r->sink->ops->finish)
		r->sink->ops->finish(r->sink);
	/* On disk before the summary counts it there. */
	if (r->disk)
		diskbuf_flush(r->disk);
	return err;
}

uint64_t receiver_in_flight(struct receiver *r)
{
	struct window_stats ws;

	if (!r->window_ready)
		return 0;
	window_get_stats(&r->window, &ws);
	if (r->ordered_ready) {
		struct window_stats os;

		window_get_stats(&r->ordered_window, &os);
		return ws.msgs + os.msgs;
	}
	return ws.msgs;
}

void receiver_close(struct receiver *r)
{
	if (r->nr_started || r->out_started)
		receiver_stop(r);
	if (r->sink)
		r->sink->ops->close(r->sink);
	output_stage_free(&r->out);
	receiver_routes_close(r);
	reorder_free(r->reorder);
	if (r->ordered_ready)
		window_destroy(&r->ordered_window);
	diskbuf_close(r->disk);
	if (r->disk_locked) /* after the buffer's last write */
		diskbuf_lock_release(r->disk_lock_fd);
	if (r->window_ready)
		window_destroy(&r->window);
	/* Handed over: the program stays with the group for the new process. */
	/* Supervised: the program stays with the group its supervisor holds. */
	if ((r->balancer || r->cbpf) && r->live && !r->handed_over && !r->supervised)
		balancer_detach(r->group.socks[r->slot_sock[0]].fd);
	cbpf_order_free(&r->join_order);
	fair_share_run_close(r);
	balancer_close(r->balancer);
	tracer_close(r->tracer);
	for (unsigned int k = 1; k < r->nr_lis; k++) {
		struct rx_listener *l = &r->lis[k];

		if ((l->balancer || l->cbpf) && !r->handed_over && !r->supervised)
			balancer_detach(r->group.socks[l->first].fd);
		cbpf_order_free(&l->join_order);
		free(l->steered_base);
		balancer_close(l->balancer);
		tracer_close(l->tracer);
	}
	socket_group_close(&r->group);
	free(r->counters);
	free(r->workers);
	free(r->slot_sock);
	free(r->steered_base);
	free(r->order);
	free(r->sock_steered);
	for (unsigned int t = 0; r->senders && t < r->nr_senders; t++)
		sender_table_free(r->senders[t]);
	free(r->senders);
	r->senders = NULL;
	r->nr_senders = 0;
	/* Supervised, the counts stay for the supervisor to read after us. */
	if (!r->supervised)
		memset(r, 0, sizeof(*r));
}

int receiver_traced(struct receiver *r, unsigned int i, struct tracer_sock_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (r->drops_meminfo) {
		const struct group_socket *s = &r->group.socks[i];

		if (s->fd < 0) { /* closed by a live shrink: its count at close */
			st->total = s->drops_at_close;
			return 0;
		}
		return sockinfo_meminfo(s->fd, &st->total, NULL);
	}
	if (!receiver_listener_tracer(r, r->group.socks[i].listener))
		return -ENOENT;
	return tracer_read_socket(receiver_listener_tracer(r, r->group.socks[i].listener),
				  r->group.socks[i].cookie, st);
}
