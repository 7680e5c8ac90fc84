// SPDX-License-Identifier: MIT
/*
 * Senders' STRUCTURED-DATA as it goes out (syslog/sd.h): syslogrx's own
 * SD-ID dropped, each SD-ID once, values escaped and valid UTF-8, byte-exact
 * in rfc5424 and json, with what was dropped counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syslog/format.h"
#include "syslog/sd.h"
#include "syslog/syslog_parse.h"

#define STR(s) ((struct syslog_str){ s, sizeof(s) - 1 })
#define HDR "<13>1 2026-01-01T00:00:00Z h a - - "
#define OWN "[syslogrx@32473 listener=\"edge-a\"]"

/* The SD-IDs sd_walk keeps, space-separated, and how many it dropped. */
static void walk(const char *sd, const char *skip, const char *want, uint32_t dropped)
{
	struct syslog_str s = { sd, (uint32_t)strlen(sd) }, id;
	struct sd_iter params;
	struct sd_walk w;
	char got[4096] = "";
	size_t n = 0;

	sd_walk_init(&w, &s, skip);
	while (sd_walk_next(&w, &id, &params))
		n += snprintf(got + n, sizeof(got) - n, "%s%.*s", n ? " " : "", (int)id.len, id.p);
	assert_string_equal(got, want);
	assert_int_equal(w.dropped, dropped);
}

static void test_walk(void **state)
{
	walk("[a@1 x=\"1\"][b@1]", NULL, "a@1 b@1", 0);
	/* a sender's element under syslogrx's own SD-ID: dropped, counted */
	walk("[syslogrx@32473 listener=\"forged\"][a@1]", NULL, "a@1", 1);
	walk("[syslogrx@32473x][syslogrx@3247]", NULL, "syslogrx@32473x syslogrx@3247", 0);
	/* an SD-ID once (RFC 5424 6.3.2): later ones dropped, counted */
	walk("[a@1 x=\"1\"][b@1][a@1 x=\"2\"][a@1][b@1]", NULL, "a@1 b@1", 3);
	walk("[a@1][A@1][a@2]", NULL, "a@1 A@1 a@2", 0);
	/* the SD-ID the caller merges: passed over, not counted */
	walk("[origin ip=\"1\"][a@1][origin ip=\"2\"]", "origin", "a@1", 0);
	walk("[origin ip=\"1\"][a@1][origin ip=\"2\"]", NULL, "origin a@1", 1);
	walk("", NULL, "", 0);
}

/* At most SD_ELEMS_MAX SD-IDs: the work per element is bounded. */
static void test_walk_cap(void **state)
{
	static char sd[8192], want[8192];
	size_t n = 0, k = 0;

	for (int i = 0; i < SD_ELEMS_MAX + 10; i++) {
		n += snprintf(sd + n, sizeof(sd) - n, "[e%d@1]", i);
		if (i < SD_ELEMS_MAX)
			k += snprintf(want + k, sizeof(want) - k, "%se%d@1", i ? " " : "", i);
	}
	n += snprintf(sd + n, sizeof(sd) - n, "[e0@1]"); /* a repeat past the cap */
	walk(sd, NULL, want, 11);
}

/* A raw value as RFC 5424 text, through sd_value_next's pieces. */
static void value(const char *raw, size_t len, const char *want)
{
	struct syslog_str r = { raw, (uint32_t)len }, run, fix;
	struct sd_value_iter v;
	char got[256];
	size_t n = 0;

	sd_value_init(&v, &r);
	while (sd_value_next(&v, &run, &fix)) {
		memcpy(got + n, run.p, run.len);
		n += run.len;
		memcpy(got + n, fix.p, fix.len);
		n += fix.len;
	}
	got[n] = '\0';
	assert_string_equal(got, want);
}

static void test_value(void **state)
{
	value("plain", 5, "plain");
	value("", 0, "");
	/* the escapes stay */
	value("a\\\"b\\\\c\\]d", 10, "a\\\"b\\\\c\\]d");
	/* ']' and a '\\' that escapes nothing get their backslash */
	value("a]b", 3, "a\\]b");
	value("C:\\temp", 7, "C:\\\\temp");
	value("end\\", 4, "end\\\\");
	value("]]", 2, "\\]\\]");
	/* PARAM-VALUE is UTF-8: each byte of an invalid sequence as U+FFFD */
	value("caf\xc3\xa9", 5, "caf\xc3\xa9");
	value("caf\xe9!", 5, "caf\xef\xbf\xbd!");
	value("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd");
	value("\x9b", 1, "\xef\xbf\xbd");
	/* a '"' does not end a value sd_next_param gives; one given otherwise is escaped */
	value("a\"b", 3, "a\\\"b");
}

