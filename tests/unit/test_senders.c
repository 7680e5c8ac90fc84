// SPDX-License-Identifier: MIT
/*
 * The worker's per-sender table (rx/path/senders.h) and the report's merge
 * (net/sender_view.h): bounded whatever arrives, every datagram accounted
 * for (in a slot or evicted), a heavy sender kept through a flood of forged
 * one-datagram addresses, rows merged and ordered worst first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include "common/sockaddr.h"
#include "net/sender_view.h"
#include "rx/path/senders.h"

static void v4(uint8_t out[16], uint32_t host)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(host) };

	assert_int_equal(sockaddr_addr16((struct sockaddr *)&sin, sizeof(sin), out), 0);
}

struct sum {
	uint64_t slots, count, heavy;
	uint8_t heavy_addr[16];
};

static int add(const uint8_t addr[16], uint64_t count, void *ctx)
{
	struct sum *s = ctx;

	s->slots++;
	s->count += count;
	if (!memcmp(addr, s->heavy_addr, 16))
		s->heavy = count;
	return 0;
}

static void test_bounded_and_exact(void **state)
{
	struct sender_table *t = sender_table_new(100); /* rounded up to 128 */
	struct sender_table_stats st;
	struct sum s = {};
	uint8_t a[16];

	(void)state;
	assert_non_null(t);
	v4(s.heavy_addr, 0x0a000001);
	for (uint32_t i = 0; i < 100000; i++) {
		v4(a, 0x7f010000 + i);
		sender_table_count(t, a, 1);
		if (i % 10 == 0)
			sender_table_count(t, s.heavy_addr, 5);
	}
	assert_int_equal(sender_table_read(t, &st, add, &s), 0);
	assert_true(s.slots <= 128);
	assert_int_equal(st.received, 100000 + 10000 * 5);
	assert_int_equal(s.count + st.evicted_received, st.received);
	assert_true(st.evicted > 0);
	/* Never evicted: every forged address holds less than it. */
	assert_int_equal(s.heavy, 10000 * 5);
	sender_table_free(t);
}

static void test_view_merge_order(void **state)
{
	struct sender_view v = {};
	uint8_t a[16], b[16], c[16];
	char text[64];
	uint64_t rx, drop;

	(void)state;
	v4(a, 0x7f000002);
	v4(b, 0x7f000003);
	memset(c, 0, sizeof(c));
	c[15] = 1; /* ::1 */
	assert_int_equal(sender_view_add(&v, b, 10, 0), 0);
	assert_int_equal(sender_view_add(&v, a, 5, 0), 0);
	assert_int_equal(sender_view_add(&v, a, 0, 7), 0);
	assert_int_equal(sender_view_add(&v, c, 3, 0), 0);
	assert_int_equal(sender_view_add(&v, b, 2, 0), 0);
	sender_view_finish(&v);
	assert_int_equal(v.n, 3);
	format_addr16(v.rows[0].addr, text, sizeof(text));
	assert_string_equal(text, "127.0.0.2");
	assert_int_equal(v.rows[0].received, 5);
	assert_int_equal(v.rows[0].dropped, 7);
	format_addr16(v.rows[1].addr, text, sizeof(text));
	assert_string_equal(text, "127.0.0.3");
	assert_int_equal(v.rows[1].received, 12);
	format_addr16(v.rows[2].addr, text, sizeof(text));
	assert_string_equal(text, "::1");
	sender_view_sum(&v, 1, &rx, &drop);
	assert_int_equal(rx, 15);
	assert_int_equal(drop, 0);
	assert_true(sender_loss_ratio(5, 7) > 0.583 && sender_loss_ratio(5, 7) < 0.584);
	sender_view_free(&v);
}

/* Drops of one sender under several reasons merge per reason; past
 * SENDER_REASONS distinct reasons the rest are other_drops, the total whole. */
static void test_view_reasons(void **state)
{
	struct sender_view v = {};
	uint8_t a[16];
	uint64_t sum = 0;

	(void)state;
	v4(a, 0x7f000002);
	for (uint32_t reason = 1; reason <= SENDER_REASONS + 2; reason++)
		assert_int_equal(sender_view_add_drops(&v, a, reason, reason * 10), 0);
	assert_int_equal(sender_view_add_drops(&v, a, 1, 5), 0);
	assert_int_equal(sender_view_add(&v, a, 100, 0), 0);
	sender_view_finish(&v);
	assert_int_equal(v.n, 1);
	assert_int_equal(v.rows[0].received, 100);
	assert_int_equal(v.rows[0].dropped, 10 + 20 + 30 + 40 + 50 + 60 + 5);
	for (int k = 0; k < SENDER_REASONS; k++) {
		sum += v.rows[0].reason_drops[k];
		if (v.rows[0].reason[k] == 1)
			assert_int_equal(v.rows[0].reason_drops[k], 15);
	}
	assert_int_equal(sum + v.rows[0].other_drops, v.rows[0].dropped);
	assert_true(v.rows[0].other_drops > 0);
	sender_view_free(&v);
}

/* A dual-stack socket's ::ffff:a.b.c.d and a plain IPv4 sender are one key. */
static void test_mapped_is_ipv4(void **state)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	uint8_t a[16], b[16];

	(void)state;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:192.0.2.7", &sin6.sin6_addr), 1);
	assert_int_equal(sockaddr_addr16((struct sockaddr *)&sin6, sizeof(sin6), a), 0);
	v4(b, 0xc0000207);
	assert_memory_equal(a, b, 16);
	assert_int_equal(sockaddr_addr16((struct sockaddr *)&sin6, 8, a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounded_and_exact),
		cmocka_unit_test(test_view_merge_order),
		cmocka_unit_test(test_view_reasons),
		cmocka_unit_test(test_mapped_is_ipv4),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
