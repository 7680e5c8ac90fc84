/* SPDX-License-Identifier: MIT */
/* Capabilities: what we need to start, and giving them all up once started. */
#ifndef SYSLOGRX_CAPS_H
#define SYSLOGRX_CAPS_H

#include <stdbool.h>

/*
 * Drops every capability of the calling thread (effective, permitted,
 * inheritable, ambient, and the bounding set). Threads started afterwards
 * inherit nothing: call it after BPF is loaded and attached and before the
 * workers start. Returns 0 or -errno.
 */
int caps_drop_all(void);

/* Whether the calling thread has cap (CAP_NET_ADMIN, ...) in its effective set. */
bool caps_effective(int cap);

#endif
