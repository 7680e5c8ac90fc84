// SPDX-License-Identifier: MIT
/* The input window's memory: the byte bound counts what the held batches
 * take (a batch received short of its slots: what it holds), the pool of
 * recycled batches is bounded by the window's size and by time since last
 * use, and the receive slot follows the typical datagram. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>
#include "rx/path/recv_slot.h"
#include "rx/path/window.h"

#define CAP 8

/* A batch of n messages of len bytes, pushed. */
static struct batch *push(struct window *w, uint32_t n, size_t len)
{
	struct batch *b;
	uint32_t got = window_reserve(w, n, &(const int){ 0 }, 0);

	assert_int_equal(got, n);
	b = window_batch_get(w);
	assert_non_null(b);
	for (uint32_t i = 0; i < n; i++)
		assert_non_null(batch_add(b, len));
	window_push(w, b, n);
	return b;
}

static void test_bound_counts_batches(void **state)
{
	struct window w;
	struct window_stats st;
	struct batch *b;

	/* one-message batches: message bytes tiny, the batches are not */
	assert_int_equal(window_init(&w, 100000, 65536, CAP), 0);
	while (window_reserve(&w, 1, &(const int){ 0 }, 0)) {
		window_unreserve(&w, 1);
		push(&w, 1, 10);
	}
	window_get_stats(&w, &st);
	/* stopped once the batches held took 64 KiB, at 10 bytes a message */
	assert_true(st.held_mem >= 65536);
	assert_true(st.held_mem < 65536 + WINDOW_BATCH_MAX(CAP));
	assert_true(st.bytes < 1000);
	assert_int_equal(st.alloc_bytes, st.held_mem);
	while ((b = window_pop(&w, 0)))
		window_release(&w, b);
	window_get_stats(&w, &st);
	assert_int_equal(st.held_mem, 0);
	assert_int_equal(st.msgs, 0);
	/* the pool keeps what fits the bound and frees the rest */
	assert_true(st.alloc_bytes <= 65536);
	assert_true(st.pool > 0);
	window_destroy(&w);
}

/* A batch received into slots: n of 64 slots of 1024 bytes filled, pushed. */
static struct batch *push_received(struct window *w, uint32_t n)
{
	struct batch *b;

	assert_int_equal(window_reserve(w, 64, &(const int){ 0 }, 0), 64);
	b = window_batch_get(w);
	assert_non_null(b);
	assert_int_equal(batch_slots(b, 64, 1024), 0);
	assert_true(b->data_cap >= 64 * 1024);
	for (uint32_t i = 0; i < n; i++) {
		b->recs[i].off = i * 1024;
		b->recs[i].len = 1000;
		memset(b->data + i * 1024, 'x', 1000);
		b->used += 1000;
	}
	b->count = n;
	batch_trim(b, (size_t)n * 1024);
	window_push(w, b, 64);
	return b;
}

/* A batch handed over short of its slots (a burst's end) counts in the
 * byte bound what it holds, not the 64 slots it was read with; a full one
 * keeps its area, and a trimmed one gets its slots back when reused. */
static void test_short_read_counts_what_it_holds(void **state)
{
	const size_t head = sizeof(struct batch) + 64 * sizeof(struct msg_rec);
	struct window w;
	struct window_stats st;
	struct batch *b;

	assert_int_equal(window_init(&w, 100000, 64ULL << 20, 64), 0);
	b = push_received(&w, 2);
	window_get_stats(&w, &st);
	assert_int_equal(st.held_mem, head + 2 * 1024);
	assert_int_equal(st.bytes, 2000);
	assert_ptr_equal(window_pop(&w, 0), b);
	assert_memory_equal(b->data + 1024, (char[1000]){ [0 ... 999] = 'x' }, 1000);
	window_release(&w, b);
	/* the same batch from the pool, full this time */
	assert_ptr_equal(push_received(&w, 64), b);
	window_get_stats(&w, &st);
	assert_int_equal(st.held_mem, head + 64 * 1024);
	assert_int_equal(st.bytes, 64000);
	assert_ptr_equal(window_pop(&w, 0), b);
	window_release(&w, b);
	/* past half full: not worth a realloc, kept whole */
	push_received(&w, 40);
	window_get_stats(&w, &st);
	assert_int_equal(st.held_mem, head + 64 * 1024);
	window_release(&w, window_pop(&w, 0));
	window_destroy(&w);
}

