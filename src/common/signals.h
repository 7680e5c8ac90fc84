/* SPDX-License-Identifier: MIT */
/*
 * Signal set-up for every front end: SIGINT/SIGTERM ask to stop (counted, so
 * a second one can mean "now"), SIGHUP and SIGUSR2 (when asked for) to reopen,
 * reload or upgrade,
 * SIGPIPE ignored (a closed stdout is a write error, not a death). Main loops
 * poll the flags with short timeouts and treat EINTR as a normal wake-up.
 */
#ifndef SYSLOGRX_SIGNALS_H
#define SYSLOGRX_SIGNALS_H

#include <signal.h>

/* SIGINT/SIGTERM received so far; a program may also set it to stop itself.
 * _Atomic (lock-free, so signal-safe): every thread polls them, every plain
 * read, ++ and = on them is an atomic access. */
extern _Atomic int stop_requested;
/* Set by SIGHUP / SIGUSR2 when asked for; cleared by whoever serves them. */
extern _Atomic int hup_requested;
extern _Atomic int usr2_requested;
_Static_assert(__atomic_always_lock_free(sizeof(int), 0), "signal-safe flags");

#define SIGNALS_HUP (1u << 0)  /* SIGHUP sets hup_requested */
#define SIGNALS_USR2 (1u << 1) /* SIGUSR2 sets usr2_requested */

/*
 * Flags one thread sets and others poll (stop, force, reopen, regroup): an
 * acquire load and a release store, so what was written before a flag is
 * seen with it (and ThreadSanitizer sees no race on a volatile int).
 */
static inline int flag_get(const volatile int *f)
{
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static inline void flag_set(volatile int *f, int v)
{
	__atomic_store_n(f, v, __ATOMIC_RELEASE);
}

/* flags: SIGNALS_*. 0, or -errno having logged one line. */
int signals_install(unsigned int flags);

#endif
