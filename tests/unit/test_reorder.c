// SPDX-License-Identifier: MIT
/*
 * The --ordered stage through its public API, with real windows and its
 * thread: batches pushed as workers push them (each message stamped as the
 * kernel would), read back from the output window as the output stage reads
 * it. The merge puts them in stamp order; a message that comes after a later
 * one was written is written at once and counted late; the output window's
 * bound holds.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/clock.h"
#include "rx/path/reorder.h"

#define MS 1000000ULL

static volatile int force;

struct stage {
	struct window in, out;
	struct reorder *ro;
};

static void stage_open_in(struct stage *s, uint64_t in_msgs, uint64_t hold_ns, uint64_t out_msgs)
{
	force = 0;
	assert_int_equal(window_init(&s->in, in_msgs, 64 << 20, 64), 0);
	assert_int_equal(window_init(&s->out, out_msgs, 64 << 20, 64), 0);
	s->ro = reorder_new(&s->in, &s->out, hold_ns, &force);
	assert_non_null(s->ro);
	assert_int_equal(reorder_start(s->ro), 0);
}

static void stage_open(struct stage *s, uint64_t hold_ns, uint64_t out_msgs)
{
	stage_open_in(s, 10000, hold_ns, out_msgs);
}

static void stage_close(struct stage *s, struct reorder_stats *st)
{
	assert_int_equal(reorder_join(s->ro), 0);
	reorder_get_stats(s->ro, st);
	reorder_free(s->ro);
	window_destroy(&s->in);
	window_destroy(&s->out);
}

/* One worker batch: message i is "m<ids[i]>" with kernel stamp stamps[i]. */
static void push(struct stage *s, const uint64_t *stamps, const int *ids, unsigned int n)
{
	uint32_t room = window_reserve(&s->in, n, &force, 1000);
	struct batch *b = window_batch_get(&s->in);

	assert_int_equal(room, n);
	assert_non_null(b);
	for (unsigned int i = 0; i < n; i++) {
		char text[16];
		int len = snprintf(text, sizeof(text), "m%d", ids[i]);
		struct msg_rec *r = batch_add(b, len);

		assert_non_null(r);
		memcpy(b->data + r->off, text, len);
		r->sock = i % 3;
		r->recv_ns = stamps[i];
	}
	window_push(&s->in, b, room);
}

/* Reads up to max ids from the output window, as the output stage does,
 * until the window is done or timeout_ms passes without a batch. */
static unsigned int drain(struct stage *s, int *ids, unsigned int max, int timeout_ms)
{
	unsigned int n = 0;
	struct batch *b;

	while ((b = window_pop(&s->out, timeout_ms))) {
		for (uint32_t i = 0; i < b->count; i++) {
			char text[16] = "";

			assert_true(n < max);
			memcpy(text, b->data + b->recs[i].off, b->recs[i].len);
			assert_int_equal(sscanf(text, "m%d", &ids[n]), 1);
			n++;
		}
		window_release(&s->out, b);
	}
	return n;
}

static void test_merges_batches_by_kernel_stamp(void **state)
{
	uint64_t t = clock_ns(CLOCK_REALTIME);
	/* Two workers' batches of one flow, interleaved, pushed out of order;
	 * 5 and 6 share a stamp and keep their arrival order. */
	uint64_t a[] = { t + 2, t + 4, t + 6, t + 6 };
	int ida[] = { 2, 4, 5, 6 };
	uint64_t b[] = { t + 1, t + 3, t + 7 };
	int idb[] = { 1, 3, 7 };
	struct reorder_stats st;
	struct stage s;
	int got[16];

	stage_open(&s, 200 * MS, 10000);
	push(&s, a, ida, 4);
	push(&s, b, idb, 3);
	window_close(&s.in);
	assert_int_equal(drain(&s, got, 16, 5000), 7);
	for (int i = 0; i < 7; i++)
		assert_int_equal(got[i], i + 1);
	stage_close(&s, &st);
	assert_int_equal(st.merged, 7);
	assert_int_equal(st.late, 0);
	assert_int_equal(st.unstamped, 0);
	assert_int_equal(st.held_hwm, 7);
	assert_int_equal(st.hold_ns, 200 * MS);
}

static void test_holds_then_writes_late_ones_at_once(void **state)
{
	uint64_t t = clock_ns(CLOCK_REALTIME);
	uint64_t first[] = { t }, early[] = { t - 1 }, later[] = { t + 1 };
	int id1[] = { 1 }, id0[] = { 0 }, id2[] = { 2 };
	struct reorder_stats st;
	struct stage s;
	int got[4];

	/* A second's hold: the message is not out at once, and is within 3 s. */
	stage_open(&s, 1000 * MS, 10000);
	push(&s, first, id1, 1);
	assert_null(window_pop(&s.out, 0));
	assert_int_equal(drain(&s, got, 4, 3000), 1);
	assert_int_equal(got[0], 1);
	/* Stamped before the one written: late, written at once (its hold is
	 * long past). Then one stamped after it: in order, not late. */
	push(&s, early, id0, 1);
	push(&s, later, id2, 1);
	window_close(&s.in);
	assert_int_equal(drain(&s, got, 4, 5000), 2);
	assert_int_equal(got[0], 0);
	assert_int_equal(got[1], 2);
	stage_close(&s, &st);
	assert_int_equal(st.merged, 3);
	assert_int_equal(st.late, 1);
}

/* 2000 messages of one flow dealt round-robin over 8 "sockets" in batches of
 * 50, the batches pushed in a shuffled order, into an output window of 64:
 * the output reads 0..1999 in order. No stamp: placed by arrival, counted. */
