// SPDX-License-Identifier: MIT
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/signals.h"
#include "common/array.h"
#include "common/clock.h"
#include "rx/path/window.h"

static void deadline_in(struct timespec *ts, int ms)
{
	*ts = ns_to_timespec(mono_ns() + ms * 1000000ULL);
}

int window_init(struct window *w, uint64_t max_msgs, uint64_t max_bytes, uint32_t batch_cap)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->max_msgs = max_msgs;
	w->max_bytes = max_bytes;
	w->batch_cap = batch_cap;
	w->pool_idle_ns = WINDOW_POOL_IDLE_NS;
	w->pool_since_ns = mono_ns();
	w->nr_queues = 1;
	err = -pthread_mutex_init(&w->lock, NULL);
	if (!err)
		err = cond_init_monotonic(&w->room);
	if (!err)
		err = cond_init_monotonic(&w->ready);
	return err;
}

static void free_list(struct batch *b)
{
	while (b) {
		struct batch *next = b->next;

		free(b->recs);
		free(b->data);
		free(b->out);
		free(b);
		b = next;
	}
}

void window_destroy(struct window *w)
{
	for (unsigned int q = 0; q < WINDOW_MAX_QUEUES; q++)
		free_list(w->q[q].head);
	free_list(w->free);
	pthread_cond_destroy(&w->room);
	pthread_cond_destroy(&w->ready);
	pthread_mutex_destroy(&w->lock);
}

/* The byte bound is on what the held batches take, not their messages alone. */
static bool has_room(const struct window *w)
{
	return w->msgs + w->reserved < w->max_msgs && w->held_mem < w->max_bytes;
}

/* Listener l's queue: its output's. */
static struct window_queue *queue_for(struct window *w, uint32_t l)
{
	return &w->q[l < WINDOW_MAX_LISTENERS ? w->route[l] : 0];
}

/* Listener l's queue, for the accounting of its share; NULL with one queue
 * (the window's bounds alone). */
static struct window_queue *share_of(struct window *w, uint32_t l)
{
	return w->nr_queues <= 1 ? NULL : queue_for(w, l);
}

/* Room in the window and in q's share; the messages it may take now. */
static uint64_t room_for(const struct window *w, const struct window_queue *q)
{
	uint64_t room = has_room(w) ? w->max_msgs - w->msgs - w->reserved : 0;
	uint64_t qmax = w->max_msgs / w->nr_queues;

	if (!q || !room)
		return room;
	if (q->msgs + q->reserved >= qmax || q->held_mem >= w->max_bytes / w->nr_queues)
		return 0;
	return room < qmax - q->msgs - q->reserved ? room : qmax - q->msgs - q->reserved;
}

/* Stores of what window_peek_stats reads without the lock (the writers hold
 * it, so a plain read of the old value is fine here). */
#define PUBLISH(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)

/* b's data buffer may have grown since it was counted. Under the lock. */
static void recount(struct window *w, struct batch *b)
{
	PUBLISH(w->alloc_bytes, w->alloc_bytes + BATCH_MEM(b) - b->counted);
	b->counted = BATCH_MEM(b);
}

/* Detaches the pool batches no taker needed for a whole pool_idle_ns (the
 * fewest the pool held in that time); the caller frees them, unlocked. */
static struct batch *pool_expire(struct window *w)
{
	uint64_t now = mono_ns(), n;
	struct batch *list = NULL, *b;

	if (now - w->pool_since_ns < w->pool_idle_ns)
		return NULL;
	for (n = w->pool_low < w->pool_n ? w->pool_low : w->pool_n; n; n--) {
		b = w->free;
		w->free = b->next;
		PUBLISH(w->alloc_bytes, w->alloc_bytes - b->counted);
		b->next = list;
		list = b;
		PUBLISH(w->pool_n, w->pool_n - 1);
	}
	w->pool_low = w->pool_n;
	w->pool_since_ns = now;
	return list;
}

/* A batch back from use: into the pool while all the window allocated stays
 * under max_bytes; else detached for the caller to free, unlocked. */
static struct batch *recycle(struct window *w, struct batch *b)
{
	recount(w, b);
	if (w->alloc_bytes > w->max_bytes) {
		PUBLISH(w->alloc_bytes, w->alloc_bytes - b->counted);
		b->next = NULL;
		return b;
	}
	b->next = w->free;
	w->free = b;
	PUBLISH(w->pool_n, w->pool_n + 1);
	return NULL;
}

