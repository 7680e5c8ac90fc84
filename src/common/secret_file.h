/* SPDX-License-Identifier: MIT */
/*
 * Files that hold a secret (--tls-key, --otlp-key, --otlp-header-file):
 * one that group or others can read is said once at start, naming the flag
 * and the file. A warning, not a refusal: a key shared with a group (Debian's
 * ssl-cert) can be deliberate, while a file others can write is refused
 * where it is read (a header file), as they could change what is sent.
 */
#ifndef SYSLOGRX_SECRET_FILE_H
#define SYSLOGRX_SECRET_FILE_H

#include <stdbool.h>
#include <sys/stat.h>

/* Warns (pr_warn) if st's mode lets group or others read path; true if it
 * did. */
bool secret_file_warn(const char *flag, const char *path, const struct stat *st);

/* The same for a path not yet opened (stat(2), links followed: a key may
 * well be a link into a certificate store). */
bool secret_path_warn(const char *flag, const char *path);

#endif
