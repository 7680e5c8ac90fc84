// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/clock.h"
#include "common/caps.h"
#include "common/log.h"
#include "rx/diskbuf.h"
#include "rx/receiver.h"

/* Bound on reading what the kernel queued before exit: under a sender that
 * never stops, "drain until empty" would never end. */
#define FINAL_DRAIN_MS 2000

static int setup_balancer(struct receiver *r)
{
	struct socket_group *g = &r->group;
	uint64_t *cookies;
	int err = 0;

	if (r->cfg->balance == BALANCE_HASH)
		return 0;
	r->balancer = balancer_open(r->cfg->balance, g->n);
	if (!r->balancer)
		return -errno;
	cookies = calloc(g->n, sizeof(*cookies));
	if (!cookies)
		return -ENOMEM;
	for (unsigned int i = 0; i < g->n && !err; i++) {
		cookies[i] = g->socks[i].cookie;
		err = balancer_set_socket(r->balancer, i, g->socks[i].fd);
		if (err)
			pr_warn("balancer: socket %u: %s\n", i, strerror(-err));
	}
	/* The group and the map must agree on N, slot by slot. */
	if (!err)
		err = balancer_verify(r->balancer, cookies, g->n);
	if (!err) {
		err = balancer_attach(r->balancer, g->socks[0].fd);
		if (err)
			pr_warn("SO_ATTACH_REUSEPORT_EBPF: %s\n", strerror(-err));
	}
	free(cookies);
	return err;
}

static int open_tracer(struct receiver *r, uint16_t port)
{
	struct tracer_opts topts = { .port = port };

	r->tracer = tracer_open(&topts);
	if (!r->tracer) {
		int err = -errno;

		if (err != -EPERM)
			pr_warn("tracer: %s (--no-trace runs without it)\n", strerror(-err));
		return err;
	}
	return 0;
}

int receiver_open(struct receiver *r, const struct config *cfg)
{
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int err, foreign;

	memset(r, 0, sizeof(*r));
	r->cfg = cfg;
	/* The tracer goes first when the port is known, so that no drop between
	 * bind and attach goes uncounted. */
	if (cfg->trace && !parse_host_port(cfg->listen, &addr, &addrlen) && sockaddr_port(&addr)) {
		err = open_tracer(r, sockaddr_port(&addr));
		if (err)
			return err;
	}
	err = socket_group_open(&r->group, cfg->listen, cfg->sockets, cfg->rcvbuf);
	if (err)
		return err;
	foreign = socket_group_foreign(&r->group);
	if (foreign > 0) {
		/* Same-user sockets with SO_REUSEPORT would join our group and take
		 * part of the traffic: the group would not be the N we balance. */
		pr_warn("--listen %s: %d other socket(s) already bound to this port; "
			"refusing to share the reuseport group\n", r->group.listen, foreign);
		return -EADDRINUSE;
	}
	if (cfg->trace && !r->tracer) {
		err = open_tracer(r, socket_group_port(&r->group));
		if (err)
			return err;
	}
	err = setup_balancer(r);
	if (err)
		return err;
	r->counters = calloc(r->group.n, sizeof(*r->counters));
	r->workers = calloc(cfg->threads, sizeof(*r->workers));
	if (!r->counters || !r->workers)
		return -ENOMEM;
	err = window_init(&r->window, cfg->window, cfg->window_bytes, cfg->batch);
	if (err)
		return err;
	r->window_ready = true;
	if (cfg->disk_buffer[0]) {
		struct diskbuf_opts dopts = {
			.dir = cfg->disk_buffer, .max_bytes = cfg->disk_buffer_size,
			.sync_ms = cfg->disk_buffer_sync_ms, .mode = cfg->disk_buffer_mode,
		};

		r->disk = diskbuf_open(&dopts);
		if (!r->disk)
			return -errno;
	}
	/* Everything privileged is done: sockets bound, rcvbuf forced, BPF
	 * loaded and attached. Capabilities are per thread: drop them before
	 * any thread exists, librdkafka's included (sink_open starts those). */
	err = caps_drop_all();
	if (err)
		pr_warn("dropping capabilities: %s (continuing)\n", strerror(-err));
	r->sink = sink_open(cfg);
	if (!r->sink)
		return -errno;
	r->sink->abort = &r->force;
	return 0;
}

int receiver_start(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	int err;

	r->wsh = (struct worker_shared) {
		.group = &r->group,
		.window = &r->window,
		.disk = r->disk,
		.counters = r->counters,
		.nr_workers = cfg->threads,
		.batch = cfg->batch,
		.cost_ns = cfg->cost_ns,
		.stop = &r->stop,
		.force = &r->force,
		/* A Kafka output may be slow to take the window: give the read
		 * of the kernel queues the same time as the deliveries. */
		.drain_ms = cfg->output == OUTPUT_KAFKA && cfg->drain_timeout * 1000 > FINAL_DRAIN_MS
			    ? (int)(cfg->drain_timeout * 1000) : FINAL_DRAIN_MS,
	};
	err = output_stage_start(&r->out, &r->window, r->disk, r->sink, cfg->format,
				 cfg->output_rate, &r->reopen, &r->force);
	if (err)
		return err;
	r->out_started = true;
	r->start_ns = mono_ns();
	for (unsigned int t = 0; t < cfg->threads; t++) {
		err = worker_start(&r->workers[t], t, &r->wsh);
		if (err) {
			pr_warn("worker %u: %s\n", t, strerror(-err));
			return err;
		}
		r->nr_started++;
	}
	return 0;
}

int receiver_stop(struct receiver *r)
{
	int err = 0, e;

	r->stop = 1;
	for (unsigned int t = 0; t < r->nr_started; t++) {
		e = worker_join(&r->workers[t]);
		if (e && !err) {
			pr_warn("worker %u: %s\n", t, strerror(-e));
			err = e;
		}
	}
	r->nr_started = 0;
	r->stop_ns = mono_ns();
	if (r->window_ready)
		window_close(&r->window);
	if (r->out_started) {
		e = output_stage_join(&r->out);
		if (e && !err)
			err = e;
		r->out_started = false;
	}
	return err;
}

uint64_t receiver_in_flight(struct receiver *r)
{
	struct window_stats ws;

	if (!r->window_ready)
		return 0;
	window_get_stats(&r->window, &ws);
	return ws.msgs;
}

void receiver_close(struct receiver *r)
{
	if (r->nr_started || r->out_started)
		receiver_stop(r);
	if (r->sink)
		r->sink->ops->close(r->sink);
	output_stage_free(&r->out);
	diskbuf_close(r->disk);
	if (r->window_ready)
		window_destroy(&r->window);
	if (r->balancer && r->group.n)
		balancer_detach(r->group.socks[0].fd);
	balancer_close(r->balancer);
	tracer_close(r->tracer);
	socket_group_close(&r->group);
	free(r->counters);
	free(r->workers);
	memset(r, 0, sizeof(*r));
}

int receiver_traced(struct receiver *r, unsigned int i, struct tracer_sock_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!r->tracer)
		return -ENOENT;
	return tracer_read_socket(r->tracer, r->group.socks[i].cookie, st);
}
