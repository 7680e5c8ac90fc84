// SPDX-License-Identifier: MIT
/* msgfmt (datagram bytes), and the other pure pieces behind sysloggen:
 * pacer (schedule arithmetic) and procstat (/proc parsers). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "syslog/msgfmt.h"
#include "gen/pacer.h"
#include "gen/procstat.h"
#include "syslog/seqtrack.h"

#define T0 1795317328 /* 2026-11-22T03:15:28Z */

static struct msgfmt_params params(enum msgfmt_format f, size_t size)
{
	return (struct msgfmt_params){
		.format = f,
		.pri = 13,
		.host = "vm",
		.app = "sysloggen",
		.pid = 8601,
		.run = "6b026007-2199",
		.flow = 3,
		.size = size,
	};
}

static void test_rfc3164_bytes(void **state)
{
	static const char want[] =
		"<13>Nov 22 03:15:28 vm sysloggen[8601]: seq@32473 run=6b026007-2199 flow=3 seq=42 "
		"abcdefghijklmnopqrstuvwxyzabcd";
	struct msgfmt_params p = params(MSGFMT_RFC3164, sizeof(want) - 1);
	char buf[sizeof(want) - 1];
	size_t off;

	assert_int_equal(msgfmt_render(&p, buf, 42, T0, &off), 0);
	assert_memory_equal(buf, want, sizeof(buf));
	assert_memory_equal(buf + off, "42 ", 3);
}

static void test_rfc5424_bytes(void **state)
{
	static const char want[] =
		"<13>1 2026-11-22T03:15:28Z vm sysloggen 8601 - "
		"[seq@32473 run=\"6b026007-2199\" flow=\"3\" seq=\"42\"] abcdefghij";
	struct msgfmt_params p = params(MSGFMT_RFC5424, sizeof(want) - 1);
	char buf[sizeof(want) - 1];
	size_t off;

	assert_int_equal(msgfmt_render(&p, buf, 42, T0, &off), 0);
	assert_memory_equal(buf, want, sizeof(buf));
}

static void test_day_padding_and_pri(void **state)
{
	static const char want[] =
		"<191>Jan  5 00:00:09 vm sysloggen[8601]: seq@32473 run=6b026007-2199 flow=3 seq=0 ";
	struct msgfmt_params p = params(MSGFMT_RFC3164, sizeof(want) - 1);
	char buf[sizeof(want) - 1];
	size_t off;

	p.pri = 191;
	/* 2026-01-05T00:00:09Z */
	assert_int_equal(msgfmt_render(&p, buf, 0, 1767571209, &off), 0);
	assert_memory_equal(buf, want, sizeof(buf));
}

static void test_min_size(void **state)
{
	struct msgfmt_params p = params(MSGFMT_RFC5424, 0);
	size_t min = msgfmt_min_size(&p, 99), off;
	char buf[512];

	/* the bare header with a two-digit number, no space, no padding */
	assert_int_equal(min, strlen("<13>1 2026-11-22T03:15:28Z vm sysloggen 8601 - "
				     "[seq@32473 run=\"6b026007-2199\" flow=\"3\" seq=\"42\"]"));
	p.size = min;
	assert_int_equal(msgfmt_render(&p, buf, 99, T0, &off), 0);
	assert_int_equal(buf[min - 1], ']');
	assert_int_equal(msgfmt_render(&p, buf, 100, T0, &off), -EMSGSIZE);
	p.format = MSGFMT_RFC3164;
	assert_int_equal(
		msgfmt_min_size(&p, 0),
		strlen("<13>Nov 22 03:15:28 vm sysloggen[8601]: seq@32473 run=6b026007-2199 flow=3 seq=0 "));
}

/* The fast path (patching a slot) gives the same bytes as a full render,
 * across digit-count changes and second changes; seqtrack reads it back. */
