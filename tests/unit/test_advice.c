// SPDX-License-Identifier: MIT
/* The advice rules on synthetic measurements: which setting, and how much. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "rx/settings/advice.h"

static const struct advice_item *find(const struct advice *a, const char *name)
{
	for (unsigned int i = 0; i < a->n; i++)
		if (!strcmp(a->items[i].flag, name) || !strcmp(a->items[i].sysctl, name) ||
		    !strcmp(a->items[i].bug, name) || !strcmp(a->items[i].limit, name))
			return &a->items[i];
	return NULL;
}

/* Four sockets, two workers, 10 s of traffic, 4 KiB pages. */
static struct advice_input base(struct advice_sock *s, uint64_t *busy)
{
	return (struct advice_input){
		.nsocks = 4,
		.nworkers = 2,
		.ncpus = 2,
		.balance = BALANCE_RANDOM,
		.traced = true,
		.socks = s,
		.worker_busy_ns = busy,
		.active_seconds = 10,
		.window = 10000,
		.window_bytes = 64 << 20,
		.rmem_max = 212992,
		.udp_mem = { 100000, 150000, 200000 },
		.page_size = 4096,
	};
}

static void test_no_drops_no_advice(void **state)
{
	struct advice_sock s[4] = { { .received = 1000 }, { .received = 1000 } };
	uint64_t busy[2] = { 1000000, 1000000 };
	struct advice_input in = base(s, busy);
	struct advice a;

	advice_compute(&in, &a);
	assert_int_equal(a.n, 0);
}

/* Workers drained 100,000/s per busy second and were offered 9,000/s: the
 * drops were a burst; the rcvbuf must hold hwm + what did not fit, x2. */
static void test_burst_wants_rcvbuf(void **state)
{
	struct advice_sock s[4];
	uint64_t busy[2] = { 450000000, 450000000 }; /* 0.45 s each for 45,000 msgs */
	struct advice_input in = base(s, busy);
	const struct advice_item *it;
	struct advice a;

	for (int i = 0; i < 4; i++)
		s[i] = (struct advice_sock){ .received = 22500,
					     .bytes = 22500 * 1000ULL,
					     .rcvbuf = 212992,
					     .queue_hwm_bytes = 211968 };
	s[1].drops = s[1].drops_rcvbuf = 100;
	s[1].drop_bytes = 100 * 2304; /* 230,400: 211,968 + 230,400 = 442,368 */
	advice_compute(&in, &a);
	it = find(&a, "--rcvbuf");
	assert_non_null(it);
	assert_string_equal(it->value, "1M"); /* 2 x 442,368 -> next power of two */
	assert_null(find(&a, "--threads"));
	assert_null(find(&a, "--balance"));
	/* 1M / 2 is above rmem_max 212,992: say how to get it without CAP_NET_ADMIN. */
	it = find(&a, "net.core.rmem_max");
	assert_non_null(it);
	assert_string_equal(it->value, "524288");
}

/* Without a measured truesize: payload + an skb's overhead per drop. */
static void test_burst_without_drop_bytes(void **state)
{
	struct advice_sock s[4] = {};
	uint64_t busy[2] = { 100000000, 100000000 };
	struct advice_input in = base(s, busy);
	struct advice a;

	s[0] = (struct advice_sock){ .received = 10000,
				     .bytes = 10000 * 1000ULL,
				     .rcvbuf = 212992,
				     .queue_hwm_bytes = 212000,
				     .drops = 1000,
				     .drops_rcvbuf = 1000 };
	advice_compute(&in, &a);
	/* 212,000 + 1000 x 2024 = 2,236,000, x2 -> 8M */
	assert_string_equal(find(&a, "--rcvbuf")->value, "8M");
}

/* One flow hashed onto worker 1's socket, 13,000/s offered, 10,000/s drained
 * per busy second: random over two workers (20,000/s) holds it. */