/* The message bound is exact: --window N holds N messages, the (N+1)th
 * reserve waits for room (the wait is the time the window was full) and gets
 * none while nothing is released. */
static void test_message_bound_is_exact(void **state)
{
	struct window w;
	struct window_stats st;
	struct batch *b;
	uint32_t held = 0;

	assert_int_equal(window_init(&w, 10, 1 << 20, CAP), 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(window_reserve(&w, 1, &(const int){ 0 }, 0), 1);
		window_unreserve(&w, 1);
		push(&w, 1, 10);
		held++;
	}
	window_get_stats(&w, &st);
	assert_int_equal(st.msgs, 10);
	assert_true(st.full_seconds == 0);
	/* full: waits its 20 ms (a timed wait is never early), gets nothing */
	assert_int_equal(window_reserve(&w, 1, &(const int){ 0 }, 20), 0);
	window_get_stats(&w, &st);
	assert_true(st.full_seconds >= 0.019);
	assert_int_equal(st.msgs, held);
	b = window_pop(&w, 0);
	assert_non_null(b);
	window_release(&w, b);
	assert_int_equal(window_reserve(&w, 5, &(const int){ 0 }, 0), 1); /* room for one */
	window_unreserve(&w, 1);
	while ((b = window_pop(&w, 0)))
		window_release(&w, b);
	window_destroy(&w);
}

static void test_pool_bounded_by_size(void **state)
{
	struct window w;
	struct window_stats st;
	struct batch *b[64];

	/* 64 batches out at once (spilled, read back): 64 x 16 KiB of data */
	assert_int_equal(window_init(&w, 100000, 256 * 1024, CAP), 0);
	for (int i = 0; i < 64; i++) {
		b[i] = window_batch_get(&w);
		assert_non_null(batch_add(b[i], 1000));
	}
	for (int i = 0; i < 64; i++)
		window_batch_put(&w, b[i]);
	window_get_stats(&w, &st);
	assert_true(st.alloc_bytes <= 256 * 1024);
	assert_true(st.pool < 64 && st.pool > 0);
	window_destroy(&w);
}

static void test_pool_expires_when_idle(void **state)
{
	struct window w;
	struct window_stats st;
	struct batch *b[10], *one;

	assert_int_equal(window_init(&w, 100000, 64ULL << 20, CAP), 0);
	w.pool_idle_ns = 1ULL << 62; /* no expiry while the pool fills */
	for (int i = 0; i < 10; i++)
		b[i] = window_batch_get(&w);
	for (int i = 0; i < 10; i++)
		window_batch_put(&w, b[i]);
	window_get_stats(&w, &st);
	assert_int_equal(st.pool, 10);
	/* a steady user of one batch at a time: 9 batches idle a whole period */
	w.pool_since_ns = 0;
	w.pool_idle_ns = 1; /* every period has passed */
	w.pool_low = 9;	    /* the fewest the pool held in it, one in use */
	one = window_batch_get(&w);
	window_get_stats(&w, &st);
	assert_int_equal(st.pool, 0); /* 9 left the pool, which then held 9 */
	window_batch_put(&w, one);
	window_get_stats(&w, &st);
	/* the one in use came back and stays: the pool was empty meanwhile */
	assert_int_equal(st.pool, 1);
	assert_int_equal(st.alloc_bytes, BATCH_MEM(one));
	for (int i = 0; i < 5; i++) { /* and stays while it is used */
		one = window_batch_get(&w);
		window_batch_put(&w, one);
	}
	window_get_stats(&w, &st);
	assert_int_equal(st.pool, 1);
	/* two in the pool, a period with nobody taking either: at the next
	 * take, the one that was not needed is freed */
	b[0] = window_batch_get(&w);
	b[1] = window_batch_get(&w);
	window_batch_put(&w, b[0]);
	window_batch_put(&w, b[1]);
	w.pool_since_ns = 0;
	w.pool_low = 2;
	one = window_batch_get(&w);
	window_get_stats(&w, &st);
	assert_int_equal(st.pool, 0);
	assert_int_equal(st.alloc_bytes, BATCH_MEM(one));
	window_batch_put(&w, one);
	window_destroy(&w);
}