static void test_slot_matches_render(void **state)
{
	for (int f = 0; f < 2; f++) {
		struct msgfmt_params p = params(f ? MSGFMT_RFC5424 : MSGFMT_RFC3164, 300);
		char slot_buf[300], ref[300];
		struct msgfmt_slot s;
		struct seqtrack_marker m;
		size_t off;

		msgfmt_slot_init(&s, slot_buf);
		for (uint64_t seq = 0; seq < 20000; seq += 7) {
			int64_t sec = T0 + seq / 3000;

			assert_int_equal(msgfmt_slot_fill(&p, &s, seq, sec), 0);
			assert_int_equal(msgfmt_render(&p, ref, seq, sec, &off), 0);
			assert_memory_equal(slot_buf, ref, sizeof(ref));
			assert_true(seqtrack_parse(slot_buf, sizeof(slot_buf), &m));
			assert_int_equal(m.kind, SEQTRACK_SYSLOGGEN);
			assert_string_equal(m.run, "6b026007-2199");
			assert_int_equal(m.flow, 3);
			assert_int_equal(m.seq, seq);
		}
		/* every byte printable ASCII */
		for (size_t i = 0; i < sizeof(slot_buf); i++)
			assert_true(slot_buf[i] >= ' ' && slot_buf[i] <= '~');
	}
}

static void test_min_size_marker_parses(void **state)
{
	for (int f = 0; f < 2; f++) {
		struct msgfmt_params p = params(f ? MSGFMT_RFC5424 : MSGFMT_RFC3164, 0);
		uint64_t seq = UINT64_MAX;
		struct seqtrack_marker m;
		char buf[512];
		size_t off;

		p.size = msgfmt_min_size(&p, seq);
		assert_int_equal(msgfmt_render(&p, buf, seq, T0, &off), 0);
		assert_true(seqtrack_parse(buf, p.size, &m));
		assert_int_equal(m.seq, UINT64_MAX);
		/* one byte less and the marker is incomplete: not counted */
		assert_false(seqtrack_parse(buf, p.size - 1, &m));
	}
}

/* The end marker: same size, exact bytes, parsed as an end marker (never as a
 * sequence number), and incomplete one byte short. */
static void test_end_marker(void **state)
{
	static const char want3164[] =
		"<13>Nov 22 03:15:28 vm sysloggen[8601]: seq@32473 run=6b026007-2199 flow=3 end=4500 "
		"copies=3 abcdef";
	static const char want5424[] =
		"<13>1 2026-11-22T03:15:28Z vm sysloggen 8601 - "
		"[seq@32473 run=\"6b026007-2199\" flow=\"3\" end=\"4500\" copies=\"3\"] abcdef";
	const char *want[2] = { want3164, want5424 };
	size_t len[2] = { sizeof(want3164) - 1, sizeof(want5424) - 1 };

	for (int f = 0; f < 2; f++) {
		struct msgfmt_params p = params(f ? MSGFMT_RFC5424 : MSGFMT_RFC3164, len[f]);
		struct seqtrack_marker m;
		char buf[512];
		size_t min;

		assert_int_equal(msgfmt_render_end(&p, buf, 4500, 3, T0), 0);
		assert_memory_equal(buf, want[f], len[f]);
		assert_true(seqtrack_parse(buf, len[f], &m));
		assert_true(m.end);
		assert_int_equal(m.seq, 4500);
		assert_int_equal(m.copies, 3);
		assert_int_equal(m.flow, 3);
		min = msgfmt_end_min_size(&p, 4500, 3);
		p.size = min;
		assert_int_equal(msgfmt_render_end(&p, buf, 4500, 3, T0), 0);
		assert_true(seqtrack_parse(buf, min, &m) && m.end);
		assert_false(seqtrack_parse(buf, min - 1, &m));
		p.size = min - 1;
		assert_int_equal(msgfmt_render_end(&p, buf, 4500, 3, T0), -EMSGSIZE);
	}
}

static void test_validators(void **state)
{
	assert_true(msgfmt_run_valid("a-b_c.d:9"));
	assert_false(msgfmt_run_valid(""));
	assert_false(msgfmt_run_valid("a b"));
	assert_false(msgfmt_run_valid("a\"b"));
	assert_false(msgfmt_run_valid("123456789012345678901234567890123"));
	assert_true(msgfmt_token_valid("host.example", MSGFMT_HOST_MAX));
	assert_false(msgfmt_token_valid("ho st", MSGFMT_HOST_MAX));
	assert_false(msgfmt_token_valid("", MSGFMT_HOST_MAX));
}

