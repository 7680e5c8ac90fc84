// SPDX-License-Identifier: MIT
/*
 * The receiver, wired from its parts: the intake (intake.h), the pipeline
 * (pipeline.h) and the process shell (shell.h), each asked through its own
 * functions; what one part needs of another passes through here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/clock.h"
#include "common/log.h"
#include "rx/life/receiver.h"
#include "rx/life/fair_share_run.h"

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
	pipeline_init(&r->pipeline, cfg);
	err = intake_open(&r->intake, cfg, probe_err);
	if (err)
		return err;
	return fair_share_run_open(&r->fair_share, cfg, intake_group(&r->intake),
				   intake_listeners(&r->intake));
}

int receiver_set_slots(struct receiver *r, unsigned int live, unsigned int threads)
{
	pipeline_set_threads(&r->pipeline, threads);
	return intake_set_slots(&r->intake, live);
}

int receiver_grow_counters(struct receiver *r)
{
	const struct socket_group *g = intake_group(&r->intake);
	unsigned int cap = g->cap > g->n ? g->cap : g->n;
	int err;

	if (cap > r->order_cap) {
		unsigned int *order = realloc(r->order, cap * sizeof(*order));

		if (!order)
			return -ENOMEM;
		r->order = order;
		r->order_cap = cap;
	}
	err = intake_grow_steered(&r->intake, cap);
	return err ? err : pipeline_grow_counters(&r->pipeline, cap);
}

static bool ready_pending(void *ctx)
{
	return shell_ready_pending(ctx);
}

static void say_ready(void *ctx)
{
	shell_say_ready(ctx);
}

int receiver_open_rest(struct receiver *r)
{
	const struct config *cfg = r->cfg;
	const struct pipeline_ready ready = {
		.pending = ready_pending,
		.say = say_ready,
		.ctx = &r->shell,
	};
	struct pipeline_listeners lis = { .n = intake_listeners(&r->intake) };
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
	for (unsigned int k = 0; k < lis.n; k++)
		lis.name[k] = intake_listener_name(&r->intake, k);
	err = pipeline_open(&r->pipeline, &lis);
	if (err)
		return err;
	/* Last, everything else being open: in an upgrade the old process lets
	 * DIR go only once it is told we are ready. */
	return pipeline_open_disk(&r->pipeline, &ready);
}

int receiver_start(struct receiver *r)
{
	int err;

	err = pipeline_start(&r->pipeline, intake_group(&r->intake),
			     shell_queues_outlive(&r->shell));
	if (err)
		return err;
	/* a scrape may read it already: the endpoints serve before this */
	__atomic_store_n(&r->start_ns, mono_ns(), __ATOMIC_RELAXED);
	return receiver_workers_resume(r);
}

int receiver_workers_resume(struct receiver *r)
{
	unsigned int n = intake_read_order(&r->intake, r->order);

	return pipeline_workers_start(&r->pipeline, r->order, n);
}

int receiver_workers_pause(struct receiver *r)
{
	return pipeline_workers_pause(&r->pipeline);
}

int receiver_stop(struct receiver *r)
{
	/* Another process reads the sockets after us. */
	bool kept = shell_handed_over(&r->shell) || shell_supervised(&r->shell) ||
		    shell_queues_kept(&r->shell);
	int err, e;

	if (!pipeline_stopping(&r->pipeline))
		intake_leave_the_port(&r->intake, kept);
	err = pipeline_stop_workers(&r->pipeline);
	__atomic_store_n(&r->stop_ns, mono_ns(), __ATOMIC_RELAXED);
	e = pipeline_stop_outputs(&r->pipeline);
	return err ? err : e;
}

uint64_t receiver_in_flight(struct receiver *r)
{
	return pipeline_in_flight(&r->pipeline);
}

void receiver_fair_share_tick(struct receiver *r, double now)
{
	struct fair_share_input in;
	unsigned int nl = intake_listeners(&r->intake) ? intake_listeners(&r->intake) : 1;

	if (!fair_share_run_due(r->fair_share, now))
		return;
	memset(&in, 0, sizeof(in));
	in.group = intake_group(&r->intake);
	in.window_full = pipeline_window_full(&r->pipeline);
	in.adopting = shell_ready_pending(&r->shell);
	for (unsigned int k = 0; k < nl && k < CONFIG_MAX_LISTENERS; k++) {
		const char *name = intake_listener_name(&r->intake, k);

		in.taken[k] = pipeline_taken_by(&r->pipeline, in.group, k);
		/* " on NAME" in the log lines with several listeners */
		if (intake_listeners(&r->intake) > 1)
			in.label[k] = r->cfg->listener_names && name ?
					      name :
					      intake_listener_listen(&r->intake, k);
	}
	fair_share_run_tick(r->fair_share, now, &in);
}

void receiver_close(struct receiver *r)
{
	if (pipeline_started(&r->pipeline))
		receiver_stop(r);
	pipeline_close(&r->pipeline);
	fair_share_run_close(r->fair_share, intake_group(&r->intake), shell_handed_over(&r->shell));
	r->fair_share = NULL;
	/* Handed over, or a supervisor holds the group: the programs stay. */
	intake_close(&r->intake, shell_handed_over(&r->shell) || shell_supervised(&r->shell));
	free(r->order);
	/* Supervised, the counts stay for the supervisor to read after us. */
	if (!shell_supervised(&r->shell))
		memset(r, 0, sizeof(*r));
}
