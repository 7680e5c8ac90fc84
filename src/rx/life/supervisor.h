/* SPDX-License-Identifier: MIT */
/*
 * syslogrx --supervise: a process that holds the sockets, the balancer and
 * the tracer (it creates them, with the privileges, then drops them all) and
 * runs the receiver as a child on them (rx/life/upgrade.c's hand-over). It never
 * parses or writes. A child that dies (a crash, kill -9) is replaced at once
 * from the same sockets: what the kernel queued meanwhile is received, and
 * what was in the dead child's input window is counted as lost, by number,
 * from the child's own counters, which live in memory the supervisor shares
 * (taken from the kernel, written, discarded).
 *
 * SIGTERM/SIGINT go to the child, which stops as usual; the supervisor then
 * exits with its status and writes its own summary to PATH.supervisor.
 */
#ifndef SYSLOGRX_SUPERVISOR_H
#define SYSLOGRX_SUPERVISOR_H

#include <stdbool.h>
#include "rx/life/receiver.h"
#include "rx/settings/config.h"

/*
 * The memory a supervisor shares with its child (a memfd, handed over as
 * the ledger): the child's receiver state, which the supervisor reads after
 * the child is gone, and one word only the supervisor writes.
 */
struct supervisor_ledger {
	struct receiver r;
	/* true while the supervisor will hand the group's queues to a next
	 * child (an upgrade, a crash): a stopping child leaves what is queued
	 * to it. Cleared before the final stop is passed on: then the child
	 * reads what is queued, and counts as abandoned what it cannot. */
	bool queues_kept;
};

/* Child deaths in a row without one getting ready before giving up. */
#define SUPERVISE_MAX_FAILED_STARTS 5

int supervise(const struct config *cfg, int argc, char **argv);

#endif
