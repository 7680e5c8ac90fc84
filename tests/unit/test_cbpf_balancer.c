// SPDX-License-Identifier: MIT
/*
 * The classic BPF balancer as data: the program is run by a small
 * interpreter of the instructions it may contain, with the kernel's random
 * number replaced by chosen values, so that every index it can return is
 * checked (always below N, each index equally often over a whole period of
 * the random value mod N). Then the join order against the kernel's rule
 * (the last socket takes a leaving socket's place), and the program
 * attached to a real group, as any user can.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <unistd.h>
#include "net/cbpf_balancer.h"
#include "net/socket_group.h"

/* Runs prog with `rand` as SKF_AD_RANDOM's value; -1 for an instruction
 * this interpreter (and so this program) should not contain. */
static int64_t run(const struct sock_filter *prog, unsigned int len, uint32_t rand)
{
	uint32_t a = 0;

	for (unsigned int pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &prog[pc];

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (i->k != (uint32_t)(SKF_AD_OFF + SKF_AD_RANDOM))
				return -1;
			a = rand;
			break;
		case BPF_ALU | BPF_MOD | BPF_K:
			if (i->k == 0)
				return -1;
			a %= i->k;
			break;
		case BPF_RET | BPF_A:
			return a;
		default:
			return -1;
		}
	}
	return -1; /* fell off the end: the kernel's checker refuses that */
}

static void test_indices_below_n_and_even(void **state)
{
	struct sock_filter prog[CBPF_BALANCER_LEN];
	static const uint32_t edges[] = { 0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff };

	for (unsigned int n = 1; n <= 64; n++) {
		unsigned int hits[64] = { 0 };

		assert_int_equal(cbpf_balancer_build(n, prog), 0);
		for (unsigned int e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
			int64_t idx = run(prog, CBPF_BALANCER_LEN, edges[e]);

			assert_true(idx >= 0 && idx < (int64_t)n);
			assert_int_equal(idx, edges[e] % n);
		}
		/* n * 100 consecutive values: each index exactly 100 times. */
		for (uint32_t v = 123456789; v < 123456789 + n * 100; v++)
			hits[run(prog, CBPF_BALANCER_LEN, v)]++;
		for (unsigned int k = 0; k < n; k++)
			assert_int_equal(hits[k], 100);
	}
	assert_int_equal(cbpf_balancer_build(0, prog), -EINVAL);
}

static void test_join_order_follows_the_kernel(void **state)
{
	struct cbpf_order o = { 0 };

	for (unsigned int id = 0; id < 6; id++)
		assert_int_equal(cbpf_order_join(&o, id), 0);
	/* 0 1 2 3 4 5: socket 2 leaves, 5 takes index 2. */
	assert_int_equal(cbpf_order_leave(&o, 2), 2);
	assert_int_equal(o.nr, 5);
	assert_int_equal(o.id[2], 5);
	/* 0 1 5 3 4: the last leaving changes nobody else's place. */
	assert_int_equal(cbpf_order_leave(&o, 4), 4);
	assert_int_equal(cbpf_order_index(&o, 3), 3);
	/* 0 1 5 3 + 6 */
	assert_int_equal(cbpf_order_join(&o, 6), 0);
	assert_int_equal(cbpf_order_index(&o, 6), 4);
	assert_int_equal(cbpf_order_leave(&o, 0), 0);
	assert_int_equal(o.id[0], 6);
	assert_int_equal(cbpf_order_leave(&o, 42), -ENOENT);
	assert_int_equal(cbpf_order_index(&o, 0), -ENOENT);
	cbpf_order_free(&o);
}

static void test_attaches_to_a_real_group(void **state)
{
	struct socket_group g;

	assert_int_equal(socket_group_open(&g, "127.0.0.1:0", 4, 0), 0);
	for (unsigned int n = 1; n <= 4; n++)
		assert_int_equal(cbpf_balancer_attach(g.socks[n % 4].fd, n), 0);
	assert_int_equal(cbpf_balancer_attach(g.socks[0].fd, 0), -EINVAL);
	socket_group_close(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_indices_below_n_and_even),
		cmocka_unit_test(test_join_order_follows_the_kernel),
		cmocka_unit_test(test_attaches_to_a_real_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
