/* SPDX-License-Identifier: MIT */
/* The output stage's path for asynchronous sinks (Kafka): src/output_async.c. */
#ifndef SYSLOGRX_OUTPUT_ASYNC_H
#define SYSLOGRX_OUTPUT_ASYNC_H

#include "rx/output_stage.h"

/* Routes the sink's delivery reports to o. */
void output_async_attach(struct output_stage *o);
/* The output thread's loop for an async sink; returns when the window is
 * closed and drained and the reports are in (or --drain-timeout passed). */
void *output_async_main(struct output_stage *o);
/* Frees the recycled batch trackers. */
void output_async_free(struct output_stage *o);

#endif
