// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include "common/cli.h"
#include "common/log.h"
#include "common/parse_num.h"

void cli_bad_value(const char *flag, const char *arg, const char *want)
{
	pr_err("invalid %s value '%s': %s\n", flag, arg, want);
	exit(2);
}

const char *cli_option_name(const struct argp_option *opts, int key)
{
	for (const struct argp_option *o = opts; o->name || o->key; o++)
		if (o->key == key && o->name)
			return o->name;
	return "?";
}

int cli_pid(const char *arg)
{
	uint64_t v;

	if (parse_u64(arg, 1, 0x7fffffff, &v))
		cli_bad_value("--pid", arg, "a process id");
	return (int)v;
}

uint16_t cli_port(const char *arg)
{
	uint64_t v;

	if (parse_u64(arg, 1, 65535, &v))
		cli_bad_value("--port", arg, "a port number, 1-65535");
	return (uint16_t)v;
}

double cli_interval(const char *arg)
{
	double v;

	if (parse_seconds(arg, 0.01, 86400, &v))
		cli_bad_value("--interval", arg, "seconds, 0.01-86400");
	return v;
}

uint64_t cli_count(const char *arg)
{
	uint64_t v;

	if (parse_u64(arg, 1, UINT32_MAX, &v))
		cli_bad_value("--count", arg, "a whole number >= 1");
	return v;
}

struct cli_report cli_report = { .interval = 1.0 };

static const struct argp_option report_opts[] = {
	{ "interval", 'i', "SECONDS", 0, "Seconds between reports (default 1, fractions allowed)",
	  0 },
	{ "count", 'c', "COUNT", 0, "Exit after COUNT reports (default: until a signal)", 0 },
	{ "json", 'j', NULL, 0, "One JSON object per report, one line each", 0 },
	{ "verbose", 'v', NULL, 0, "Verbose debug output, libbpf's included", 0 },
	{},
};

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'i':
		cli_report.interval = cli_interval(arg);
		break;
	case 'c':
		cli_report.count = cli_count(arg);
		break;
	case 'j':
		cli_report.json = true;
		break;
	case 'v':
		cli_report.verbose = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp cli_report_argp = { .options = report_opts, .parser = report_parse };
