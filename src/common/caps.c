// SPDX-License-Identifier: MIT
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/caps.h"

/* The bounding set first: dropping it needs CAP_SETPCAP, which the capset
 * after it takes away. Not having CAP_SETPCAP is not an error (a systemd
 * unit's CapabilityBoundingSet has already narrowed it). */
static int drop_bounding_and_ambient(void)
{
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL && errno != EPERM)
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	return 0;
}

static int clear_sets(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* Check, not assume: no capability is left in any set of this thread. */
static int none_left(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable)
			return -EPERM;
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) > 0)
			return -EPERM;
	return 0;
}

int caps_drop_all(void)
{
	int err = drop_bounding_and_ambient();

	if (!err)
		err = clear_sets();
	return err ? err : none_left();
}

bool caps_have(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (cap < 0 || cap > CAP_LAST_CAP || syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

int caps_user_lookup(const char *name, struct caps_user *u)
{
	struct passwd pw, *res = NULL;
	char buf[4096], *end;
	int n, err;

	memset(u, 0, sizeof(*u));
	err = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
	if (!res && !err) {
		/* A number names a uid, as in chown(1). */
		unsigned long id = strtoul(name, &end, 10);

		if (*name && !*end && id < (uid_t)-1)
			err = getpwuid_r(id, &pw, buf, sizeof(buf), &res);
	}
	if (err)
		return -err;
	if (!res)
		return -ENOENT;
	u->uid = pw.pw_uid;
	u->gid = pw.pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", pw.pw_name);
	n = CAPS_USER_MAX_GROUPS;
	if (getgrouplist(pw.pw_name, pw.pw_gid, u->groups, &n) < 0)
		return -E2BIG;
	u->ngroups = n;
	return 0;
}

bool caps_is_user(const struct caps_user *u)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	return !getresuid(&r, &e, &s) && !getresgid(&rg, &eg, &sg) && r == u->uid && e == u->uid &&
	       s == u->uid && rg == u->gid && eg == u->gid && sg == u->gid;
}

int caps_switch_user(const struct caps_user *u)
{
	int err = drop_bounding_and_ambient();

	if (err)
		return err;
	/* The groups before the gid before the uid: each needs the privilege
	 * the next step gives up. glibc applies each to every thread. Already
	 * USER (started so by a service manager): its groups are its own. */
	if (!caps_is_user(u) &&
	    (setgroups(u->ngroups, u->groups) || setresgid(u->gid, u->gid, u->gid) ||
	     setresuid(u->uid, u->uid, u->uid)))
		return -errno;
	/* Leaving uid 0 cleared the permitted and effective sets already; USER
	 * may be root itself, so clear them explicitly. */
	err = clear_sets();
	if (err)
		return err;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	/* Check, not assume: neither the old ids nor a capability are left. */
	if (getuid() != u->uid || geteuid() != u->uid || getgid() != u->gid)
		return -EPERM;
	return none_left();
}
