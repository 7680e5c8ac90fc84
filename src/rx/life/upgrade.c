// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "common/clock.h"
#include "common/log.h"
#include "common/sd_notify.h"
#include "rx/life/handover_listeners.h"
#include "rx/life/upgrade.h"
#include "rx/life/fair_share_run.h"

extern char **environ;

static int add_balancer_map(const char *name, int fd, void *ctx)
{
	return handover_add(ctx, HANDOVER_MAP, "balancer", name, fd, -1);
}

static int add_tracer_obj(int is_link, const char *name, int fd, void *ctx)
{
	return handover_add(ctx, is_link ? HANDOVER_LINK : HANDOVER_MAP, "tracer", name, fd, -1);
}

static int build(struct receiver *r, struct handover *h)
{
	int err = 0;

	snprintf(h->listen, sizeof(h->listen), "%s", r->intake.group.listen);
	h->threads = pipeline_threads(&r->pipeline);
	for (unsigned int k = 0; k < r->intake.live && !err; k++)
		err = handover_add(h, HANDOVER_SOCK, NULL, NULL,
				   r->intake.group.socks[r->intake.slot_sock[k]].fd, k);
	if (r->intake.cbpf) {
		/* Classic BPF picks by join order: the spares in that order, so
		 * that the order handed over is the group's. */
		for (unsigned int k = r->intake.live; k < r->intake.join_order.nr && !err; k++)
			err = handover_add(h, HANDOVER_SOCK, NULL, NULL,
					   r->intake.group.socks[r->intake.join_order.id[k]].fd,
					   -1);
	} else {
		for (unsigned int i = 0; i < r->intake.group.n && !err; i++)
			if (!r->intake.group.socks[i].listener &&
			    !strcmp(intake_socket_state(&r->intake, i), "spare"))
				err = handover_add(h, HANDOVER_SOCK, NULL, NULL,
						   r->intake.group.socks[i].fd, -1);
	}
	if (!err && r->intake.balancer)
		err = balancer_export(r->intake.balancer, add_balancer_map, h);
	if (!err && r->intake.tracer)
		err = tracer_export(r->intake.tracer, add_tracer_obj, h);
	if (!err)
		err = fair_share_run_export(r->fair_share, h);
	if (!err && shell_metrics_fd(&r->shell) >= 0)
		err = handover_add(h, HANDOVER_TCP, "metrics", NULL, shell_metrics_fd(&r->shell),
				   -1);
	if (!err && shell_health_fd(&r->shell) >= 0)
		err = handover_add(h, HANDOVER_TCP, "health", NULL, shell_health_fd(&r->shell), -1);
	if (!err)
		err = handover_listeners_build(r, h);
	return err;
}

static char start_path[PATH_MAX];

/* Our binary's path, as at start: /proc/self/exe follows the file (renamed
 * away, it names the new place; replaced, it says " (deleted)"), and an
 * upgrade wants whatever binary is at the path now. */
static int exe_path(char *path, size_t len)
{
	static const char deleted[] = " (deleted)";
	ssize_t n = readlink("/proc/self/exe", path, len - 1);
	size_t dl = sizeof(deleted) - 1;

	if (n < 0)
		return -errno;
	path[n] = '\0';
	if ((size_t)n > dl && !strcmp(path + n - dl, deleted))
		path[n - dl] = '\0';
	return 0;
}

/* environ + SYSLOGRX_HANDOVER=fd, built before fork (no malloc after it). */
static char **child_env(int memfd, char *var, size_t len)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], HANDOVER_ENV "=", sizeof(HANDOVER_ENV)))
			env[k++] = environ[i];
	snprintf(var, len, "%s=%d", HANDOVER_ENV, memfd);
	env[k] = var;
	return env;
}

static void say_status(pid_t pid, int status)
{
	if (WIFEXITED(status))
		pr_warn("upgrade: the new process %d exited with status %d before it was ready; "
			"this one goes on\n",
			pid, WEXITSTATUS(status));
	else
		pr_warn("upgrade: the new process %d died of signal %d before it was ready; "
			"this one goes on\n",
			pid, WTERMSIG(status));
}

