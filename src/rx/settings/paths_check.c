// SPDX-License-Identifier: MIT
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "common/array.h"
#include "common/log.h"
#include "common/no_follow.h"
#include "rx/settings/paths_check.h"

enum want_kind {
	WANT_FILE,   /* written in place: the file, or its folder if it is not there */
	WANT_BESIDE, /* the file and new files beside it (PATH.PID, PATH.supervisor) */
	WANT_DIR,    /* a folder to create, read and write in */
};

/* 0 or an errno: what the user would get (ELOOP: a symbolic link, which
 * syslogrx never follows; open_own_file's refusals). Runs in the checking
 * child. */
static int check_one(const char *path, enum want_kind kind)
{
	char copy[PATH_MAX];
	struct stat st;
	int err;

	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode))
			return ELOOP; /* never followed: opened with O_NOFOLLOW */
		if (kind == WANT_DIR && !S_ISDIR(st.st_mode))
			return ENOTDIR;
		if (kind != WANT_DIR && S_ISDIR(st.st_mode))
			return EISDIR;
		/* A FIFO, a device, another user's file: open_own_file refuses
		 * them (we are the user syslogrx runs as here). */
		if (kind != WANT_DIR && (err = own_file_check(&st)))
			return err;
		if (access(path, kind == WANT_DIR ? R_OK | W_OK | X_OK : W_OK))
			return errno;
		if (kind != WANT_BESIDE)
			return 0;
	} else if (errno != ENOENT) {
		return errno;
	}
	/* Not there yet (or new files go beside it): its folder must take them. */
	snprintf(copy, sizeof(copy), "%s", path);
	return access(dirname(copy), W_OK | X_OK) ? errno : 0;
}

/* The child's exit code: this plus the number of paths refused. */
#define PATHS_REFUSED_EXIT 64

static void child_checks(const struct config *cfg, const struct caps_user *user)
{
	struct {
		const char *flag, *path;
		enum want_kind kind;
	} wants[3 + CONFIG_MAX_ROUTES] = {
		{ "--summary", cfg->summary, WANT_BESIDE },
		{ "--output file:", output_of(cfg)->path ? cfg->output_arg : "", WANT_FILE },
		{ "--disk-buffer", cfg->disk_buffer, WANT_DIR },
	};
	char route_flags[CONFIG_MAX_ROUTES][LISTENER_NAME_MAX + 16];
	size_t nr_wants = 3;
	char self[64];
	const char *as = user ? user->name : self;
	int err = user ? caps_switch_user(user) : caps_drop_all();
	int refused = 0; /* how many: the exit code's low bits */

	/* Without --user, whoever runs it: root (its capabilities dropped, as
	 * after the start) or the unit's own user (nobody, 65534). */
	if (geteuid() == 0)
		snprintf(self, sizeof(self), "uid 0 without capabilities");
	else
		snprintf(self, sizeof(self), "uid %u", (unsigned int)geteuid());

	if (err) {
		pr_warn("checking the paths as %s: %s\n", as, strerror(-err));
		_exit(1);
	}
	/* --output LISTENER=file:PATH, each */
	for (unsigned int i = 0; i < cfg->nr_routes; i++) {
		if (!outputs[cfg->routes[i].kind]->path)
			continue;
		snprintf(route_flags[i], sizeof(route_flags[i]),
			 "--output %s=file:", cfg->routes[i].listener);
		wants[nr_wants].flag = route_flags[i];
		wants[nr_wants].path = cfg->routes[i].arg;
		wants[nr_wants++].kind = WANT_FILE;
	}
	for (size_t i = 0; i < nr_wants; i++) {
		if (!wants[i].path[0] || !strcmp(wants[i].path, "-"))
			continue;
		err = check_one(wants[i].path, wants[i].kind);
		if (err) {
			/* every path refused is named, not only the first */
			refused++;
			pr_err("%s%s%s: %s (syslogrx writes it as %s; checked before starting)\n",
			       wants[i].flag,
			       wants[i].flag[strlen(wants[i].flag) - 1] == ':' ? "" : " ",
			       wants[i].path, no_follow_strerror(err), as);
		}
	}
	_exit(refused ? PATHS_REFUSED_EXIT + refused : 0);
}

int paths_check(const struct config *cfg, const struct caps_user *user, unsigned int *refused)
{
	int status;
	pid_t pid;

	if (!cfg->summary[0] && !output_of(cfg)->path && !cfg->disk_buffer[0] && !cfg->nr_routes)
		return 0;
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_checks(cfg, user);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) <= PATHS_REFUSED_EXIT)
		return -EIO;
	if (refused)
		*refused = WEXITSTATUS(status) - PATHS_REFUSED_EXIT;
	return -EINVAL;
}
