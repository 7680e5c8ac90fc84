// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syslog/seqtrack.h"

/* One sysloggen rfc3164-style message for (run, flow, seq). */
static void feed(struct seqtrack *t, const char *run, unsigned flow, uint64_t seq)
{
	char msg[256];
	int n = snprintf(
		msg, sizeof(msg),
		"<13>Nov 22 03:22:47 vm sysloggen[1]: seq@32473 run=%s flow=%u seq=%llu abc", run,
		flow, (unsigned long long)seq);

	assert_true(seqtrack_observe(t, msg, n));
}

/* sysloggen's end marker for (run, flow): sent messages, copies K. */
static void feed_end(struct seqtrack *t, const char *run, unsigned flow, uint64_t sent,
		     uint64_t copies)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg),
			 "<13>Nov 22 03:22:47 vm sysloggen[1]: seq@32473 run=%s flow=%u end=%llu "
			 "copies=%llu abc",
			 run, flow, (unsigned long long)sent, (unsigned long long)copies);

	assert_true(seqtrack_observe(t, msg, n));
}

static void feed_range(struct seqtrack *t, const char *run, unsigned flow, uint64_t from,
		       uint64_t to)
{
	for (uint64_t s = from; s < to; s++)
		feed(t, run, flow, s);
}

struct flows {
	int n;
	struct seqtrack_flow_stats f[8];
	char runs[8][SEQTRACK_RUN_MAX + 1];
};

static int collect(const struct seqtrack_flow_stats *f, void *ctx)
{
	struct flows *c = ctx;

	if (c->n == 8)
		return -1;
	c->f[c->n] = *f;
	strcpy(c->runs[c->n], f->run);
	c->f[c->n].run = c->runs[c->n];
	c->n++;
	return 0;
}

static void expect_totals(struct seqtrack *t, uint64_t received, uint64_t missing, uint64_t dups,
			  uint64_t reord, uint64_t flows)
{
	struct seqtrack_totals tot;

	seqtrack_totals(t, &tot);
	/* the running sum a scrape reads equals the walk over flows */
	assert_int_equal(seqtrack_missing(t), tot.missing);
	assert_int_equal(tot.received, received);
	assert_int_equal(tot.missing, missing);
	assert_int_equal(tot.duplicates, dups);
	assert_int_equal(tot.reordered, reord);
	assert_int_equal(tot.flows, flows);
	assert_int_equal(tot.sequenced, tot.received + tot.duplicates + tot.untracked);
}

static void test_in_order(void **state)
{
	struct seqtrack *t = seqtrack_new();

	feed_range(t, "r1", 0, 0, 100000);
	expect_totals(t, 100000, 0, 0, 0, 1);
	seqtrack_free(t);
}

static void test_gaps(void **state)
{
	struct seqtrack *t = seqtrack_new();
	struct flows c = {};

	feed_range(t, "r1", 0, 0, 10);
	feed_range(t, "r1", 0, 15, 20); /* 10..14 lost */
	feed(t, "r1", 0, 100);		/* 20..99 lost */
	expect_totals(t, 16, 85, 0, 0, 1);
	seqtrack_for_each_flow(t, collect, &c);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.f[0].max_seq, 100);
	assert_int_equal(c.f[0].missing, 85);
	seqtrack_free(t);
}

static void test_first_seen_late(void **state)
{
	struct seqtrack *t = seqtrack_new();

	/* numbers start at 0: a flow first seen at 5 has lost 0..4 */
	feed_range(t, "r1", 0, 5, 8);
	expect_totals(t, 3, 5, 0, 0, 1);
	seqtrack_free(t);
}

/* The start of the window: a first message that arrives after its successor
 * (or after a later one) is reordered, not lost, at 0 and above it, and with
 * a window too small to grow over the first number seen. */
