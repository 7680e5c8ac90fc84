/* SPDX-License-Identifier: MIT */
/*
 * --output LISTENER=SPEC, repeatable: an output per listener. A named output
 * takes its listener's messages; the unnamed --output takes the others'.
 * Each is an output of the registry (output_def.h) with its own destination;
 * their kinds' flags (--tls-*, --framing, --format) are shared.
 */
#ifndef SYSLOGRX_OUTPUT_ROUTES_H
#define SYSLOGRX_OUTPUT_ROUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "rx/settings/route_options.h"

struct config;

/* A layer's outputs replace a lower layer's as a whole: called at the
 * first --output of a layer. */
void output_routes_reset(struct config *c);
/* "LISTENER=SPEC": 0 (added), or EINVAL with err naming the flag; -1: arg
 * names no listener (an unnamed output: outputs_parse's). */
int output_routes_parse(struct config *c, const char *arg, char *err, size_t errlen);
/* Once the listeners are named: each route's listener exists, has one
 * output, is of a kind that can be one of several, and goes with the rest
 * of the flags. Every listener left without a named output needs the
 * unnamed one; with none left, the unnamed output is null. */
int config_check_routes(struct config *c, char *err, size_t errlen);
void output_routes_print(const struct config *c, FILE *f);
/* Route i's output as given: "tcp:HOST:PORT", a URL's userinfo as ***. */
const char *output_route_name(const struct config *c, unsigned int i, char *buf, size_t len);
/* c with route i's destination in place of the unnamed one (for its sink). */
void output_route_apply(struct config *c, unsigned int i);

#endif
