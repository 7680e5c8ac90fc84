// SPDX-License-Identifier: MIT
/*
 * The receiver's process shell (shell.h): --user, the endpoints' sockets
 * handed on, the supervisor link, the hand-over and "ready".
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "rx/life/shell.h"
#include "rx/settings/paths_check.h"

void shell_init(struct rx_shell *sh)
{
	memset(sh, 0, sizeof(*sh));
	sh->metrics_fd = -1;
	sh->health_fd = -1;
	sh->ready_fd = -1;
}

/* --user: looked up first, so a wrong name or a missing privilege is said
 * before anything is bound. */
static int lookup_user(const char *name, struct caps_user *u)
{
	int err = caps_user_lookup(name, u);

	if (err == -ENOENT) {
		pr_warn("--user %s: no such user\n", name);
		return -EINVAL;
	}
	if (err) {
		pr_warn("--user %s: %s\n", name, strerror(-err));
		return err;
	}
	if (!caps_is_user(u) && (!caps_have(CAP_SETUID) || !caps_have(CAP_SETGID))) {
		pr_warn("--user %s: switching user needs CAP_SETUID and CAP_SETGID (run as root, "
			"or start as that user with the capabilities instead)\n",
			name);
		return -EPERM;
	}
	return 0;
}

int shell_check_user_paths(struct rx_shell *sh, const struct config *cfg, unsigned int *refused)
{
	int err;

	if (cfg->user[0] && !sh->user_known) {
		err = lookup_user(cfg->user, &sh->user);
		if (err)
			return err;
		sh->user_known = true;
	}
	/* What will be written later, checked as whom will write it. */
	return paths_check(cfg, sh->user_known ? &sh->user : NULL, refused);
}

int shell_drop_privileges(struct rx_shell *sh, const struct config *cfg)
{
	int err;

	if (cfg->user[0]) {
		/* Adopted sockets (an upgrade) skip receiver_acquire. */
		err = sh->user_known ? 0 : lookup_user(cfg->user, &sh->user);
		if (!err)
			err = caps_switch_user(&sh->user);
		if (err) {
			pr_warn("--user %s: switching to uid %u gid %u: %s\n", cfg->user,
				(unsigned int)sh->user.uid, (unsigned int)sh->user.gid,
				strerror(-err));
			return err;
		}
		return 0;
	}
	/* Fail closed: a receiver that could not give its capabilities up
	 * does not start. */
	err = caps_drop_all();
	if (err)
		pr_warn("dropping capabilities: %s; not starting with them\n", strerror(-err));
	return err;
}

void shell_say_ready(struct rx_shell *sh)
{
	if (!sh->ready_pending)
		return;
	if (write(sh->ready_fd, "ready\n", 6) != 6)
		pr_warn("upgrade: telling the old process: %s\n", strerror(errno));
	close(sh->ready_fd);
	sh->ready_pending = false;
}

void shell_say_identity(const struct config *cfg)
{
	/* Under systemd the unit says who runs it; started by hand, say it. */
	if (cfg->user[0] || geteuid() != 0 || getenv("NOTIFY_SOCKET") || getenv("INVOCATION_ID"))
		return;
	pr_note("running as uid 0 (with no capability left); --user USER "
		"runs as USER\n");
}

void shell_set_endpoints(struct rx_shell *sh, int metrics_fd, int health_fd)
{
	sh->metrics_fd = metrics_fd;
	sh->health_fd = health_fd;
}

int shell_metrics_fd(const struct rx_shell *sh)
{
	return sh->metrics_fd;
}

int shell_health_fd(const struct rx_shell *sh)
{
	return sh->health_fd;
}

void shell_set_supervised(struct rx_shell *sh, const bool *queues_kept)
{
	sh->supervised = true;
	sh->queues_kept = queues_kept;
}

bool shell_supervised(const struct rx_shell *sh)
{
	return sh->supervised;
}

bool shell_queues_kept(const struct rx_shell *sh)
{
	return sh->queues_kept != NULL;
}

void shell_set_handed_over(struct rx_shell *sh, bool over)
{
	sh->handed_over = over;
}

bool shell_handed_over(const struct rx_shell *sh)
{
	return sh->handed_over;
}

const bool *shell_queues_outlive(const struct rx_shell *sh)
{
	return sh->queues_kept ? sh->queues_kept : &sh->handed_over;
}

void shell_expect_ready(struct rx_shell *sh, int fd)
{
	sh->ready_fd = fd;
	sh->ready_pending = fd >= 0;
}

bool shell_ready_pending(const struct rx_shell *sh)
{
	return sh->ready_pending;
}