static void test_first_message_after_its_successor(void **state)
{
	struct seqtrack_opts small = { .window_bits = 64 };
	struct seqtrack *t = seqtrack_new();

	feed(t, "r1", 0, 1);
	feed(t, "r1", 0, 0); /* 0 after 1: reordered */
	expect_totals(t, 2, 0, 0, 1, 1);
	feed(t, "r1", 1, 7);
	feed(t, "r1", 1, 5);
	feed(t, "r1", 1, 6);
	feed(t, "r1", 1, 3); /* 4 never came: one missing; 0..2 too */
	expect_totals(t, 6, 4, 0, 4, 2);
	seqtrack_free(t);

	t = seqtrack_new_opts(&small);
	feed(t, "r1", 0, 100); /* the window is [37, 101) */
	feed(t, "r1", 0, 40);
	feed(t, "r1", 0, 37);
	expect_totals(t, 3, 98, 0, 2, 1);
	feed(t, "r1", 0, 36); /* below the window: untracked, still missing */
	expect_totals(t, 3, 98, 0, 2, 1);
	seqtrack_free(t);
}

static void test_duplicates(void **state)
{
	struct seqtrack *t = seqtrack_new();

	feed_range(t, "r1", 0, 0, 10);
	feed(t, "r1", 0, 3);
	feed(t, "r1", 0, 9);
	feed(t, "r1", 0, 9);
	expect_totals(t, 10, 0, 3, 0, 1);
	seqtrack_free(t);
}

static void test_reordered(void **state)
{
	struct seqtrack *t = seqtrack_new();

	feed(t, "r1", 0, 0);
	feed(t, "r1", 0, 2);
	feed(t, "r1", 0, 1); /* late: fills the gap */
	feed(t, "r1", 0, 5);
	feed(t, "r1", 0, 4);
	feed(t, "r1", 0, 4);		 /* a duplicate, not a second reorder */
	expect_totals(t, 5, 1, 1, 2, 1); /* 3 missing */
	seqtrack_free(t);
}

static void test_two_flows_two_runs(void **state)
{
	struct seqtrack *t = seqtrack_new();
	struct flows c = {};

	for (uint64_t s = 0; s < 1000; s++) {
		feed(t, "runA", 0, s);
		feed(t, "runA", 1, s * 2); /* only even numbers: 999 missing */
		if (s != 500)
			feed(t, "runB", 0, s);
	}
	expect_totals(t, 2999, 999 + 1, 0, 0, 3);
	seqtrack_for_each_flow(t, collect, &c);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.f[0].run, "runA");
	assert_int_equal(c.f[0].flow, 0);
	assert_int_equal(c.f[0].missing, 0);
	assert_int_equal(c.f[1].flow, 1);
	assert_int_equal(c.f[1].received, 1000);
	assert_int_equal(c.f[1].missing, 999);
	assert_int_equal(c.f[1].max_seq, 1998);
	assert_string_equal(c.f[2].run, "runB");
	assert_int_equal(c.f[2].received, 999);
	assert_int_equal(c.f[2].missing, 1);
	assert_int_equal(c.f[2].kind, SEQTRACK_SYSLOGGEN);
	seqtrack_free(t);
}

static void test_rfc5424_marker(void **state)
{
	static const char msg[] = "<13>1 2026-11-22T03:22:47Z vm sysloggen 1 - "
				  "[seq@32473 run=\"r-1.x:y_z\" flow=\"7\" seq=\"42\"] abcdef";
	struct seqtrack_marker m;

	assert_true(seqtrack_parse(msg, sizeof(msg) - 1, &m));
	assert_int_equal(m.kind, SEQTRACK_SYSLOGGEN);
	assert_string_equal(m.run, "r-1.x:y_z");
	assert_int_equal(m.flow, 7);
	assert_int_equal(m.seq, 42);
}

/* Exactly what Debian's loggen 3.38 sends (captured on a UDP socket). */
static void test_loggen(void **state)
{
	static const char m3164[] =
		"<38>2026-11-22T03:15:28 localhost prg00000[1234]: seq: 0000000002, thread: 0001, "
		"runid: 1795317328, stamp: 2026-11-22T03:15:28 PADDPADD\n";
	static const char m5424[] =
		"<38>1 2026-11-22T03:15:34+00:00 localhost prg00000 1234 - - \xef\xbb\xbf"
		"seq: 0000000001, thread: 0000, runid: 1795317334, stamp: 2026-11-22T03:15:34 PADD\n";
	struct seqtrack *t = seqtrack_new();
	struct seqtrack_marker m;
	struct flows c = {};

	assert_true(seqtrack_parse(m3164, sizeof(m3164) - 1, &m));
	assert_int_equal(m.kind, SEQTRACK_LOGGEN);
	assert_string_equal(m.run, "1795317328");
	assert_int_equal(m.flow, 1);
	assert_int_equal(m.seq, 2);
	assert_true(seqtrack_parse(m5424, sizeof(m5424) - 1, &m));
	assert_string_equal(m.run, "1795317334");
	assert_int_equal(m.flow, 0);
	assert_int_equal(m.seq, 1);

	assert_true(seqtrack_observe(t, m3164, sizeof(m3164) - 1));
	assert_true(seqtrack_observe(t, m5424, sizeof(m5424) - 1));
	feed(t, "1795317328", 1, 0); /* same run text, sysloggen kind: another flow */
	expect_totals(t, 3, 2 + 1, 0, 0, 3);
	seqtrack_for_each_flow(t, collect, &c);
	assert_int_equal(c.f[0].kind, SEQTRACK_LOGGEN);
	assert_int_equal(c.f[2].kind, SEQTRACK_SYSLOGGEN);
	seqtrack_free(t);
}

