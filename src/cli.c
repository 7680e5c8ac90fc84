// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "log.h"

void cli_bad_value(const char *flag, const char *arg, const char *want)
{
	fprintf(stderr, "%s: invalid %s value '%s': %s\n", log_prog, flag, arg, want);
	exit(2);
}

const char *cli_option_name(const struct argp_option *opts, int key)
{
	for (const struct argp_option *o = opts; o->name || o->key; o++)
		if (o->key == key && o->name)
			return o->name;
	return "?";
}
