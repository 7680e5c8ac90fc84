// SPDX-License-Identifier: MIT
/*
 * syslogrx: the front end. Parse flags, open the receiver (or take over the
 * sockets and BPF objects of a previous process: kill -USR2, systemd's fd
 * store, a supervisor), drop privileges, run until --duration or a signal,
 * stop without losing what was accepted, write the summary.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include "common/clock.h"
#include "common/log.h"
#include "common/signals.h"
#include "net/http_metrics.h"
#include "net/libbpf_log.h"
#include "rx/report/advice_measure.h"
#include "rx/report/check_config.h"
#include "rx/report/health.h"
#include "rx/report/metrics.h"
#include "rx/report/sender_cache.h"
#include "rx/settings/preflight.h"
#include "rx/life/receiver.h"
#include "rx/settings/output_routes.h"
#include "rx/sink/sink.h"
#include "rx/life/resize.h"
#include "rx/report/stats_line.h"
#include "rx/life/fair_share_run.h"
#include "rx/report/summary.h"
#include "rx/life/supervisor.h"
#include "rx/life/upgrade.h"

static char **main_argv;
static int main_argc;
static pid_t successor;				 /* the process we handed over to (USR2) */
static struct http_metrics *metrics;		 /* --metrics, or NULL */
static struct http_metrics *health_http;	 /* --health, or NULL */
static struct health health;			 /* what /healthz and /readyz answer from */
static char listens[CONFIG_MAX_LISTENERS * 120]; /* listen_text's, for the log lines */

static void say_needs_restart(const char *flag, void *ctx)
{
	pr_warn("--%s changed in %s: needs a restart (systemctl restart keeps the sockets)\n", flag,
		(const char *)ctx);
}

/*
 * SIGHUP with --config: re-read the settings as at start (the command line
 * still wins over the file), apply sockets and threads live, and name every
 * other change, which only a restart applies. A bad file changes nothing.
 * The summary's config follows what is live.
 */
static void reload_config(struct receiver *r, struct config *cfg)
{
	static struct config fresh; /* large: the env-file's mapping, kafka options */
	struct resize_request req;
	char err[512];

	if (config_parse(&fresh, main_argc, main_argv, ARGP_NO_EXIT | ARGP_NO_ERRS | ARGP_NO_HELP,
			 err, sizeof(err))) {
		pr_warn("SIGHUP: %s; nothing changed\n", err);
		return;
	}
	config_restart_changes(cfg, &fresh, say_needs_restart, cfg->config_file);
	req = (struct resize_request){ .sockets = fresh.sockets,
				       .threads = fresh.threads,
				       .naive = fresh.shrink_naive };
	if (receiver_resize(r, &req) == 0)
		pr_note("resized to %u sockets, %u threads\n", intake_live(&r->intake),
			pipeline_threads(&r->pipeline));
	else
		pr_warn("resize failed, %u sockets, %u threads\n", intake_live(&r->intake),
			pipeline_threads(&r->pipeline));
	cfg->sockets = intake_live(&r->intake);
	cfg->threads = pipeline_threads(&r->pipeline);
	cfg->shrink_naive = fresh.shrink_naive;
}

/*
 * SIGHUP with --config under a supervisor: the output is reopened (logrotate);
 * sockets and threads are not resized (the supervisor holds the sockets): a
 * change to them, like any other, is named as needing a restart.
 */
static void recheck_supervised(const struct config *cfg)
{
	static struct config fresh;
	char err[512];

	if (config_parse(&fresh, main_argc, main_argv, ARGP_NO_EXIT | ARGP_NO_ERRS | ARGP_NO_HELP,
			 err, sizeof(err))) {
		pr_warn("SIGHUP: %s; nothing changed\n", err);
		return;
	}
	config_restart_changes(cfg, &fresh, say_needs_restart, (void *)cfg->config_file);
	if (fresh.sockets != cfg->sockets || fresh.threads != cfg->threads)
		pr_warn("--sockets/--threads changed in %s: a supervised receiver does not resize "
			"(its supervisor holds the sockets): needs a restart\n",
			cfg->config_file);
}

