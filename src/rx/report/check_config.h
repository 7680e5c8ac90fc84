/* SPDX-License-Identifier: MIT */
/*
 * --check-config: every refusal a start would make, each named, with
 * nothing bound and no BPF object loaded: the whole-configuration checks,
 * the output's address and PEM files, the endpoints' addresses, listener
 * ports other sockets hold, the user and the paths it writes (checked as
 * that user). Then the settings as they would apply, on stdout.
 */
#ifndef SYSLOGRX_CHECK_CONFIG_H
#define SYSLOGRX_CHECK_CONFIG_H

#include "rx/settings/config.h"

/* The exit status: 0, or 1 having logged every problem. */
int check_config_run(struct config *c);

#endif
