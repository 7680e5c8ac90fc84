/* SPDX-License-Identifier: MIT */
/*
 * src/common/: helpers with one owner each, used by every layer and needing
 * none: log, cli, parse_num, sockaddr, json_writer, escape, caps, clock.h,
 * array, signals.
 *
 * This file: logging for every front end, one verbosity switch,
 * printf-checked formats. Under systemd (JOURNAL_STREAM names our stderr)
 * each line starts with its sd-daemon priority, "<4>" for a warning, so the
 * journal files it at that priority; elsewhere, with log_init(true), a line
 * starts with its UTC time and level word, for people reading a file.
 */
#ifndef SYSLOGRX_LOG_H
#define SYSLOGRX_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Most severe first. NOTE lines (ready, took over, the exit books) are
 * always shown and logged at info priority; INFO lines need -v. */
enum log_level { LOG_LEVEL_ERR, LOG_LEVEL_WARN, LOG_LEVEL_NOTE, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

extern enum log_level log_level;
extern const char *log_prog; /* word before every message, e.g. "syslogrx" */

/* Chooses the line prefix once: the journal's when JOURNAL_STREAM names fd
 * 2's device and inode (as sd_journal_stream_fd's users do), else a
 * timestamp and level when stamps is true, else none. */
void log_init(bool stamps);
bool log_to_journal(void);

void log_print(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vprint(enum log_level level, const char *fmt, va_list ap);

/* The prefix of one line at level (no message), for tests and callers that
 * write a line themselves: "<4>syslogrx: " or "2026-...Z warning syslogrx: ". */
size_t log_prefix(enum log_level level, char *buf, size_t len);

#define pr_err(...) log_print(LOG_LEVEL_ERR, __VA_ARGS__)
#define pr_warn(...) log_print(LOG_LEVEL_WARN, __VA_ARGS__)
#define pr_note(...) log_print(LOG_LEVEL_NOTE, __VA_ARGS__)
#define pr_info(...) log_print(LOG_LEVEL_INFO, __VA_ARGS__)
#define pr_debug(...) log_print(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
