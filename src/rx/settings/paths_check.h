/* SPDX-License-Identifier: MIT */
/*
 * Every file syslogrx writes later (--summary and the files beside it, an
 * --output file, the --disk-buffer DIR), checked at start against the user it
 * will run as (--user, or uid 0 without a capability), before anything is
 * bound: a path it cannot write is an error at start naming the flag and the
 * path, not a lost summary after a whole run. So is a path open_own_file
 * would refuse (a symbolic link, a FIFO or device, another user's file).
 */
#ifndef SYSLOGRX_PATHS_CHECK_H
#define SYSLOGRX_PATHS_CHECK_H

#include "common/caps.h"
#include "rx/settings/config.h"

/*
 * Checks in a child process that becomes user (NULL: drops every capability
 * and keeps its uid), so that the answer is the one the receiver will get.
 * 0, or -EINVAL having said which flags and paths (the caller exits 2;
 * *refused, when not NULL, is how many), or another -errno (the check
 * itself failed).
 */
int paths_check(const struct config *cfg, const struct caps_user *user, unsigned int *refused);

#endif
