/* SPDX-License-Identifier: MIT */
/*
 * src/rx/: the receiver. This file is its wiring; beside it config (flags),
 * worker (recvmmsg loops), window (the bounded hand-off), output*.c (parse,
 * account, format, write), summary and stats_line (what a run did), sink/
 * (destinations) and main.c (the front end). Uses net, syslog and common.
 *
 * The receiver, wired from its parts: the intake (socket group, balancer,
 * tracer: intake.h), the pipeline (workers, input window, reorder, disk
 * buffer, output stages and sinks: pipeline.h) and the process shell
 * (shell.h). syslogrx's main is a thin front end over it; tests and tools
 * can drive it the same way.
 */
#ifndef SYSLOGRX_RECEIVER_H
#define SYSLOGRX_RECEIVER_H

#include <pthread.h>
#include "rx/settings/config.h"
#include "rx/life/intake.h"
#include "rx/life/pipeline.h"
#include "rx/life/shell.h"

struct sender_cache;
struct fair_share_run;

struct receiver {
	const struct config *cfg;
	/* Listeners, sockets, balancer and tracer (rx/life/intake.h): read
	 * and written by the intake's files only. */
	struct rx_intake intake;
	/* The workers, the window, reorder, the disk buffer, the output
	 * stages and sinks (rx/life/pipeline.h): read and written by the
	 * pipeline's files only. */
	struct rx_pipeline pipeline;
	/* The group sockets the workers read (intake_read_order: live, then
	 * spares), order_cap entries: the intake decides it, the workers read
	 * it while they run; held here, between the two parts. */
	unsigned int *order;
	unsigned int order_cap;
	uint64_t start_ns, stop_ns; /* CLOCK_MONOTONIC */
	/* Set by the front end for the summary, NULL = none. */
	const struct preflight *preflight;
	const struct advice *advice;
	/* Held by a live resize and by snapshot_take: a metrics scrape never
	 * reads the group, the slots or the steered counts half changed. */
	pthread_mutex_t report_lock;
	/* --user, the endpoints' sockets, the supervisor link, the hand-over
	 * and "ready" (rx/life/shell.h): read and written by shell.c only. */
	struct rx_shell shell;
	/* What scrapes show of them (rx/report/sender_cache.h), made and
	 * refreshed by the front end; NULL: a scrape reads the tables. */
	struct sender_cache *sender_cache;
	/* --fair-share (rx/life/fair_share_run.h); NULL: off. */
	struct fair_share_run *fair_share;
};

/* The privileged half of receiver_open: sockets, tracer, balancer. A
 * supervisor holds just these. */
int receiver_acquire(struct receiver *r, const struct config *cfg);
/* Opens sockets, loads and attaches BPF, opens the sink. Returns 0 or -errno
 * (-EPERM, -EADDRINUSE, ...) having logged one line naming the problem. */
int receiver_open(struct receiver *r, const struct config *cfg);
/* Starts the output stage and the workers. */
int receiver_start(struct receiver *r);
/* Stops reading, drains kernel queues and the window, flushes the sink.
 * Returns the first worker/output error, 0 if none. */
int receiver_stop(struct receiver *r);
/* Frees everything, detaching BPF. */
void receiver_close(struct receiver *r);

/* The two halves of receiver_open, for rx/life/upgrade.c, which takes the sockets
 * and BPF objects from an old process instead: slots [0, live) are group
 * sockets [0, live); then counters, window, capabilities dropped, sink. */
int receiver_set_slots(struct receiver *r, unsigned int live, unsigned int threads);
int receiver_open_rest(struct receiver *r);

/* Live resize primitives (used by rx/life/resize.c): stop the workers without
 * the final drain (the kernel queues keep what arrives meanwhile), and start
 * pipeline_threads of them over the open sockets, those in selection first. */
int receiver_workers_pause(struct receiver *r);
int receiver_workers_resume(struct receiver *r);
/* Counters, read order and steered counts for every group socket
 * (workers paused). */
int receiver_grow_counters(struct receiver *r);

/* Messages taken from the kernel and not yet processed by the output stage. */
uint64_t receiver_in_flight(struct receiver *r);
/* --fair-share: the filter's tick (fair_share_run_tick) over what the
 * parts say now; called often from the main loop. */
void receiver_fair_share_tick(struct receiver *r, double now);

/* What report/ asks beyond the snapshot's numbers (rx/life/receiver_state.c). */
/* report_lock: held by a live resize; the group and the workers stay put
 * while a report holds it. */
void receiver_report_lock(struct receiver *r);
void receiver_report_unlock(struct receiver *r);
/* From the start to the stop (or to now, while it runs: stop_ns follows
 * the clock), ns; the front end's preflight and advice, NULL = none. */
uint64_t receiver_elapsed_ns(const struct receiver *r);
const struct preflight *receiver_preflight(const struct receiver *r);
const struct advice *receiver_advice(const struct receiver *r);
/* Told to stop (a signal): draining, then exit. */
bool receiver_stopping(const struct receiver *r);
/* The window and the output stage are ready and a worker has started. */
bool receiver_running(const struct receiver *r);
/* Worker threads started; worker i's last turn of its loop (CLOCK_MONOTONIC). */
unsigned int receiver_workers_started(const struct receiver *r);
uint64_t receiver_worker_beat_ns(const struct receiver *r, unsigned int i);
/* Group sockets open (not closed by a live shrink). */
unsigned int receiver_sockets_bound(const struct receiver *r);
/* The output stage's counts; false before it has started. */
bool receiver_output_counts(struct receiver *r, struct output_counts *c);
/* The disk buffer's; false without --disk-buffer. */
bool receiver_disk_stats(struct receiver *r, struct diskbuf_stats *d);
/* The output's sink is stalled (sink_is_stalled): its name, else NULL. */
const char *receiver_output_stalled(const struct receiver *r);
/* The output's name while it cannot reach its destination, else NULL. */
const char *receiver_output_down(const struct receiver *r);
/* A worker waits for room in the input window. */
bool receiver_window_full(struct receiver *r);
/* --senders: the workers count per sender. */
bool receiver_counts_senders(const struct receiver *r);
/* Where rx/report/sender_cache.c keeps the scrapes' rows; NULL = none. */
struct sender_cache *receiver_sender_cache(const struct receiver *r);
void receiver_set_sender_cache(struct receiver *r, struct sender_cache *c);

#endif