/* 0 once the new process wrote "ready"; -errno (said why) otherwise, and it is
 * gone: reaped when ours, else its parent (the service manager) reaps it. */
static int wait_ready(pid_t pid, int fd, bool ours)
{
	uint64_t deadline = (mono_ns() / 1000000) + UPGRADE_READY_SECONDS * 1000ULL;
	char buf[16];
	int status;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, 50);

		if (n > 0) {
			ssize_t got = read(fd, buf, sizeof(buf) - 1);

			if (got > 0 && !strncmp(buf, "ready", 5))
				return 0;
			/* EOF: it exited (or closed the pipe) without a word. */
			if (!ours)
				pr_warn("upgrade: the new process %d exited before it was ready; "
					"this one goes on\n",
					pid);
			else if (waitpid(pid, &status, 0) == pid)
				say_status(pid, status);
			return -ECHILD;
		}
		if (n < 0 && errno != EINTR)
			return -errno;
		if (ours && waitpid(pid, &status, WNOHANG) == pid) {
			say_status(pid, status);
			return -ECHILD;
		}
		if ((mono_ns() / 1000000) >= deadline) {
			pr_warn("upgrade: the new process %d did not say ready within %d s: killed; "
				"this one goes on\n",
				pid, UPGRADE_READY_SECONDS);
			kill(pid, SIGKILL);
			if (ours)
				waitpid(pid, &status, 0);
			return -ETIMEDOUT;
		}
	}
}

/*
 * fork(), or (sibling) a child of our parent: clone(CLONE_PARENT). Under
 * systemd the new process is then the service manager's child, as if it had
 * started it, and MAINPID= names a child of the manager. systemd 252 calls a
 * main process that is not its child "alien" (service_set_main_pid(), "not
 * our child"), decided once, when MAINPID= is handled, and never again: at
 * stop, unit_kill_context() sends SIGTERM but does not wait for an alien main
 * process, and service_enter_signal() goes on to SIGKILL at once. A forked
 * new process was killed so at every stop after an upgrade (Result=signal,
 * no summary). The child only clears CLOEXEC flags and execs (no malloc,
 * no lock: the raw system call is as safe as fork for that).
 */
static pid_t spawn(bool sibling)
{
	if (!sibling)
		return fork();
#if defined(__s390__) || defined(__s390x__)
	return syscall(SYS_clone, 0, CLONE_PARENT | SIGCHLD, 0, 0, 0); /* stack first */
#else
	return syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
#endif
}

int upgrade_init(void)
{
	return exe_path(start_path, sizeof(start_path));
}

static int start_new(struct receiver *r, char *const argv[], int ledger_fd, bool sibling,
		     pid_t *child);

int receiver_upgrade(struct receiver *r, char *const argv[], pid_t *child)
{
	/* Under systemd, a sibling: the service manager's child (spawn). */
	int err = start_new(r, argv, -1, sd_notify_enabled(), child);

	if (!err)
		shell_set_handed_over(&r->shell, true);
	return err;
}

int upgrade_spawn(struct receiver *r, char *const argv[], int ledger_fd, pid_t *child)
{
	return start_new(r, argv, ledger_fd, false, child);
}