static void test_hash_one_flow_wants_random(void **state)
{
	struct advice_sock s[4] = {};
	uint64_t busy[2] = { 0, 10000000000ULL }; /* worker 1 busy the whole 10 s */
	struct advice_input in = base(s, busy);
	const struct advice_item *it;
	struct advice a;

	in.balance = BALANCE_HASH;
	s[3] = (struct advice_sock){ .received = 100000,
				     .rcvbuf = 212992,
				     .queue_hwm_bytes = 212000,
				     .drops = 30000,
				     .drops_rcvbuf = 30000 };
	advice_compute(&in, &a);
	it = find(&a, "--balance");
	assert_non_null(it);
	assert_string_equal(it->value, "random");
	assert_null(find(&a, "--threads")); /* 13,000 x 1.25 / 10,000 -> 2 workers: enough */
	assert_null(find(&a, "--rcvbuf"));
}

/* The same flow at 40,000/s: random alone is not enough, 5 workers are. */
static void test_hash_one_flow_wants_random_and_threads(void **state)
{
	struct advice_sock s[4] = {};
	uint64_t busy[2] = { 0, 10000000000ULL };
	struct advice_input in = base(s, busy);
	struct advice a;

	in.balance = BALANCE_HASH;
	in.ncpus = 8;
	s[1] = (struct advice_sock){
		.received = 100000, .rcvbuf = 212992, .drops = 300000, .drops_rcvbuf = 300000
	};
	advice_compute(&in, &a);
	assert_string_equal(find(&a, "--balance")->value, "random");
	assert_string_equal(find(&a, "--threads")->value, "5"); /* 40,000 x 1.25 / 10,000 */
	assert_string_equal(find(&a, "--sockets")->value, "5"); /* more threads than 4 sockets */
}

/* Spread evenly and still above what the workers drain: more threads. */
static void test_random_overload_wants_threads(void **state)
{
	struct advice_sock s[4];
	uint64_t busy[2] = { 10000000000ULL, 10000000000ULL };
	struct advice_input in = base(s, busy);
	const struct advice_item *it;
	struct advice a;

	/* 25,000/s offered in all; each worker drains 10,000/s per busy second. */
	for (int i = 0; i < 4; i++)
		s[i] = (struct advice_sock){
			.received = 50000, .rcvbuf = 212992, .drops = 12500, .drops_rcvbuf = 12500
		};
	advice_compute(&in, &a);
	assert_null(find(&a, "--balance"));
	it = find(&a, "--threads");
	assert_non_null(it);
	assert_string_equal(it->value, "4"); /* 25,000 x 1.25 / 10,000 = 3.1 -> 4 */
	assert_non_null(strstr(it->why, "more than this machine's CPUs"));
}

static void test_proto_mem_wants_udp_mem(void **state)
{
	struct advice_sock s[4] = {};
	uint64_t busy[2] = { 1000000, 1000000 };
	struct advice_input in = base(s, busy);
	const struct advice_item *it;
	struct advice a;

	for (int i = 0; i < 4; i++)
		s[i].rcvbuf = 64 << 20;
	s[2].received = 1000;
	s[2].drops = s[2].drops_proto_mem = 50;
	advice_compute(&in, &a);
	it = find(&a, "net.ipv4.udp_mem");
	assert_non_null(it);
	/* 200,000 pages + 4 x 64 MiB / 4 KiB = 265,536; ratios kept */
	assert_string_equal(it->value, "132768 199152 265536");
	assert_null(find(&a, "--rcvbuf"));
}

static void test_selection_failures_are_a_bug(void **state)
{
	struct advice_sock s[4] = {};
	uint64_t busy[2] = {};
	struct advice_input in = base(s, busy);
	struct advice a;

	in.selection_failures = 3;
	advice_compute(&in, &a);
	assert_int_equal(a.n, 1);
	assert_string_equal(a.items[0].bug, "selection_failures");
	assert_non_null(strstr(a.items[0].why, "report"));
}

/* The output stage filled the window: the burst wants a larger window. */
static void test_window_full_wants_window(void **state)
{
	struct advice_sock s[4] = {};
	uint64_t busy[2] = { 100000000, 100000000 };
	struct advice_input in = base(s, busy);
	struct advice a;

	s[0] = (struct advice_sock){
		.received = 20000, .rcvbuf = 212992, .drops = 3000, .drops_rcvbuf = 3000
	};
	in.window_hwm = 10000;
	in.window_full_seconds = 0.8;
	advice_compute(&in, &a);
	assert_string_equal(find(&a, "--window")->value, "32768"); /* (10000 + 3000) x 2 */
	assert_null(find(&a, "--rcvbuf"));
}