/* A marker cut by the end of the datagram must not count, and the parser
 * must not look past len: the message lives at the very end of a heap block
 * (run under ASan/valgrind to see an overread) and each prefix is tried. */
/* The tail: without an end marker the last numbers lost are invisible; with
 * one, missing = sent - received, and the markers are not sequence numbers. */
static void test_end_marker_closes_the_tail(void **state)
{
	struct seqtrack *t = seqtrack_new();
	struct seqtrack_totals tot;
	struct flows c = {};

	feed_range(t, "r1", 0, 0, 90);
	feed_range(t, "r1", 0, 95, 977);   /* 90..94 lost, and 977..999 (the tail) */
	expect_totals(t, 972, 5, 0, 0, 1); /* the tail cannot be seen yet */
	feed_end(t, "r1", 0, 1000, 3);
	feed_end(t, "r1", 0, 1000, 3); /* the third copy is lost */
	expect_totals(t, 972, 28, 0, 0, 1);
	seqtrack_totals(t, &tot);
	assert_int_equal(tot.end_markers, 2);
	assert_int_equal(tot.end_markers_lost, 1);
	assert_int_equal(tot.flows_closed, 1);
	assert_int_equal(tot.sent, 1000);
	assert_int_equal(tot.sequenced, 972); /* end markers are apart */
	assert_int_equal(tot.unsequenced, 0);
	seqtrack_for_each_flow(t, collect, &c);
	assert_int_equal(c.n, 1);
	assert_true(c.f[0].closed);
	assert_int_equal(c.f[0].sent, 1000);
	assert_int_equal(c.f[0].missing, 28);
	assert_int_equal(c.f[0].max_seq, 976);
	assert_int_equal(c.f[0].end_markers, 2);
	assert_int_equal(c.f[0].end_markers_lost, 1);
	/* a late copy after more data: still closed, nothing counted twice */
	feed_end(t, "r1", 0, 1000, 3);
	seqtrack_totals(t, &tot);
	assert_int_equal(tot.missing, 28);
	assert_int_equal(tot.end_markers_lost, 0);
	seqtrack_free(t);
}

/* Every data message lost: the flow exists only through its end marker. A
 * second flow without one keeps the gap rule. Per flow, never mixed. */
static void test_end_marker_only(void **state)
{
	struct seqtrack *t = seqtrack_new();
	struct seqtrack_totals tot;
	struct flows c = {};
	static const char m5424[] = "<13>1 2026-11-22T03:22:47Z vm sysloggen 1 - "
				    "[seq@32473 run=\"r2\" flow=\"4\" end=\"500\" copies=\"1\"] ab";

	assert_true(seqtrack_observe(t, m5424, sizeof(m5424) - 1));
	feed_range(t, "r2", 5, 0, 10);
	feed(t, "r2", 5, 12);
	seqtrack_totals(t, &tot);
	assert_int_equal(tot.received, 11);
	assert_int_equal(tot.missing, 500 + 2);
	assert_int_equal(tot.flows, 2);
	assert_int_equal(tot.flows_closed, 1);
	assert_int_equal(tot.sent, 500);
	assert_int_equal(tot.end_markers, 1);
	assert_int_equal(tot.end_markers_lost, 0);
	seqtrack_for_each_flow(t, collect, &c);
	assert_int_equal(c.f[0].flow, 4);
	assert_true(c.f[0].closed);
	assert_int_equal(c.f[0].received, 0);
	assert_int_equal(c.f[0].missing, 500);
	assert_false(c.f[1].closed);
	assert_int_equal(c.f[1].missing, 2);
	seqtrack_free(t);
}

