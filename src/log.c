// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

enum log_level log_level = LOG_LEVEL_WARN;
const char *log_prog = "syslogrx";

static void log_vprint(enum log_level level, const char *fmt, va_list ap)
{
	if (level > log_level)
		return;
	fprintf(stderr, "%s: ", log_prog);
	vfprintf(stderr, fmt, ap);
}

void log_print(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(level, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf warns about things we handle ourselves; show its log only with -v. */
	if (log_level < LOG_LEVEL_DEBUG)
		return 0;
	log_vprint(LOG_LEVEL_DEBUG, fmt, ap);
	return 0;
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
