// SPDX-License-Identifier: MIT
/*
 * The pipeline's life: opening the window, --ordered's stage, the sinks and
 * the disk buffers; starting the output stages; the two steps of a stop;
 * freeing it all. The workers are pipeline_workers.c's, what the reports
 * read pipeline_report.c's.
 *
 * The named outputs (--output LISTENER=SPEC) beside the unnamed one: each
 * takes the window's queue its listeners' batches join (route i: queue
 * i + 1; every other listener's stay on queue 0, the unnamed output's), so
 * a destination that stops holds up only its own output stage. The books
 * close per output: what its listeners received is what it wrote,
 * discarded, gave up or saved.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/signals.h"
#include "net/arrival_stamp.h"
#include "rx/path/diskbuf.h"
#include "rx/path/diskbuf_lock.h"
#include "rx/life/pipeline.h"
#include "rx/settings/output_routes.h"
#include "rx/sink/registry.h"

/* Bound on reading what the kernel queued before exit: under a sender that
 * never stops, "drain until empty" would never end. */
#define FINAL_DRAIN_MS 2000
/* An upgrade with a disk buffer: how long the new process waits for the old
 * one to write what it holds and let DIR go. */
#define DISK_HANDOVER_WAIT_MS 120000

/* --ordered's merge is never forced: when the stop gives up (p->force) it
 * hands on all it holds, and the output stage saves or counts it. */
static const volatile int merge_never_forced;

void pipeline_init(struct rx_pipeline *p, const struct config *cfg)
{
	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->threads = cfg->threads;
}

/* --ordered: a reorder stage between the input window and the output, which
 * merges the sockets by their arrival stamps. */
static int setup_ordered(struct rx_pipeline *p)
{
	const struct config *cfg = p->cfg;
	int err;

	err = window_init(&p->ordered_window, cfg->window, cfg->window_bytes, cfg->batch);
	if (err)
		return err;
	p->ordered_ready = true;
	p->reorder = reorder_new(&p->window, &p->ordered_window, cfg->ordered_hold_ms * 1000000ULL,
				 &merge_never_forced);
	return p->reorder ? 0 : -ENOMEM;
}

/* The named outputs' life, beside the unnamed output's. */

static int routes_open(struct rx_pipeline *p, const struct pipeline_listeners *lis)
{
	const struct config *cfg = p->cfg;

	if (!cfg->nr_routes)
		return 0;
	p->routes = calloc(cfg->nr_routes, sizeof(*p->routes));
	if (!p->routes)
		return -ENOMEM;
	for (unsigned int i = 0; i < cfg->nr_routes; i++) {
		struct rx_route *rt = &p->routes[i];

		rt->cfg = *cfg;
		output_route_apply(&rt->cfg, i);
		rt->sink = sink_open(&rt->cfg);
		if (!rt->sink)
			return -errno;
		/* a scrape may read the routes already (the endpoints serve early) */
		__atomic_store_n(&p->nr_routes, i + 1, __ATOMIC_RELEASE);
		rt->sink->abort = &p->force;
		for (unsigned int k = 0; k < lis->n; k++)
			if (!strcmp(lis->name[k], cfg->routes[i].listener))
				window_route(&p->window, k, i + 1);
	}
	return 0;
}

static int routes_start(struct rx_pipeline *p)
{
	for (unsigned int i = 0; i < p->nr_routes; i++) {
		struct rx_route *rt = &p->routes[i];
		int err;

		rt->out.queue = i + 1;
		p->wsh.route_disk[i + 1] = rt->disk; /* before the workers start */
		err = output_stage_start(&rt->out, &p->window, rt->disk, rt->sink, rt->cfg.format,
					 config_format_flags(&rt->cfg), rt->cfg.output_rate, NULL,
					 &rt->reopen, &p->force);
		if (err)
			return err;
		rt->started = true;
		__atomic_store_n(&rt->ready, true, __ATOMIC_RELEASE);
	}
	return 0;
}

static int routes_join(struct rx_pipeline *p)
{
	int err = 0;

	for (unsigned int i = 0; i < p->nr_routes; i++) {
		struct rx_route *rt = &p->routes[i];
		int e;

		if (rt->started) {
			e = output_stage_join(&rt->out);
			if (e && !err)
				err = e;
			rt->started = false;
		}
		if (rt->sink->ops->finish)
			rt->sink->ops->finish(rt->sink);
	}
	return err;
}

static void routes_close(struct rx_pipeline *p)
{
	for (unsigned int i = 0; i < p->nr_routes; i++) {
		struct rx_route *rt = &p->routes[i];

		rt->sink->ops->close(rt->sink);
		output_stage_free(&rt->out);
		diskbuf_close(rt->disk);
		/* after its last write, and before the unnamed output's DIR: an
		 * upgrade's new process, once it has that, finds these free */
		if (rt->disk_locked)
			diskbuf_lock_release(rt->disk_lock_fd);
	}
	free(p->routes);
	p->routes = NULL;
	p->nr_routes = 0;
}

