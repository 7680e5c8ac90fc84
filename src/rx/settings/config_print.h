/* SPDX-License-Identifier: MIT */
/*
 * The settings as they apply, once every layer is read: one `name = value`
 * line per setting in the config file's syntax (long flag names), so the
 * output of --check-config is itself a config file. Secrets are not shown:
 * a URL's password, an OTLP header's or a Kafka property's value.
 */
#ifndef SYSLOGRX_CONFIG_PRINT_H
#define SYSLOGRX_CONFIG_PRINT_H

#include <stdio.h>
#include "rx/settings/config.h"

void config_print(const struct config *c, FILE *f);

#endif
