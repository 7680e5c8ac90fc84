/* SPDX-License-Identifier: MIT */
/* --proxy-protocol, --proxy-connections, --proxy-idle: the tcp and tls
 * outputs' connection per sender (output_proxy.c). */
#ifndef SYSLOGRX_OUTPUT_PROXY_H
#define SYSLOGRX_OUTPUT_PROXY_H

#include <stdio.h>
#include "rx/settings/output_def.h"

int proxy_parse_opt(struct config *c, int key, const char *arg, char *err, size_t errlen);
void proxy_defaults(struct config *c);
int proxy_options_check(const struct config *c, char *err, size_t errlen);
void proxy_print(const struct config *c, FILE *f);
#define PROXY_NR_RESTART 3
extern const struct restart_field proxy_restart[PROXY_NR_RESTART];

#endif
