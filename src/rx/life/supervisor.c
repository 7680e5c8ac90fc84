// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "common/signals.h"
#include "common/clock.h"
#include "common/caps.h"
#include "common/json_writer.h"
#include "common/log.h"
#include "common/no_follow.h"
#include "common/sd_notify.h"
#include "net/http_metrics.h"
#include "rx/life/receiver.h"
#include "rx/life/supervisor.h"
#include "rx/life/upgrade.h"

#define MAX_CHILDREN 1024 /* kept for the summary; older ones are summed only */

struct child_rec {
	pid_t pid;
	int status; /* as waitpid gives it */
	uint64_t taken, written, discarded, lost;
	uint64_t disk_written, disk_replayed; /* --disk-buffer: put on disk, read from it */
	double replace_ms; /* death noticed -> successor ready; < 0: not replaced */
};

/* The child's state, shared: its struct receiver lives in this mapping. */
/* Waits for the child to exit, serving the signals meanwhile: SIGHUP passed
 * on (logrotate), SIGUSR2 an upgrade (the child stops the usual way, one
 * from the binary at our path follows), each SIGTERM/SIGINT passed on once
 * (a second one makes the child leave at once). A signal that lands between
 * serving the flags and sleeping is not lost: the sleep is a poll of the
 * child's pidfd with a short timeout, as every main loop here polls its
 * flags. 0, or -errno if waiting failed. */
static int wait_for_child(pid_t child, int *status, bool *upgrading,
			  struct supervisor_ledger *ledger)
{
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	sig_atomic_t stops_passed = 0;
	int err = 0;

	for (;;) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		pid_t w = waitpid(child, status, WNOHANG);

		if (w == child)
			break;
		if (w < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		if (hup_requested) {
			hup_requested = 0;
			kill(child, SIGHUP);
		}
		if (usr2_requested && !*upgrading) {
			usr2_requested = 0;
			*upgrading = true;
			pr_note("supervisor upgrading: pid %d stops, a new receiver "
				"follows\n",
				(int)child);
			kill(child, SIGTERM);
		}
		while (stops_passed < stop_requested) {
			/* No next child: the queues are this one's to read. */
			__atomic_store_n(&ledger->queues_kept, false, __ATOMIC_RELEASE);
			stops_passed++;
			kill(child, SIGTERM);
		}
		/* Without a pidfd (kernels before 5.3) the poll is a plain sleep. */
		poll(&p, pidfd >= 0 ? 1 : 0, 200);
	}
	if (pidfd >= 0)
		close(pidfd);
	return err;
}

static struct supervisor_ledger *ledger_map(int fd, size_t *len)
{
	size_t pg = getpagesize();
	void *p;

	*len = (sizeof(struct supervisor_ledger) + pg - 1) / pg * pg;
	if (ftruncate(fd, *len))
		return NULL;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The child's pipeline's figures, in the memory we share. */
static struct pipeline_ledger ledger_of(const struct receiver *shared)
{
	struct pipeline_ledger l;

