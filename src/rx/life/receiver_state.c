// SPDX-License-Identifier: MIT
/*
 * What report/ may ask the receiver beyond the snapshot's numbers: whether it
 * runs, its threads' heartbeats, and a place for the scrapes' sender cache.
 * report/ reads no field of struct receiver itself; these are its questions.
 */
#include "common/signals.h"
#include "rx/life/receiver.h"
#include "rx/life/receiver_outputs.h"

void receiver_report_lock(struct receiver *r)
{
	pthread_mutex_lock(&r->report_lock);
}

void receiver_report_unlock(struct receiver *r)
{
	pthread_mutex_unlock(&r->report_lock);
}

bool receiver_stopping(const struct receiver *r)
{
	return flag_get(&r->stop);
}

bool receiver_running(const struct receiver *r)
{
	return r->window_ready && __atomic_load_n(&r->out_ready, __ATOMIC_ACQUIRE) &&
	       receiver_workers_started(r);
}

unsigned int receiver_workers_started(const struct receiver *r)
{
	return __atomic_load_n(&r->nr_started, __ATOMIC_ACQUIRE);
}

uint64_t receiver_worker_beat_ns(const struct receiver *r, unsigned int i)
{
	return __atomic_load_n(&r->workers[i].beat_ns, __ATOMIC_RELAXED);
}

unsigned int receiver_sockets_bound(const struct receiver *r)
{
	const struct socket_group *g = intake_group(&r->intake);
	unsigned int bound = 0;

	for (unsigned int i = 0; i < g->n; i++)
		bound += g->socks[i].fd >= 0;
	return bound;
}

bool receiver_output_counts(struct receiver *r, struct output_counts *c)
{
	if (!__atomic_load_n(&r->out_ready, __ATOMIC_ACQUIRE))
		return false;
	output_stage_counts(&r->out, c);
	/* with outputs per listener: the sums over them */
	for (unsigned int i = 0; i < r->nr_routes; i++) {
		struct output_counts o;

		if (!__atomic_load_n(&r->routes[i].ready, __ATOMIC_ACQUIRE))
			continue;
		output_stage_counts(&r->routes[i].out, &o);
		output_counts_add(c, &o);
	}
	return true;
}

bool receiver_disk_stats(struct receiver *r, struct diskbuf_stats *d)
{
	if (!r->disk)
		return false;
	diskbuf_get_stats(r->disk, d);
	return true;
}

/* The first output (the unnamed, then the named ones) that is so. */
static const char *first_output(const struct receiver *r, bool (*is)(const struct sink *))
{
	if (r->sink && is(r->sink))
		return r->sink->name;
	for (unsigned int i = 0; i < r->nr_routes; i++)
		if (r->routes[i].sink && is(r->routes[i].sink))
			return r->routes[i].sink->name;
	return NULL;
}

const char *receiver_output_stalled(const struct receiver *r)
{
	return first_output(r, sink_is_stalled);
}

const char *receiver_output_down(const struct receiver *r)
{
	return first_output(r, sink_is_down);
}

bool receiver_window_full(struct receiver *r)
{
	return window_peek_full(&r->window);
}

bool receiver_counts_senders(const struct receiver *r)
{
	return r->senders != NULL;
}

struct sender_cache *receiver_sender_cache(const struct receiver *r)
{
	return r->sender_cache;
}

void receiver_set_sender_cache(struct receiver *r, struct sender_cache *c)
{
	r->sender_cache = c;
}