/* With the window full for `full` s and the output thread busy `busy` s:
 * the output stage's CPU is named (and no larger window), or the window is. */
static const struct advice_item *full_and_busy(struct advice_input *in, struct advice *a,
					       double full, double busy, bool cpu)
{
	in->window_full_seconds = full;
	in->output_busy_seconds = busy;
	advice_compute(in, a);
	if (cpu) {
		assert_null(find(a, "--window"));
		assert_null(find(a, "--rcvbuf"));
		assert_non_null(find(a, "output_cpu"));
	} else {
		assert_null(find(a, "output_cpu"));
		assert_non_null(find(a, "--window"));
	}
	return find(a, "output_cpu");
}

/* The window was full because the output stage's thread could not keep up
 * (running or waiting to run 9.5 of the 10 s traffic came): the advice names
 * the output stage's CPU and what costs less, never a larger window. An
 * output thread mostly asleep (a slow destination) still gets the window. */
static void test_output_cpu_is_named_not_window(void **state)
{
	static const struct {
		enum out_format format;
		bool json_raw;
		const char *value, *says;
	} cases[] = {
		{ FORMAT_JSON, true, "without --json-raw", "about half the bytes" },
		{ FORMAT_JSON, false, "--format raw", "raw lines cost the least" },
		{ FORMAT_RFC5424, false, "--format raw", "raw lines cost the least" },
		{ FORMAT_RAW, false, "", "a CPU of its own" },
	};
	struct advice_sock s[4] = {};
	uint64_t busy[2] = { 100000000, 100000000 };
	struct advice_input in = base(s, busy);
	const struct advice_item *it;
	struct advice a;

	s[0] = (struct advice_sock){
		.received = 20000, .rcvbuf = 212992, .drops = 3000, .drops_rcvbuf = 3000
	};
	in.window_hwm = 10000;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		in.format = cases[i].format;
		in.json_raw = cases[i].json_raw;
		it = full_and_busy(&in, &a, 6.7, 9.5, true);
		assert_string_equal(it->value, cases[i].value);
		assert_non_null(strstr(it->why,
				       "output stage's thread was on a CPU or waiting for one "
				       "9.500 of the 10.000 s traffic came (95%)"));
		assert_non_null(strstr(it->why, cases[i].says));
		full_and_busy(&in, &a, 6.7, 2.0, false); /* mostly asleep */
	}
	/* measured (loggen at 234,000/s, json --json-raw): full 5.0 s, busy 6.05 */
	full_and_busy(&in, &a, 5.0, 6.05, true);
	/* busy less than the window was full: it slept (a slow destination) */
	full_and_busy(&in, &a, 7.0, 5.5, false);
	/* a short stall (full 1 s) in a run where the thread was busy 4 of 10 s */
	full_and_busy(&in, &a, 1.0, 4.0, false);
}

static void test_untraced_gives_no_drop_advice(void **state)
{
	struct advice_sock s[4] = { { .drops = 10, .drops_rcvbuf = 10 } };
	uint64_t busy[2] = {};
	struct advice_input in = base(s, busy);
	struct advice a;

	in.traced = false;
	advice_compute(&in, &a);
	assert_int_equal(a.n, 0);
}

/* Issue 25: one sender with most of the drops on a hashed group, spread over
 * the workers' load so the per-worker rule alone would not see it: random,
 * naming the sender; no second --balance, no extra thread for it. */