/* An end marker cut short, or with a bad count, is not one; copies that
 * disagree keep the largest count. */
static void test_end_marker_malformed(void **state)
{
	static const char cut[] = "<13>x: seq@32473 run=r3 flow=0 end=10 copies=3";
	static const char nocopies[] = "<13>x: seq@32473 run=r3 flow=0 end=10 abc";
	static const char badq[] =
		"<13>1 - [seq@32473 run=\"r3\" flow=\"0\" end=\"10 copies=\"3\"]";
	struct seqtrack *t = seqtrack_new();
	struct seqtrack_marker m;
	struct seqtrack_totals tot;

	assert_false(seqtrack_parse(cut, sizeof(cut) - 1, &m));
	assert_false(seqtrack_parse(nocopies, sizeof(nocopies) - 1, &m));
	assert_false(seqtrack_parse(badq, sizeof(badq) - 1, &m));
	feed_range(t, "r3", 0, 0, 20);
	feed_end(t, "r3", 0, 15, 2);
	feed_end(t, "r3", 0, 30, 2);
	seqtrack_totals(t, &tot);
	assert_int_equal(tot.sent, 30);
	assert_int_equal(tot.missing, 10);
	seqtrack_free(t);
}

static void test_cut_off(void **state)
{
	static const char *full[] = {
		"<13>Nov 22 03:22:47 vm sysloggen[1]: seq@32473 run=abc flow=1 seq=12345 ",
		"<13>1 2026-11-22T03:22:47Z vm sysloggen 1 - [seq@32473 run=\"abd\" flow=\"1\" seq=\"12345\"]",
		"<38>2026-11-22T03:15:28 localhost prg00000[1234]: seq: 0000000002, thread: 0001, runid: 1795317328,",
	};
	struct seqtrack *t = seqtrack_new();
	struct seqtrack_totals tot;

	for (size_t k = 0; k < 3; k++) {
		size_t n = strlen(full[k]);

		for (size_t len = 0; len < n; len++) {
			char *buf = malloc(len ? len : 1);

			memcpy(buf, full[k], len);
			assert_false(seqtrack_observe(t, buf, len));
			free(buf);
		}
		assert_true(seqtrack_observe(t, full[k], n));
	}
	/* the digits right before the cut also must not be mistaken for a short number */
	seqtrack_totals(t, &tot);
	/* the running sum a scrape reads equals the walk over flows */
	assert_int_equal(seqtrack_missing(t), tot.missing);
	assert_int_equal(tot.sequenced, 3);
	assert_int_equal(tot.received, 3);
	assert_int_equal(tot.flows, 3);
	seqtrack_free(t);
}