/* SIGUSR2: hand the sockets over to a new process; true once it took them. */
static bool upgrade(struct receiver *r)
{
	if (shell_supervised(&r->shell)) {
		pr_warn("SIGUSR2: a supervised receiver is not upgraded in place (its "
			"supervisor holds the sockets); ignored\n");
		return false;
	}
	/* The old process delivers what it holds before it exits: with the
	 * destination down it would wait for it, holding DIR and the window,
	 * while the new one waits for DIR. Refused now, nothing lost: the
	 * operator upgrades once the output delivers again. */
	if (receiver_output_down(r)) {
		pr_warn("SIGUSR2: %s cannot reach its destination: an upgrade now would wait for "
			"it to drain the window; ignored, pid %d goes on (upgrade once the output "
			"delivers again: syslogrx_output_up 1)\n",
			receiver_output_down(r), (int)getpid());
		return false;
	}
	if (receiver_upgrade(r, main_argv, &successor) == 0) {
		/* It serves the metrics socket now: scrapes go to it. */
		http_metrics_quiesce(metrics);
		http_metrics_quiesce(health_http);
		pr_note("pid %d handed over to pid %d; draining its window\n", (int)getpid(),
			(int)successor);
		/* Under systemd the new process is the service now. */
		upgrade_notify_mainpid(successor);
		return true;
	}
	pr_warn("upgrade failed; pid %d goes on\n", (int)getpid());
	return false;
}

/* Sleeps until --duration, a signal, a hand-over, or a worker dying; serves
 * SIGHUP (reopen, re-read --config) and SIGUSR2 (upgrade); prints stats lines. */
