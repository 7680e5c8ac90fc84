/* SPDX-License-Identifier: MIT */
/* --output LISTENER=SPEC's values in struct config (rx/settings/output_routes.h
 * parses and checks them). */
#ifndef SYSLOGRX_ROUTE_OPTIONS_H
#define SYSLOGRX_ROUTE_OPTIONS_H

#include "rx/settings/listeners.h"
#include "rx/settings/output_def.h"

/* Named outputs beside the unnamed one (the window's queues: 16 in all). */
#define CONFIG_MAX_ROUTES 15
#define ROUTE_ARG_MAX 1024

struct output_route {
	char listener[LISTENER_NAME_MAX + 1];
	enum output_kind kind;
	char arg[ROUTE_ARG_MAX]; /* the kind's ARG, "" for none */
};

#endif
