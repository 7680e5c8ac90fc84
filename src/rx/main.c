// SPDX-License-Identifier: MIT
/*
 * syslogrx: the front end. Parse flags, open the receiver, drop privileges,
 * run until --duration or a signal, stop without losing what was accepted,
 * write the summary.
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/log.h"
#include "net/libbpf_log.h"
#include "rx/receiver.h"
#include "rx/resize.h"
#include "rx/summary.h"
#include "rx/supervisor.h"
#include "rx/upgrade.h"
#include <sys/mman.h>

static volatile sig_atomic_t stop_signals;
static volatile sig_atomic_t hup;
static volatile sig_atomic_t usr2;
static char **main_argv;
static pid_t successor;		/* the process we handed over to (USR2) */

static void on_usr2(int sig)
{
	usr2 = 1;
}

static void on_stop(int sig)
{
	stop_signals++;
}

static void on_hup(int sig)
{
	hup = 1;
}

static int install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	sa.sa_handler = on_hup;
	if (sigaction(SIGHUP, &sa, NULL))
		return -errno;
	sa.sa_handler = on_usr2;
	if (sigaction(SIGUSR2, &sa, NULL))
		return -errno;
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL))	/* a closed stdout is an error, not a death */
		return -errno;
	return 0;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* SIGHUP with --resize-file: apply its sockets/threads live; the summary's
 * config follows what is live. */
static void resize_from_file(struct receiver *r, struct config *cfg)
{
	struct resize_request req = { .sockets = r->live, .threads = r->threads };
	char err[256];

	if (resize_file_read(cfg->resize_file, &req, err, sizeof(err))) {
		pr_warn("--resize-file %s: %s; nothing changed\n", cfg->resize_file, err);
		return;
	}
	if (receiver_resize(r, &req) == 0)
		fprintf(stderr, "syslogrx: resized to %u sockets, %u threads\n", r->live,
			r->threads);
	else
		fprintf(stderr, "syslogrx: resize failed, %u sockets, %u threads\n", r->live,
			r->threads);
	cfg->sockets = r->live;
	cfg->threads = r->threads;
}

/* Sleeps until --duration, a signal, or a worker dying; prints stats lines. */
static void run(struct receiver *r, struct config *cfg)
{
	double start = mono_s(), next_stats = start + cfg->stats_interval;
	struct stats_line sl = {};
	bool stats = cfg->stats_interval > 0 && !stats_line_init(&sl, r->group.n);

	while (!stop_signals) {
		double now = mono_s();
		struct timespec tick = { 0, 20 * 1000000L };

		if (cfg->duration && now - start >= cfg->duration)
			break;
		if (hup) {
			hup = 0;
			r->reopen = 1;
			if (cfg->resize_file[0] && r->supervised) {
				pr_warn("SIGHUP: a supervised receiver does not resize (its "
					"supervisor holds the sockets); nothing changed\n");
			} else if (cfg->resize_file[0]) {
				resize_from_file(r, cfg);
				if (stats) {	/* the sockets changed: new columns */
					stats_line_free(&sl);
					stats = !stats_line_init(&sl, r->group.n);
				}
			}
		}
		if (usr2 && r->supervised) {
			usr2 = 0;
			pr_warn("SIGUSR2: a supervised receiver is not upgraded in place (its "
				"supervisor holds the sockets); ignored\n");
		}
		if (usr2) {
			usr2 = 0;
			if (receiver_upgrade(r, main_argv, &successor) == 0) {
				fprintf(stderr, "syslogrx: pid %d handed over to pid %d; draining its "
					"window\n", (int)getpid(), (int)successor);
				/* Under systemd the new process is the service now. */
				upgrade_notify_mainpid(successor);
				break;
			}
			fprintf(stderr, "syslogrx: upgrade failed; pid %d goes on\n", (int)getpid());
		}
		if (stats && now >= next_stats) {
			stats_line_print(&sl, r, stderr);
			next_stats += cfg->stats_interval;
		}
		nanosleep(&tick, NULL);
	}
	if (stats)
		stats_line_free(&sl);
}

