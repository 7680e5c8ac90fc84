/* SPDX-License-Identifier: MIT */
/*
 * The receiver, wired: socket group, balancer, tracer, input window,
 * workers, output stage and sink. syslogrx's main is a thin front end over
 * it; tests and tools can drive it the same way.
 */
#ifndef SYSLOGRX_RECEIVER_H
#define SYSLOGRX_RECEIVER_H

#include "net/balancer.h"
#include "rx/config.h"
#include "rx/output.h"
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
	struct diskbuf *disk;		/* --disk-buffer, or NULL */
	struct sink *sink;
	struct sock_counters *counters;
	struct worker *workers;
	unsigned int nr_started;
	struct output_stage out;
	bool out_started;
	struct worker_shared wsh;
	volatile int stop;		/* stop reading: drain, then exit */
	volatile int force;		/* second signal: exit now */
	volatile int reopen;		/* SIGHUP */
	uint64_t start_ns, stop_ns;	/* CLOCK_MONOTONIC */
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