static void test_pacer(void **state)
{
	struct pace_seg segs[4];
	uint64_t sum = 0;

	for (uint32_t i = 0; i < 7; i++)
		sum += pace_split(1000003, 7, i);
	assert_int_equal(sum, 1000003);
	assert_int_equal(pace_split(10, 4, 0), 3);
	assert_int_equal(pace_split(10, 4, 3), 2);

	/* 9000 over 1 s: message j at j/9000 s, no drift at the end */
	assert_int_equal(pace_due_ns(0, 9000, 1000000000), 0);
	assert_int_equal(pace_due_ns(4500, 9000, 1000000000), 500000000);
	assert_int_equal(pace_due_ns(8999, 9000, 1000000000), 999888888);
	/* big runs do not overflow: 10^10 messages over 10^5 s */
	assert_int_equal(pace_due_ns(9999999999ULL, 10000000000ULL, 100000000000000ULL),
			 99999999990000ULL);
	/* due_by is the inverse: everything with due <= t */
	assert_int_equal(pace_due_by(0, 9000, 1000000000), 1);
	assert_int_equal(pace_due_by(111110, 9000, 1000000000), 1);
	assert_int_equal(pace_due_by(111111, 9000, 1000000000), 2);
	assert_int_equal(pace_due_by(2000000000, 9000, 1000000000), 9000);
	for (uint64_t j = 0; j < 9000; j += 97)
		assert_int_equal(pace_due_by(pace_due_ns(j, 9000, 1000000000), 9000, 1000000000),
				 j + 1);

	assert_int_equal(pace_batch(4500, 1000000000, true), 4);
	assert_int_equal(pace_batch(500, 1000000000, true), 1);
	assert_int_equal(pace_batch(150000, 1000000000, true), 64);
	assert_int_equal(pace_batch(10, 0, false), PACE_BATCH_MAX);

	assert_int_equal(pace_parse_profile("150000x30,0x10,9000x0.5", segs, 4), 3);
	assert_int_equal(segs[0].count, 4500000);
	assert_int_equal(segs[0].dur_ns, 30000000000ULL);
	assert_int_equal(segs[1].count, 0);
	assert_int_equal(segs[1].dur_ns, 10000000000ULL);
	assert_int_equal(segs[2].count, 4500);
	assert_int_equal(pace_parse_profile("150000", segs, 4), -EINVAL);
	assert_int_equal(pace_parse_profile("1x1,x1", segs, 4), -EINVAL);
	assert_int_equal(pace_parse_profile("1x1,1x1", segs, 1), -ERANGE);
}

static void test_procstat(void **state)
{
	/* comm with a space and a ')' in it */
	static const char stat[] = "1660 (fluent bit) x) S 1 1660 1660 0 -1 4194560 1234 0 0 0 "
				   "370 50 0 0 20 0 1 0 100 123 456";
	static const char status[] = "Name:\tfluent-bit\nVmPeak:\t  1000 kB\nVmRSS:\t  149156 kB\n";
	static const char io[] = "rchar: 10\nwchar: 131881447\nsyscr: 1\nsyscw: 2\n"
				 "read_bytes: 0\nwrite_bytes: 4096\ncancelled_write_bytes: 0\n";
	struct procstat ps = {};
	char buf[32];

	assert_int_equal(procstat_parse_stat(stat, &ps), 0);
	assert_string_equal(ps.comm, "fluent bit) x");
	assert_int_equal(ps.utime_ticks, 370);
	assert_int_equal(ps.stime_ticks, 50);
	assert_int_equal(procstat_parse_status(status, &ps), 0);
	assert_int_equal(ps.rss_bytes, 149156 * 1024);
	assert_int_equal(procstat_parse_io(io, &ps), 0);
	assert_int_equal(ps.wchar, 131881447);
	assert_int_equal(ps.write_bytes, 4096);
	assert_true(ps.have_io && ps.have_rss);
	assert_int_not_equal(procstat_parse_stat("12 (x S 1", &ps), 0);

	human_bytes(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0 b");
	human_bytes(buf, sizeof(buf), 131881447);
	assert_string_equal(buf, "125.77M");
	human_bytes(buf, sizeof(buf), 3915776);
	assert_string_equal(buf, "3.73M");
	human_bytes(buf, sizeof(buf), 1536);
	assert_string_equal(buf, "1.50K");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc3164_bytes),
		cmocka_unit_test(test_rfc5424_bytes),
		cmocka_unit_test(test_day_padding_and_pri),
		cmocka_unit_test(test_min_size),
		cmocka_unit_test(test_slot_matches_render),
		cmocka_unit_test(test_min_size_marker_parses),
		cmocka_unit_test(test_end_marker),
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_pacer),
		cmocka_unit_test(test_procstat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
