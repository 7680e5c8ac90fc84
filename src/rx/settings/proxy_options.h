/* SPDX-License-Identifier: MIT */
/* The PROXY protocol options of the tcp and tls outputs in struct config
 * (rx/settings/output_proxy.c parses and checks them). */
#ifndef SYSLOGRX_PROXY_OPTIONS_H
#define SYSLOGRX_PROXY_OPTIONS_H

#include "net/proxy_header.h"

#define PROXY_CONNECTIONS_DEF 256
#define PROXY_IDLE_DEF 60.0

/* --proxy-protocol (PROXY_NONE: one connection for every sender), the pool's
 * bound and how long a sender's connection stays open with nothing to send. */
struct proxy_options {
	enum proxy_version version;
	unsigned int connections;
	double idle;
};

#endif