/* Frees what recycle / pool_expire detached, outside the lock; the heap's
 * free pages go back to the kernel when a whole idle pool went. */
static void free_detached(struct batch *a, struct batch *b)
{
	bool trim = a && a->next;

	free_list(a);
	free_list(b);
	if (trim)
		malloc_trim(0);
}

/* Time with at least one worker waiting is time the window was full. The
 * three fields change inside a sequence count (writers are serialized by the
 * lock): a lock-free reader retries while it is odd or moved. */
static void full_begin(struct window *w)
{
	__atomic_store_n(&w->full_seq, w->full_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void full_end(struct window *w)
{
	__atomic_store_n(&w->full_seq, w->full_seq + 1, __ATOMIC_RELEASE);
}

static void note_wait_start(struct window *w)
{
	full_begin(w);
	if (w->waiting == 0)
		PUBLISH(w->full_since_ns, mono_ns());
	PUBLISH(w->waiting, w->waiting + 1);
	full_end(w);
}

static void note_wait_end(struct window *w)
{
	full_begin(w);
	PUBLISH(w->waiting, w->waiting - 1);
	if (w->waiting == 0)
		PUBLISH(w->full_ns, w->full_ns + mono_ns() - w->full_since_ns);
	full_end(w);
}

uint32_t window_reserve(struct window *w, uint32_t want, const volatile int *stop, int timeout_ms)
{
	return window_reserve_for(w, 0, want, stop, timeout_ms);
}

uint32_t window_reserve_for(struct window *w, uint32_t listener, uint32_t want,
			    const volatile int *stop, int timeout_ms)
{
	struct timespec deadline;
	struct window_queue *q;
	uint64_t room;
	uint32_t got = 0;

	pthread_mutex_lock(&w->lock);
	q = share_of(w, listener);
	if (!room_for(w, q)) {
		deadline_in(&deadline, timeout_ms);
		note_wait_start(w);
		while (!room_for(w, q) && !flag_get(stop) && !w->closed) {
			if (pthread_cond_timedwait(&w->room, &w->lock, &deadline) == ETIMEDOUT)
				break;
		}
		note_wait_end(w);
	}
	room = room_for(w, q);
	if (room) {
		got = want < room ? want : room;
		w->reserved += got;
		if (q)
			q->reserved += got;
	}
	pthread_mutex_unlock(&w->lock);
	return got;
}

void window_wait_room(struct window *w, int timeout_ms)
{
	struct timespec deadline;

	deadline_in(&deadline, timeout_ms);
	pthread_mutex_lock(&w->lock);
	if (!w->closed)
		pthread_cond_timedwait(&w->room, &w->lock, &deadline);
	pthread_mutex_unlock(&w->lock);
}

void window_unreserve(struct window *w, uint32_t n)
{
	window_unreserve_for(w, 0, n);
}

void window_unreserve_for(struct window *w, uint32_t listener, uint32_t n)
{
	struct window_queue *q;

	pthread_mutex_lock(&w->lock);
	q = share_of(w, listener);
	w->reserved -= n;
	if (q)
		q->reserved -= n;
	/* several shares: the worker waiting may be another queue's */
	if (q)
		pthread_cond_broadcast(&w->room);
	else
		pthread_cond_signal(&w->room);
	pthread_mutex_unlock(&w->lock);
}

struct batch *window_batch_get(struct window *w)
{
	struct batch *b, *idle;

	pthread_mutex_lock(&w->lock);
	b = w->free;
	if (b) {
		w->free = b->next;
		PUBLISH(w->pool_n, w->pool_n - 1);
		if (w->pool_n < w->pool_low)
			w->pool_low = w->pool_n;
	}
	idle = pool_expire(w);
	pthread_mutex_unlock(&w->lock);
	free_detached(idle, NULL);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		b->cap = w->batch_cap;
		b->recs = calloc(b->cap, sizeof(*b->recs));
		if (!b->recs) {
			free(b);
			return NULL;
		}
		pthread_mutex_lock(&w->lock);
		recount(w, b);
		pthread_mutex_unlock(&w->lock);
	}
	b->next = NULL;
	b->count = 0;
	b->used = 0;
	b->disk_seg = 0;
	b->formatted = false;
	b->out_used = 0;
	return b;
}

void window_batch_put(struct window *w, struct batch *b)
{
	struct batch *gone, *idle;

	pthread_mutex_lock(&w->lock);
	gone = recycle(w, b);
	idle = pool_expire(w);
	pthread_mutex_unlock(&w->lock);
	free_detached(idle, gone);
}

struct msg_rec *batch_add(struct batch *b, size_t len)
{
	struct msg_rec *r;

	if (b->count >= b->cap)
		return NULL;
	/* Grows geometrically and is kept when the batch is recycled, so a
	 * steady flow allocates nothing. */
	/* at least one byte: an empty datagram's memcpy needs a buffer too */
	if (array_reserve((void **)&b->data, &b->data_cap, b->used + len ?: 1, 1, 16384))
		return NULL;
	r = &b->recs[b->count++];
	r->off = b->used;
	r->len = len;
	b->used += len;
	return r;
}

int batch_slots(struct batch *b, uint32_t n, size_t slot)
{
	size_t need = (size_t)n * slot ?: 1;

	b->used = 0;
	if (b->data_cap >= need)
		return 0;
	/* Nothing to keep: a fresh area, not a realloc's copy. */
	free(b->data);
	b->data_cap = 0;
	b->data = malloc(need);
	if (!b->data)
		return -ENOMEM;
	b->data_cap = need;
	return 0;
}

int batch_grow(struct batch *b, size_t need)
{
	char *p;

	if (b->data_cap >= need)
		return 0;
	p = realloc(b->data, need);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->data_cap = need;
	return 0;
}

void batch_trim(struct batch *b, size_t end)
{
	char *p;

	/* Half or more in use: not worth a realloc per batch under load. */
	if (end >= b->data_cap / 2)
		return;
	p = realloc(b->data, end ?: 1);
	if (!p)
		return; /* still valid, counted at its old size */
	b->data = p;
	b->data_cap = end ?: 1;
}

void window_route(struct window *w, uint32_t listener, unsigned int q)
{
	if (listener >= WINDOW_MAX_LISTENERS || q >= WINDOW_MAX_QUEUES)
		return;
	pthread_mutex_lock(&w->lock);
	w->route[listener] = q;
	if (q >= w->nr_queues)
		w->nr_queues = q + 1;
	pthread_mutex_unlock(&w->lock);
}

/* A batch holds one socket's read, so its first record names its listener. */
static struct window_queue *queue_of(struct window *w, const struct batch *b)
{
	return queue_for(w, b->count ? b->recs[0].listener : 0);
}

void window_push(struct window *w, struct batch *b, uint32_t reserved)
{
	struct window_queue *q;

	pthread_mutex_lock(&w->lock);
	q = queue_of(w, b);
	w->reserved -= reserved;
	recount(w, b);
	PUBLISH(w->msgs, w->msgs + b->count);
	PUBLISH(w->bytes, w->bytes + b->used);
	PUBLISH(w->held_mem, w->held_mem + b->counted);
	if (w->msgs > w->hwm)
		PUBLISH(w->hwm, w->msgs);
	if (w->nr_queues > 1) { /* its share (reserved for the same listener) */
		q->reserved -= reserved;
		q->msgs += b->count;
		q->held_mem += b->counted;
	}
	b->next = NULL;
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	if (b->count < reserved && w->nr_queues > 1)
		pthread_cond_broadcast(&w->room);
	else if (b->count < reserved)
		pthread_cond_signal(&w->room);
	/* several takers wait on one condition: each checks its own queue */
	if (w->nr_queues > 1)
		pthread_cond_broadcast(&w->ready);
	else
		pthread_cond_signal(&w->ready);
	pthread_mutex_unlock(&w->lock);
}

struct batch *window_pop(struct window *w, int timeout_ms)
{
	return window_pop_from(w, 0, timeout_ms);
}

struct batch *window_pop_from(struct window *w, unsigned int qi, int timeout_ms)
{
	struct window_queue *q = &w->q[qi < WINDOW_MAX_QUEUES ? qi : 0];
	struct timespec deadline;
	struct batch *b;

	pthread_mutex_lock(&w->lock);
	/* No timeout, no wait: a timed wait on a deadline already past still
	 * costs a futex call and a context switch (in reliable disk-buffer
	 * mode the window is always empty and polled at every batch). */
	if (!q->head && !w->closed && timeout_ms > 0) {
		deadline_in(&deadline, timeout_ms);
		while (!q->head && !w->closed)
			if (pthread_cond_timedwait(&w->ready, &w->lock, &deadline) == ETIMEDOUT)
				break;
	}
	b = q->head;
	if (b) {
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		b->next = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return b;
}

void window_release(struct window *w, struct batch *b)
{
	struct batch *gone, *idle;

	pthread_mutex_lock(&w->lock);
	PUBLISH(w->msgs, w->msgs - b->count);
	PUBLISH(w->bytes, w->bytes - b->used);
	/* as counted at push: the output stage does not grow a batch */
	PUBLISH(w->held_mem, w->held_mem - b->counted);
	if (w->nr_queues > 1) {
		struct window_queue *q = queue_of(w, b);

		q->msgs -= b->count;
		q->held_mem -= b->counted;
	}
	gone = recycle(w, b);
	idle = pool_expire(w);
	pthread_cond_broadcast(&w->room);
	pthread_mutex_unlock(&w->lock);
	free_detached(idle, gone);
}

void window_close(struct window *w)
{
	pthread_mutex_lock(&w->lock);
	w->closed = true;
	pthread_cond_broadcast(&w->ready);
	pthread_cond_broadcast(&w->room);
	pthread_mutex_unlock(&w->lock);
}

bool window_done(struct window *w)
{
	return window_done_for(w, 0);
}

bool window_done_for(struct window *w, unsigned int q)
{
	bool done;

	pthread_mutex_lock(&w->lock);
	done = w->closed && !w->q[q < WINDOW_MAX_QUEUES ? q : 0].head;
	pthread_mutex_unlock(&w->lock);
	return done;
}

void window_get_stats(struct window *w, struct window_stats *out)
{
	pthread_mutex_lock(&w->lock);
	out->size = w->max_msgs;
	out->size_bytes = w->max_bytes;
	out->msgs = w->msgs;
	out->bytes = w->bytes;
	out->held_mem = w->held_mem;
	out->alloc_bytes = w->alloc_bytes;
	out->pool = w->pool_n;
	out->hwm = w->hwm;
	out->full_seconds = (w->full_ns + (w->waiting ? mono_ns() - w->full_since_ns : 0)) / 1e9;
	pthread_mutex_unlock(&w->lock);
}

void window_peek_stats(struct window *w, struct window_stats *out)
{
	uint64_t full_ns, since, now;
	unsigned int waiting;
	uint32_t seq;

	out->size = w->max_msgs; /* set once, before any thread */
	out->size_bytes = w->max_bytes;
	out->msgs = __atomic_load_n(&w->msgs, __ATOMIC_RELAXED);
	out->bytes = __atomic_load_n(&w->bytes, __ATOMIC_RELAXED);
	out->held_mem = __atomic_load_n(&w->held_mem, __ATOMIC_RELAXED);
	out->alloc_bytes = __atomic_load_n(&w->alloc_bytes, __ATOMIC_RELAXED);
	out->pool = __atomic_load_n(&w->pool_n, __ATOMIC_RELAXED);
	out->hwm = __atomic_load_n(&w->hwm, __ATOMIC_RELAXED);
	do {
		seq = __atomic_load_n(&w->full_seq, __ATOMIC_ACQUIRE);
		full_ns = __atomic_load_n(&w->full_ns, __ATOMIC_RELAXED);
		since = __atomic_load_n(&w->full_since_ns, __ATOMIC_RELAXED);
		waiting = __atomic_load_n(&w->waiting, __ATOMIC_RELAXED);
		/* Inside the loop: a wait that ends after this check ends after
		 * now, so the next read is never smaller. */
		now = mono_ns();
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || seq != __atomic_load_n(&w->full_seq, __ATOMIC_RELAXED));
	out->full_seconds = (full_ns + (waiting && now > since ? now - since : 0)) / 1e9;
}

bool window_peek_full(struct window *w)
{
	return __atomic_load_n(&w->waiting, __ATOMIC_RELAXED) > 0;
}