/* ---- threads: what make test-sanitize runs under ThreadSanitizer ---------- */

#define PRODUCERS 2
#define PER_PRODUCER 20000

static struct window tw;
static const volatile int tstop;
static volatile int peeking = 1;

/* A worker: reserve, fill, push; sometimes a spilled batch put back. */
static void *producer(void *arg)
{
	uint32_t left = PER_PRODUCER, seed = (uintptr_t)arg;

	while (left) {
		uint32_t want = 1 + (seed = seed * 1103515245 + 12345) % CAP, got;
		struct batch *b;

		if (want > left)
			want = left;
		got = window_reserve(&tw, want, &tstop, 100);
		if (!got)
			continue;
		b = window_batch_get(&tw);
		assert_non_null(b);
		for (uint32_t i = 0; i < got; i++)
			assert_non_null(batch_add(b, 1 + (seed >> 16) % 3000));
		if (seed % 17 == 0) { /* spilled: never enters the window */
			window_unreserve(&tw, got);
			window_batch_put(&tw, b);
			continue;
		}
		window_push(&tw, b, got);
		left -= got;
	}
	return NULL;
}

/* A metrics scrape: lock-free reads while everything moves. */
static void *peeker(void *arg)
{
	struct window_stats st;

	while (__atomic_load_n(&peeking, __ATOMIC_RELAXED)) {
		window_peek_stats(&tw, &st);
		assert_true(st.msgs <= st.size);
	}
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t p[PRODUCERS], peek;
	uint64_t taken = 0;
	struct window_stats st;
	struct batch *b;

	assert_int_equal(window_init(&tw, 500, 256 * 1024, CAP), 0);
	tw.pool_idle_ns = 1000000; /* expire often: the trim path runs too */
	assert_int_equal(pthread_create(&peek, NULL, peeker, NULL), 0);
	for (uintptr_t i = 0; i < PRODUCERS; i++)
		assert_int_equal(pthread_create(&p[i], NULL, producer, (void *)(i + 1)), 0);
	while (taken < PRODUCERS * PER_PRODUCER) {
		b = window_pop(&tw, 100);
		if (!b)
			continue;
		taken += b->count;
		window_release(&tw, b);
	}
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	__atomic_store_n(&peeking, 0, __ATOMIC_RELAXED);
	pthread_join(peek, NULL);
	window_get_stats(&tw, &st);
	assert_int_equal(taken, PRODUCERS * PER_PRODUCER);
	assert_int_equal(st.msgs, 0);
	assert_int_equal(st.held_mem, 0);
	assert_true(st.hwm <= 500);
	window_destroy(&tw);
}

/* The receive slot (recv_slot.h) follows the typical datagram: what a
 * batch takes per message is about what its datagrams hold, and an
 * occasional long one does not make every slot 64 KiB. */
/* reads x (64 datagrams, all of len bytes but `big` of 65507) */
static void feed(struct recv_slot *s, unsigned int reads, size_t len, unsigned int big)
{
	for (unsigned int r = 0; r < reads; r++) {
		unsigned int over = (len > s->size ? 64 - big : 0) + (65507 > s->size ? big : 0);
		size_t longest = big ? 65507 : len;
		size_t fit = len <= s->size ? len : 0;

		recv_slot_update(s, 64, over, longest, fit);
	}
}

