/* SPDX-License-Identifier: MIT */
/*
 * Signal set-up for every front end: SIGINT/SIGTERM ask to stop (counted, so
 * a second one can mean "now"), SIGHUP (when asked for) to reopen or reload,
 * SIGPIPE ignored (a closed stdout is a write error, not a death). Main loops
 * poll the flags with short timeouts and treat EINTR as a normal wake-up.
 */
#ifndef SYSLOGRX_SIGNALS_H
#define SYSLOGRX_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* SIGINT/SIGTERM received so far; a program may also set it to stop itself. */
extern volatile sig_atomic_t stop_requested;
/* Set by SIGHUP (with signals_install(true)); cleared by whoever serves it. */
extern volatile sig_atomic_t hup_requested;

/* 0, or -errno having logged one line. */
int signals_install(bool hup);

#endif