/* A second signal while stopping: leave now, and say what is left behind. */
static void *force_watch(void *arg)
{
	struct receiver *r = arg;

	while (stop_signals < 2 && !r->force) {
		struct timespec tick = { 0, 20 * 1000000L };

		nanosleep(&tick, NULL);
	}
	if (stop_signals >= 2) {
		pr_warn("second signal: exiting now, %llu received message(s) not written\n",
			(unsigned long long)receiver_in_flight(r));
		_exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct receiver r_own;
	struct receiver *r = &r_own;
	struct config cfg;
	struct handover h;
	char err_msg[256], summary[PATH_MAX + 16];
	pthread_t watcher;
	const char *summary_path = cfg.summary;
	int err, ret = 1, adopted;

	log_prog = "syslogrx";
	argp_err_exit_status = 2;
	if (config_parse(&cfg, argc, argv, 0, err_msg, sizeof(err_msg))) {
		fprintf(stderr, "syslogrx: %s\n", err_msg);
		return 2;
	}
	if (cfg.verbose)
		log_level = LOG_LEVEL_DEBUG;
	log_setup_libbpf();
	if (install_signals()) {
		pr_warn("sigaction: %s\n", strerror(errno));
		return 1;
	}

	main_argv = argv;
	if (upgrade_init())
		pr_warn("/proc/self/exe: %s (kill -USR2 will not upgrade)\n", strerror(errno));
	if (cfg.supervise)
		return supervise(&cfg, argc, argv);
	/* Started by kill -USR2 of an older syslogrx: its sockets, maps and links. */
	adopted = handover_receive(&h);
	if (!adopted)	/* or by systemd, from its fd store */
		adopted = handover_from_listen_fds(&h);
	if (adopted < 0)
		return 1;
	if (adopted && h.ledger_fd >= 0) {
		/* Run by a supervisor: our receiver state lives where it can read
		 * it after we are gone (what a crash lost, by number). */
		r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, h.ledger_fd, 0);
		if (r == MAP_FAILED) {
			pr_warn("supervised: mapping the shared state: %s\n", strerror(errno));
			return 1;
		}
		close(h.ledger_fd);
	}
	err = adopted ? receiver_adopt(r, &cfg, &h) : receiver_open(r, &cfg);
	if (err) {
		/* Bad settings are usage errors (exit 2); the rest are runtime. */
		ret = (err == -EINVAL || err == -EADDRINUSE || err == -EADDRNOTAVAIL) ? 2 : 1;
		goto cleanup;
	}
	pr_info("listening on %s: %u sockets, %u threads, balance %s\n", r->group.listen,
		r->group.n, cfg.threads, balance_policy_name(cfg.balance));
	fprintf(stderr, "syslogrx: ready on %s\n", r->group.listen);

	err = receiver_start(r);
	if (err)
		goto cleanup;
	if (adopted) {
		const char *how = h.ledger_fd >= 0 ? "supervised" :
				  h.from_fdstore ? "fd store" : "upgrade";

		r->supervised = h.ledger_fd >= 0;
		upgrade_say_ready(&h);
		handover_free(&h);
		fprintf(stderr, "syslogrx: pid %d took over %s (%s): %u sockets, %u threads\n",
			(int)getpid(), r->group.listen, how, r->live, r->threads);
	}
	if (!r->supervised)
		upgrade_fdstore_put(r);
	run(r, &cfg);
	if (successor) {
		/* The new process reads the queues now: stop reading without the
		 * final drain; what is in our window still goes to the output. */
		receiver_workers_pause(r);
		snprintf(summary, sizeof(summary), "%s.%d", cfg.summary, (int)getpid());
		summary_path = summary;	/* the new process writes PATH */
	}

	if (pthread_create(&watcher, NULL, force_watch, r) == 0)
		pthread_detach(watcher);
	err = receiver_stop(r);
	r->force = 1;	/* ends the watcher */
	ret = err ? 1 : 0;
	if (summary_check_drops(r))
		ret = ret ? ret : 0;	/* reported above; the run itself succeeded */
	if (cfg.summary[0] && summary_write(r, summary_path))
		ret = 1;
	if (successor)
		fprintf(stderr, "syslogrx: pid %d done after the hand-over\n", (int)getpid());
cleanup:
	receiver_close(r);
	return ret;
}