static void test_one_sender_on_hash_wants_random(void **state)
{
	struct advice_sock s[4];
	uint64_t busy[2] = { 450000000, 450000000 };
	struct advice_input in = base(s, busy);
	const struct advice_item *it;
	struct advice a;
	unsigned int balances = 0;

	in.balance = BALANCE_HASH;
	for (int i = 0; i < 4; i++)
		s[i] = (struct advice_sock){ .received = 22500,
					     .bytes = 22500 * 1000ULL,
					     .rcvbuf = 212992,
					     .queue_hwm_bytes = 211968 };
	s[1].drops = s[1].drops_rcvbuf = 100;
	in.senders = (struct advice_senders){ .have = true,
					      .drops = 100,
					      .losing = 2,
					      .worst = "192.0.2.7",
					      .worst_drops = 90,
					      .worst_offered = 1000,
					      .max_loss_ratio = 0.09 };
	advice_compute(&in, &a);
	it = find(&a, "--balance");
	assert_non_null(it);
	assert_string_equal(it->value, "random");
	assert_non_null(strstr(it->why, "sender 192.0.2.7 caused 90 of the 100 drops"));
	for (unsigned int i = 0; i < a.n; i++)
		balances += !strcmp(a.items[i].flag, "--balance");
	assert_int_equal(balances, 1);
	assert_null(find(&a, "--threads"));

	/* The same with random already: nothing about balance. */
	in.balance = BALANCE_RANDOM;
	advice_compute(&in, &a);
	assert_null(find(&a, "--balance"));
	/* Half the drops is not most of them. */
	in.balance = BALANCE_HASH;
	in.senders.worst_drops = 50;
	advice_compute(&in, &a);
	assert_null(find(&a, "--balance"));
}

/* Many senders each losing a little: the queue, not a flow. Even where the
 * rates say overload (which alone would ask for threads), a larger rcvbuf. */
static void test_many_senders_a_little_wants_rcvbuf(void **state)
{
	struct advice_sock s[4];
	uint64_t busy[2] = { 10000000000ULL, 10000000000ULL };
	struct advice_input in = base(s, busy);
	const struct advice_item *it;
	struct advice a;

	for (int i = 0; i < 4; i++)
		s[i] = (struct advice_sock){ .received = 50000,
					     .bytes = 50000 * 500ULL,
					     .rcvbuf = 212992,
					     .queue_hwm_bytes = 212000,
					     .drops = 2500,
					     .drops_rcvbuf = 2500 };
	in.senders = (struct advice_senders){ .have = true,
					      .drops = 10000,
					      .losing = 40,
					      .worst = "192.0.2.9",
					      .worst_drops = 400,
					      .worst_offered = 5400,
					      .max_loss_ratio = 0.074 };
	advice_compute(&in, &a);
	it = find(&a, "--rcvbuf");
	assert_non_null(it);
	assert_non_null(strstr(it->why, "40 senders lost datagrams"));
	assert_null(find(&a, "--threads"));
	assert_null(find(&a, "--balance"));

	/* One of them losing a lot is not "a little": the rates decide again. */
	in.senders.max_loss_ratio = 0.5;
	advice_compute(&in, &a);
	assert_non_null(find(&a, "--threads"));
	assert_null(find(&a, "--rcvbuf"));
}

static void test_format_size(void **state)
{
	char b[32];

	advice_format_size(8ULL << 20, b, sizeof(b));
	assert_string_equal(b, "8M");
	advice_format_size(1ULL << 30, b, sizeof(b));
	assert_string_equal(b, "1G");
	advice_format_size(512 << 10, b, sizeof(b));
	assert_string_equal(b, "512K");
	advice_format_size(1000, b, sizeof(b));
	assert_string_equal(b, "1000");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_drops_no_advice),
		cmocka_unit_test(test_burst_wants_rcvbuf),
		cmocka_unit_test(test_burst_without_drop_bytes),
		cmocka_unit_test(test_hash_one_flow_wants_random),
		cmocka_unit_test(test_hash_one_flow_wants_random_and_threads),
		cmocka_unit_test(test_random_overload_wants_threads),
		cmocka_unit_test(test_proto_mem_wants_udp_mem),
		cmocka_unit_test(test_selection_failures_are_a_bug),
		cmocka_unit_test(test_window_full_wants_window),
		cmocka_unit_test(test_output_cpu_is_named_not_window),
		cmocka_unit_test(test_untraced_gives_no_drop_advice),
		cmocka_unit_test(test_one_sender_on_hash_wants_random),
		cmocka_unit_test(test_many_senders_a_little_wants_rcvbuf),
		cmocka_unit_test(test_format_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
