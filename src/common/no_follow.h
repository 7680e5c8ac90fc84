/* SPDX-License-Identifier: MIT */
/*
 * Opening a file syslogrx writes (--summary, --output file:) without
 * following a symbolic link at its last component: whoever can write the
 * folder could otherwise point the name at a file of their choosing and have
 * syslogrx, perhaps as root, write or truncate it. A symlink is refused with
 * ELOOP (O_NOFOLLOW), and no_follow_strerror() says so in words. The same
 * holds for the disk buffer's folder.
 */
#ifndef SYSLOGRX_NO_FOLLOW_H
#define SYSLOGRX_NO_FOLLOW_H

#include <stdio.h>
#include <sys/types.h>

/* open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode): the fd or -errno. */
int open_no_follow(const char *path, int flags, mode_t mode);

/* A folder syslogrx keeps files in (--disk-buffer DIR), O_DIRECTORY |
 * O_NOFOLLOW: the fd, every file inside opened relative to it (openat), or
 * -errno (-ELOOP: DIR is a symbolic link). */
int open_dir_no_follow(const char *path);

/*
 * A report file (the summary): created 0600, as it names the output and
 * the setup (an existing file keeps its mode), truncated, never through a
 * symbolic link. NULL + errno.
 */
FILE *fopen_private(const char *path);

/* strerror(err), but for ELOOP the reason in words. err > 0. */
const char *no_follow_strerror(int err);

#endif
