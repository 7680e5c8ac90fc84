// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/signals.h"
#include "common/clock.h"
#include "common/log.h"
#include "net/arrival_stamp.h"
#include "rx/path/diskbuf.h"
#include "rx/path/diskbuf_lock.h"
#include "rx/life/receiver.h"
#include "rx/sink/registry.h"
#include "rx/life/pipeline_outputs.h"
#include "rx/life/fair_share_run.h"
#include "rx/life/receiver_workers.h"
#include "rx/path/senders.h"

/* Bound on reading what the kernel queued before exit: under a sender that
 * never stops, "drain until empty" would never end. */
#define FINAL_DRAIN_MS 2000
/* An upgrade with a disk buffer: how long the new process waits for the old
 * one to write what it holds and let DIR go. */
#define DISK_HANDOVER_WAIT_MS 120000

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

int receiver_open(struct receiver *r, const struct config *cfg)
{
	int err = receiver_acquire(r, cfg);

	return err ? err : receiver_open_rest(r);
}

int receiver_acquire(struct receiver *r, const struct config *cfg)
{
	int err, probe_err;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->report_lock, NULL);
	r->cfg = cfg;
	shell_init(&r->shell);
	/* Can eBPF be loaded here at all? If not, classic BPF and SO_MEMINFO
	 * take over, said once each, with no failed load logged first. */
	probe_err = cfg->balance != BALANCE_HASH || cfg->trace ? balancer_probe() : 0;
	/* A wrong name, or a path the user cannot write, fails before
	 * anything is bound. */
	err = shell_check_user_paths(&r->shell, cfg, NULL);
	if (err)
		return err;
	r->threads = cfg->threads;
	err = intake_open(&r->intake, cfg, probe_err);
	if (err)
		return err;
	return fair_share_run_open(r);
}

int receiver_set_slots(struct receiver *r, unsigned int live, unsigned int threads)
{
	r->threads = threads;
	return intake_set_slots(&r->intake, live);
}

static void say_ready_for_lock(void *ctx)
{
	shell_say_ready(ctx);
}

/* An upgrade: a named output's DIR is let go with the unnamed one's. */
static void wait_for_lock(void *ctx)
{
	(void)ctx;
}

/* cfg's DIR (the receiver's, or a named output's DIR/LISTENER), locked
 * first: held by the process we take over from (handover), we wait until
 * it has written its last record and let DIR go, saying ready first if
 * that is still to say (the kernel queues hold what arrives meanwhile);
 * held by any other, refused. NULL + errno. */
static struct diskbuf *open_disk_dir(struct receiver *r, const struct config *cfg, bool handover,
				     int *lock_fd, bool *locked)
{
	struct diskbuf_opts dopts = {
		.dir = cfg->disk_buffer,
		.max_bytes = cfg->disk_buffer_size,
		.sync_ms = cfg->disk_buffer_sync_ms,
		.mode = cfg->disk_buffer_mode,
		.tally = &r->disk_tally, /* one ledger for every output's DIR */
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
			       shell_ready_pending(&r->shell) ? say_ready_for_lock :
			       handover			      ? wait_for_lock :
								NULL,
			       &r->shell, DISK_HANDOVER_WAIT_MS);
	if (fd < 0) {
		errno = fd == -EBUSY ? EADDRINUSE : -fd;
		return NULL;
	}
	*lock_fd = fd;
	*locked = true;
	return diskbuf_open(&dopts);
}

/* The unnamed output's DIR, then each named output's DIR/LISTENER. */
static int open_disk_buffers(struct receiver *r)
{
	bool handover = shell_ready_pending(&r->shell);

	r->disk = open_disk_dir(r, r->cfg, handover, &r->disk_lock_fd, &r->disk_locked);
	if (!r->disk)
		return -errno;
	/* A record read back may name a listener this run does not have. */
	r->sink->listener_name = diskbuf_listener_name;
	r->sink->listener_ctx = r->disk;
	for (unsigned int i = 0; i < r->nr_routes; i++) {
		struct rx_route *rt = &r->routes[i];

		struct diskbuf *d =
			open_disk_dir(r, &rt->cfg, handover, &rt->disk_lock_fd, &rt->disk_locked);

		if (!d)
			return -errno;
		rt->sink->listener_name = diskbuf_listener_name;
		rt->sink->listener_ctx = d;
		/* a scrape may read the DIRs already (receiver_disk_stats) */
		__atomic_store_n(&rt->disk, d, __ATOMIC_RELEASE);
	}
	return 0;
}

int receiver_open_rest(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	int err;

	/* Everything privileged is done: sockets bound, rcvbuf forced, BPF
	 * loaded and attached. Capabilities are per thread: drop them before
	 * any thread exists, the disk buffer's writer and librdkafka's
	 * included; what is opened from here on is opened as the user. */
	err = shell_drop_privileges(&r->shell, cfg);
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
	return cfg->disk_buffer[0] ? open_disk_buffers(r) : 0;
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
		.group = intake_group(&r->intake),
		.window = &r->window,
		.disk = r->disk,
		/* .route_disk: receiver_routes_start */
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
		.queues_outlive = shell_queues_outlive(&r->shell),
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

int receiver_stop(struct receiver *r)
{
	/* Another process reads the sockets after us. */
	bool kept = shell_handed_over(&r->shell) || shell_supervised(&r->shell) ||
		    shell_queues_kept(&r->shell);
	int err = 0, e;

	if (!flag_get(&r->stop))
		intake_leave_the_port(&r->intake, kept);
	flag_set(&r->stop, 1);
	err = receiver_join_workers(r);
	__atomic_store_n(&r->stop_ns, mono_ns(), __ATOMIC_RELAXED);
	/* The destination is down: what the output holds goes to the disk
	 * buffer now, not after --stop-timeout (the workers' final drain has
	 * put what the kernel queued there or in the window). */
	receiver_outputs_save_if_down(r);
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
	for (unsigned int i = 0; i < r->nr_routes; i++)
		if (r->routes[i].disk)
			diskbuf_flush(r->routes[i].disk);
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
	fair_share_run_close(r);
	/* Handed over, or a supervisor holds the group: the programs stay. */
	intake_close(&r->intake, shell_handed_over(&r->shell) || shell_supervised(&r->shell));
	free(r->counters);
	free(r->workers);
	free(r->order);
	for (unsigned int t = 0; r->senders && t < r->nr_senders; t++)
		sender_table_free(r->senders[t]);
	free(r->senders);
	r->senders = NULL;
	r->nr_senders = 0;
	/* Supervised, the counts stay for the supervisor to read after us. */
	if (!shell_supervised(&r->shell))
		memset(r, 0, sizeof(*r));
}
