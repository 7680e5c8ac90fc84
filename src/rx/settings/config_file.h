/* SPDX-License-Identifier: MIT */
/*
 * The line reader behind --config and --env-file: one `name = value` per
 * line (spaces around '=' optional), '#' starts a comment at the start of a
 * line or after a space, blank lines are skipped, a value in matching quotes
 * loses them. A line with a name only has no value (a flag like no-trace).
 * What the names mean is the caller's business (rx/settings/config_parse.c, rx/settings/env_file.c).
 */
#ifndef SYSLOGRX_CONFIG_FILE_H
#define SYSLOGRX_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>

#define CONFIG_FILE_LINE_MAX 8192

/* Called per entry; a non-zero return stops the read. fn writes its reason
 * into err; the reader prefixes "PATH:LINE: ". */
typedef int (*config_entry_fn)(const char *name, const char *value, bool has_value,
			       unsigned int line, void *ctx, char *err, size_t errlen);

/* 0, fn's return, or -errno; on failure err is one line naming the file and
 * the line. */
int config_file_read(const char *path, config_entry_fn fn, void *ctx, char *err, size_t errlen);

#endif
