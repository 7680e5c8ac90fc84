/* SPDX-License-Identifier: MIT */
/* The per-sender rows of a snapshot (rx/report/snapshot.h): read from the
 * workers' tables and the tracers' maps by a snapshot, or every few seconds
 * by the sender cache for the scrapes. */
#ifndef SYSLOGRX_SNAPSHOT_SENDERS_H
#define SYSLOGRX_SNAPSHOT_SENDERS_H

#include <stdbool.h>
#include <stdint.h>
#include "net/sender_view.h"
#include "net/tracer.h"
#include "rx/life/receiver.h"

/*
 * Per sender (--senders). Once the receiver has stopped:
 *   received = the view's received + received_evicted, and
 *   the sockets' kernel drops = the view's dropped + drops_evicted +
 *   drops.unattributed, when only our sockets use the port.
 */
struct snapshot_senders {
	bool on;		   /* the workers count per sender */
	bool traced;		   /* the tracer counts drops per sender */
	struct sender_view view;   /* worst first */
	uint64_t received;	   /* every datagram the tables counted */
	uint64_t evicted;	   /* worker table slots given to another sender */
	uint64_t received_evicted; /* what those slots held */
	struct tracer_sender_totals drops;
	/* The view's first top rows are shown (--senders-top, at most tracked);
	 * the rest are summed. A scrape's view holds only those top rows. */
	size_t tracked, top;
	uint64_t rest_received, rest_dropped;
	/* from drops, read apart, so never below 0: */
	uint64_t drops_evicted;	       /* attributed - in_table */
	uint64_t drop_entries_evicted; /* inserts - entries */
};

/* Reads the per-sender tables (the view allocated). 0 or -errno. */
int snapshot_senders_take(struct receiver *r, struct snapshot_senders *ss);
void snapshot_senders_free(struct snapshot_senders *ss);

#endif
