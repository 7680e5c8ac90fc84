// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include "common/log.h"
#include "common/signals.h"

_Atomic int stop_requested;
_Atomic int hup_requested;
_Atomic int usr2_requested;

static void on_stop(int sig)
{
	stop_requested++;
}

static void on_hup(int sig)
{
	hup_requested = 1;
}

static void on_usr2(int sig)
{
	usr2_requested = 1;
}

static int set(int sig, void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };

	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) ? -errno : 0;
}

int signals_install(unsigned int flags)
{
	int err = set(SIGINT, on_stop)					  ?:
			  set(SIGTERM, on_stop)				  ?:
			  set(SIGPIPE, SIG_IGN)				  ?:
			  (flags & SIGNALS_HUP ? set(SIGHUP, on_hup) : 0) ?:
			  (flags & SIGNALS_USR2 ? set(SIGUSR2, on_usr2) : 0);

	if (err)
		pr_warn("cannot set signal handlers: %s\n", strerror(-err));
	return err;
}
