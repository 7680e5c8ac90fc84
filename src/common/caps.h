/* SPDX-License-Identifier: MIT */
/* Capabilities: what we need to start, and giving them all up once started. */
#ifndef SYSLOGRX_CAPS_H
#define SYSLOGRX_CAPS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Drops every capability of the calling thread (effective, permitted,
 * inheritable, ambient, and the bounding set). Threads started afterwards
 * inherit nothing: call it after BPF is loaded and attached and before the
 * workers start. Returns 0 or -errno (-EPERM if a capability is left after).
 */
int caps_drop_all(void);

/* Whether the calling thread has cap (CAP_SETUID, ...) in its effective set. */
bool caps_have(int cap);

#define CAPS_USER_MAX_GROUPS 64

/* A user to switch to, looked up while /etc/passwd and /etc/group can still
 * be read (before anything is dropped). */
struct caps_user {
	char name[64];
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[CAPS_USER_MAX_GROUPS]; /* its supplementary groups, as initgroups */
};

/* Looks name (or a numeric uid) up. Returns 0, -ENOENT (no such user), -E2BIG
 * (in more than CAPS_USER_MAX_GROUPS groups) or another -errno. */
int caps_user_lookup(const char *name, struct caps_user *u);

/* Whether the process already runs as u (real, effective and saved ids). */
bool caps_is_user(const struct caps_user *u);

/*
 * Becomes u (unless it already is): groups, gid, uid (for every thread), then drops every capability
 * as caps_drop_all does and sets no_new_privs; checks that nothing is left.
 * Needs CAP_SETUID and CAP_SETGID. Returns 0 or -errno (-EPERM).
 */
int caps_switch_user(const struct caps_user *u);

#endif
