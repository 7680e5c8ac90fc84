// SPDX-License-Identifier: MIT
/*
 * The max-min fair level (fair_share_level), checked against levels worked
 * out by hand: the senders that want less than the level get all they send,
 * the rest share what is left equally (by weight); protected senders are
 * served first and never limited.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "common/array.h"
#include "net/fair_share.h"

static void test_one_flood_among_quiet_senders(void **state)
{
	/* 10 x 100/s take 1000 of 1800: the flood gets the 800 left. */
	uint64_t rate[11] = { 6000, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100 };
	uint32_t weight[11] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };

	assert_float_equal(fair_share_level(rate, weight, 11, 1800), 800, 1e-9);
}

static void test_two_floods_split_what_is_left(void **state)
{
	uint64_t rate[4] = { 100, 5000, 3000, 200 };
	uint32_t weight[4] = { 1, 1, 1, 1 };

	/* 300 to the quiet two, 1700 / 2 each for the floods. */
	assert_float_equal(fair_share_level(rate, weight, 4, 2000), 850, 1e-9);
}

static void test_a_sender_below_an_equal_split_keeps_its_rate(void **state)
{
	/* An equal split would be 1000 each; 600 is under it, so the others
	 * share 2400: 1200 each. */
	uint64_t rate[3] = { 600, 5000, 5000 };
	uint32_t weight[3] = { 1, 1, 1 };

	assert_float_equal(fair_share_level(rate, weight, 3, 3000), 1200, 1e-9);
}

static void test_weights_and_protected(void **state)
{
	/* The protected 1000/s first; 2000 left for weights 1 and 3: level 500,
	 * so 500/s and 1500/s. */
	uint64_t rate[3] = { 1000, 4000, 4000 };
	uint32_t weight[3] = { 0, 1, 3 };

	assert_float_equal(fair_share_level(rate, weight, 3, 3000), 500, 1e-9);
	/* Protected past the capacity: nothing left for the others. */
	rate[0] = 4000;
	assert_float_equal(fair_share_level(rate, weight, 3, 3000), 0, 1e-9);
}

static void test_all_fit(void **state)
{
	uint64_t rate[3] = { 100, 700, 300 };
	uint32_t weight[3] = { 1, 1, 1 };

	/* Nobody is limited: the level is the largest need. */
	assert_float_equal(fair_share_level(rate, weight, 3, 2000), 700, 1e-9);
	assert_float_equal(fair_share_level(rate, weight, 0, 2000), 0, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_flood_among_quiet_senders),
		cmocka_unit_test(test_two_floods_split_what_is_left),
		cmocka_unit_test(test_a_sender_below_an_equal_split_keeps_its_rate),
		cmocka_unit_test(test_weights_and_protected),
		cmocka_unit_test(test_all_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