static void test_shuffled_batches_through_a_small_window(void **state)
{
	enum { N = 2000, SOCKS = 8, PER = 50 };
	uint64_t t = clock_ns(CLOCK_REALTIME) - 10 * MS;
	static int got[N + 1];
	struct reorder_stats st;
	struct stage s;
	unsigned int order[N / PER];
	uint64_t z[] = { 0 };
	int idz[] = { N };

	for (unsigned int i = 0; i < N / PER; i++)
		order[i] = i;
	srand(14);
	for (unsigned int i = N / PER - 1; i > 0; i--) {
		unsigned int j = rand() % (i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	stage_open(&s, 500 * MS, 64);
	/* Batch k holds the k-th run of PER messages of socket (k % SOCKS). */
	for (unsigned int k = 0; k < N / PER; k++) {
		unsigned int bk = order[k], sock = bk % SOCKS, run = bk / SOCKS;
		uint64_t stamps[PER];
		int ids[PER];

		for (unsigned int i = 0; i < PER; i++) {
			ids[i] = (run * PER + i) * SOCKS + sock;
			stamps[i] = t + ids[i];
		}
		push(&s, stamps, ids, PER);
	}
	push(&s, z, idz, 1);
	window_close(&s.in);
	assert_int_equal(drain(&s, got, N + 1, 5000), N + 1);
	for (int i = 0; i <= N; i++)
		assert_int_equal(got[i], i);
	stage_close(&s, &st);
	assert_int_equal(st.merged, N + 1);
	assert_int_equal(st.late, 0);
	assert_int_equal(st.unstamped, 1);
}

/* balancing.md: "Held messages still occupy the input window (the memory
 * bound holds); past half of it the oldest are written early, so the hold
 * never stops the workers." A hold of a minute, an input window of 100
 * messages, and 300 pushed by a worker that waits at most 1 s for room (push
 * asserts it got it): the workers go on, and all but the newest half window
 * are out, in stamp order, long before their hold ends. */
static void test_held_past_half_the_window_are_written_early(void **state)
{
	enum { WIN = 100, N = 300, PER = 10 };
	uint64_t t = clock_ns(CLOCK_REALTIME);
	static int got[N];
	struct reorder_stats st;
	struct stage s;
	unsigned int n = 0;
	struct batch *b;

	stage_open_in(&s, WIN, 60000 * MS, 10000);
	for (int k = 0; k < N / PER; k++) {
		uint64_t stamps[PER];
		int ids[PER];

		for (int i = 0; i < PER; i++) {
			ids[i] = k * PER + i;
			stamps[i] = t + ids[i];
		}
		push(&s, stamps, ids, PER);
	}
	while (n < N - WIN / 2 && (b = window_pop(&s.out, 5000))) {
		for (uint32_t i = 0; i < b->count; i++) {
			char text[16] = "";

			memcpy(text, b->data + b->recs[i].off, b->recs[i].len);
			assert_int_equal(sscanf(text, "m%d", &got[n]), 1);
			assert_int_equal(got[n], (int)n);
			n++;
		}
		window_release(&s.out, b);
	}
	assert_true(n >= N - WIN / 2);
	window_close(&s.in);
	n += drain(&s, got + n, N - n, 5000);
	assert_int_equal(n, N);
	stage_close(&s, &st);
	assert_int_equal(st.merged, N);
	assert_int_equal(st.late, 0);
	assert_true(st.held_hwm <= WIN);
}

/* The merge of batch heads is the stamp order of every held message: batches
 * with inversions inside (sorted on arrival) and stamps shared across and
 * within batches (arrival order kept: batch by batch, then by index) come
 * out as a stable sort of everything pushed. */
static void test_runs_with_inversions_and_ties_equal_a_stable_sort(void **state)
{
	enum { BATCHES = 120, MAXN = 40 };
	static uint64_t all_stamp[BATCHES * MAXN];
	static int ref[BATCHES * MAXN], got[BATCHES * MAXN];
	uint64_t t = clock_ns(CLOCK_REALTIME) - 10 * MS;
	struct reorder_stats st;
	struct stage s;
	unsigned int total = 0;

	srand(24);
	stage_open(&s, 500 * MS, 10000);
	for (unsigned int k = 0; k < BATCHES; k++) {
		unsigned int n = 1 + rand() % MAXN;
		uint64_t stamps[MAXN];
		int ids[MAXN];

		for (unsigned int i = 0; i < n; i++) {
			/* Mostly rising within a batch, some steps back, many ties. */
			stamps[i] = t + (rand() % 8 ? k * 3 + i : (unsigned int)rand() % 200) / 2;
			ids[i] = total;
			all_stamp[total++] = stamps[i];
		}
		push(&s, stamps, ids, n);
	}
	window_close(&s.in);
	/* The reference: ids in (stamp, arrival) order, an insertion sort. */
	for (unsigned int i = 0; i < total; i++) {
		unsigned int j = i;

		while (j && all_stamp[ref[j - 1]] > all_stamp[i]) {
			ref[j] = ref[j - 1];
			j--;
		}
		ref[j] = i;
	}
	assert_int_equal(drain(&s, got, total, 5000), total);
	for (unsigned int i = 0; i < total; i++)
		assert_int_equal(got[i], ref[i]);
	stage_close(&s, &st);
	assert_int_equal(st.merged, total);
	assert_int_equal(st.late, 0);
	assert_int_equal(st.held_hwm, total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merges_batches_by_kernel_stamp),
		cmocka_unit_test(test_holds_then_writes_late_ones_at_once),
		cmocka_unit_test(test_shuffled_batches_through_a_small_window),
		cmocka_unit_test(test_runs_with_inversions_and_ties_equal_a_stable_sort),
		cmocka_unit_test(test_held_past_half_the_window_are_written_early),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