static void test_follows_the_typical_datagram(void **state)
{
	struct recv_slot s;

	recv_slot_init(&s);
	assert_int_equal(s.size, 2048);
	/* 1000-byte datagrams: 1024 after a quiet while, not before */
	feed(&s, RECV_SLOT_DECAY_READS - 1, 1000, 0);
	assert_int_equal(s.size, 2048);
	feed(&s, 1, 1000, 0);
	assert_int_equal(s.size, 1024);
	/* one 64 KiB datagram in every read: copied past the slots, the slot stays */
	feed(&s, 3 * RECV_SLOT_DECAY_READS, 1000, 1);
	assert_int_equal(s.size, 1024);
	/* 9 of 64 too long (more than an eighth): grows at once to hold them */
	feed(&s, 1, 1000, 9);
	assert_int_equal(s.size, 65536);
	/* and back down once they stop */
	feed(&s, RECV_SLOT_DECAY_READS, 1000, 0);
	assert_int_equal(s.size, 1024);
	/* 1500-byte datagrams, all too long: 1536 at once */
	feed(&s, 1, 1500, 0);
	assert_int_equal(s.size, 1536);
	/* tiny ones: never below RECV_SLOT_ROUND */
	feed(&s, RECV_SLOT_DECAY_READS, 10, 0);
	assert_int_equal(s.size, RECV_SLOT_ROUND);
}

/* A short read (a low rate) with one datagram too long grows: the batch is
 * cut to what it holds anyway (batch_trim). */
static void test_short_read_grows(void **state)
{
	struct recv_slot s;

	recv_slot_init(&s);
	recv_slot_update(&s, 2, 1, 5000, 100);
	assert_int_equal(s.size, 5120);
}

/* Listener lis's batch of one message, reserved in its share and pushed. */
static struct batch *push_for(struct window *w, uint32_t lis)
{
	struct batch *b;

	assert_int_equal(window_reserve_for(w, lis, 1, &(const int){ 0 }, 0), 1);
	b = window_batch_get(w);
	assert_non_null(b);
	batch_add(b, 10)->listener = lis;
	window_push(w, b, 1);
	return b;
}

/* A listener's batches join its taker's queue, in order; each queue holds
 * at most its share of the window, so a taker that stops leaves the others
 * room; a closed window is done per queue. */
static void test_queues_route_by_listener(void **state)
{
	struct window w;
	struct batch *b1, *b2, *b0;

	(void)state;
	assert_int_equal(window_init(&w, 4, 1 << 30, CAP), 0);
	window_route(&w, 2, 1); /* two queues: a share of 2 messages each */
	b1 = push_for(&w, 2);
	b2 = push_for(&w, 2);
	/* listener 2's share is full, the window is not: listener 0 goes on */
	assert_int_equal(window_reserve_for(&w, 2, 1, &(const int){ 0 }, 0), 0);
	b0 = push_for(&w, 0);
	assert_ptr_equal(window_pop_from(&w, 1, 0), b1);
	assert_ptr_equal(window_pop_from(&w, 1, 0), b2);
	assert_null(window_pop_from(&w, 1, 0));
	assert_ptr_equal(window_pop(&w, 0), b0);
	assert_null(window_pop(&w, 0));
	/* released, its share has room again */
	window_release(&w, b1);
	assert_int_equal(window_reserve_for(&w, 2, 5, &(const int){ 0 }, 0), 1);
	window_unreserve_for(&w, 2, 1);
	window_close(&w);
	assert_true(window_done_for(&w, 1));
	window_release(&w, b2);
	window_release(&w, b0);
	window_destroy(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_counts_batches),
		cmocka_unit_test(test_short_read_counts_what_it_holds),
		cmocka_unit_test(test_follows_the_typical_datagram),
		cmocka_unit_test(test_short_read_grows),
		cmocka_unit_test(test_message_bound_is_exact),
		cmocka_unit_test(test_pool_bounded_by_size),
		cmocka_unit_test(test_pool_expires_when_idle),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_queues_route_by_listener),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
