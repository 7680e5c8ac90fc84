/* SPDX-License-Identifier: MIT */
/*
 * The output stage's state, which its files share (output.c, output_sync.c,
 * output_async.c, output_msg.c, output_source.c; rx/path/output.h says who
 * does what): below them all, so that none includes another's header to
 * reach it.
 */
#ifndef SYSLOGRX_OUTPUT_STAGE_H
#define SYSLOGRX_OUTPUT_STAGE_H

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
	/* The window's queue this stage takes (an output per listener: set
	 * before output_stage_start, which keeps it); 0 alone. */
	unsigned int queue;
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

#endif
