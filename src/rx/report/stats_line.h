/* SPDX-License-Identifier: MIT */
/* --stats-interval: lines on stderr per interval, one per listener; and the
 * run's books at exit. */
#ifndef SYSLOGRX_STATS_LINE_H
#define SYSLOGRX_STATS_LINE_H

#include <stdio.h>
#include "net/sender_view.h"
#include "rx/life/receiver.h"

/* Stats line state: counts at the last line, to print per-interval deltas. */
struct stats_line {
	uint64_t last_ns;
	uint64_t *last_received;
	uint64_t *last_drops;
	uint64_t last_shed; /* --fair-share's shed at the last line */
	/* per sender at the last line with drops, by address: the worst sender
	 * of an interval is the one whose drops grew most (bounded by --senders) */
	struct sender_view last_senders;
};

int stats_line_init(struct stats_line *s, unsigned int nr_sockets);
void stats_line_print(struct stats_line *s, struct receiver *r, FILE *f);
void stats_line_free(struct stats_line *s);
/* One line at exit: received, written, kernel drops, abandoned, discarded
 * (and on disk with --disk-buffer). */
void stats_line_books(struct receiver *r);

#endif
