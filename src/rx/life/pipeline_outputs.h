/* SPDX-License-Identifier: MIT */
/*
 * The receiver's outputs: the unnamed one (the receiver's own sink and
 * output stage) and one per --output LISTENER=SPEC. Each named output has
 * its config (the receiver's, with its destination), sink, output stage
 * and retry state; it takes the window's queue of its listener's batches.
 * The workers, the window and the books stay the receiver's.
 */
#ifndef SYSLOGRX_PIPELINE_OUTPUTS_H
#define SYSLOGRX_PIPELINE_OUTPUTS_H

#include <stdbool.h>
#include <stdint.h>
#include "rx/path/output.h"
#include "rx/settings/config.h"

struct receiver;

/* A named output. */
struct rx_route {
	struct config cfg; /* the receiver's, with output and output_arg its own */
	struct sink *sink;
	struct output_stage out;
	bool started;
	bool ready;	     /* its counts readable: set once started, never cleared */
	volatile int reopen; /* SIGHUP, for this stage */
	/* --disk-buffer: its own, DIR/LISTENER (cfg.disk_buffer), locked
	 * until after its last write; or NULL. */
	struct diskbuf *disk;
	bool disk_locked;
	int disk_lock_fd;
};

/* Outputs in all: the unnamed, then each named one. */
#define RX_OUTPUTS_MAX (CONFIG_MAX_ROUTES + 1)

/* One output's numbers, for the summary and the metrics. */
struct output_row {
	const char *name; /* "default", or the listener's */
	char dest[160];	  /* as given, a URL's userinfo as *** */
	struct output_counts c;
	uint64_t received; /* datagrams its listeners took from the kernel */
	bool network;	   /* can be down: up and stalled say */
	bool up, stalled;
	bool resends; /* tcp, tls: resent and uncertain say */
	uint64_t resent, uncertain;
	/* --disk-buffer: this output's own DIR (the unnamed output's DIR,
	 * a named one's DIR/LISTENER); the totals' disk_buffer is their sum */
	bool disk;
	uint64_t disk_recovered, disk_written, disk_replayed, disk_dropped, disk_msgs;
};

/* After the window and the unnamed sink: each named output's sink, and its
 * listeners' batches routed to its queue. 0 or -errno (logged). */
int receiver_routes_open(struct receiver *r);
/* After the unnamed output stage: the named ones. 0 or -errno. */
int receiver_routes_start(struct receiver *r);
/* After the window is closed: each named stage's end, its sink finished.
 * The first error, 0 if none. */
int receiver_routes_join(struct receiver *r);
void receiver_routes_close(struct receiver *r);
/* At a stop, with a disk buffer: an output that cannot reach its
 * destination saves what it holds to its disk buffer now, and so do the
 * others (one force ends every stage). */
void receiver_outputs_save_if_down(struct receiver *r);
/* SIGHUP: every output reopens its file. */
void receiver_outputs_reopen(struct receiver *r);
/* After the output stages: what a stop saved or gave up, said per output. */
void receiver_outputs_say_kept(struct receiver *r);
/* Row 0 the unnamed output, then each named one; how many (1 without
 * named outputs). Zero counts before the stages start. */
unsigned int receiver_outputs_rows(struct receiver *r, struct output_row *rows);

#endif