static void test_name_ok(void **state)
{
	assert_true(sd_name_ok(&STR("syslogrx@32473")));
	assert_true(sd_name_ok(&STR("a[b")));
	assert_false(sd_name_ok(&STR("")));
	assert_false(sd_name_ok(&STR("a b")));
	assert_false(sd_name_ok(&STR("a=b")));
	assert_false(sd_name_ok(&STR("a]b")));
	assert_false(sd_name_ok(&STR("a\"b")));
	assert_false(sd_name_ok(&STR("\xc3\xa9")));
	assert_false(sd_name_ok(&STR("123456789012345678901234567890123")));
}

struct out {
	const char *in, *rfc5424, *sd_json; /* sd_json: from "structured_data" to before "msg" */
	uint32_t dropped;
};

static void check(const struct out *c)
{
	struct msg_meta meta = { .recv_realtime_ns = 1, .listener = "edge-a" };
	size_t len = strlen(c->in), n;
	uint32_t dropped = 0;
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(c->in, len, &m);
	char out[4096], *p, *q;

	assert_int_equal(r, SYSLOG_OK_5424);
	meta.sd_dropped = &dropped;
	n = format_message(out, FORMAT_RFC5424, c->in, len, &m, r, &meta);
	assert_true(n <= format_max_len(FORMAT_RFC5424, len));
	if (n != strlen(c->rfc5424) || memcmp(out, c->rfc5424, n))
		fail_msg("rfc5424 of '%s':\n got '%.*s'\nwant '%s'", c->in, (int)n, out,
			 c->rfc5424);
	assert_int_equal(dropped, c->dropped);

	dropped = 0;
	n = format_message(out, FORMAT_JSON, c->in, len, &m, r, &meta);
	assert_true(n <= format_max_len(FORMAT_JSON, len));
	out[n] = '\0';
	p = strstr(out, "\"structured_data\"");
	q = strstr(out, "\"msg\"");
	assert_non_null(q);
	if (!*c->sd_json) { /* every element dropped: no SD keys */
		assert_null(p);
		assert_null(strstr(out, "\"sd\""));
		assert_int_equal(dropped, c->dropped);
		return;
	}
	assert_non_null(p);
	assert_non_null(q);
	if ((size_t)(q - p) != strlen(c->sd_json) || memcmp(p, c->sd_json, q - p))
		fail_msg("json of '%s':\n got '%.*s'\nwant '%s'", c->in, (int)(q - p), p,
			 c->sd_json);
	assert_int_equal(dropped, c->dropped);
}