static void run(struct receiver *r, struct config *cfg)
{
	double start = mono_ns() / 1e9, next_stats = start + cfg->stats_interval;
	double next_senders = start + SENDER_CACHE_REFRESH_S;
	struct stats_line sl = {};
	bool stats = cfg->stats_interval > 0 && !stats_line_init(&sl, intake_group(&r->intake)->n);

	while (!stop_requested) {
		double now = mono_ns() / 1e9;
		struct timespec tick = { 0, 20 * 1000000L };

		if (cfg->duration && now - start >= cfg->duration)
			break;
		if (hup_requested) {
			hup_requested = 0;
			pipeline_reopen(&r->pipeline);
			if (cfg->config_file[0] && shell_supervised(&r->shell)) {
				recheck_supervised(cfg);
			} else if (cfg->config_file[0]) {
				reload_config(r, cfg);
				if (stats) { /* the sockets changed: new columns */
					stats_line_free(&sl);
					stats = !stats_line_init(&sl, intake_group(&r->intake)->n);
				}
			}
		}
		if (usr2_requested) {
			usr2_requested = 0;
			if (upgrade(r))
				break;
		}
		receiver_fair_share_tick(r, now);
		health_tick(&health);
		health_watchdog(&health);
		if (now >= next_senders) {
			sender_cache_refresh(r);
			next_senders = now + SENDER_CACHE_REFRESH_S;
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

/* Where it listens: "127.0.0.1:5514" with one listener; with several (or one
 * named), "NAME=ADDR:PORT" each, ", " between them. */
static const char *listen_text(const struct receiver *r, char *buf, size_t len)
{
	size_t used = 0;

	if (!r->cfg->listener_names || !intake_listeners(&r->intake))
		return intake_group(&r->intake)->listen;
	buf[0] = '\0';
	for (unsigned int k = 0; k < intake_listeners(&r->intake) && used < len; k++)
		used += snprintf(buf + used, len - used, "%s%s=%s", k ? ", " : "",
				 intake_listener_name(&r->intake, k),
				 intake_listener_listen(&r->intake, k));
	return buf;
}

/* Once the stop gave up, what it still has to do (save or count what the
 * output holds, write the summary) takes this long at most; past it the
 * process leaves at once (something blocks that no flag reaches). */
#define STOP_GRACE_S 5.0

static volatile int stop_done; /* receiver_stop returned: the watcher ends */

/*
 * While stopping: at --stop-timeout, or at a second signal, the stop gives
 * up delivering (pipeline_give_up): what the output holds is saved to the disk
 * buffer or counted given up, and the summary is written. If even that does
 * not end within STOP_GRACE_S, exit now and say what was in flight.
 */
static void *stop_watch(void *arg)
{
	struct receiver *r = arg;
	double now = mono_ns() / 1e9, deadline = now + r->cfg->stop_timeout, grace = 0;

	pthread_setname_np(pthread_self(), "stop watch");
	while (!flag_get(&stop_done)) {
		struct timespec tick = { 0, 20 * 1000000L };

		now = mono_ns() / 1e9;
		if (!grace && (stop_requested >= 2 || now >= deadline)) {
			if (stop_requested >= 2)
				pr_warn("second signal: giving up delivering; saving or counting what "
					"is not written\n");
			else
				pr_warn("stop: --stop-timeout %gs ran out: giving up delivering; saving "
					"or counting what is not written\n",
					r->cfg->stop_timeout);
			pipeline_give_up(&r->pipeline);
			grace = now + STOP_GRACE_S;
		}
		if (grace && now >= grace) {
			pr_warn("stop: still not done %gs after giving up: exiting now, %llu received "
				"message(s) not written\n",
				STOP_GRACE_S, (unsigned long long)receiver_in_flight(r));
			_exit(1);
		}
		nanosleep(&tick, NULL);
	}
	return NULL;
}

/*
 * --metrics or --health: bound before the capabilities go (a port below
 * 1024), served after; or handed over by the process before us (h), which
 * still serves it. Nothing asked: *out NULL (a socket handed over for it is
 * closed: turned off by this version's flags). -1 + errno, logged.
 */
static int open_listener(const char *flag, const char *arg, const struct handover *h,
			 struct http_metrics **out)
{
	int fd = h ? handover_find(h, HANDOVER_TCP, flag + 2, "-") : -ENOENT;

	*out = NULL;
	if (!arg[0]) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	*out = fd >= 0 ? http_metrics_adopt(flag, arg, fd) : http_metrics_open(flag, arg);
	return *out ? 0 : -1;
}

/* Run by a supervisor: our receiver state lives where it can read it after
 * we are gone (what a crash lost, by number). NULL + logged on failure. */
static struct supervisor_ledger *map_ledger(struct handover *h)
{
	struct supervisor_ledger *ledger;

	ledger = mmap(NULL, sizeof(*ledger), PROT_READ | PROT_WRITE, MAP_SHARED, h->ledger_fd, 0);
	if (ledger == MAP_FAILED) {
		pr_warn("supervised: mapping the shared state: %s\n", strerror(errno));
		return NULL;
	}
	close(h->ledger_fd);
	return ledger;
}

/* What scrapes show per sender, read here and every few seconds; then
 * --metrics and --health start serving. -1 on failure. */
static int serve_endpoints(struct receiver *r)
{
	if (sender_cache_open(r)) {
		pr_warn("out of memory\n");
		return -1;
	}
	sender_cache_refresh(r);
	health_init(&health, r);
	if (metrics) {
		http_metrics_set_health(metrics, health_answer, &health);
		if (metrics_start(metrics, r))
			return -1;
	}
	if (health_http) {
		http_metrics_set_health(health_http, health_answer, &health);
		if (http_metrics_start(health_http, NULL, NULL))
			return -1;
	}
	return 0;
}

/* Say where the messages go: a newcomer should not have to guess. And when
 * what spreads is not what a privileged start runs, say so, and why. */
static void say_ready(const struct receiver *r, const struct config *cfg)
{
	char where[PATH_MAX + 16], spread[384] = "";

	if (intake_cbpf(&r->intake))
		snprintf(spread, sizeof(spread), "; %s spread by %s (%s)",
			 balance_policy_name(cfg->balance), intake_balance_runs(&r->intake),
			 intake_balance_why(&r->intake));
	if (intake_drops_meminfo(&r->intake))
		snprintf(spread + strlen(spread), sizeof(spread) - strlen(spread),
			 "; drops from SO_MEMINFO (reasons need CAP_BPF and CAP_PERFMON)");
	if (output_of(cfg)->discards)
		pr_note("ready on %s, discarding messages (--output null)%s\n",
			listen_text(r, listens, sizeof(listens)), spread);
	else if (output_of(cfg)->records)
		pr_note("ready on %s, exporting OTLP log records to %s%s\n",
			listen_text(r, listens, sizeof(listens)),
			config_output_name(cfg, where, sizeof(where)), spread);
	else
		pr_note("ready on %s, writing %s lines to %s%s\n",
			listen_text(r, listens, sizeof(listens)), format_name(cfg->format),
			config_output_name(cfg, where, sizeof(where)), spread);
	for (unsigned int i = 0; i < cfg->nr_routes; i++)
		pr_note("listener %s's messages go to %s (--output %s=...)\n",
			cfg->routes[i].listener, output_route_name(cfg, i, where, sizeof(where)),
			cfg->routes[i].listener);
	if (metrics)
		pr_note("metrics on http://%s/metrics\n", http_metrics_address(metrics));
	if (health_http)
		pr_note("health on http://%s/healthz and /readyz\n",
			http_metrics_address(health_http));
}

/* Started by a hand-over (kill -USR2, the fd store, a supervisor): ready now
 * (the process before us may let go), and say from where. */
static void say_took_over(struct receiver *r, struct handover *h)
{
	const char *how = h->ledger_fd >= 0 ? "supervised" :
			  h->from_fdstore   ? "fd store" :
					      "upgrade";

	shell_say_ready(&r->shell);
	handover_free(h);
	pr_note("pid %d took over %s (%s): %u sockets, %u threads\n", (int)getpid(),
		listen_text(r, listens, sizeof(listens)), how, intake_live(&r->intake),
		pipeline_threads(&r->pipeline));
}

/* Once run() returns: stop without losing what was accepted (bounded by
 * --stop-timeout; a second signal gives up at once), advise, write the
 * summary. The exit status. */
static int finish(struct receiver *r, const struct config *cfg)
{
	static struct advice adv;
	char summary[PATH_MAX + 16];
	const char *summary_path = cfg->summary;
	pthread_t watcher;
	bool watching;
	int err, ret;

	if (successor) {
		/* The new process reads the queues now: stop reading without the
		 * final drain; what is in our window still goes to the output. */
		receiver_workers_pause(r);
		snprintf(summary, sizeof(summary), "%s.%d", cfg->summary, (int)getpid());
		summary_path = summary; /* the new process writes PATH */
	}

	watching = pthread_create(&watcher, NULL, stop_watch, r) == 0;
	err = receiver_stop(r);
	flag_set(&stop_done, 1); /* ends the watcher: joined, it reads r until then */
	if (watching)
		pthread_join(watcher, NULL);
	/* A second signal is the operator's "now": said by the status. */
	ret = err || stop_requested >= 2 ? 1 : 0;
	stats_line_books(r);
	if (summary_check_drops(r))
		ret = ret ? ret : 0; /* reported above; the run itself succeeded */
	if (!advice_measure(r, &adv)) {
		advice_print(&adv);
		/* Without the tracer no drop was counted: no advice is not "none needed". */
		if (intake_listener_tracer(&r->intake, 0) || intake_drops_meminfo(&r->intake) ||
		    adv.n)
			r->advice = &adv;
	}
	if (cfg->summary[0] && summary_write(r, summary_path))
		ret = 1;
	if (successor)
		pr_note("pid %d done after the hand-over\n", (int)getpid());
	return ret;
}

/* --check-config on the command line, even when the settings did not parse:
 * it exits 1 on a problem, never 2. */
static bool wants_check_config(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--check-config"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static struct receiver r_own;
	struct receiver *r = &r_own;
	struct supervisor_ledger *ledger = NULL; /* run by a supervisor: shared */
	static struct config cfg;		 /* large: the env-file's mapping, kafka options */
	static struct preflight pf;
	struct handover h;
	char err_msg[512];
	int err, ret = 1, adopted;

	log_prog = "syslogrx";
	log_init(true);
	argp_err_exit_status = 2;
	if (config_parse(&cfg, argc, argv, 0, err_msg, sizeof(err_msg))) {
		pr_err("%s\n", err_msg);
		return wants_check_config(argc, argv) ? 1 : 2;
	}
	if (cfg.verbose)
		log_level = LOG_LEVEL_DEBUG;
	if (cfg.env_file[0])
		env_file_report(&cfg.env, cfg.env_file);
	if (cfg.check_config) /* binds nothing, loads nothing */
		return check_config_run(&cfg);
	log_setup_libbpf();
	if (signals_install(SIGNALS_HUP | SIGNALS_USR2))
		return 1;

	main_argc = argc;
	main_argv = argv;
	if (upgrade_init())
		pr_warn("/proc/self/exe: %s (kill -USR2 will not upgrade)\n", strerror(errno));
	if (cfg.supervise)
		return supervise(&cfg, argc, argv);
	/* Started by kill -USR2 of an older syslogrx: its sockets, maps and links. */
	adopted = handover_receive(&h);
	if (!adopted) /* or by systemd, from its fd store */
		adopted = handover_from_listen_fds(&h);
	if (adopted < 0)
		return 1;
	if (adopted && h.ledger_fd >= 0) {
		ledger = map_ledger(&h);
		if (!ledger)
			return 1;
		r = &ledger->r;
	}
	/* Bound before the capabilities go (a port below 1024), served after;
	 * or handed over by the process before us, which still serves it. */
	if (open_listener("--metrics", cfg.metrics, adopted ? &h : NULL, &metrics) ||
	    open_listener("--health", cfg.health, adopted ? &h : NULL, &health_http)) {
		ret = errno == EINVAL || errno == EADDRINUSE ? 2 : 1;
		goto cleanup;
	}
	preflight_before(&pf, &cfg);
	err = adopted ? receiver_adopt(r, &cfg, &h) : receiver_open(r, &cfg);
	if (err) {
		/* Bad settings are usage errors (exit 2); the rest are runtime. */
		ret = (err == -EINVAL || err == -EADDRINUSE || err == -EADDRNOTAVAIL) ? 2 : 1;
		goto cleanup;
	}
	/* handed over with the sockets */
	shell_set_endpoints(&r->shell, http_metrics_fd(metrics), http_metrics_fd(health_http));
	if (ledger)
		shell_set_supervised(&r->shell, &ledger->queues_kept);
	preflight_sockets(&pf, &cfg, intake_group(&r->intake));
	r->preflight = &pf;
	pr_info("listening on %s: %u sockets, %u threads, balance %s by %s (%s)\n",
		listen_text(r, listens, sizeof(listens)), intake_group(&r->intake)->n, cfg.threads,
		balance_policy_name(cfg.balance),
		intake_balance_runs(&r->intake) ? intake_balance_runs(&r->intake) : "?",
		intake_balance_why(&r->intake));
	if (serve_endpoints(r))
		goto cleanup;
	say_ready(r, &cfg);
	if (!adopted)
		shell_say_identity(&cfg);
	if (intake_single_only(&r->intake))
		pr_note("%s\n", intake_single_only(&r->intake));

	err = receiver_start(r);
	if (err)
		goto cleanup;
	if (adopted)
		say_took_over(r, &h);
	if (!shell_supervised(&r->shell))
		upgrade_fdstore_put(r);
	run(r, &cfg);
	ret = finish(r, &cfg);
cleanup:
	http_metrics_close(metrics); /* before what a scrape reads is freed */
	http_metrics_close(health_http);
	sender_cache_close(r);
	receiver_close(r);
	return ret;
}
