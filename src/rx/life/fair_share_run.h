/* SPDX-License-Identifier: MIT */
/*
 * --fair-share in the receiver: a filter of its own on every socket of each
 * listener (its own buckets, pressure and level: senders to one listener
 * cannot take another's share), and the tick that tells each when its
 * group is under pressure and which level is fair (net/fair_share.h).
 *
 * Pressure, decided here each FAIR_SHARE_TICK_S per listener from what user
 * space sees: on when a socket of its group holds FAIR_SHARE_ON_FILL of its
 * receive buffer or the input window is full; off once each of its sockets
 * has held less than FAIR_SHARE_OFF_FILL, with the window not full, for
 * FAIR_SHARE_OFF_S. The level shares FAIR_SHARE_HEADROOM of what the
 * workers drained from its sockets over the last second, so that a shaped
 * group's queues go down.
 */
#ifndef SYSLOGRX_FAIR_SHARE_RUN_H
#define SYSLOGRX_FAIR_SHARE_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include "rx/settings/config.h"

#define FAIR_SHARE_TICK_S 0.1
#define FAIR_SHARE_ON_FILL 0.25
#define FAIR_SHARE_OFF_FILL 0.05
#define FAIR_SHARE_OFF_S 1.0
#define FAIR_SHARE_HEADROOM 0.9
/* Busy ticks averaged before the drain is trusted to set a level. */
#define FAIR_SHARE_BUSY_TICKS 2

struct fair_share_run;
struct handover;
struct socket_group;

/* Loads each listener's filter, sets --protect's prefixes, attaches it to
 * every socket of the group g of nl listeners (0: one) (privileged: before
 * the capabilities go). *run: NULL without --fair-share. 0 or -errno,
 * logged. */
int fair_share_run_open(struct fair_share_run **run, const struct config *cfg,
			const struct socket_group *g, unsigned int nl);
/* An upgrade: each listener's filter's maps into the hand-over (owner
 * "fair_share" for the first, "fair_shareK" for listener K), with
 * --fair-share. 0 or -errno. */
int fair_share_run_export(const struct fair_share_run *run, struct handover *h);
/* Whether a hand-over owner is a filter's (systemd's fd store keeps none). */
bool fair_share_run_owner(const char *owner);
/* Sockets adopted. Per listener, from an upgrade with --fair-share on both
 * sides (h holds its filter's maps): the filter stays, its buckets go on,
 * this process ticks it. Otherwise (systemd's fd store keeps no maps; or
 * --fair-share dropped) a filter the process before left on the sockets
 * (killed while shedding) would go on shedding at its last level with no
 * tick to lift it, so it is detached; with --fair-share a fresh one is
 * loaded (CAP_BPF: a start by systemd has it; an upgrade that adds
 * --fair-share has not, and fails, said). 0 or -errno, logged. */
int fair_share_run_adopt(struct fair_share_run **run, const struct config *cfg,
			 const struct socket_group *g, unsigned int nl, const struct handover *h);
/* Group socket idx, gained by a resize: the filter on it before it is in
 * selection. 0 (also without --fair-share) or -errno, logged. */
int fair_share_run_attach(struct fair_share_run *run, const struct socket_group *g,
			  unsigned int idx);

/* What a tick reads of the receiver, filled by its caller. */
struct fair_share_input {
	const struct socket_group *group;
	/* Per listener: datagrams the workers took from its sockets, and
	 * its name for the log lines (NULL: said of none, one listener). */
	uint64_t taken[CONFIG_MAX_LISTENERS];
	const char *label[CONFIG_MAX_LISTENERS];
	bool window_full; /* a worker waits for room in the input window */
	/* Adopted, and the process before still reads (not yet told "ready"):
	 * what ours read is not what the group drains. */
	bool adopting;
};
/* A tick is due (false without --fair-share). */
bool fair_share_run_due(const struct fair_share_run *run, double now);
/* Called often from the main loop: acts once per FAIR_SHARE_TICK_S. */
void fair_share_run_tick(struct fair_share_run *run, double now, const struct fair_share_input *in);
/* Detaches the filter from the group's sockets still open (unless handed
 * over) and frees it. */
void fair_share_run_close(struct fair_share_run *run, const struct socket_group *g,
			  bool handed_over);

struct fair_share_report {
	bool on;	     /* --fair-share */
	bool shedding;	     /* a listener under pressure now */
	double level;	     /* datagrams/s at weight 1 while shedding (the lowest) */
	uint64_t episodes;   /* times shedding started, all listeners */
	uint64_t seen, shed; /* datagrams the filter ran on, and shed */
	uint64_t unshaped;   /* passed with no bucket (no address, map full) */
	uint64_t inserts;    /* senders given a bucket */
};
void fair_share_run_report(const struct fair_share_run *run, struct fair_share_report *out);

#endif
