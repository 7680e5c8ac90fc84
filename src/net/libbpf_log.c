// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "net/libbpf_log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (log_level < LOG_LEVEL_DEBUG)
		return 0;
	log_vprint(LOG_LEVEL_DEBUG, fmt, ap);
	return 0;
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
