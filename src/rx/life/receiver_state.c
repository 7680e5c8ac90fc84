// SPDX-License-Identifier: MIT
/*
 * What report/ may ask the receiver beyond the snapshot's numbers: whether it
 * runs, its threads' heartbeats, and a place for the scrapes' sender cache.
 * report/ reads no field of struct receiver itself but the read-only config
 * (r->cfg) and the fair share's handle it reports through; these are its
 * questions, each answered by the part that knows (mostly the pipeline,
 * pipeline.h).
 */
#include "rx/life/receiver.h"

void receiver_report_lock(struct receiver *r)
{
	pthread_mutex_lock(&r->report_lock);
}

void receiver_report_unlock(struct receiver *r)
{
	pthread_mutex_unlock(&r->report_lock);
}

uint64_t receiver_elapsed_ns(const struct receiver *r)
{
	return __atomic_load_n(&r->stop_ns, __ATOMIC_RELAXED) -
	       __atomic_load_n(&r->start_ns, __ATOMIC_RELAXED);
}

const struct preflight *receiver_preflight(const struct receiver *r)
{
	return r->preflight;
}

const struct advice *receiver_advice(const struct receiver *r)
{
	return r->advice;
}

bool receiver_stopping(const struct receiver *r)
{
	return pipeline_stopping(&r->pipeline);
}

bool receiver_running(const struct receiver *r)
{
	return pipeline_running(&r->pipeline);
}

unsigned int receiver_workers_started(const struct receiver *r)
{
	return pipeline_workers_started(&r->pipeline);
}

uint64_t receiver_worker_beat_ns(const struct receiver *r, unsigned int i)
{
	return pipeline_worker_beat_ns(&r->pipeline, i);
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
	return pipeline_output_counts(&r->pipeline, c);
}

bool receiver_disk_stats(struct receiver *r, struct diskbuf_stats *d)
{
	return pipeline_disk_stats(&r->pipeline, d);
}

const char *receiver_output_stalled(const struct receiver *r)
{
	return pipeline_output_stalled(&r->pipeline);
}

const char *receiver_output_down(const struct receiver *r)
{
	return pipeline_output_down(&r->pipeline);
}

bool receiver_window_full(struct receiver *r)
{
	return pipeline_window_full(&r->pipeline);
}

bool receiver_counts_senders(const struct receiver *r)
{
	return pipeline_counts_senders(&r->pipeline);
}

struct sender_cache *receiver_sender_cache(const struct receiver *r)
{
	return r->sender_cache;
}

void receiver_set_sender_cache(struct receiver *r, struct sender_cache *c)
{
	r->sender_cache = c;
}
