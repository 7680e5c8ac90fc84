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

/* poll_until that also ends, -ECANCELED, within POLL_STOP_SLICE_MS of
 * *stop turning non-zero (a stop that gave up; NULL: never): a wait as long
 * as --stall-timeout does not hold a stop past its --stop-timeout. */
#define POLL_STOP_SLICE_MS 50
static inline int poll_until_unless(int fd, short events, uint64_t deadline_ns,
				    const volatile int *stop)
{
	for (;;) {
		uint64_t now = mono_ns(), slice = now + POLL_STOP_SLICE_MS * 1000000ull;
		int n;

		if (stop && *stop)
			return -ECANCELED;
		if (now >= deadline_ns)
			return -ETIMEDOUT;
		n = poll_until(fd, events, slice < deadline_ns ? slice : deadline_ns);
		if (n != -ETIMEDOUT)
			return n;
	}
}

#endif
