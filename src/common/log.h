/* SPDX-License-Identifier: MIT */
/*
 * src/common/: helpers with one owner each, used by every layer and needing
 * none: log, cli, parse_num, sockaddr, json_writer, escape, caps, clock.h,
 * array, signals.
 *
 * This file: logging for every front end, one verbosity switch,
 * printf-checked formats.
 */
#ifndef SYSLOGRX_LOG_H
#define SYSLOGRX_LOG_H

#include <stdarg.h>

enum log_level { LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

extern enum log_level log_level;
extern const char *log_prog; /* prefix of every line, e.g. "syslogrx" */

void log_print(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_warn(...) log_print(LOG_LEVEL_WARN, __VA_ARGS__)
#define pr_info(...) log_print(LOG_LEVEL_INFO, __VA_ARGS__)
#define pr_debug(...) log_print(LOG_LEVEL_DEBUG, __VA_ARGS__)

void log_vprint(enum log_level level, const char *fmt, va_list ap);

#endif
