// SPDX-License-Identifier: MIT
/* A worker's formatting of its batch: the lines are byte for byte the output
 * stage's own, one per message in order, the malformed ones counted; the
 * window's byte bound counts the area that holds them; a batch whose lines
 * would pass PREFORMAT_MAX_BYTES is left for the output stage. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "rx/path/preformat.h"
#include "rx/path/window.h"
#include "syslog/syslog_parse.h"

static const char *const MSGS[] = {
	"<13>1 2026-11-26T20:00:00Z host app 7 - - caf\xc3\xa9 \"quoted\"",
	"<999>malformed",
	"<14>Nov 26 20:00:00 host app[7]: tab\there",
};
#define N (sizeof(MSGS) / sizeof(MSGS[0]))

static struct batch *filled(struct window *w, const char *const *msgs, uint32_t n, size_t len)
{
	struct batch *b = window_batch_get(w);

	assert_non_null(b);
	for (uint32_t i = 0; i < n; i++) {
		size_t l = msgs ? strlen(msgs[i]) : len;
		struct msg_rec *r = batch_add(b, l);

		assert_non_null(r);
		if (msgs)
			memcpy(b->data + r->off, msgs[i], l);
		else
			memset(b->data + r->off, 'x', l);
		r->recv_ns = 1764187200ULL * 1000000000ULL;
		r->src_len = 0;
	}
	return b;
}

static void check_format(enum out_format fmt, unsigned int flags, uint32_t bad)
{
	struct sink s = { .tz_kind = TZ_UTC };
	struct preformat pf = { .format = fmt, .flags = flags, .parse = true, .sink = &s };
	struct tz_cache tz = { .minute = -1 };
	struct window w;
	struct window_stats st;
	struct batch *b;
	char *want = malloc(N * format_max_len(fmt, 256));
	size_t used = 0;

	assert_non_null(want);
	assert_int_equal(window_init(&w, 1000, 1 << 30, 8), 0);
	b = filled(&w, MSGS, N, 0);
	batch_preformat(&pf, &tz, b);
	assert_true(b->formatted);
	assert_int_equal(b->out_bad, bad);
	/* what the output stage would write for the same messages */
	for (uint32_t i = 0; i < N; i++) {
		struct syslog_msg m;
		struct msg_meta meta;
		enum syslog_parse_result res = syslog_parse(MSGS[i], strlen(MSGS[i]), &m);

		preformat_meta(&s, &tz, &b->recs[i], &meta);
		used += format_message_flags(want + used, fmt, flags, MSGS[i], strlen(MSGS[i]), &m,
					     res, &meta);
	}
	assert_int_equal(b->out_used, used);
	assert_memory_equal(b->out, want, used);
	/* the byte bound counts the lines' area */
	assert_int_equal(window_reserve(&w, N, &(const int){ 0 }, 0), N);
	window_push(&w, b, N);
	window_get_stats(&w, &st);
	assert_true(b->out_cap >= b->out_used);
	assert_int_equal(st.held_mem, sizeof(struct batch) + 8 * sizeof(struct msg_rec) +
					      b->data_cap + b->out_cap);
	window_release(&w, window_pop(&w, 0));
	/* recycled: not formatted until its worker formats it again */
	b = window_batch_get(&w);
	assert_false(b->formatted);
	assert_int_equal(b->out_used, 0);
	window_batch_put(&w, b);
	window_destroy(&w);
	free(want);
}

static void test_json_lines_are_the_outputs(void **state)
{
	check_format(FORMAT_JSON, FORMAT_F_JSON_NO_RAW, 1);
}

static void test_rfc5424_lines_are_the_outputs(void **state)
{
	check_format(FORMAT_RFC5424, 0, 1);
}

static void test_raw_lines_are_the_outputs(void **state)
{
	check_format(FORMAT_RAW, 0, 1);
}

static void test_past_the_bound_left_to_the_output(void **state)
{
	struct sink s = { .tz_kind = TZ_UTC };
	struct preformat pf = { .format = FORMAT_JSON, .parse = true, .sink = &s };
	struct tz_cache tz = { .minute = -1 };
	struct window w;
	struct batch *b;

	assert_int_equal(window_init(&w, 1000, 1 << 30, 64), 0);
	/* 64 datagrams of 64,000 bytes: their json lines pass 4 MiB */
	b = filled(&w, NULL, 64, 64000);
	batch_preformat(&pf, &tz, b);
	assert_false(b->formatted);
	assert_int_equal(b->out_used, 0);
	assert_true(b->out_cap <= PREFORMAT_MAX_BYTES);
	/* one of them fits */
	b->count = 1;
	batch_preformat(&pf, &tz, b);
	assert_true(b->formatted);
	window_batch_put(&w, b);
	window_destroy(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_lines_are_the_outputs),
		cmocka_unit_test(test_rfc5424_lines_are_the_outputs),
		cmocka_unit_test(test_raw_lines_are_the_outputs),
		cmocka_unit_test(test_past_the_bound_left_to_the_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
