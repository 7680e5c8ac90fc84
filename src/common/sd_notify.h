/* SPDX-License-Identifier: MIT */
/*
 * systemd's notification protocol without libsystemd: one datagram to
 * $NOTIFY_SOCKET ("READY=1", "FDSTORE=1\nFDNAME=x" with the fd attached,
 * "FDSTOREREMOVE=1\nFDNAME=x"). An abstract socket is written "@name".
 * The manager handles its socket's datagrams in the order they came; a barrier
 * ("BARRIER=1" with a pipe's write end, systemd 246+; older ones close the
 * fds of any message once handled too) says when all before it are handled.
 */
#ifndef SYSLOGRX_SD_NOTIFY_H
#define SYSLOGRX_SD_NOTIFY_H

#include <stdbool.h>

/* Whether $NOTIFY_SOCKET is set (we run under systemd, or a stand-in). */
bool sd_notify_enabled(void);
/* Sends state, with fd attached when fd >= 0. 0 or -errno. */
int sd_notify_fd(const char *state, int fd);
/* Waits until the manager has handled every message we sent before: 0, or
 * -ETIMEDOUT after timeout_ms, or -errno (-ENOENT without $NOTIFY_SOCKET). */
int sd_notify_barrier(int timeout_ms);

#endif
