/* SPDX-License-Identifier: MIT */
/* Command-line errors shared by the tools: one line naming the flag, exit 2. */
#ifndef SYSLOGRX_CLI_H
#define SYSLOGRX_CLI_H

#include <argp.h>
#include <stdbool.h>
#include <stdint.h>

/* "PROG: invalid --flag value 'ARG': WANT", then exit(2). PROG is log_prog. */
void cli_bad_value(const char *flag, const char *arg, const char *want) __attribute__((noreturn));

/* The flags the report-every-interval tools share (udpdrops, udpbalance):
 * the value, or cli_bad_value() naming the flag. */
int cli_pid(const char *arg);	      /* --pid: 1 .. 2^31-1 */
uint16_t cli_port(const char *arg);   /* --port: 1 .. 65535 */
double cli_interval(const char *arg); /* --interval: 0.01 .. 86400 s */
uint64_t cli_count(const char *arg);  /* --count: 1 .. 2^32-1 */

/* --interval, --count, --json and -v of the report-every-interval tools: an
 * argp child parser (argp's .children) that fills cli_report. */
struct cli_report {
	double interval; /* seconds between reports (1) */
	uint64_t count;	 /* reports, 0 = until a signal */
	bool json;	 /* one JSON object per report */
	bool verbose;	 /* debug log, libbpf's included */
};
extern struct cli_report cli_report;
extern const struct argp cli_report_argp;

/* The long name of the option with this key in opts ("?" if none). */
const char *cli_option_name(const struct argp_option *opts, int key);

#endif
