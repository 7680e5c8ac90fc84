// SPDX-License-Identifier: MIT
/*
 * What report/ may ask the receiver beyond the snapshot's numbers: whether it
 * runs, its threads' heartbeats, and a place for the scrapes' sender cache.
 * report/ reads no field of struct receiver itself; these are its questions.
 */
#include "common/signals.h"
#include "rx/life/receiver.h"
#include "rx/life/pipeline_outputs.h"

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

/* A named output's DIR/LISTENER added to the figures of those before. */
static void disk_stats_add(struct diskbuf_stats *to, const struct diskbuf_stats *d)
{
	to->max_bytes += d->max_bytes;
	to->bytes += d->bytes;
	to->msgs += d->msgs;
	to->batches += d->batches;
	to->queued_msgs += d->queued_msgs;
	to->segments += d->segments;
	if (d->oldest_age_seconds > to->oldest_age_seconds)
		to->oldest_age_seconds = d->oldest_age_seconds;
	to->recovered_msgs += d->recovered_msgs;
	to->written_msgs += d->written_msgs;
	to->written_batches += d->written_batches;
	to->written_bytes += d->written_bytes;
	to->replayed_msgs += d->replayed_msgs;
	to->read_back_msgs += d->read_back_msgs;
	to->dropped_msgs += d->dropped_msgs;
	to->dropped_batches += d->dropped_batches;
	to->corrupt_records += d->corrupt_records;
	to->corrupt_bytes += d->corrupt_bytes;
	to->corrupt_msgs += d->corrupt_msgs;
	to->corrupt_uncounted += d->corrupt_uncounted;
	to->segments_refused += d->segments_refused;
	to->syncs += d->syncs;
}

bool receiver_disk_stats(struct receiver *r, struct diskbuf_stats *d)
{
	struct diskbuf_stats one;

	if (!r->disk)
		return false;
	diskbuf_get_stats(r->disk, d);
	/* every output's DIR: opened before the stages start, closed after */
	for (unsigned int i = 0; i < __atomic_load_n(&r->nr_routes, __ATOMIC_ACQUIRE); i++) {
		struct diskbuf *rd = __atomic_load_n(&r->routes[i].disk, __ATOMIC_ACQUIRE);

		if (!rd)
			continue;
		diskbuf_get_stats(rd, &one);
		disk_stats_add(d, &one);
	}
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
