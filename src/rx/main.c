// SPDX-License-Identifier: MIT
/*
 * syslogrx: the front end. Parse flags, open the receiver, drop privileges,
 * run until --duration or a signal, stop without losing what was accepted,
 * write the summary.
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
#include "common/signals.h"
#include "common/clock.h"
#include "common/log.h"
#include "net/libbpf_log.h"
#include "net/http_metrics.h"
#include "rx/metrics.h"
#include "rx/advice_measure.h"
#include "rx/preflight.h"
#include "rx/receiver.h"
#include "rx/stats_line.h"
#include "rx/summary.h"

/* Sleeps until --duration, a signal, or a worker dying; prints stats lines. */
static void run(struct receiver *r, const struct config *cfg)
{
	double start = (mono_ns() / 1e9), next_stats = start + cfg->stats_interval;
	struct stats_line sl = {};
	bool stats = cfg->stats_interval > 0 && !stats_line_init(&sl, r->group.n);

	while (!stop_requested) {
		double now = (mono_ns() / 1e9);
		struct timespec tick = { 0, 20 * 1000000L };

		if (cfg->duration && now - start >= cfg->duration)
			break;
		if (hup_requested) {
			hup_requested = 0;
			r->reopen = 1;
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

	while (stop_requested < 2 && !r->force) {
		struct timespec tick = { 0, 20 * 1000000L };

		nanosleep(&tick, NULL);
	}
	if (stop_requested >= 2) {
		pr_warn("second signal: exiting now, %llu received message(s) not written\n",
			(unsigned long long)receiver_in_flight(r));
		_exit(1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static struct receiver r;
	struct http_metrics *metrics = NULL;
	static struct config cfg;	/* large: the env-file's mapping, kafka options */
	static struct preflight pf;
	static struct advice adv;
	char err_msg[256], where[PATH_MAX + 16];
	pthread_t watcher;
	int err, ret = 1;

	log_prog = "syslogrx";
	argp_err_exit_status = 2;
	if (config_parse(&cfg, argc, argv, 0, err_msg, sizeof(err_msg))) {
		fprintf(stderr, "syslogrx: %s\n", err_msg);
		return 2;
	}
	if (cfg.verbose)
		log_level = LOG_LEVEL_DEBUG;
	if (cfg.env_file[0])
		env_file_report(&cfg.env, cfg.env_file);
	log_setup_libbpf();
	if (signals_install(true))
		return 1;

	/* Bound before the capabilities go (a port below 1024), served after. */
	if (cfg.metrics[0]) {
		metrics = http_metrics_open("--metrics", cfg.metrics);
		if (!metrics) {
			ret = errno == EINVAL || errno == EADDRINUSE ? 2 : 1;
			goto cleanup;
		}
	}
	preflight_before(&pf, &cfg);
	err = receiver_open(&r, &cfg);
	if (!err) {
		preflight_sockets(&pf, &cfg, &r.group);
		r.preflight = &pf;
	}
	if (err) {
		/* Bad settings are usage errors (exit 2); the rest are runtime. */
		ret = (err == -EINVAL || err == -EADDRINUSE || err == -EADDRNOTAVAIL) ? 2 : 1;
		goto cleanup;
	}
	pr_info("listening on %s: %u sockets, %u threads, balance %s\n", r.group.listen,
		r.group.n, cfg.threads, balance_policy_name(cfg.balance));
	if (metrics && metrics_start(metrics, &r))
		goto cleanup;
	/* Say where the messages go: a newcomer should not have to guess. */
	if (cfg.output == OUTPUT_NULL)
		fprintf(stderr, "syslogrx: ready on %s, discarding messages (--output null)\n",
			r.group.listen);
	else
		fprintf(stderr, "syslogrx: ready on %s, writing %s lines to %s\n", r.group.listen,
			format_name(cfg.format), config_output_name(&cfg, where, sizeof(where)));
	if (metrics)
		fprintf(stderr, "syslogrx: metrics on http://%s/metrics\n",
			http_metrics_address(metrics));

	err = receiver_start(&r);
	if (err)
		goto cleanup;
	run(&r, &cfg);

	if (pthread_create(&watcher, NULL, force_watch, &r) == 0)
		pthread_detach(watcher);
	err = receiver_stop(&r);
	r.force = 1;	/* ends the watcher */
	ret = err ? 1 : 0;
	if (summary_check_drops(&r))
		ret = ret ? ret : 0;	/* reported above; the run itself succeeded */
	if (!advice_measure(&r, &adv)) {
		advice_print(&adv);
		/* Without the tracer no drop was counted: no advice is not "none needed". */
		if (r.tracer || adv.n)
			r.advice = &adv;
	}
	if (cfg.summary[0] && summary_write(&r, cfg.summary))
		ret = 1;
cleanup:
	http_metrics_close(metrics);	/* before what a scrape reads is freed */
	receiver_close(&r);
	return ret;
}
