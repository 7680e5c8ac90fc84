/* SPDX-License-Identifier: MIT */
/*
 * Pre-flight: before receiving, compare the settings with the kernel's
 * limits and say, naming the sysctl or flag that fixes it, where data would
 * be lost silently. Each check is printed (a warning when it fails) and kept
 * for the summary's "preflight" list.
 */
#ifndef SYSLOGRX_PREFLIGHT_H
#define SYSLOGRX_PREFLIGHT_H

#include <stdbool.h>
#include "net/socket_group.h"
#include "rx/settings/config.h"

/* port and rcvbuf per listener, and the checks made once */
#define PREFLIGHT_MAX (3 * CONFIG_MAX_LISTENERS + 6)

struct preflight_check {
	char check[24]; /* "port", "window_memory", "rcvbuf", "udp_mem" */
	bool ok;
	char message[384];
	char fix[192];	   /* the sysctl or flag that fixes it; "" when ok */
	char listener[33]; /* the --listen it is for, when named; "" = all */
};

struct preflight {
	unsigned int n;
	struct preflight_check checks[PREFLIGHT_MAX];
};

/* Before the sockets are bound: the port's privilege, the window's memory. */
void preflight_before(struct preflight *p, const struct config *cfg);

/* Once they are: the effective rcvbuf against what was asked and
 * net.core.rmem_max, N x rcvbuf against net.ipv4.udp_mem. */
void preflight_sockets(struct preflight *p, const struct config *cfg, const struct socket_group *g);

/* Checks that failed. */
unsigned int preflight_warnings(const struct preflight *p);

#endif
