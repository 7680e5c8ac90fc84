/* SPDX-License-Identifier: MIT */
/*
 * Opening a file syslogrx writes (--summary, --output file:) without
 * following a symbolic link at its last component: whoever can write the
 * folder could otherwise point the name at a file of their choosing and have
 * syslogrx, perhaps as root, write or truncate it. A symlink is refused with
 * ELOOP (O_NOFOLLOW), and no_follow_strerror() says so in words. The same
 * holds for the disk buffer's folder.
 *
 * Nor may a file syslogrx writes be anything but its own regular file: a
 * FIFO at the path would hang the open or the write (nobody reads it), a
 * device would take the lines, and a file another user created (0666 in a
 * shared folder) would be theirs to read and to swap. Such a file is
 * opened O_NONBLOCK, looked at with fstat, and refused untouched.
 */
#ifndef SYSLOGRX_NO_FOLLOW_H
#define SYSLOGRX_NO_FOLLOW_H

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode): the fd or -errno. */
int open_no_follow(const char *path, int flags, mode_t mode);

/* The refusals of open_own_file besides open(2)'s errors. open(2) never
 * returns these for a path, so no_follow_strerror() can say them in words. */
#define NO_FOLLOW_NOT_REGULAR ESPIPE /* a FIFO, socket or device */
#define NO_FOLLOW_NOT_OWNED EUSERS   /* another user's file */

/* A file syslogrx writes: open_no_follow with O_NONBLOCK (a FIFO never
 * blocks the open), then refused unless it is a regular file of
 * geteuid()'s, or the null device (writing there discards, and is
 * harmless). O_TRUNC is applied only once the file is accepted. The fd
 * (blocking again), or -errno: -ELOOP, -NO_FOLLOW_NOT_REGULAR,
 * -NO_FOLLOW_NOT_OWNED, or open's own. */
int open_own_file(const char *path, int flags, mode_t mode);

/* What open_own_file would refuse in st (from lstat or fstat): 0 or one
 * of its errnos. */
int own_file_check(const struct stat *st);

/* A folder syslogrx keeps files in (--disk-buffer DIR), O_DIRECTORY |
 * O_NOFOLLOW: the fd, every file inside opened relative to it (openat), or
 * -errno (-ELOOP: DIR is a symbolic link). */
int open_dir_no_follow(const char *path);

/*
 * A report file (the summary): created 0600, as it names the output and
 * the setup (an existing file keeps its mode), truncated, never through a
 * symbolic link, opened by open_own_file. NULL + errno.
 */
FILE *fopen_private(const char *path);

/* strerror(err), but for ELOOP and open_own_file's refusals the reason in
 * words. err > 0. */
const char *no_follow_strerror(int err);

#endif