static void test_malformed(void **state)
{
	static const char *bad[] = {
		"seq@32473 run= flow=1 seq=1 ",			      /* empty run */
		"seq@32473 run=a b flow=1 seq=1 ",		      /* space in run */
		"seq@32473 run=abc flow=x seq=1 ",		      /* flow not a number */
		"seq@32473 run=abc flow=4294967296 seq=1 ",	      /* flow over 32 bits */
		"seq@32473 run=abc flow=1 seq=18446744073709551616 ", /* seq over 64 bits */
		"seq@32473 run=\"abc\" flow=1 seq=\"1\"]",	      /* mixed quoting */
		"seq@32473 run=\"abc\" flow=\"1\" seq=\"1\" ",	      /* quoted without ]" */
		"seq@32473 run=abcdefghijabcdefghijabcdefghijabc flow=1 seq=1 ", /* run of 33 */
		"seq: 12, thread: 1, runid: 99 ", /* loggen without the comma */
		"no marker at all",
	};
	struct seqtrack *t = seqtrack_new();
	struct seqtrack_totals tot;

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		assert_false(seqtrack_observe(t, bad[k], strlen(bad[k])));
	/* a false start followed by a real marker is found */
	assert_true(seqtrack_observe(t, "seq@32473 run=x seq@32473 run=ok flow=0 seq=0 ", 46));
	seqtrack_totals(t, &tot);
	/* the running sum a scrape reads equals the walk over flows */
	assert_int_equal(seqtrack_missing(t), tot.missing);
	assert_int_equal(tot.unsequenced, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(tot.received, 1);
	seqtrack_free(t);
}

static void test_huge_seq_window(void **state)
{
	/* no jump bound: every number believed */
	struct seqtrack_opts o = { .window_bits = 1024, .jump_max = UINT64_MAX };
	struct seqtrack *t = seqtrack_new_opts(&o);
	struct seqtrack_totals tot;
	struct flows c = {};

	feed_range(t, "r", 0, 0, 10);
	feed(t, "r", 0, 1000000000000000000ULL);      /* jump: no memory for the gap */
	feed(t, "r", 0, 5);			      /* below the window: cannot tell */
	feed(t, "r", 0, 1000000000000000000ULL - 10); /* inside the window: late */
	feed(t, "r", 0, 1000000000000000000ULL - 10); /* duplicate */
	feed(t, "r", 0, UINT64_MAX);
	seqtrack_totals(t, &tot);
	/* the running sum a scrape reads equals the walk over flows */
	assert_int_equal(seqtrack_missing(t), tot.missing);
	assert_int_equal(tot.received, 13);
	assert_int_equal(tot.duplicates, 1);
	assert_int_equal(tot.reordered, 1);
	assert_int_equal(tot.untracked, 1);
	assert_int_equal(tot.sequenced, 15);
	/* highest + 1 - received, without wrapping at the last possible number */
	assert_int_equal(tot.missing, UINT64_MAX - 12);
	seqtrack_for_each_flow(t, collect, &c);
	assert_int_equal(c.f[0].window_bits, 1024);
	assert_int_equal(c.f[0].max_seq, UINT64_MAX);
	seqtrack_free(t);
}

static void test_window_slides_exactly(void **state)
{
	struct seqtrack_opts o = { .window_bits = 256 };
	struct seqtrack *t = seqtrack_new_opts(&o);

	/* in order far past the window, with a duplicate and a late one near the front */
	feed_range(t, "r", 0, 0, 5000);
	feed(t, "r", 0, 4990);
	feed_range(t, "r", 0, 5001, 5100);
	feed(t, "r", 0, 5000); /* late, still inside the window */
	feed_range(t, "r", 0, 5100, 6000);
	feed(t, "r", 0, 100); /* far behind: untracked, not a duplicate */
	expect_totals(t, 6000, 0, 1, 1, 1);
	seqtrack_free(t);
}

static void test_memory_budget(void **state)
{
	/* 4096-bit (512 B) start per flow, a 1 KiB budget: the third flow gets no bitmap */
	struct seqtrack_opts o = { .window_bits = 4096, .memory_max = 1024 };
	struct seqtrack *t = seqtrack_new_opts(&o);
	struct seqtrack_totals tot;
	struct flows c = {};

	feed_range(t, "a", 0, 0, 10);
	feed_range(t, "b", 0, 0, 10);
	feed_range(t, "c", 0, 0, 10);
	feed(t, "c", 0, 3); /* no bitmap: cannot tell dup from late */
	seqtrack_totals(t, &tot);
	/* the running sum a scrape reads equals the walk over flows */
	assert_int_equal(seqtrack_missing(t), tot.missing);
	assert_int_equal(tot.received, 30);
	assert_int_equal(tot.untracked, 1);
	assert_int_equal(tot.missing, 0);
	seqtrack_for_each_flow(t, collect, &c);
	assert_int_equal(c.f[2].window_bits, 0);
	seqtrack_free(t);
}

static void test_flow_limit(void **state)
{
	struct seqtrack_opts o = { .flows_max = 2 };
	struct seqtrack *t = seqtrack_new_opts(&o);
	struct seqtrack_totals tot;

	feed(t, "a", 0, 0);
	feed(t, "a", 1, 0);
	feed(t, "a", 2, 0); /* refused */
	feed(t, "a", 2, 1);
	feed(t, "a", 0, 1);
	seqtrack_totals(t, &tot);
	/* the running sum a scrape reads equals the walk over flows */
	assert_int_equal(seqtrack_missing(t), tot.missing);
	assert_int_equal(tot.flows, 2);
	assert_int_equal(tot.received, 3);
	assert_int_equal(tot.refused, 2);
	assert_int_equal(tot.untracked, 2);
	assert_int_equal(tot.sequenced, 5);
	seqtrack_free(t);
}

/* One rfc3164 message; returns what observe said. */
static bool try_feed(struct seqtrack *t, const char *run, unsigned flow, uint64_t seq)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg),
			 "<13>Nov 22 03:22:47 vm x[1]: seq@32473 run=%s flow=%u seq=%llu abc", run,
			 flow, (unsigned long long)seq);

	return seqtrack_observe(t, msg, n);
}