	pipeline_ledger_read(&shared->pipeline, &l);
	return l;
}

/* Datagrams taken from the group's sockets so far, counted by the kernel (the
 * tracer's sock_recv_length): exact even for a child killed with a batch in
 * hand. Without the tracer, the child's own count (shared), which misses a
 * batch taken by a recvmmsg the kill interrupts on its way back. */
static uint64_t group_reads(struct receiver *held, const struct receiver *shared)
{
	const struct socket_group *g = intake_group(&held->intake);
	uint64_t sum = 0, n;

	if (!intake_listener_tracer(&held->intake, 0))
		return ledger_of(shared).taken;
	for (unsigned int i = 0; i < g->n; i++)
		if (!tracer_socket_reads(intake_listener_tracer(&held->intake,
								g->socks[i].listener),
					 g->socks[i].cookie, &n))
			sum += n;
	return sum;
}

/* a - b, or 0: no figure of the ledger can wrap. */
static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * What a crashed child lost: what it took from the kernel and neither
 * wrote nor discarded from its window, nor put on the disk buffer (nor
 * counted dropped there, the buffer full). What it wrote from the disk (an
 * earlier child's records, or its own) is not of its window: its replayed
 * messages are taken out of what it wrote. What reached the disk is kept
 * for the next child, never lost, whatever the mode: with a reliable buffer
 * every message goes there first, so only a batch still in a worker's hand
 * or in the writer's queue is lost.
 */
static uint64_t child_lost(const struct child_rec *c, const struct receiver *shared)
{
	uint64_t dropped = ledger_of(shared).disk_dropped;
	uint64_t from_window = minus(c->written + c->discarded, c->disk_replayed);

	return minus(minus(minus(c->taken, from_window), c->disk_written), dropped);
}

static void write_summary(const char *path, const struct child_rec *c, unsigned int n,
			  uint64_t lost_total, unsigned int restarts, unsigned int upgrades)
{
	struct json_writer w;
	FILE *f = fopen_private(path);

	if (!f) {
		pr_warn("--summary %s: %s\n", path, no_follow_strerror(errno));
		return;
	}
	jw_init(&w, f, true);
	jw_object_begin(&w, NULL);
	jw_u64(&w, "restarts", restarts);
	jw_u64(&w, "upgrades", upgrades);
	jw_u64(&w, "window_lost", lost_total);
	jw_array_begin(&w, "children");
	for (unsigned int i = 0; i < n; i++) {
		jw_object_begin(&w, NULL);
		jw_i64(&w, "pid", c[i].pid);
		if (WIFSIGNALED(c[i].status))
			jw_i64(&w, "signal", WTERMSIG(c[i].status));
		else
			jw_null(&w, "signal");
		if (WIFEXITED(c[i].status))
			jw_i64(&w, "exit_status", WEXITSTATUS(c[i].status));
		else
			jw_null(&w, "exit_status");
		jw_u64(&w, "taken", c[i].taken);
		jw_u64(&w, "written", c[i].written);
		jw_u64(&w, "discarded", c[i].discarded);
		jw_u64(&w, "window_lost", c[i].lost);
		jw_u64(&w, "disk_buffer_written", c[i].disk_written);
		jw_u64(&w, "disk_buffer_replayed", c[i].disk_replayed);
		if (c[i].replace_ms >= 0)
			jw_double(&w, "replaced_ms", c[i].replace_ms, 1);
		else
			jw_null(&w, "replaced_ms");
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_object_end(&w);
	jw_finish(&w);
	if (fclose(f))
		pr_warn("--summary %s: %s\n", path, strerror(errno));
}

/* A child stopped for an upgrade wrote --summary PATH: moved to PATH.PID,
 * so that the next child's does not overwrite it. */
static void keep_child_summary(const struct config *cfg, pid_t pid)
{
	char path[PATH_MAX + 16];

	if (!cfg->summary[0] || !strcmp(cfg->summary, "-"))
		return;
	snprintf(path, sizeof(path), "%s.%d", cfg->summary, (int)pid);
	if (rename(cfg->summary, path))
		pr_warn("--summary %s: keeping pid %d's as %s: %s\n", cfg->summary, (int)pid, path,
			strerror(errno));
}

/* --metrics or --health: bound here and held like the sockets; each child
 * serves it in turn (scrapes wait in its queue while a child is replaced).
 * 0, or the exit status. */
static int hold_endpoint(const char *flag, const char *addr, struct http_metrics **out, int *fd)
{
	if (!addr[0])
		return 0;
	*out = http_metrics_open(flag, addr);
	if (!*out)
		return errno == EINVAL || errno == EADDRINUSE ? 2 : 1;
	*fd = http_metrics_fd(*out);
	return 0;
}

/* Binds what every child inherits (the sockets, --metrics, --health), then
 * drops privileges. 0, or the exit status. */
static int hold(struct receiver *held, const struct config *cfg, struct http_metrics **metrics,
		struct http_metrics **health)
{
	int err = receiver_acquire(held, cfg), metrics_fd = -1, health_fd = -1;

	if (err)
		return (err == -EINVAL || err == -EADDRINUSE || err == -EADDRNOTAVAIL) ? 2 : 1;
	err = hold_endpoint("--metrics", cfg->metrics, metrics, &metrics_fd);
	if (!err)
		err = hold_endpoint("--health", cfg->health, health, &health_fd);
	shell_set_endpoints(&held->shell, metrics_fd, health_fd);
	if (err)
		return err;
	/* The sockets are bound and held: become --user now (or drop every
	 * capability), before any child. A child cannot switch user any more
	 * than it needs to: it inherits the user, and no capability. */
	return shell_drop_privileges(&held->shell, cfg) ? 1 : 0;
}

/* What the child that exited took from the sockets, wrote, and put on the
 * disk buffer, read from the shared state it leaves behind. */
static void child_record(struct child_rec *c, pid_t child, int status, struct receiver *held,
			 const struct receiver *shared, uint64_t reads_before)
{
	struct pipeline_ledger l;

	c->pid = child;
	c->status = status;
	c->taken = intake_listener_tracer(&held->intake, 0) ?
			   minus(group_reads(held, shared), reads_before) :
			   group_reads(held, shared);
	l = ledger_of(shared);
	c->written = l.written;
	c->discarded = l.discarded;
	c->disk_written = l.disk_written;
	c->disk_replayed = l.disk_replayed;
	c->replace_ms = -1;
}

/* Not asked to stop: a crash. Its window and whatever it had formatted and
 * not yet written are gone; the kernel queues are not. */
static void child_crashed(const struct config *cfg, struct child_rec *c,
			  const struct receiver *shared)
{
	char kept[80] = "";

	c->lost = child_lost(c, shared);
	if (cfg->disk_buffer[0])
		snprintf(kept, sizeof(kept), "; the %llu it put on the disk buffer are kept",
			 (unsigned long long)c->disk_written);
	if (WIFSIGNALED(c->status))
		pr_warn("supervisor: receiver pid %d killed by signal %d: %llu message(s) "
			"in its window lost%s\n",
			(int)c->pid, WTERMSIG(c->status), (unsigned long long)c->lost, kept);
	else
		pr_warn("supervisor: receiver pid %d exited with status %d: %llu "
			"message(s) in its window lost%s\n",
			(int)c->pid, WEXITSTATUS(c->status), (unsigned long long)c->lost, kept);
}

/* A receiver runs: the first tells systemd (Type=notify) that the service
 * is up; a later one replaced the last of recs, whose death was noticed at
 * died (monotonic ms). */
static void say_started(struct child_rec *recs, unsigned int nrec, pid_t child, double died)
{
	if (!nrec && sd_notify_enabled())
		sd_notify_fd("READY=1", -1); /* Type=notify: the first one is up */
	if (nrec) {
		recs[nrec - 1].replace_ms = (mono_ns() / 1e6) - died;
		pr_note("supervisor replaced pid %d by pid %d in %.1f ms\n",
			(int)recs[nrec - 1].pid, (int)child, recs[nrec - 1].replace_ms);
	}
	pr_note("supervisor started receiver pid %d\n", (int)child);
}

int supervise(const struct config *cfg, int argc, char **argv)
{
	static struct receiver held;
	struct http_metrics *metrics = NULL, *health = NULL;
	struct child_rec *recs = calloc(MAX_CHILDREN, sizeof(*recs));
	char **child_argv = calloc(argc + 1, sizeof(*child_argv));
	unsigned int nrec = 0, restarts = 0, upgrades = 0, failed = 0;
	bool upgrading = false;
	uint64_t lost_total = 0;
	struct supervisor_ledger *ledger;
	struct receiver *shared;
	struct child_rec *c;
	int ledger_fd, k = 0, ret = 1, status, err;
	size_t len;
	pid_t child = 0;

	pthread_setname_np(pthread_self(), "supervisor"); /* its children exec: "syslogrx" */
	if (!recs || !child_argv)
		return 1;
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--supervise"))
			child_argv[k++] = argv[i];
	/* main installed common/signals (no SA_RESTART: waitpid wakes on a
	 * signal): SIGTERM/SIGINT stop, SIGHUP and SIGUSR2 are served below. */

	ret = hold(&held, cfg, &metrics, &health);
	if (ret)
		goto out;
	ret = 1;
	ledger_fd = memfd_create("syslogrx-ledger", MFD_CLOEXEC);
	ledger = ledger_fd >= 0 ? ledger_map(ledger_fd, &len) : NULL;
	if (!ledger) {
		pr_warn("supervisor: shared memory for the receiver: %s\n", strerror(errno));
		goto out;
	}
	shared = &ledger->r;
	pr_note("supervisor pid %d holds %s: %u sockets\n", (int)getpid(),
		intake_group(&held.intake)->listen, intake_live(&held.intake));
	shell_say_identity(cfg);

	for (;;) {
		double died = (mono_ns() / 1e6);
		uint64_t reads_before = group_reads(&held, shared);

		memset(shared, 0, sizeof(*shared));
		ledger->queues_kept = !stop_requested;
		err = upgrade_spawn(&held, child_argv, ledger_fd, &child);
		if (err) {
			if (++failed >= SUPERVISE_MAX_FAILED_STARTS || stop_requested) {
				pr_warn("supervisor: %u receivers in a row did not start; giving up\n",
					failed);
				goto out;
			}
			continue;
		}
		failed = 0;
		say_started(recs, nrec, child, died);
		if (wait_for_child(child, &status, &upgrading, ledger))
			goto out;
		if (nrec < MAX_CHILDREN)
			nrec++;
		c = &recs[nrec - 1];
		child_record(c, child, status, &held, shared, reads_before);
		if (stop_requested) {
			ret = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
			break;
		}
		if (upgrading && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			/* Its summary stays beside the next one's, as in an upgrade. */
			keep_child_summary(cfg, child);
			upgrading = false;
			upgrades++;
			continue;
		}
		upgrading = false;
		/* --duration is the run's: the child's clean exit at its end ends
		 * the supervisor too, not a restart for another --duration. */
		if (cfg->duration && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			pr_note("supervisor: receiver pid %d ran its --duration; stopping\n",
				(int)child);
			ret = 0;
			break;
		}
		child_crashed(cfg, c, shared);
		lost_total += c->lost;
		restarts++;
	}
out:
	if (cfg->summary[0] && nrec) {
		char path[PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s.supervisor", cfg->summary);
		write_summary(path, recs, nrec, lost_total, restarts, upgrades);
	}
	/* The last child is gone: nobody reads the sockets any more. */
	shell_set_handed_over(&held.shell, false);
	receiver_close(&held);
	http_metrics_close(metrics);
	http_metrics_close(health);
	free(recs);
	free(child_argv);
	return ret;
}
