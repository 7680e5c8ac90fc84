/* SPDX-License-Identifier: MIT */
/*
 * One descriptor's readiness, waited for up to a CLOCK_MONOTONIC deadline
 * (mono_ns): a signal's EINTR neither stretches the wait nor ends it.
 */
#ifndef SYSLOGRX_POLL_UNTIL_H
#define SYSLOGRX_POLL_UNTIL_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include "common/clock.h"

/* The revents (> 0) once fd is ready for events, -ETIMEDOUT at the
 * deadline, or -errno. */
static inline int poll_until(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		uint64_t now = mono_ns();
		int n;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)((deadline_ns - now + 999999) / 1000000));
		if (n > 0)
			return p.revents;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

#endif
