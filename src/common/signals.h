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

/* SIGINT/SIGTERM received so far; a program may also set it to stop itself. */
extern volatile sig_atomic_t stop_requested;
/* Set by SIGHUP / SIGUSR2 when asked for; cleared by whoever serves them. */
extern volatile sig_atomic_t hup_requested;
extern volatile sig_atomic_t usr2_requested;

#define SIGNALS_HUP (1u << 0)  /* SIGHUP sets hup_requested */
#define SIGNALS_USR2 (1u << 1) /* SIGUSR2 sets usr2_requested */

/* flags: SIGNALS_*. 0, or -errno having logged one line. */
int signals_install(unsigned int flags);

#endif
