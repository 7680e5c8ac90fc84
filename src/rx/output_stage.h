/* SPDX-License-Identifier: MIT */
/*
 * The output stage: one thread that takes batches from the input window,
 * parses each message (counting malformed ones, which are still written
 * raw), feeds the loss accounting, formats into a large buffer and hands the
 * sink whole buffers. A batch leaves the window once formatted.
 *
 * With an async sink (kafka: sink->ops->produce) each message is produced on
 * its own, with its batch's tracker as the opaque; the batch leaves the
 * window only when every message of it has a delivery report (delivered, or
 * a counted permanent failure). Batches may complete in any order: the window
 * only counts messages and bytes.
 */
#ifndef SYSLOGRX_OUTPUT_STAGE_H
#define SYSLOGRX_OUTPUT_STAGE_H

#include <pthread.h>
#include <stdint.h>
#include "syslog/format.h"
#include "syslog/seqtrack.h"
#include "rx/sink/sink.h"
#include "rx/window.h"

struct output_counts {
	uint64_t processed;	/* taken from the window */
	uint64_t written;	/* accepted by the sink */
	uint64_t malformed;	/* did not parse: written raw all the same */
	uint64_t discarded;	/* could not be written: the sink failed */
	uint64_t write_errors;	/* failed sink writes */
};

/* An async sink's batch in flight: released when outstanding reaches 0. */
struct batch_track {
	struct batch_track *next;	/* free list: recycled, not freed */
	struct batch *batch;
	uint32_t outstanding;		/* produced without a report, +1 while producing */
};

struct output_stage {
	pthread_t thread;
	struct window *window;
	struct sink *sink;
	enum out_format format;
	uint64_t rate;			/* --output-rate, 0 = none */
	struct seqtrack *seq;
	const volatile int *reopen;	/* set by SIGHUP, cleared here */
	const volatile int *force;	/* second signal: stop now */
	char *buf;
	size_t used, cap;
	uint64_t pending;		/* messages in buf */
	uint64_t rate_start_ns;		/* --output-rate schedule: message */
	uint64_t rate_base;		/* rate_base + k is due at start + k/rate */
	struct output_counts counts;	/* read with __atomic loads */
	bool async;			/* sink->ops->produce */
	struct batch_track *free_tracks;
	uint64_t tracks_live;		/* batches waiting for delivery reports */
	int error;
};

int output_stage_start(struct output_stage *o, struct window *w, struct sink *sink,
		       enum out_format fmt, uint64_t rate, const volatile int *reopen,
		       const volatile int *force);
/* Returns after the window is closed and drained (or force). */
int output_stage_join(struct output_stage *o);
void output_stage_counts(struct output_stage *o, struct output_counts *out);

/* For the sync and async loops alike (output_stage.c, output_async.c). */
void output_count(uint64_t *counter, uint64_t n);	/* relaxed atomic add */
void output_pace(struct output_stage *o);		/* --output-rate */

#endif
