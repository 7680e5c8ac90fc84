/* SPDX-License-Identifier: MIT */
/* Command-line errors shared by the tools: one line naming the flag, exit 2. */
#ifndef SYSLOGRX_CLI_H
#define SYSLOGRX_CLI_H

#include <argp.h>

/* "PROG: invalid --flag value 'ARG': WANT", then exit(2). PROG is log_prog. */
void cli_bad_value(const char *flag, const char *arg, const char *want)
	__attribute__((noreturn));

/* The long name of the option with this key in opts ("?" if none). */
const char *cli_option_name(const struct argp_option *opts, int key);

#endif
