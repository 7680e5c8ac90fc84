/* SPDX-License-Identifier: MIT */
/* The output stage's loop for asynchronous sinks (Kafka): src/rx/path/output_async.c. */
#ifndef SYSLOGRX_OUTPUT_ASYNC_H
#define SYSLOGRX_OUTPUT_ASYNC_H

#include "rx/path/output_stage.h"

/* Sizes the line buffer and routes the sink's delivery reports to o. */
int output_async_init(struct output_stage *o);
/* Returns when the window is closed and drained and the reports are in (or
 * --drain-timeout passed). */
void output_async_main(struct output_stage *o);
/* Frees the recycled batch trackers. */
void output_async_free(struct output_stage *o);

#endif
