// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/signals.h"
#include "common/clock.h"
#include "common/log.h"
#include "rx/path/reorder.h"

#define POLL_MS 100
#define SLEEP_MAX_NS 2000000ULL
/* A message is held between hold - SLACK_NS and hold (SLACK_NS at most half
 * the hold). */
#define SLACK_NS 1000000ULL

/*
 * A batch of the input window whose messages are held: a run, its messages
 * taken in stamp order (a worker's batch is one socket's queue in arrival
 * order, so almost always already sorted; else sorted once on arrival). The
 * heap holds one entry per held batch, keyed by the stamp of its next
 * message: a message costs a compare or two and a sift over the held
 * batches (tens), not a sift over every held message (thousands). Released
 * to the window when its last message is written.
 */
struct held_batch {
	struct held_batch *next; /* free list: recycled, not freed */
	struct batch *b;
	uint32_t pos;	/* messages written: the head is at pos */
	bool permuted;	/* perm holds the stamp order; else 0, 1, ... */
	uint32_t *perm; /* owned, kept when recycled */
	uint32_t perm_cap;
	uint64_t order;	       /* of message 0: equal stamps keep arrival order */
	uint64_t arrival_ns;   /* CLOCK_MONOTONIC, when popped */
	uint64_t unstamped_ns; /* CLOCK_REALTIME, when popped: the stamp of a
				* message with none */
};

/* The heap's entry: a held batch and the (stamp, order) of its head. */
struct held_head {
	uint64_t stamp; /* the kernel's arrival stamp, CLOCK_REALTIME */
	uint64_t order;
	struct held_batch *hb;
};

struct reorder {
	struct window *in, *out;
	uint64_t hold_ns;
	uint64_t slack_ns; /* written up to this early: one wake-up per slack */
	const volatile int *force;
	pthread_t thread;
	bool started;
	struct held_head *heap; /* min-heap by (stamp, order), one per held batch */
	size_t nb, cap;
	uint64_t n; /* messages held */
	struct held_batch *free_hb;
	uint64_t order;
	uint64_t last_stamp;	 /* of the last message written in order */
	struct batch *ob;	 /* the output batch being filled */
	uint32_t ob_room;	 /* what was reserved in `out` for it */
	struct reorder_stats st; /* written here, read with __atomic loads */
	int error;
};

static bool head_less(const struct held_head *a, const struct held_head *b)
{
	return a->stamp < b->stamp || (a->stamp == b->stamp && a->order < b->order);
}

