/* SPDX-License-Identifier: MIT */
/*
 * The output stage: one thread that takes batches from the input window,
 * parses each message where the output needs its fields (json and rfc5424
 * into a destination, and kafka: malformed ones are counted there, and still
 * written raw; raw output and null output parse nothing and count no
 * malformed), feeds the loss accounting, formats and hands the sink the
 * result. Its counters are published once per batch, not per message.
 * For a stream sink the workers format (rx/path/preformat.h): then this
 * thread takes each batch's lines as they are and only writes them.
 *
 *   output.c        start, join, counts, free; picks the loop for the sink
 *   output_sync.c   stream sinks: format into a large buffer, write it whole;
 *                   a batch leaves the window once its lines are written
 *   output_async.c  async sinks (kafka): produce each message; a batch leaves
 *                   the window when every message of it has a delivery report
 *   output_msg.c    the per-message step both loops share: parse, count,
 *                   sequence accounting, meta, --output-rate
 */
#ifndef SYSLOGRX_OUTPUT_H
#define SYSLOGRX_OUTPUT_H

#include "rx/path/output_stage.h"

/* disk: the --disk-buffer to read after the window, or NULL. seq: the
 * sequence accounting's bounds with --sequences, or NULL: then no tracker is
 * made and no message is searched for a marker. */
int output_stage_start(struct output_stage *o, struct window *w, struct diskbuf *disk,
		       struct sink *sink, enum out_format fmt, unsigned int fmt_flags,
		       uint64_t rate, const struct seqtrack_opts *seq, const volatile int *reopen,
		       const volatile int *force);
/* What the workers format with, or NULL: the output stage formats all (an
 * async sink, null, --output-rate). --ordered's merge asks for none. */
const struct preformat *output_stage_preformat(const struct output_stage *o);
/* Returns after the window is closed and drained (or force). */
int output_stage_join(struct output_stage *o);
void output_stage_counts(struct output_stage *o, struct output_counts *out);
/* to += c, field by field (outputs per listener: their sums). */
void output_counts_add(struct output_counts *to, const struct output_counts *c);
/* Frees what start allocated (the sequence accounting is read until then). */
void output_stage_free(struct output_stage *o);

#endif