static bool try_end(struct seqtrack *t, const char *run, unsigned flow, uint64_t sent,
		    uint64_t copies)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "seq@32473 run=%s flow=%u end=%llu copies=%llu abc", run,
			 flow, (unsigned long long)sent, (unsigned long long)copies);

	return seqtrack_observe(t, msg, n);
}

static void test_implausible_jumps(void **state)
{
	struct seqtrack_opts o = { .jump_max = 100 };
	struct seqtrack *t = seqtrack_new_opts(&o);
	struct seqtrack_totals tot;

	/* a new flow's first number: below jump_max, or not believed */
	assert_false(try_feed(t, "r", 1, 100));
	assert_false(try_feed(t, "r", 2, 1000000000000000000ULL));
	assert_true(try_feed(t, "r", 3, 99)); /* 99 missing before it: believed */
	/* a known flow: at most jump_max past its highest */
	assert_true(try_feed(t, "r", 0, 0));
	assert_true(try_feed(t, "r", 0, 100));	       /* jump of exactly 100 */
	assert_false(try_feed(t, "r", 0, 201));	       /* 101 */
	assert_false(try_feed(t, "r", 0, UINT64_MAX)); /* no wrap */
	assert_true(try_feed(t, "r", 0, 50));	       /* late, below: fine */
	/* end markers: the count sent, and at most SEQTRACK_COPIES_MAX copies */
	assert_false(try_end(t, "r", 0, 1000000, 3));
	assert_false(try_end(t, "r", 0, 150, SEQTRACK_COPIES_MAX + 1));
	assert_false(try_end(t, "r", 9, 101, 3)); /* new flow: last number 100 */
	assert_true(try_end(t, "r", 8, 100, 3));
	assert_true(try_end(t, "r", 0, 201, 3)); /* last number 200: jump of 100 */
	seqtrack_totals(t, &tot);
	assert_int_equal(tot.implausible, 7);
	assert_int_equal(tot.unsequenced, 7);
	assert_int_equal(tot.flows, 3); /* r/3, r/0, r/8: no flow for the refused ones */
	assert_int_equal(tot.received, 4);
	assert_int_equal(tot.end_markers, 2);
	/* r/3: 99 gaps; r/0: 201 sent, 3 received; r/8: 100 sent, none received */
	assert_int_equal(tot.missing, 99 + 198 + 100);
	assert_int_equal(seqtrack_missing(t), tot.missing);
	seqtrack_free(t);
}

static void test_many_flows(void **state)
{
	struct seqtrack *t = seqtrack_new();
	char run[16];

	/* forces several rehashes; interleaved so the last-flow cache misses */
	for (uint64_t s = 0; s < 3; s++)
		for (unsigned f = 0; f < 500; f++) {
			snprintf(run, sizeof(run), "run%u", f % 7);
			feed(t, run, f, s);
		}
	expect_totals(t, 1500, 0, 0, 0, 500);
	seqtrack_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_implausible_jumps),
		cmocka_unit_test(test_gaps),
		cmocka_unit_test(test_first_message_after_its_successor),
		cmocka_unit_test(test_first_seen_late),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_reordered),
		cmocka_unit_test(test_two_flows_two_runs),
		cmocka_unit_test(test_rfc5424_marker),
		cmocka_unit_test(test_loggen),
		cmocka_unit_test(test_end_marker_closes_the_tail),
		cmocka_unit_test(test_end_marker_only),
		cmocka_unit_test(test_end_marker_malformed),
		cmocka_unit_test(test_cut_off),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_huge_seq_window),
		cmocka_unit_test(test_window_slides_exactly),
		cmocka_unit_test(test_memory_budget),
		cmocka_unit_test(test_flow_limit),
		cmocka_unit_test(test_many_flows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