static void test_format(void **state)
{
	static const struct out cases[] = {
		/* the listener element cannot be forged */
		{ HDR "[syslogrx@32473 listener=\"forged\"] x", HDR OWN " x\n", "", 1 },
		{ HDR "[a@1 k=\"v\"][syslogrx@32473 listener=\"forged\"][b@1] x",
		  HDR "[a@1 k=\"v\"][b@1]" OWN " x\n",
		  "\"structured_data\":\"[a@1 k=\\\"v\\\"][b@1]\",\"sd\":{\"a@1\":{\"k\":\"v\"},"
		  "\"b@1\":{}},",
		  1 },
		/* an SD-ID once: the first kept */
		{ HDR "[a@1 k=\"1\"][a@1 k=\"2\"] x", HDR "[a@1 k=\"1\"]" OWN " x\n",
		  "\"structured_data\":\"[a@1 k=\\\"1\\\"]\",\"sd\":{\"a@1\":{\"k\":\"1\"}},", 1 },
		/* a lone '\\', kept escapes (an unescaped ']' fails the strict
		 * parse: the message is read as RFC 3164, as syslog-ng reads it) */
		{ HDR "[a@1 p=\"C:\\dir\" e=\"\\\"\\]\\\\\"] x",
		  HDR "[a@1 p=\"C:\\\\dir\" e=\"\\\"\\]\\\\\"]" OWN " x\n",
		  "\"structured_data\":\"[a@1 p=\\\"C:\\\\\\\\dir\\\" "
		  "e=\\\"\\\\\\\"\\\\]\\\\\\\\\\\"]\",\"sd\":{\"a@1\":{\"p\":\"C:\\\\dir\","
		  "\"e\":\"\\\"]\\\\\"}},",
		  0 },
		/* not UTF-8: U+FFFD per byte; C1 controls as the C0 ones */
		{ HDR "[a@1 k=\"caf\xe9\" c=\"\xc2\x9b"
		      "2J\x1b\"] x",
		  HDR "[a@1 k=\"caf\xef\xbf\xbd\" c=\"#2332J#033\"]" OWN " x\n",
		  "\"structured_data\":\"[a@1 k=\\\"caf\xef\xbf\xbd\\\" c=\\\"\\u009b2J\\u001b\\\"]\","
		  "\"sd\":{\"a@1\":{\"k\":\"caf\\ufffd\",\"c\":\"\\u009b2J\\u001b\"}},",
		  0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check(&cases[i]);
}

/* C1 controls in MSG and raw; an RFC 5424 MSG after a BOM is UTF-8. */
static void test_c1_and_bom(void **state)
{
	static const char in[] = HDR "- \xef\xbb\xbf"
				     "a\xc2\x9b"
				     "b\x9b"
				     "c\xe9";
	static const char in2[] = HDR "- a\xc2\x9b"
				      "b\x9b"
				      "c\xe9";
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(in, sizeof(in) - 1, &m);
	char out[1024];
	size_t n;

	n = format_message(out, FORMAT_RFC5424, in, sizeof(in) - 1, &m, r, NULL);
	assert_int_equal(n, sizeof(HDR "- \xef\xbb\xbf"
				       "a#233b\xef\xbf\xbd"
				       "c\xef\xbf\xbd\n") -
				    1);
	assert_memory_equal(out,
			    HDR "- \xef\xbb\xbf"
				"a#233b\xef\xbf\xbd"
				"c\xef\xbf\xbd\n",
			    n);
	/* without a BOM MSG is octets: the C1 byte escaped, the Latin-1 one kept */
	r = syslog_parse(in2, sizeof(in2) - 1, &m);
	n = format_message(out, FORMAT_RFC5424, in2, sizeof(in2) - 1, &m, r, NULL);
	assert_memory_equal(out, HDR "- a#233b#233c\xe9\n", n);
	n = format_message(out, FORMAT_RAW, in2, sizeof(in2) - 1, NULL, SYSLOG_MALFORMED, NULL);
	assert_memory_equal(out, HDR "- a#233b#233c\xe9\n", n);
	/* byte-exact on request: as received */
	n = format_message_flags(out, FORMAT_RAW, FORMAT_F_EXACT_CONTROL, in2, sizeof(in2) - 1,
				 NULL, SYSLOG_MALFORMED, NULL);
	assert_memory_equal(out, in2, n - 1);
}

/* A name that the parser would refuse, should one come: '_' for each bad byte. */
static void test_bad_name_written_valid(void **state)
{
	static const char in[] = HDR "- x";
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(in, sizeof(in) - 1, &m);
	char out[1024];
	size_t n;

	m.structured_data = STR("[a\xc3\xa9 k\x01=\"v\"]");
	n = format_message(out, FORMAT_RFC5424, in, sizeof(in) - 1, &m, r, NULL);
	assert_memory_equal(out, HDR "[a__ k_=\"v\"] x\n", n);
}

/* Hostile values fit format_max_len: every byte grows most. */
static void test_worst_case_fits(void **state)
{
	static const char *fill[] = { "]", "\\x", "\xe9", "\x01", "\xc2\x9b", "\"" };
	static char in[65536], out[22 * 65536];

	for (size_t f = 0; f < sizeof(fill) / sizeof(fill[0]); f++) {
		size_t n = snprintf(in, sizeof(in), HDR "[a@1 k=\""), k = strlen(fill[f]);
		struct syslog_msg m;
		enum syslog_parse_result r;
		struct msg_meta meta = { .recv_realtime_ns = 1, .listener = "edge-a" };

		while (n + k + 8 < sizeof(in) - 100) {
			const char *piece = fill[f][0] == '"' ? "\\\"" : fill[f];

			memcpy(in + n, piece, strlen(piece));
			n += strlen(piece);
		}
		n += snprintf(in + n, sizeof(in) - n, "\"] x");
		r = syslog_parse(in, n, &m);
		/* an unescaped ']' ends no value: the RFC 3164 reading, as syslog-ng */
		assert_int_equal(r, fill[f][0] == ']' ? SYSLOG_OK_3164 : SYSLOG_OK_5424);
		for (int fmt = FORMAT_RAW; fmt <= FORMAT_RFC5424; fmt++)
			assert_true(format_message(out, fmt, in, n, &m, r, &meta) <=
				    format_max_len(fmt, n));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_walk_cap),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_name_ok),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_c1_and_bom),
		cmocka_unit_test(test_bad_name_written_valid),
		cmocka_unit_test(test_worst_case_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