static void sift_up(struct held_head *h, size_t i)
{
	struct held_head m = h[i];

	while (i) {
		size_t p = (i - 1) / 2;

		if (!head_less(&m, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = m;
}

static void sift_down(struct held_head *h, size_t n, size_t i)
{
	struct held_head m = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && head_less(&h[c + 1], &h[c]))
			c++;
		if (!head_less(&h[c], &m))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = m;
}

static void stat_add(uint64_t *v, uint64_t n)
{
	__atomic_store_n(v, *v + n, __ATOMIC_RELAXED); /* one writer: this thread */
}

/* The stamp message i of hb is placed by. */
static uint64_t msg_stamp(const struct held_batch *hb, uint32_t i)
{
	uint64_t stamp = hb->b->recs[i].recv_ns;

	return stamp ? stamp : hb->unstamped_ns;
}

/* Index of the message at hb's head. */
static uint32_t head_idx(const struct held_batch *hb)
{
	return hb->permuted ? hb->perm[hb->pos] : hb->pos;
}

static struct held_head head_of(const struct held_batch *hb)
{
	uint32_t i = head_idx(hb);

	return (struct held_head){ msg_stamp(hb, i), hb->order + i, (struct held_batch *)hb };
}

/* hb's messages in stamp order (ties by index): an insertion sort, linear on
 * the nearly sorted batches the workers read. -ENOMEM. */
static int sort_batch(struct held_batch *hb)
{
	uint32_t n = hb->b->count;

	if (hb->perm_cap < n) {
		uint32_t *p = realloc(hb->perm, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		hb->perm = p;
		hb->perm_cap = n;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t st = msg_stamp(hb, i);
		uint32_t j = i;

		while (j && msg_stamp(hb, hb->perm[j - 1]) > st) {
			hb->perm[j] = hb->perm[j - 1];
			j--;
		}
		hb->perm[j] = i;
	}
	return 0;
}

static void hb_recycle(struct reorder *ro, struct held_batch *hb)
{
	hb->next = ro->free_hb;
	ro->free_hb = hb;
}

/* Takes b as a run into the heap. */
static int hold_batch(struct reorder *ro, struct batch *b)
{
	struct held_batch *hb = ro->free_hb;
	uint64_t now_real = clock_ns(CLOCK_REALTIME), lag_max = ro->st.lag_max_ns;
	uint64_t unstamped = 0, prev = 0;
	bool sorted = true;

	if (!b->count) {
		window_release(ro->in, b);
		return 0;
	}
	if (ro->nb == ro->cap) {
		size_t cap = ro->cap ? ro->cap * 2 : 64;
		struct held_head *h = realloc(ro->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		ro->heap = h;
		ro->cap = cap;
	}
	if (hb)
		ro->free_hb = hb->next;
	else if (!(hb = calloc(1, sizeof(*hb))))
		return -ENOMEM;
	hb->next = NULL;
	hb->b = b;
	hb->pos = 0;
	hb->permuted = false;
	hb->order = ro->order;
	hb->arrival_ns = mono_ns();
	hb->unstamped_ns = now_real;
	for (uint32_t i = 0; i < b->count; i++) {
		uint64_t stamp = b->recs[i].recv_ns;

		if (!stamp) {
			/* No kernel stamp: the best we know is now. */
			stamp = now_real;
			unstamped++;
		} else if (now_real > stamp && now_real - stamp > lag_max) {
			lag_max = now_real - stamp;
		}
		sorted &= stamp >= prev;
		prev = stamp;
	}
	if (!sorted) {
		if (sort_batch(hb)) {
			hb_recycle(ro, hb);
			return -ENOMEM;
		}
		hb->permuted = true;
	}
	ro->order += b->count;
	if (unstamped)
		stat_add(&ro->st.unstamped, unstamped);
	ro->heap[ro->nb] = head_of(hb);
	sift_up(ro->heap, ro->nb++);
	ro->n += b->count;
	if (lag_max > ro->st.lag_max_ns)
		__atomic_store_n(&ro->st.lag_max_ns, lag_max, __ATOMIC_RELAXED);
	if (ro->n > ro->st.held_hwm)
		__atomic_store_n(&ro->st.held_hwm, ro->n, __ATOMIC_RELAXED);
	return 0;
}

/* Hands the output batch being filled to the output stage. */
static void push_out(struct reorder *ro)
{
	if (!ro->ob)
		return;
	window_push(ro->out, ro->ob, ro->ob_room);
	ro->ob = NULL;
	ro->ob_room = 0;
}

/* Writes the first held message (the head of the heap's first batch) into
 * the output window. Returns 0, or -EINTR when force stopped the wait for
 * room. */
static int write_top(struct reorder *ro)
{
	struct held_head m = ro->heap[0];
	struct held_batch *hb = m.hb;
	const struct msg_rec *r = &hb->b->recs[head_idx(hb)];
	struct msg_rec *o;

	if (!ro->ob) {
		uint32_t room = 0;

		while (!room) {
			if (flag_get(ro->force))
				return -EINTR;
			room = window_reserve(ro->out, ro->out->batch_cap, ro->force, POLL_MS);
		}
		ro->ob = window_batch_get(ro->out);
		if (!ro->ob) {
			window_unreserve(ro->out, room);
			return -ENOMEM;
		}
		ro->ob_room = room;
	}
	o = batch_add(ro->ob, r->len);
	if (!o)
		return -ENOMEM;
	memcpy(ro->ob->data + o->off, hb->b->data + r->off, r->len);
	o->sock = r->sock;
	o->listener = r->listener;
	o->truncated = r->truncated;
	o->recv_ns = r->recv_ns;
	o->src = r->src;
	o->src_len = r->src_len;
	if (ro->ob->count == ro->ob_room)
		push_out(ro);

	if (m.stamp < ro->last_stamp)
		stat_add(&ro->st.late, 1);
	else
		ro->last_stamp = m.stamp;
	stat_add(&ro->st.merged, 1);

	ro->n--;
	if (++hb->pos < hb->b->count) {
		/* The batch's next message takes its place. */
		ro->heap[0] = head_of(hb);
	} else {
		window_release(ro->in, hb->b);
		hb->b = NULL;
		hb_recycle(ro, hb);
		ro->heap[0] = ro->heap[--ro->nb];
	}
	if (ro->nb)
		sift_down(ro->heap, ro->nb, 0);
	return 0;
}

/*
 * Held long enough: its stamp is `hold` old, or (the wall clock stepped
 * back) it came in `hold` ago. Both up to `slack` early: what falls due
 * within the next slack goes out in this round, so the stage wakes about
 * once per slack, not once per message.
 */
static bool due(const struct reorder *ro, const struct held_head *m, uint64_t now_real,
		uint64_t now_mono)
{
	uint64_t hold = ro->hold_ns - ro->slack_ns;

	return m->stamp + hold <= now_real || m->hb->arrival_ns + hold <= now_mono;
}

/*
 * Writes what is due (everything with all), then hands it on. Held messages
 * still fill the input window: past half of it, the oldest are written
 * before their hold ends, so that the workers never stop reading (and the
 * kernel never drops) because of the hold.
 */
static int write_due(struct reorder *ro, bool all)
{
	uint64_t now_real = clock_ns(CLOCK_REALTIME), now_mono = mono_ns();
	uint64_t most = ro->in->max_msgs / 2;
	int err = 0;

	while (ro->n && (all || ro->n > most || due(ro, &ro->heap[0], now_real, now_mono)))
		if ((err = write_top(ro)))
			break;
	push_out(ro);
	return err;
}

/*
 * Something is held: sleep until the first held message is due (at most
 * SLEEP_MAX_NS, so that the input window is looked at often), instead of
 * waking for every batch a worker pushes; what they pushed meanwhile is
 * taken all at once.
 */
static void sleep_until_due(const struct reorder *ro)
{
	/* Until it is fully due: that round then takes the next slack too. */
	uint64_t now = clock_ns(CLOCK_REALTIME), at = ro->heap[0].stamp + ro->hold_ns;
	struct timespec ts;

	if (at <= now)
		return;
	ts = ns_to_timespec(at - now > SLEEP_MAX_NS ? SLEEP_MAX_NS : at - now);
	nanosleep(&ts, NULL);
}

static void *reorder_main(void *arg)
{
	struct reorder *ro = arg;
	int err = 0;

	pthread_setname_np(pthread_self(), "reorder");
	while (!flag_get(ro->force) && !err) {
		struct batch *b;

		if (ro->n) {
			sleep_until_due(ro);
			b = window_pop(ro->in, 0);
		} else {
			b = window_pop(ro->in, POLL_MS);
		}
		if (!b && window_done(ro->in))
			break;
		/* Everything queued now, then what is due. */
		while (b && !err) {
			err = hold_batch(ro, b);
			b = err ? NULL : window_pop(ro->in, 0);
		}
		if (!err)
			err = write_due(ro, false);
	}
	if (!err && !flag_get(ro->force))
		err = write_due(ro, true);
	if (err && err != -EINTR) {
		pr_warn("--ordered: %s (the rest is written unordered)\n", strerror(-err));
		ro->error = err;
	}
	/* On an error, what is still held goes out as it is; on force, nothing. */
	while (ro->n && !flag_get(ro->force) && !write_top(ro))
		;
	push_out(ro);
	window_close(ro->out);
	return NULL;
}

struct reorder *reorder_new(struct window *in, struct window *out, uint64_t hold_ns,
			    const volatile int *force)
{
	struct reorder *ro = calloc(1, sizeof(*ro));

	if (!ro)
		return NULL;
	ro->in = in;
	ro->out = out;
	ro->hold_ns = hold_ns;
	ro->slack_ns = hold_ns / 2 < SLACK_NS ? hold_ns / 2 : SLACK_NS;
	ro->force = force;
	ro->st.hold_ns = hold_ns;
	return ro;
}

int reorder_start(struct reorder *ro)
{
	int err = pthread_create(&ro->thread, NULL, reorder_main, ro);

	if (err)
		return -err;
	ro->started = true;
	return 0;
}

int reorder_join(struct reorder *ro)
{
	if (!ro->started)
		return 0;
	pthread_join(ro->thread, NULL);
	ro->started = false;
	return ro->error;
}

static void hb_free(struct held_batch *hb)
{
	free(hb->perm);
	free(hb);
}

void reorder_free(struct reorder *ro)
{
	if (!ro)
		return;
	reorder_join(ro);
	while (ro->free_hb) {
		struct held_batch *hb = ro->free_hb;

		ro->free_hb = hb->next;
		hb_free(hb);
	}
	/* Batches still held (force) go back to the input window, which frees
	 * them: one heap entry each. */
	for (size_t i = 0; i < ro->nb; i++) {
		window_release(ro->in, ro->heap[i].hb->b);
		hb_free(ro->heap[i].hb);
	}
	free(ro->heap);
	free(ro);
}

void reorder_get_stats(struct reorder *ro, struct reorder_stats *out)
{
	out->hold_ns = ro->hold_ns;
	out->merged = __atomic_load_n(&ro->st.merged, __ATOMIC_RELAXED);
	out->late = __atomic_load_n(&ro->st.late, __ATOMIC_RELAXED);
	out->unstamped = __atomic_load_n(&ro->st.unstamped, __ATOMIC_RELAXED);
	out->held_hwm = __atomic_load_n(&ro->st.held_hwm, __ATOMIC_RELAXED);
	out->lag_max_ns = __atomic_load_n(&ro->st.lag_max_ns, __ATOMIC_RELAXED);
}
