/* SPDX-License-Identifier: MIT */
/*
 * The values of the flags that need more than a number, for config_parse.c's
 * parsers: each returns 0, or a negative errno and leaves the message (which
 * names the flag) to its caller.
 */
#ifndef SYSLOGRX_CONFIG_VALUES_H
#define SYSLOGRX_CONFIG_VALUES_H

#include <stddef.h>
#include "rx/settings/config.h"

/* --timezone: UTC, +HH:MM / -HH:MM, or a zone in the system's tz database. */
int parse_timezone(struct config *c, const char *arg);
/* --cost-ns "N" or "N,N,...". */
int parse_cost_ns(struct config *c, const char *arg);
/* --protect PREFIX[=WEIGHT]: an IPv4 or IPv6 address with an optional /LEN
 * (none: the one address), weight 1..CONFIG_MAX_WEIGHT (none: never shed),
 * appended to c->protect. Host bits set past LEN are refused. */
int add_protect(struct config *c, const char *arg);

#endif
