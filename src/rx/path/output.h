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

#include <pthread.h>
#include <stdint.h>
#include "rx/sink/sink.h"
#include "rx/path/preformat.h"
#include "rx/path/window.h"
#include "syslog/format.h"
#include "syslog/seqtrack.h"

struct output_counts {
	uint64_t processed;	 /* taken from the window */
	uint64_t written;	 /* accepted by the sink */
	uint64_t malformed;	 /* did not parse: written raw all the same */
	bool parsed;		 /* malformed is counted (the output parses) */
	uint64_t sd_dropped;	 /* senders' SD elements not written (syslog/sd.h) */
	uint64_t breaks_escaped; /* original lines with '\n' or NUL escaped */
	uint64_t discarded;	 /* could not be written: the sink failed */
	uint64_t write_errors;	 /* failed sink writes */
	/* A stop that gave up (force: --stop-timeout, a second signal, or a
	 * destination down with a disk buffer) on what it held, never written: */
	uint64_t given_up;     /* counted, lost (no disk buffer to keep it) */
	uint64_t saved;	       /* appended to the disk buffer for the next run */
	uint64_t kept_written; /* written, still on disk (not settled): sent again */
};

struct batch_track;
struct diskbuf;
struct held_rec;

struct output_stage {
	pthread_t thread;
	/* The thread's time on a CPU or waiting for one (not asleep), set as
	 * it ends: how busy the output stage was (the advice's). */
	uint64_t busy_ns;
	struct window *window;
	struct sink *sink;
	enum out_format format;
	unsigned int format_flags;  /* FORMAT_F_*: --no-escape-control */
	uint64_t rate;		    /* --output-rate, 0 = none */
	bool parse;		    /* the output needs the fields: parse each message */
	struct seqtrack *seq;	    /* --sequences, else NULL; freed by output_stage_free */
	const volatile int *reopen; /* set by SIGHUP, cleared here */
	const volatile int *force;  /* the stop gives up: write nothing more */
	char *buf;
	size_t used, cap;
	uint64_t pending;		 /* messages in buf */
	uint64_t done;			 /* messages taken (this thread's own count) */
	uint64_t bad;			 /* malformed in this batch, not yet published */
	uint32_t sd_bad;		 /* SD elements dropped in it, not yet published */
	uint32_t breaks_bad;		 /* messages with line breaks escaped, not yet published */
	uint64_t rate_start_ns;		 /* --output-rate schedule: message */
	uint64_t rate_base;		 /* rate_base + k is due at start + k/rate */
	struct output_counts counts;	 /* read with __atomic loads */
	struct tz_cache tz;		 /* --timezone offset, cached a minute */
	struct preformat pre;		 /* what the workers format with */
	bool preformat;			 /* the workers format (output_stage_preformat) */
	bool async;			 /* sink->ops->produce */
	struct batch_track *free_tracks; /* output_async.c's recycled trackers */
	uint64_t tracks_live;		 /* batches waiting for delivery reports */
	struct diskbuf *disk;		 /* --disk-buffer, or NULL (output_source.c) */
	struct held_rec *held;		 /* disk records written, not yet settled */
	size_t held_n, held_cap;	 /* (output_source.c) */
	size_t held_written;		 /* held[0, held_written) are written */
	/* Window batches whose lines are in buf (or being written): they
	 * leave the window once written, so a stop that gives up still has
	 * them to save or count (output_source.c). */
	struct batch *unflushed, *unflushed_tail;
	struct batch *cur;     /* the batch being formatted, not yet held */
	uint32_t cur_buffered; /* its messages in buf */
	uint64_t saved_bytes;  /* appended at the stop since the last disk flush */
	int error;
};

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
/* Frees what start allocated (the sequence accounting is read until then). */
void output_stage_free(struct output_stage *o);

#endif