static int start_new(struct receiver *r, char *const argv[], int ledger_fd, bool sibling,
		     pid_t *child)
{
	char path[PATH_MAX], var[64];
	struct handover h;
	int ready[2] = { -1, -1 }, memfd = -1, err;
	char **env = NULL;
	pid_t pid;

	handover_init(&h);
	if (!start_path[0]) {
		pr_warn("upgrade: our path was not known at start (/proc/self/exe); this one "
			"goes on\n");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s", start_path);
	if (pipe2(ready, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	h.ready_fd = ready[1];
	h.ledger_fd = ledger_fd;
	err = build(r, &h);
	if (err) {
		pr_warn("upgrade: describing the sockets and BPF objects: %s; this one goes on\n",
			strerror(-err));
		goto out;
	}
	memfd = handover_to_memfd(&h);
	env = memfd >= 0 ? child_env(memfd, var, sizeof(var)) : NULL;
	if (memfd < 0 || !env) {
		err = memfd < 0 ? memfd : -ENOMEM;
		pr_warn("upgrade: %s; this one goes on\n", strerror(-err));
		goto out;
	}
	pid = spawn(sibling);
	if (pid < 0) {
		err = -errno;
		pr_warn("upgrade: %s: %s; this one goes on\n", sibling ? "clone" : "fork",
			strerror(-err));
		goto out;
	}
	if (pid == 0) {
		/* Only what is listed crosses the exec: everything else of ours
		 * (the output file, epoll, the ready pipe's read end) is CLOEXEC. */
		if (handover_inherit(&h) == 0)
			execve(path, argv, env);
		_exit(127);
	}
	close(ready[1]);
	ready[1] = -1;
	pr_info("upgrade: started %s as pid %d\n", path, pid);
	err = wait_ready(pid, ready[0], !sibling);
	if (!err)
		*child = pid;
out:
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	if (memfd >= 0)
		close(memfd);
	free(env);
	handover_free(&h);
	return err;
}

/* The map/link fds were duplicated by libbpf (and the tracer): ours go. */
static void close_bpf_fds(struct handover *h)
{
	for (unsigned int i = 0; i < h->n; i++)
		if (h->items[i].kind == HANDOVER_MAP || h->items[i].kind == HANDOVER_LINK)
			close(h->items[i].fd);
}

/* systemd's fd store says what each fd is, not where it stands: the
 * balancer's map does (slot k holds cookie c); the rest are spares. A socket
 * connected away by a shrink (then closed by us, but still stored) is no
 * member of the group any more: left out. */
static int slots_from_map(struct receiver *r, const struct config *cfg, struct handover *h)
{
	unsigned int live = 0, k = 0;

	h->threads = cfg->threads;
	if (cfg->balance != BALANCE_HASH) {
		r->intake.balancer = balancer_adopt(h);
		if (!r->intake.balancer)
			return -errno;
		live = balancer_get_live(r->intake.balancer);
	}
	for (unsigned int i = 0; i < h->n; i++) {
		struct handover_item *it = &h->items[i];
		struct sockaddr_storage peer;
		socklen_t len = sizeof(peer);

		if (it->kind != HANDOVER_SOCK || it->listener)
			continue; /* another listener's: handover_listeners.c */
		it->slot = -1;
		if (!getpeername(it->fd, (struct sockaddr *)&peer, &len)) {
			close(it->fd);
			h->items[i--] = h->items[--h->n];
			continue;
		}
		if (!r->intake.balancer) {
			it->slot = k++; /* hash: every socket takes traffic */
			continue;
		}
		for (unsigned int s = 0; s < live; s++) {
			uint64_t cookie;

			if (!balancer_slot_cookie(r->intake.balancer, s, &cookie) &&
			    cookie == it->id)
				it->slot = s;
		}
	}
	return 0;
}

/* Whether the hand-over has maps or links of owner ("balancer", "tracer"). */
static bool handed(const struct handover *h, const char *owner)
{
	for (unsigned int i = 0; i < h->n; i++)
		if (h->items[i].kind != HANDOVER_SOCK && !strcmp(h->items[i].owner, owner))
			return true;
	return false;
}

/* Listener 0's sockets as the group: the slots in order first (group
 * socket k = slot k), then the spares; *live: how many slots. */
static int adopt_group(struct receiver *r, const struct handover *h, unsigned int *out_live)
{
	unsigned int live = 0, n = 0;
	int *fds, err;

	fds = calloc(h->n + 1, sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	/* Listener 0's: the other listeners' slots start at HANDOVER_LISTENER_SLOTS. */
	for (unsigned int i = 0; i < h->n; i++)
		if (h->items[i].kind == HANDOVER_SOCK && h->items[i].slot >= 0 &&
		    h->items[i].slot < HANDOVER_LISTENER_SLOTS)
			live++;
	for (unsigned int k = 0; k < live; k++)
		for (unsigned int i = 0; i < h->n; i++)
			if (h->items[i].kind == HANDOVER_SOCK && h->items[i].slot == (int)k)
				fds[n++] = h->items[i].fd;
	if (n != live) {
		pr_warn("upgrade: the hand-over's slots are not 0..%u\n", live - 1);
		free(fds);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < h->n; i++)
		if (h->items[i].kind == HANDOVER_SOCK && h->items[i].slot < 0 &&
		    !h->items[i].listener)
			fds[n++] = h->items[i].fd;
	err = socket_group_adopt(&r->intake.group, fds, n);
	free(fds);
	*out_live = live;
	return err;
}

/* The balancer handed over with the group: the kernel's hash, classic BPF
 * (no maps), or the eBPF program with a map that holds exactly our sockets. */
static int adopt_balancer(struct receiver *r, const struct config *cfg, const struct handover *h,
			  unsigned int live)
{
	uint64_t *cookies = NULL;
	int err;

	if (cfg->balance == BALANCE_HASH) {
		r->intake.balance_runs = "kernel hash";
		snprintf(r->intake.balance_why, sizeof(r->intake.balance_why), "--balance hash");
	} else if (cfg->balance == BALANCE_RANDOM && !h->from_fdstore && !handed(h, "balancer")) {
		/* Classic BPF handed over: no maps, the program is the group's.
		 * The sockets came in join order (build): index k is group
		 * socket k. Attached again for the same count: no capability. */
		err = intake_use_cbpf(&r->intake,
				      "handed over without eBPF maps: the program stays "
				      "with the group");
		if (err)
			return err;
	} else {
		r->intake.balance_runs = "eBPF";
		snprintf(r->intake.balance_why, sizeof(r->intake.balance_why),
			 "handed over: the program and its map stay with the group");
		if (!r->intake.balancer)
			r->intake.balancer = balancer_adopt(h);
		if (!r->intake.balancer)
			return -errno;
		cookies = calloc(live, sizeof(*cookies));
		if (!cookies)
			return -ENOMEM;
		for (unsigned int k = 0; k < live; k++)
			cookies[k] = r->intake.group.socks[k].cookie;
		/* The map in selection holds exactly the sockets we were given. */
		err = balancer_verify_live(r->intake.balancer, cookies, live);
		free(cookies);
		if (!err && balancer_get_live(r->intake.balancer) != live) {
			pr_warn("upgrade: the program selects among %u sockets, the hand-over "
				"says %u\n",
				balancer_get_live(r->intake.balancer), live);
			err = -EXDEV;
		}
		if (err)
			return err;
	}
	return 0;
}

int receiver_adopt(struct receiver *r, struct config *cfg, struct handover *h)
{
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char want[80];
	unsigned int live = 0;
	int err;

	memset(r, 0, sizeof(*r));
	r->cfg = cfg;
	r->intake.cfg = cfg;
	shell_init(&r->shell);
	pipeline_init(&r->pipeline, cfg);
	if (parse_host_port(cfg->listen, &addr, &addrlen)) {
		pr_warn("--listen %s: not an ADDR:PORT\n", cfg->listen);
		return -EINVAL;
	}
	format_host_port((struct sockaddr *)&addr, want, sizeof(want));
	err = shell_check_user_paths(&r->shell, cfg, NULL);
	if (err)
		return err;
	if (h->from_fdstore) {
		err = slots_from_map(r, cfg, h);
		if (err)
			return err;
	}
	err = adopt_group(r, h, &live);
	if (err)
		return err;
	if (sockaddr_port(&addr) && strcmp(want, r->intake.group.listen)) {
		pr_warn("upgrade: --listen %s, but the sockets handed over are bound to %s\n", want,
			r->intake.group.listen);
		return -EINVAL;
	}
	intake_first_listener(&r->intake, cfg->listeners[0].name);
	if (h->threads > live)
		h->threads = live;
	err = receiver_set_slots(r, live, h->threads);
	if (err)
		return err;
	cfg->sockets = live;
	cfg->threads = h->threads;

	if (cfg->trace && !handed(h, "tracer")) {
		/* The old process had no tracer for want of privilege. */
		r->intake.drops_meminfo = true;
	} else if (cfg->trace) {
		r->intake.tracer = tracer_adopt(h);
		if (!r->intake.tracer)
			return -errno;
	}
	err = adopt_balancer(r, cfg, h, live);
	if (err)
		return err;
	err = handover_listeners_adopt(r, cfg, h);
	if (!err)
		err = fair_share_run_adopt(&r->fair_share, cfg, intake_group(&r->intake),
					   intake_listeners(&r->intake), h);
	if (err)
		return err;
	close_bpf_fds(h);
	/* Ours to say, once open (or, with a disk buffer, to let DIR go). */
	shell_expect_ready(&r->shell, h->ready_fd);
	h->ready_fd = -1;
	err = receiver_open_rest(r);
	if (err)
		return err;
	/* steered counts from here on are ours. */
	intake_credit_steered(&r->intake);
	memset(r->intake.sock_steered, 0, r->intake.steered_cap * sizeof(*r->intake.sock_steered));
	return 0;
}

static int store_one(const struct handover_item *it, bool add)
{
	char state[160], name[HANDOVER_NAME_LEN + 48];

	handover_fdname(it, name, sizeof(name));
	/* FDPOLL=0: systemd polls stored fds and closes one that reports an
	 * error; BPF map and link fds do (EPOLLERR: they do not poll), so
	 * systemd 252 dropped them at once and a restart found sockets only. */
	snprintf(state, sizeof(state), "%s\nFDNAME=%s",
		 add ? "FDSTORE=1\nFDPOLL=0" : "FDSTOREREMOVE=1", name);
	return sd_notify_fd(state, add ? it->fd : -1);
}

int upgrade_fdstore_put(struct receiver *r)
{
	struct handover h;
	unsigned int stored = 0;
	int err;

	if (!sd_notify_enabled())
		return 0;
	if (r->intake.cbpf) {
		/* The store gives fds back by name, not in the group's join order,
		 * which classic BPF picks by: a restart binds anew. */
		pr_info("classic BPF: sockets not put in systemd's fd store; a restart binds "
			"them anew\n");
		return sd_notify_fd("READY=1", -1);
	}
	handover_init(&h);
	err = build(r, &h);
	for (; stored < h.n && !err; stored++) {
		/* A start from the store loads a filter of its own (and lifts
		 * the old one): the fair-share maps are not kept there. */
		if (fair_share_run_owner(h.items[stored].owner))
			continue;
		err = store_one(&h.items[stored], true);
	}
	if (err) {
		/* Half a store would make the next start fail (sockets without
		 * their maps): take back what went in; a restart then rebinds. */
		pr_warn("systemd fd store (FDSTORE=1 to $NOTIFY_SOCKET): %s; a restart will not "
			"keep the sockets\n",
			strerror(-err));
		for (unsigned int i = 0; i + 1 < stored; i++)
			store_one(&h.items[i], false);
	} else {
		/* systemd holds them now: at exit the program stays on the group. */
		shell_set_handed_over(&r->shell, true);
	}
	handover_free(&h);
	/* READY=1 in any case: a Type=notify start must not hang on the store. */
	return sd_notify_fd("READY=1", -1) ?: err;
}

void upgrade_fdstore_socket(const struct group_socket *s, bool add)
{
	struct handover_item it = { .kind = HANDOVER_SOCK, .fd = s->fd, .id = s->cookie };
	int err;

	if (!sd_notify_enabled())
		return;
	err = store_one(&it, add);
	if (err)
		pr_warn("systemd fd store: socket cookie %llu: %s\n", (unsigned long long)s->cookie,
			strerror(-err));
}

void upgrade_notify_mainpid(pid_t pid)
{
	char state[32];
	int err;

	if (!sd_notify_enabled())
		return;
	snprintf(state, sizeof(state), "MAINPID=%d", (int)pid);
	err = sd_notify_fd(state, -1);
	/* Not gone before systemd took it: had it handled our exit first, its
	 * main process would have ended and the service stopped. */
	if (!err)
		err = sd_notify_barrier(UPGRADE_MAINPID_MS);
	if (err)
		pr_warn("systemd: %s: %s\n", state, strerror(-err));
}