static void save_if_down(struct rx_pipeline *p)
{
	const struct sink *down = p->sink && sink_is_down(p->sink) ? p->sink : NULL;

	if (!p->disk || flag_get(&p->force))
		return;
	for (unsigned int i = 0; i < p->nr_routes && !down; i++)
		if (sink_is_down(p->routes[i].sink))
			down = p->routes[i].sink;
	if (!down)
		return;
	pr_warn("stop: %s cannot reach its destination: saving what the output%s to the "
		"disk buffer\n",
		down->name, p->nr_routes ? "s hold" : " holds");
	flag_set(&p->force, 1);
}

void pipeline_reopen(struct rx_pipeline *p)
{
	flag_set(&p->reopen, 1);
	for (unsigned int i = 0; i < p->nr_routes; i++)
		flag_set(&p->routes[i].reopen, 1);
}

/* name: the output's, NULL with one output. */
static void say_kept_one(const struct output_counts *c, const char *name, const char *dir)
{
	if (c->saved || c->kept_written)
		pr_warn("stop: %llu received message(s) saved to the disk buffer %s for the next "
			"run (%llu more written and kept there, to be sent again)\n",
			(unsigned long long)c->saved, dir, (unsigned long long)c->kept_written);
	if (c->given_up && !name)
		pr_warn("stop: gave up %llu received message(s) not written (counted: "
			"totals.given_up, syslogrx_given_up_total)\n",
			(unsigned long long)c->given_up);
	else if (c->given_up)
		pr_warn("stop: output %s gave up %llu received message(s) not written (counted: "
			"outputs[].given_up, syslogrx_output_given_up_total)\n",
			name, (unsigned long long)c->given_up);
}

static void say_kept(struct rx_pipeline *p)
{
	struct output_counts c;

	output_stage_counts(&p->out, &c);
	say_kept_one(&c, p->nr_routes ? "default" : NULL, p->cfg->disk_buffer);
	for (unsigned int i = 0; i < p->nr_routes; i++) {
		output_stage_counts(&p->routes[i].out, &c);
		say_kept_one(&c, p->cfg->routes[i].listener, p->routes[i].cfg.disk_buffer);
	}
}

int pipeline_open(struct rx_pipeline *p, const struct pipeline_listeners *lis)
{
	const struct config *cfg = p->cfg;
	int err;

	if (cfg->senders) {
		p->senders = calloc(CONFIG_MAX_SOCKETS, sizeof(*p->senders));
		if (!p->senders)
			return -ENOMEM;
	}
	err = window_init(&p->window, cfg->window, cfg->window_bytes, cfg->batch);
	if (err)
		return err;
	p->window_ready = true;
	/* A message without a stamp of its own carries its arrival time, and
	 * --ordered merges by it: ready once the kernel stamps on arrival (the
	 * group's sockets ask for stamps; net/arrival_stamp.h says why wait). */
	if (arrival_stamps_wait(1000))
		pr_warn("not seen that the kernel stamps datagrams on arrival: the first ones "
			"may carry the time they were read\n");
	if (cfg->ordered) {
		err = setup_ordered(p);
		if (err)
			return err;
	}
	p->sink = sink_open(cfg);
	if (!p->sink)
		return -errno;
	p->sink->abort = &p->force;
	return routes_open(p, lis);
}

/* An upgrade: a named output's DIR is let go with the unnamed one's. */
static void wait_for_lock(void *ctx)
{
	(void)ctx;
}

/* cfg's DIR (the pipeline's, or a named output's DIR/LISTENER), locked
 * first: held by the process we take over from (handover), we wait until
 * it has written its last record and let DIR go, saying ready first if
 * that is still to say (the kernel queues hold what arrives meanwhile);
 * held by any other, refused. NULL + errno. */
