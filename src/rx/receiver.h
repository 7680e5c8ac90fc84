/* SPDX-License-Identifier: MIT */
/*
 * src/rx/: the receiver. This file is its wiring; beside it config (flags),
 * worker (recvmmsg loops), window (the bounded hand-off), output*.c (parse,
 * account, format, write), summary and stats_line (what a run did), sink/
 * (destinations) and main.c (the front end). Uses net, syslog and common.
 *
 * The receiver, wired: socket group, balancer, tracer, input window,
 * workers, output stage and sink. syslogrx's main is a thin front end over
 * it; tests and tools can drive it the same way.
 */
#ifndef SYSLOGRX_RECEIVER_H
#define SYSLOGRX_RECEIVER_H

#include "net/balancer.h"
#include "rx/config.h"
#include "rx/output.h"
#include "rx/reorder.h"
#include "rx/sink/sink.h"
#include "net/socket_group.h"
#include "net/tracer.h"
#include "rx/window.h"
#include "rx/worker.h"

struct receiver {
	const struct config *cfg;
	struct socket_group group;
	struct balancer *balancer;	/* NULL for --balance hash */
	struct tracer *tracer;		/* NULL with --no-trace */
	struct window window;
	bool window_ready;
	struct sink *sink;
	struct sock_counters *counters;
	struct worker *workers;
	unsigned int nr_started;
	struct output_stage out;
	bool out_started;
	struct worker_shared wsh;
	struct reorder *reorder;	/* --ordered: between window and ordered_window */
	struct window ordered_window;	/* what the output stage reads with --ordered */
	bool ordered_ready;
	volatile int stop;		/* stop reading: drain, then exit */
	volatile int force;		/* second signal: exit now */
	volatile int reopen;		/* SIGHUP */
	uint64_t start_ns, stop_ns;	/* CLOCK_MONOTONIC */
	/* Set by the front end for the summary, NULL = none (issue 12). */
	const struct preflight *preflight;
	const struct advice *advice;
};

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

/* Messages taken from the kernel and not yet processed by the output stage. */
uint64_t receiver_in_flight(struct receiver *r);

/* Socket i's traced drops (zeroed first); -ENOENT with --no-trace. */
int receiver_traced(struct receiver *r, unsigned int i, struct tracer_sock_stats *st);

#endif
