/* SPDX-License-Identifier: MIT */
/*
 * --env-file: SC4S's env_file (/opt/sc4s/env_file) mapped onto syslogrx's
 * flags. Each mapped setting is handed to the caller as a flag and a value
 * (rx/settings/config.c feeds it through the same parser as the command line); the
 * others are ignored by name; where SC4S itself would silently misbehave
 * with these settings, a warning says so.
 */
#ifndef SYSLOGRX_ENV_FILE_H
#define SYSLOGRX_ENV_FILE_H

#include <stdbool.h>
#include <stddef.h>

#define ENV_MAP_MAX 8
#define ENV_WARN_MAX 6

struct env_mapping {
	char name[40];	/* SC4S_... */
	char value[64]; /* as written */
	unsigned int line;
	char flag[24];		/* "--sockets"; "" when it maps to no flag */
	char became[160];	/* the flag's value, or what it means here */
	char overridden_by[16]; /* "", "config" or "command line" (rx/settings/config.c) */
};

struct env_map {
	unsigned int n;
	struct env_mapping rows[ENV_MAP_MAX];
	unsigned int nr_ignored;
	char ignored[1024]; /* names, ", " between them */
	unsigned int nr_warnings;
	char warnings[ENV_WARN_MAX][384];
};

/* Hands one mapped setting over: flag is a long name without dashes. */
typedef int (*env_emit_fn)(const char *flag, const char *value, void *ctx, char *err,
			   size_t errlen);

/* Reads path into out (zeroed first) and emits each mapped setting.
 * 0, or non-zero with err naming the file, the line and the setting. */
int env_file_apply(const char *path, env_emit_fn emit, void *ctx, struct env_map *out, char *err,
		   size_t errlen);

/* Prints what each setting became, what was ignored, and the warnings. */
void env_file_report(const struct env_map *m, const char *path);

#endif
