/* SPDX-License-Identifier: MIT */
/*
 * --env-file: SC4S's env_file (/opt/sc4s/env_file) mapped onto syslogrx's
 * flags. Each mapped setting is handed to the caller as a flag and a value
 * (rx/settings/config_parse.c feeds it through the same parser as the command line); the
 * others are ignored by name; where SC4S itself would silently misbehave
 * with these settings, a warning says so.
 */
#ifndef SYSLOGRX_ENV_FILE_H
#define SYSLOGRX_ENV_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* SC4S_LISTEN_<NAME>_UDP_PORT settings read, each a listener or a comma
 * list of them (up to the listeners syslogrx takes in all). */
#define ENV_PORTS_MAX 32
#define ENV_MAP_MAX (8 + ENV_PORTS_MAX)
#define ENV_WARN_MAX 6
#define ENV_SKIP_MAX 32

struct env_mapping {
	char name[64];	 /* SC4S_... */
	char value[128]; /* as written */
	unsigned int line;
	char flag[24];		/* "--sockets"; "" when it maps to no flag */
	char became[320];	/* the flag's value, or what it means here */
	char overridden_by[16]; /* "", "config" or "command line" (rx/settings/config_parse.c) */
	bool sc4s_default;	/* unset in the file: SC4S's default (line 0) */
};

struct env_map {
	unsigned int n;
	struct env_mapping rows[ENV_MAP_MAX];
	unsigned int nr_ignored;
	char ignored[1024]; /* names, ", " between them */
	/* The settings left out, by line: not for a UDP receiver, or a TCP or
	 * TLS listener's (SC4S_LISTEN_*_TCP_PORT...): the first ENV_SKIP_MAX. */
	unsigned int nr_skipped; /* every one; the first ENV_SKIP_MAX below */
	struct {
		char name[64];
		unsigned int line;
		bool listener; /* an SC4S_LISTEN_ setting that is not a UDP port */
	} skipped[ENV_SKIP_MAX];
	unsigned int nr_warnings;
	char warnings[ENV_WARN_MAX][384];
	unsigned int warning_line[ENV_WARN_MAX]; /* the setting each is about */
};

/* Hands one mapped setting over: flag is a long name without dashes. */
typedef int (*env_emit_fn)(const char *flag, const char *value, void *ctx, char *err,
			   size_t errlen);

/* Reads path into out (zeroed first) and emits each mapped setting.
 * 0, or non-zero with err naming the file, the line and the setting. */
int env_file_apply(const char *path, env_emit_fn emit, void *ctx, struct env_map *out, char *err,
		   size_t errlen);

/* Prints what each setting became, what was ignored, and the warnings,
 * every line starting "--env-file FILE:LINE:". */
void env_file_report(const struct env_map *m, const char *path);

#endif
