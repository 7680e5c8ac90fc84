/* SPDX-License-Identifier: MIT */
/*
 * GET /healthz and /readyz (docs/metrics.md#health), served on --metrics'
 * listener and on --health's.
 *
 * healthz: the process makes progress. The main thread and every worker
 * turn their loops at least every fraction of a second, whatever arrives and
 * whether the window is full; one that has not turned for HEALTH_STALL_S is
 * stuck. The output stage is not asked: it waits for a destination that is
 * down by design, and restarting the process would not bring it back.
 *
 * readyz: the sockets are bound and the output delivers, or buffers within
 * its bounds. Not ready (503) while starting, while stopping, while the
 * output is stalled (a connected destination took nothing for
 * --stall-timeout), and while the output has written nothing for
 * READY_STALL_S with the input window full (no disk buffer) or the disk
 * buffer full: what arrives now will be dropped.
 *
 * Under systemd, the unit's WatchdogSec= asks the same as healthz.
 */
#ifndef SYSLOGRX_HEALTH_H
#define SYSLOGRX_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rx/life/receiver.h"

#define HEALTH_STALL_S 10
#define READY_STALL_S 2

struct health {
	struct receiver *r;
	/* Kept by health_tick on the main thread, read by the HTTP thread
	 * (relaxed atomics): its last turn, and when the output's written
	 * count and the disk buffer's drops last moved. */
	uint64_t main_beat_ns;
	uint64_t written, written_ns;
	uint64_t dropped, dropped_ns;
	/* health_watchdog's: WatchdogSec= in ns (UINT64_MAX: none), last ping */
	uint64_t watchdog_ns, pinged_ns;
};

void health_init(struct health *h, struct receiver *r);
/* The main thread, at each turn of its loop. */
void health_tick(struct health *h);
/* What /healthz answers 200 to: no thread stuck. */
bool health_alive(struct health *h);
/* Under systemd with WatchdogSec= ($WATCHDOG_USEC): "WATCHDOG=1" every half
 * of it while health_alive; the main thread, at each turn of its loop. */
void health_watchdog(struct health *h);
/* An http_health_fn (net/http_metrics.h); ctx is a struct health. */
unsigned int health_answer(bool ready, char *buf, size_t len, void *ctx);

#endif
