/* SPDX-License-Identifier: MIT */
/*
 * systemd's notification protocol without libsystemd: one datagram to
 * $NOTIFY_SOCKET ("READY=1", "FDSTORE=1\nFDNAME=x" with the fd attached,
 * "FDSTOREREMOVE=1\nFDNAME=x"). An abstract socket is written "@name".
 */
#ifndef SYSLOGRX_SD_NOTIFY_H
#define SYSLOGRX_SD_NOTIFY_H

#include <stdbool.h>

/* Whether $NOTIFY_SOCKET is set (we run under systemd, or a stand-in). */
bool sd_notify_enabled(void);
/* Sends state, with fd attached when fd >= 0. 0 or -errno. */
int sd_notify_fd(const char *state, int fd);

#endif
