// SPDX-License-Identifier: MIT
/*
 * The named outputs (--output LISTENER=SPEC) beside the unnamed one: each
 * takes the window's queue its listeners' batches join (route i: queue
 * i + 1; every other listener's stay on queue 0, the unnamed output's), so
 * a destination that stops holds up only its own output stage. The books
 * close per output: what its listeners received is what it wrote,
 * discarded, gave up or saved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/signals.h"
#include "rx/life/receiver.h"
#include "rx/settings/output_routes.h"
#include "rx/life/pipeline_outputs.h"
#include "rx/path/diskbuf.h"
#include "rx/path/diskbuf_lock.h"
#include "rx/sink/registry.h"

int receiver_routes_open(struct receiver *r)
{
	const struct config *cfg = r->cfg;

	if (!cfg->nr_routes)
		return 0;
	r->routes = calloc(cfg->nr_routes, sizeof(*r->routes));
	if (!r->routes)
		return -ENOMEM;
	for (unsigned int i = 0; i < cfg->nr_routes; i++) {
		struct rx_route *rt = &r->routes[i];

		rt->cfg = *cfg;
		output_route_apply(&rt->cfg, i);
		rt->sink = sink_open(&rt->cfg);
		if (!rt->sink)
			return -errno;
		/* a scrape may read the routes already (the endpoints serve early) */
		__atomic_store_n(&r->nr_routes, i + 1, __ATOMIC_RELEASE);
		rt->sink->abort = &r->force;
		for (unsigned int k = 0; k < intake_listeners(&r->intake); k++)
			if (!strcmp(intake_listener_name(&r->intake, k), cfg->routes[i].listener))
				window_route(&r->window, k, i + 1);
	}
	return 0;
}

int receiver_routes_start(struct receiver *r)
{
	for (unsigned int i = 0; i < r->nr_routes; i++) {
		struct rx_route *rt = &r->routes[i];
		int err;

		rt->out.queue = i + 1;
		r->wsh.route_disk[i + 1] = rt->disk; /* before the workers start */
		err = output_stage_start(&rt->out, &r->window, rt->disk, rt->sink, rt->cfg.format,
					 config_format_flags(&rt->cfg), rt->cfg.output_rate, NULL,
					 &rt->reopen, &r->force);
		if (err)
			return err;
		rt->started = true;
		__atomic_store_n(&rt->ready, true, __ATOMIC_RELEASE);
	}
	return 0;
}

int receiver_routes_join(struct receiver *r)
{
	int err = 0;

	for (unsigned int i = 0; i < r->nr_routes; i++) {
		struct rx_route *rt = &r->routes[i];
		int e;

		if (rt->started) {
			e = output_stage_join(&rt->out);
			if (e && !err)
				err = e;
			rt->started = false;
		}
		if (rt->sink->ops->finish)
			rt->sink->ops->finish(rt->sink);
	}
	return err;
}

void receiver_routes_close(struct receiver *r)
{
	for (unsigned int i = 0; i < r->nr_routes; i++) {
		struct rx_route *rt = &r->routes[i];

		rt->sink->ops->close(rt->sink);
		output_stage_free(&rt->out);
		diskbuf_close(rt->disk);
		/* after its last write, and before the unnamed output's DIR: an
		 * upgrade's new process, once it has that, finds these free */
		if (rt->disk_locked)
			diskbuf_lock_release(rt->disk_lock_fd);
	}
	free(r->routes);
	r->routes = NULL;
	r->nr_routes = 0;
}

void receiver_outputs_save_if_down(struct receiver *r)
{
	const struct sink *down = r->sink && sink_is_down(r->sink) ? r->sink : NULL;

	if (!r->disk || flag_get(&r->force))
		return;
	for (unsigned int i = 0; i < r->nr_routes && !down; i++)
		if (sink_is_down(r->routes[i].sink))
			down = r->routes[i].sink;
	if (!down)
		return;
	pr_warn("stop: %s cannot reach its destination: saving what the output%s to the "
		"disk buffer\n",
		down->name, r->nr_routes ? "s hold" : " holds");
	flag_set(&r->force, 1);
}

void receiver_outputs_reopen(struct receiver *r)
{
	flag_set(&r->reopen, 1);
	for (unsigned int i = 0; i < r->nr_routes; i++)
		flag_set(&r->routes[i].reopen, 1);
}