static struct diskbuf *open_disk_dir(struct rx_pipeline *p, const struct config *cfg,
				     const struct pipeline_ready *ready, bool handover,
				     int *lock_fd, bool *locked)
{
	struct diskbuf_opts dopts = {
		.dir = cfg->disk_buffer,
		.max_bytes = cfg->disk_buffer_size,
		.sync_ms = cfg->disk_buffer_sync_ms,
		.mode = cfg->disk_buffer_mode,
		.tally = &p->disk_tally, /* one ledger for every output's DIR */
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
	fd = diskbuf_lock_take(cfg->disk_buffer,
			       ready->pending(ready->ctx) ? ready->say :
			       handover			  ? wait_for_lock :
							    NULL,
			       ready->ctx, DISK_HANDOVER_WAIT_MS);
	if (fd < 0) {
		errno = fd == -EBUSY ? EADDRINUSE : -fd;
		return NULL;
	}
	*lock_fd = fd;
	*locked = true;
	return diskbuf_open(&dopts);
}

int pipeline_open_disk(struct rx_pipeline *p, const struct pipeline_ready *ready)
{
	bool handover = ready->pending(ready->ctx);

	if (!p->cfg->disk_buffer[0])
		return 0;
	p->disk = open_disk_dir(p, p->cfg, ready, handover, &p->disk_lock_fd, &p->disk_locked);
	if (!p->disk)
		return -errno;
	/* A record read back may name a listener this run does not have. */
	p->sink->listener_name = diskbuf_listener_name;
	p->sink->listener_ctx = p->disk;
	for (unsigned int i = 0; i < p->nr_routes; i++) {
		struct rx_route *rt = &p->routes[i];

		struct diskbuf *d = open_disk_dir(p, &rt->cfg, ready, handover, &rt->disk_lock_fd,
						  &rt->disk_locked);

		if (!d)
			return -errno;
		rt->sink->listener_name = diskbuf_listener_name;
		rt->sink->listener_ctx = d;
		/* a scrape may read the DIRs already (pipeline_disk_stats) */
		__atomic_store_n(&rt->disk, d, __ATOMIC_RELEASE);
	}
	return 0;
}

int pipeline_start(struct rx_pipeline *p, const struct socket_group *group,
		   const bool *queues_outlive)
{
	const struct config *cfg = p->cfg;
	const struct seqtrack_opts seq_opts = {
		.flows_max = cfg->sequence_flows,
		.jump_max = cfg->sequence_jump,
	};
	int err;

	p->wsh = (struct worker_shared){
		.group = group,
		.window = &p->window,
		.disk = p->disk,
		/* .route_disk: routes_start */
		.counters = p->counters,
		.nr_workers = p->threads,
		.batch = cfg->batch,
		.cost_ns = cfg->cost_ns,
		.nr_cost_ns = cfg->nr_cost_ns,
		.cost_makeup = cfg->cost_makeup,
		.stop = &p->stop,
		.force = &p->force,
		/* An output that acknowledges (Kafka, OTLP) may be slow to take the
		 * window: give the read of the kernel queues the deliveries' time. */
		.drain_ms = output_of(cfg)->acknowledges &&
					    cfg->drain_timeout * 1000 > FINAL_DRAIN_MS ?
				    (int)(cfg->drain_timeout * 1000) :
				    FINAL_DRAIN_MS,
		.regroup = &p->regroup,
		.taken = &p->taken,
		.queues_outlive = queues_outlive,
	};
	err = output_stage_start(&p->out, p->reorder ? &p->ordered_window : &p->window, p->disk,
				 p->sink, cfg->format, config_format_flags(cfg), cfg->output_rate,
				 cfg->sequences ? &seq_opts : NULL, &p->reopen, &p->force);
	if (err)
		return err;
	/* The workers format for a stream sink; --ordered's merge takes
	 * message by message, and outputs per listener format each their
	 * own: there the output stages format. */
	p->wsh.pre = p->reorder || p->nr_routes ? NULL : output_stage_preformat(&p->out);
	/* a scrape reads the output's counts from here on (snapshot_take) */
	p->out_started = true;
	__atomic_store_n(&p->out_ready, true, __ATOMIC_RELEASE);
	err = routes_start(p);
	if (err)
		return err;
	return p->reorder ? reorder_start(p->reorder) : 0;
}

int pipeline_stop_outputs(struct rx_pipeline *p)
{
	int err = 0, e;

	/* The destination is down: what the output holds goes to the disk
	 * buffer now, not after --stop-timeout (the workers' final drain has
	 * put what the kernel queued there or in the window). */
	save_if_down(p);
	if (p->window_ready)
		window_close(&p->window);
	if (p->reorder) {
		/* Writes what it holds, then closes the output's window. */
		e = reorder_join(p->reorder);
		if (e && !err)
			err = e;
	}
	if (p->ordered_ready)
		window_close(&p->ordered_window);
	if (p->out_started) {
		e = output_stage_join(&p->out);
		if (e && !err)
			err = e;
		p->out_started = false;
	}
	e = routes_join(p);
	if (e && !err)
		err = e;
	say_kept(p);
	/* The stream ended before the summary counts what it could not confirm. */
	if (p->sink && p->sink->ops->finish)
		p->sink->ops->finish(p->sink);
	/* On disk before the summary counts it there. */
	if (p->disk)
		diskbuf_flush(p->disk);
	for (unsigned int i = 0; i < p->nr_routes; i++)
		if (p->routes[i].disk)
			diskbuf_flush(p->routes[i].disk);
	return err;
}

bool pipeline_started(const struct rx_pipeline *p)
{
	return p->nr_started || p->out_started;
}

void pipeline_close(struct rx_pipeline *p)
{
	if (p->sink)
		p->sink->ops->close(p->sink);
	output_stage_free(&p->out);
	routes_close(p);
	reorder_free(p->reorder);
	if (p->ordered_ready)
		window_destroy(&p->ordered_window);
	diskbuf_close(p->disk);
	if (p->disk_locked) /* after the buffer's last write */
		diskbuf_lock_release(p->disk_lock_fd);
	if (p->window_ready)
		window_destroy(&p->window);
	free(p->counters);
	free(p->workers);
	for (unsigned int t = 0; p->senders && t < p->nr_senders; t++)
		sender_table_free(p->senders[t]);
	free(p->senders);
	p->senders = NULL;
	p->nr_senders = 0;
}

bool pipeline_stopping(const struct rx_pipeline *p)
{
	return flag_get(&p->stop);
}

void pipeline_give_up(struct rx_pipeline *p)
{
	flag_set(&p->force, 1);
}
