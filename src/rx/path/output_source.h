/* SPDX-License-Identifier: MIT */
/*
 * Where the output stage's batches come from and go back to: the input
 * window, then the disk buffer (--disk-buffer, rx/path/diskbuf.h). Batches read
 * back from disk are recycled through the window's free list but never hold
 * window room; they are marked done on disk only once written (stream
 * sinks: after the buffer holding them is written) or acknowledged (Kafka).
 */
#ifndef SYSLOGRX_OUTPUT_SOURCE_H
#define SYSLOGRX_OUTPUT_SOURCE_H

#include <stdbool.h>
#include "rx/path/output_stage.h"

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
 * is remembered (b itself is recycled at once) until output_flushed() says
 * its lines were written and the sink's settle_ns has passed since.
 */
void output_release(struct output_stage *o, struct batch *b, bool delivered);
/* Stream sinks, after each flush: wrote says a non-empty buffer was written
 * (the destination was there); held records written settle_ns before now
 * are done. */
void output_flushed(struct output_stage *o, bool wrote);
/*
 * Stream sinks: b's lines are buffered (or being written); a window batch
 * keeps its room until output_hold_done(), called once they are written or
 * counted discarded. A disk batch is released at once (held on disk).
 */
void output_hold(struct output_stage *o, struct batch *b);
void output_hold_done(struct output_stage *o);
/*
 * A stop that gives up (force): nothing more is written. What the output
 * holds unwritten (output_hold's batches) and what the window still holds
 * until it closes go to the disk buffer (counts.saved) or, without one, are
 * counted given up; disk records stay on disk, those written but not
 * settled counted kept_written. Returns once the window is closed and empty.
 */
void output_settle(struct output_stage *o);
/* The same for one batch the stop gave up on, b->settled of it written or
 * discarded already (an async sink's batch, some of it acknowledged). */
void output_keep(struct output_stage *o, struct batch *b);
/* At exit: every held record is done (done) or left on disk (!done). */
void output_source_free(struct output_stage *o, bool done);

#endif
