/* SPDX-License-Identifier: MIT */
/* The clock, read one way everywhere: nanoseconds as a uint64_t. */
#ifndef SYSLOGRX_CLOCK_H
#define SYSLOGRX_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* CLOCK_MONOTONIC: intervals, deadlines, rates. */
static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline struct timespec ns_to_timespec(uint64_t ns)
{
	return (struct timespec){ .tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC };
}

/* A condition variable whose timed waits take CLOCK_MONOTONIC deadlines
 * (mono_ns), so a wall-clock step never stretches or cuts a wait. */
static inline int cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int err;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	err = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return -err;
}

#endif
