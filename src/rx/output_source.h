/* SPDX-License-Identifier: MIT */
/*
 * Where the output stage's batches come from and go back to: the input
 * window, then the disk buffer (--disk-buffer, rx/diskbuf.h). Batches read
 * back from disk are recycled through the window's free list but never hold
 * window room; they are marked done on disk only once written (stream
 * sinks: after the buffer holding them is written) or acknowledged (Kafka).
 */
#ifndef SYSLOGRX_OUTPUT_SOURCE_H
#define SYSLOGRX_OUTPUT_SOURCE_H

#include <stdbool.h>
#include "rx/output.h"

/* The oldest batch: the window's first, then the disk buffer's; waits up to
 * timeout_ms for either. NULL on timeout or when both are empty and the
 * window is closed (output_source_done() tells which). */
struct batch *output_pop(struct output_stage *o, int timeout_ms);
/* The window is closed and drained, and nothing is left unread on disk. */
bool output_source_done(struct output_stage *o);
/*
 * The output is through with b. delivered: written or acknowledged (or
 * failed for good); false: not delivered (given up at exit), so a disk
 * batch stays on disk for the next run. A disk batch given to a stream sink
 * is held until output_flushed().
 */
void output_release(struct output_stage *o, struct batch *b, bool delivered);
/* Stream sinks: everything formatted so far is written: the held disk
 * batches are done. */
void output_flushed(struct output_stage *o);
/* At exit without a flush (force): held batches are recycled, not done. */
void output_source_free(struct output_stage *o);

#endif
