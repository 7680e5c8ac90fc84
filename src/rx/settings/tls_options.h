/* SPDX-License-Identifier: MIT */
/* The tls output's options in struct config (rx/settings/output_tls.c
 * parses and checks them). */
#ifndef SYSLOGRX_TLS_OPTIONS_H
#define SYSLOGRX_TLS_OPTIONS_H

#include <limits.h>

/* The CA to verify the server with ("" = the system's), the client's
 * certificate and key ("" = none), the name its certificate must hold
 * ("" = HOST) */
struct tls_options {
	char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
	char name[256];
};

#endif
