// SPDX-License-Identifier: MIT
#include <stdio.h>
#include "common/log.h"

enum log_level log_level = LOG_LEVEL_WARN;
const char *log_prog = "syslogrx";

void log_vprint(enum log_level level, const char *fmt, va_list ap)
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
