/* SPDX-License-Identifier: MIT */
/*
 * --otlp-header-file FILE: HTTP headers kept out of the command line (which
 * /proc/PID/cmdline shows to every user). One KEY=VALUE a line, as
 * --otlp-header takes it; blank lines and lines starting with '#' skipped,
 * a trailing CR dropped. FILE is refused if it is a symbolic link (never
 * followed), not a regular file, writable by group or others (whoever can
 * write it chooses what is sent with syslogrx's credentials), or larger
 * than HEADER_FILE_MAX.
 */
#ifndef SYSLOGRX_HEADER_FILE_H
#define SYSLOGRX_HEADER_FILE_H

#include <stddef.h>

#define HEADER_FILE_MAX (64 * 1024)

/* Called per header; where is "--otlp-header-file PATH:LINE" for its
 * errors. A non-zero return stops the read. */
typedef int (*header_line_fn)(const char *kv, const char *where, void *ctx, char *err,
			      size_t errlen);

/* 0, or -errno with err one line naming the flag and the file. */
int header_file_read(const char *path, header_line_fn fn, void *ctx, char *err, size_t errlen);

#endif