/* name: the output's, NULL with one output. */
static void say_kept_one(const struct output_counts *c, const char *name, const char *dir)
{
	if (c->saved || c->kept_written)
		pr_warn("stop: %llu received message(s) saved to the disk buffer %s for the next "
			"run (%llu more written and kept there, to be sent again)\n",
			(unsigned long long)c->saved, dir, (unsigned long long)c->kept_written);
	if (c->given_up && !name)
		pr_warn("stop: gave up %llu received message(s) not written (counted: "
			"totals.given_up, syslogrx_given_up_total)\n",
			(unsigned long long)c->given_up);
	else if (c->given_up)
		pr_warn("stop: output %s gave up %llu received message(s) not written (counted: "
			"outputs[].given_up, syslogrx_output_given_up_total)\n",
			name, (unsigned long long)c->given_up);
}

void receiver_outputs_say_kept(struct receiver *r)
{
	struct output_counts c;

	output_stage_counts(&r->out, &c);
	say_kept_one(&c, r->nr_routes ? "default" : NULL, r->cfg->disk_buffer);
	for (unsigned int i = 0; i < r->nr_routes; i++) {
		output_stage_counts(&r->routes[i].out, &c);
		say_kept_one(&c, r->cfg->routes[i].listener, r->routes[i].cfg.disk_buffer);
	}
}

/* Datagrams the listeners routed to queue q took from the kernel. */
static uint64_t received_by(const struct receiver *r, unsigned int q)
{
	const struct socket_group *g = intake_group(&r->intake);
	uint64_t n = 0;

	for (unsigned int i = 0; i < g->n && r->counters; i++) {
		uint32_t l = g->socks[i].listener;

		if (l < WINDOW_MAX_LISTENERS && r->window.route[l] == q)
			n += __atomic_load_n(&r->counters[i].received, __ATOMIC_RELAXED);
	}
	return n;
}

/* The output's own disk buffer's figures (d NULL: none). */
static void fill_disk(struct output_row *row, struct diskbuf *d)
{
	struct diskbuf_stats st;

	row->disk = d;
	if (!d)
		return;
	diskbuf_get_stats(d, &st);
	row->disk_recovered = st.recovered_msgs;
	row->disk_written = st.written_msgs;
	row->disk_replayed = st.replayed_msgs;
	row->disk_dropped = st.dropped_msgs;
	row->disk_msgs = st.msgs;
}

static void fill_row(struct receiver *r, struct output_row *row, struct output_stage *o,
		     const struct sink *s, bool started, unsigned int q)
{
	memset(&row->c, 0, sizeof(row->c));
	if (started)
		output_stage_counts(o, &row->c);
	row->received = received_by(r, q);
	row->up = s && !sink_is_down(s);
	row->stalled = s && sink_is_stalled(s);
	row->resends = s && s->resends;
	row->resent = s ? sink_counted(&s->resent) : 0;
	row->uncertain = s ? sink_counted(&s->uncertain) : 0;
}

unsigned int receiver_outputs_rows(struct receiver *r, struct output_row *rows)
{
	bool ready = __atomic_load_n(&r->out_ready, __ATOMIC_ACQUIRE);

	rows[0].name = "default";
	config_output_name(r->cfg, rows[0].dest, sizeof(rows[0].dest));
	rows[0].network = config_output_is_network(r->cfg);
	fill_row(r, &rows[0], &r->out, r->sink, ready, 0);
	fill_disk(&rows[0], r->disk);
	for (unsigned int i = 0; i < r->nr_routes; i++) {
		struct rx_route *rt = &r->routes[i];
		struct output_row *row = &rows[i + 1];

		row->name = r->cfg->routes[i].listener;
		output_route_name(r->cfg, i, row->dest, sizeof(row->dest));
		row->network = config_output_is_network(&rt->cfg);
		fill_row(r, row, &rt->out, rt->sink, __atomic_load_n(&rt->ready, __ATOMIC_ACQUIRE),
			 i + 1);
		fill_disk(row, __atomic_load_n(&rt->disk, __ATOMIC_ACQUIRE));
	}
	return 1 + r->nr_routes;
}
