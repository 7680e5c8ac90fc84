// SPDX-License-Identifier: MIT
/* The input window's memory: the byte bound counts what the held batches
 * take, and the pool of recycled batches is bounded by the window's size and
 * by time since last use. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_counts_batches),
		cmocka_unit_test(test_message_bound_is_exact),
		cmocka_unit_test(test_pool_bounded_by_size),
		cmocka_unit_test(test_pool_expires_when_idle),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
