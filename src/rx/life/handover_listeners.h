/* SPDX-License-Identifier: MIT */
/*
 * A USR2 upgrade with several listeners: listener 0 goes over as a single
 * listener always has (upgrade.c); each other listener k hands over its
 * sockets as slots k * HANDOVER_LISTENER_SLOTS + i (its socket i, in its
 * group's join order), its balancer's maps as owner "balancerK" and its
 * tracer's maps and links as "tracerK". The new process checks every socket
 * by cookie (handover_receive), and each listener's against the address its
 * own --listen names and its balancer's map, as for listener 0.
 */
#ifndef SYSLOGRX_HANDOVER_LISTENERS_H
#define SYSLOGRX_HANDOVER_LISTENERS_H

#include "net/handover.h"
#include "rx/life/receiver.h"

/* The old side: listeners 1.. added to h. 0 or -errno. */
int handover_listeners_build(struct receiver *r, struct handover *h);

/* The new side, once listener 0 is adopted: listeners 1.. of cfg from h.
 * A listener with no socket handed over, or handed sockets for a listener
 * the configuration does not have, is refused (adding or removing a
 * listener needs a restart). 0 or -errno, logged. */
int handover_listeners_adopt(struct receiver *r, const struct config *cfg, struct handover *h);

#endif
