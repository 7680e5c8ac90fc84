// SPDX-License-Identifier: MIT
/*
 * Output formats: byte-exact raw, json and rfc5424 lines for real and hostile
 * inputs. TZ is fixed to UTC+05:30 so converted RFC 3164 stamps are exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/escape.h"
#include "syslog/format.h"
#include "syslog/syslog_parse.h"

#define IN(x) .in = x, .len = sizeof(x) - 1
#define NS(sec, usec) ((uint64_t)(sec)*1000000000 + (uint64_t)(usec)*1000)

/* 2026-11-22T03:12:00.123456Z, 08:42 local */
#define RECV NS(1795317120, 123456)
#define META_JSON \
	",\"source\":\"127.0.0.1:40000\",\"socket\":3,\"received\":\"2026-11-22T03:12:00.123456Z\""

struct fcase {
	const char *name;
	const char *in;
	size_t len;
	const char *raw, *json, *rfc5424;
};

static const struct fcase cases[] = {
	{ "RFC 5424 example 1, BOM",
	  IN("<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - "
	     "\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8"),
	  "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - "
	  "\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8\n",
	  "{\"pri\":34,\"facility\":4,\"severity\":2,\"version\":1,"
	  "\"timestamp\":\"2003-10-11T22:14:15.003Z\",\"time_unix_nano\":1065910455003000000,\"hostname\":\"mymachine.example.com\","
	  "\"app_name\":\"su\",\"msgid\":\"ID47\",\"msg\":\"'su root' failed for lonvick on /dev/pts/8\","
	  "\"malformed\":false" META_JSON ",\"raw\":\"<34>1 2003-10-11T22:14:15.003Z "
	  "mymachine.example.com su - ID47 - \xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8\"}\n",
	  "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 [origin ip=\"127.0.0.1\"] "
	  "\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8\n" },
	{ "RFC 5424 SD with escapes, two elements",
	  IN("<165>1 2003-10-11T22:14:15.003Z h evntslog - ID47 [a@1 k=\"x\\\"y\\]z\\\\\"][b@2 c=\"d\"]"),
	  "<165>1 2003-10-11T22:14:15.003Z h evntslog - ID47 [a@1 k=\"x\\\\\"y\\\\]z\\\\\\\\\"][b@2 c=\"d\"]\n",
	  "{\"pri\":165,\"facility\":20,\"severity\":5,\"version\":1,"
	  "\"timestamp\":\"2003-10-11T22:14:15.003Z\",\"time_unix_nano\":1065910455003000000,\"hostname\":\"h\",\"app_name\":\"evntslog\","
	  "\"msgid\":\"ID47\",\"structured_data\":\"[a@1 k=\\\"x\\\\\\\"y\\\\]z\\\\\\\\\\\"][b@2 c=\\\"d\\\"]\","
	  "\"sd\":{\"a@1\":{\"k\":\"x\\\"y]z\\\\\"},\"b@2\":{\"c\":\"d\"}},"
	  "\"malformed\":false" META_JSON ",\"raw\":\"<165>1 2003-10-11T22:14:15.003Z h evntslog - "
	  "ID47 [a@1 k=\\\"x\\\\\\\"y\\\\]z\\\\\\\\\\\"][b@2 c=\\\"d\\\"]\"}\n",
	  /* SD goes out as received: its backslashes are RFC 5424's own escapes */
	  "<165>1 2003-10-11T22:14:15.003Z h evntslog - ID47 [origin ip=\"127.0.0.1\"][a@1 k=\"x\\\"y\\]z\\\\\"][b@2 c=\"d\"]\n" },
	{ "RFC 5424 newline inside MSG, trailing newline",
	  IN("<14>1 2023-10-11T22:14:15Z h a p m - one\ntwo\n"),
	  "<14>1 2023-10-11T22:14:15Z h a p m - one\\ntwo\\n\n",
	  "{\"pri\":14,\"facility\":1,\"severity\":6,\"version\":1,\"timestamp\":\"2023-10-11T22:14:15Z\",\"time_unix_nano\":1697062455000000000,"
	  "\"hostname\":\"h\",\"app_name\":\"a\",\"procid\":\"p\",\"msgid\":\"m\",\"msg\":\"one\\ntwo\","
	  "\"malformed\":false" META_JSON
	  ",\"raw\":\"<14>1 2023-10-11T22:14:15Z h a p m - one\\ntwo\\n\"}\n",
	  "<14>1 2023-10-11T22:14:15Z h a p m [origin ip=\"127.0.0.1\"] one\\ntwo\n" },
	{ "RFC 5424 BOM and nothing else", IN("<14>1 - - - - - - \xEF\xBB\xBF"),
	  "<14>1 - - - - - - \xEF\xBB\xBF\n",
	  "{\"pri\":14,\"facility\":1,\"severity\":6,\"version\":1,\"time_unix_nano\":1795317120123456000,\"malformed\":false" META_JSON
	  ",\"raw\":\"<14>1 - - - - - - \xEF\xBB\xBF\"}\n",
	  "<14>1 2026-11-22T03:12:00.123456Z 127.0.0.1 - - - [origin ip=\"127.0.0.1\"] \xEF\xBB\xBF\n" },
	{ "RFC 3164 quotes, backslash, newline",
	  IN("<13>Oct 11 22:14:15 host app[7]: say \"hi\" C:\\temp\nline2\n"),
	  "<13>Oct 11 22:14:15 host app[7]: say \"hi\" C:\\\\temp\\nline2\\n\n",
	  "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":0,\"timestamp\":\"Oct 11 22:14:15\",\"time_unix_nano\":1791756855000000000,"
	  "\"hostname\":\"host\",\"app_name\":\"app\",\"procid\":\"7\","
	  "\"msg\":\"say \\\"hi\\\" C:\\\\temp\\nline2\",\"malformed\":false" META_JSON
	  ",\"raw\":\"<13>Oct 11 22:14:15 host app[7]: say \\\"hi\\\" C:\\\\temp\\nline2\\n\"}\n",
	  "<13>1 2026-10-11T22:14:15+05:30 host app 7 - [origin ip=\"127.0.0.1\"] say \"hi\" C:\\\\temp\\nline2\n" },
	{ "RFC 3164 NUL and invalid UTF-8, single-digit day",
	  IN("<13>Oct  1 08:00:01 host app: a\0b\xff\r\n"),
	  "<13>Oct  1 08:00:01 host app: a\\0b\xff\\r\\n\n",
	  "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":0,\"timestamp\":\"Oct  1 08:00:01\",\"time_unix_nano\":1790841601000000000,"
	  "\"hostname\":\"host\",\"app_name\":\"app\",\"msg\":\"a\\u0000b\\ufffd\",\"malformed\":false" META_JSON
	  ",\"raw\":\"<13>Oct  1 08:00:01 host app: a\\u0000b\\ufffd\\r\\n\"}\n",
	  "<13>1 2026-10-01T08:00:01+05:30 host app - - [origin ip=\"127.0.0.1\"] a\\0b\xff\n" },
	{ "RFC 3164 valid UTF-8",
	  IN("<13>Oct 11 22:14:15 host app: caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"),
	  "<13>Oct 11 22:14:15 host app: caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\n",
	  "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":0,\"timestamp\":\"Oct 11 22:14:15\",\"time_unix_nano\":1791756855000000000,"
	  "\"hostname\":\"host\",\"app_name\":\"app\",\"msg\":\"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
	  "\xf0\x9f\x98\x80\",\"malformed\":false" META_JSON
	  ",\"raw\":\"<13>Oct 11 22:14:15 host app: "
	  "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\"}\n",
	  "<13>1 2026-10-11T22:14:15+05:30 host app - - [origin ip=\"127.0.0.1\"] caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac "
	  "\xf0\x9f\x98\x80\n" },
	{ "RFC 3164 ISO timestamp kept", IN("<34>2023-10-11T22:14:15.003+02:00 host app: msg"),
	  "<34>2023-10-11T22:14:15.003+02:00 host app: msg\n",
	  "{\"pri\":34,\"facility\":4,\"severity\":2,\"version\":0,"
	  "\"timestamp\":\"2023-10-11T22:14:15.003+02:00\",\"time_unix_nano\":1697055255003000000,\"hostname\":\"host\",\"app_name\":\"app\","
	  "\"msg\":\"msg\",\"malformed\":false" META_JSON
	  ",\"raw\":\"<34>2023-10-11T22:14:15.003+02:00 host app: msg\"}\n",
	  "<34>1 2023-10-11T22:14:15.003+02:00 host app - - [origin ip=\"127.0.0.1\"] msg\n" },
	{ "RFC 3164 ISO stamp with a year, no zone, nanoseconds cut to microseconds",
	  IN("<13>2023-12-01T00:00:00.123456789 h a: x"),
	  "<13>2023-12-01T00:00:00.123456789 h a: x\n",
	  "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":0,"
	  "\"timestamp\":\"2023-12-01T00:00:00.123456789\",\"time_unix_nano\":1701388800123456789,\"hostname\":\"h\",\"app_name\":\"a\","
	  "\"msg\":\"x\",\"malformed\":false" META_JSON
	  ",\"raw\":\"<13>2023-12-01T00:00:00.123456789 h a: x\"}\n",
	  "<13>1 2023-12-01T00:00:00.123456+05:30 h a - - [origin ip=\"127.0.0.1\"] x\n" },
	{ "Cisco IOS: sequence and clock mark as syslog-ng's SD, the zone name as its TAG",
	  IN("<189>123: *Mar  1 18:48:50.483 UTC: %SYS-5-CONFIG_I: Configured from console"),
	  "<189>123: *Mar  1 18:48:50.483 UTC: %SYS-5-CONFIG_I: Configured from console\n",
	  "{\"pri\":189,\"facility\":23,\"severity\":5,\"version\":0,"
	  "\"timestamp\":\"Mar  1 18:48:50.483\",\"time_unix_nano\":1772390930483000000,\"app_name\":\"UTC\","
	  "\"structured_data\":\"[meta sequenceId=\\\"123\\\"][timeQuality isSynced=\\\"0\\\"]\","
	  "\"msg\":\"%SYS-5-CONFIG_I: Configured from console\",\"malformed\":false" META_JSON
	  ",\"raw\":\"<189>123: *Mar  1 18:48:50.483 UTC: %SYS-5-CONFIG_I: Configured from console\"}\n",
	  "<189>1 2026-03-01T18:48:50.483+05:30 127.0.0.1 UTC - - [origin ip=\"127.0.0.1\"] %SYS-5-CONFIG_I: Configured from console\n" },
	{ "no PRI, no header: <13>, the first word its TAG", IN("Use the BFG!"), "Use the BFG!\n",
	  "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":0,\"time_unix_nano\":1795317120123456000,\"app_name\":\"Use\",\"msg\":\"the BFG!\",\"malformed\":false" META_JSON
	  ",\"raw\":\"Use the BFG!\"}\n",
	  "<13>1 2026-11-22T03:12:00.123456Z 127.0.0.1 Use - - [origin ip=\"127.0.0.1\"] the BFG!\n" },
	{ "malformed: bad PRI, newline", IN("<999>bad\nline"), "<999>bad\\nline\n",
	  "{\"malformed\":true" META_JSON ",\"raw\":\"<999>bad\\nline\"}\n",
	  "<13>1 - 127.0.0.1 - - - [origin ip=\"127.0.0.1\"] <999>bad\\nline\n" },
	{ "truncated 5424 header: read as RFC 3164, as syslog-ng does",
	  IN("<34>1 2003-10-11T22:14:15.003Z host app\n"),
	  "<34>1 2003-10-11T22:14:15.003Z host app\\n\n",
	  "{\"pri\":34,\"facility\":4,\"severity\":2,\"version\":0,\"time_unix_nano\":1795317120123456000,\"app_name\":\"1\","
	  "\"msg\":\"2003-10-11T22:14:15.003Z host app\",\"malformed\":false" META_JSON
	  ",\"raw\":\"<34>1 2003-10-11T22:14:15.003Z host app\\n\"}\n",
	  "<34>1 2026-11-22T03:12:00.123456Z 127.0.0.1 1 - - [origin ip=\"127.0.0.1\"] 2003-10-11T22:14:15.003Z host app\n" },
	{ "malformed: empty", IN(""), "\n", "{\"malformed\":true" META_JSON ",\"raw\":\"\"}\n",
	  "<13>1 - 127.0.0.1 - - - [origin ip=\"127.0.0.1\"] \n" },
	{ "malformed: all escapes at once", IN("<>\\\"\0\r\n\x01\xc0"),
	  "<>\\\\\"\\0\\r\\n#001\xc0\n",
	  "{\"malformed\":true" META_JSON ",\"raw\":\"<>\\\\\\\"\\u0000\\r\\n\\u0001\\ufffd\"}\n",
	  "<13>1 - 127.0.0.1 - - - [origin ip=\"127.0.0.1\"] <>\\\\\"\\0\\r\\n#001\xc0\n" },
	/* a terminal escape sequence, tab and DEL: as rsyslog writes them */
	{ "controls: ESC, tab, DEL", IN("<13>1 - h a - - - \x1b[2J\x1b]0;pwned\x07\tend\x7f"),
	  "<13>1 - h a - - - #033[2J#033]0;pwned#007#011end#177\n",
	  "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":1,\"time_unix_nano\":1795317120123456000,\"hostname\":\"h\","
	  "\"app_name\":\"a\",\"msg\":\"\\u001b[2J\\u001b]0;pwned\\u0007\\tend\x7f\","
	  "\"malformed\":false" META_JSON
	  ",\"raw\":\"<13>1 - h a - - - \\u001b[2J\\u001b]0;pwned\\u0007\\tend\x7f\"}\n",
	  "<13>1 2026-11-22T03:12:00.123456Z h a - - [origin ip=\"127.0.0.1\"] #033[2J#033]0;pwned#007#011end#177\n" },
};

static struct sockaddr_in src4;

static void check_line(const char *name, const char *fmt_name, const char *got, size_t n,
		       const char *want, size_t max)
{
	if (n != strlen(want) || memcmp(got, want, n))
		fail_msg("%s: %s:\n got  '%.*s'\n want '%s'", name, fmt_name, (int)n, got, want);
	if (n > max)
		fail_msg("%s: %s: %zu bytes > format_max_len %zu", name, fmt_name, n, max);
}

/* Valid UTF-8, one line: no raw control byte but the final '\n'. */
static void check_json_line(const char *name, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	assert_true(n >= 3 && s[0] == '{' && s[n - 2] == '}' && s[n - 1] == '\n');
	for (size_t i = 0; i < n - 1;) {
		size_t k = utf8_seq_len(u + i, n - 1 - i);

		if (!k || u[i] < 0x20)
			fail_msg("%s: json byte %zu (0x%02x) not valid", name, i, u[i]);
		i += k;
	}
}

/* The meta of the table's json lines (META_JSON). */
static const struct msg_meta table_meta = {
	.src = (struct sockaddr *)&src4,
	.src_len = sizeof(src4),
	.recv_realtime_ns = RECV,
	.socket_index = 3,
};

static void test_table(void **state)
{
	const struct msg_meta meta = table_meta;
	static char out[16384];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fcase *c = &cases[i];
		struct syslog_msg m;
		enum syslog_parse_result r = syslog_parse(c->in, c->len, &m);
		size_t n;

		n = format_message(out, FORMAT_RAW, c->in, c->len, &m, r, &meta);
		check_line(c->name, "raw", out, n, c->raw, format_max_len(FORMAT_RAW, c->len));
		n = format_message(out, FORMAT_JSON, c->in, c->len, &m, r, &meta);
		check_line(c->name, "json", out, n, c->json, format_max_len(FORMAT_JSON, c->len));
		check_json_line(c->name, out, n);
		n = format_message(out, FORMAT_RFC5424, c->in, c->len, &m, r, &meta);
		check_line(c->name, "rfc5424", out, n, c->rfc5424,
			   format_max_len(FORMAT_RFC5424, c->len));
		assert_null(memchr(out, '\n', n - 1));
	}
}

static void rfc5424_at(const char *in, uint64_t recv_ns, const char *want)
{
	struct msg_meta meta = { .recv_realtime_ns = recv_ns };
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(in, strlen(in), &m);
	char out[512];
	size_t n = format_message(out, FORMAT_RFC5424, in, strlen(in), &m, r, &meta);

	check_line(in, "rfc5424", out, n, want, sizeof(out));
}

/* The year of a yearless stamp: the receive year, across New Year both ways. */
static void test_year_rollover(void **state)
{
	/* received 2027-01-01 05:30 local */
	rfc5424_at("<13>Dec 31 23:59:59 h a: x", NS(1798761600, 0),
		   "<13>1 2026-12-31T23:59:59+05:30 h a - - - x\n");
	rfc5424_at("<13>Jan  1 00:00:01 h a: x", NS(1798761600, 0),
		   "<13>1 2027-01-01T00:00:01+05:30 h a - - - x\n");
	/* received 2026-12-31 17:30 local */
	rfc5424_at("<13>Jan  1 00:00:01 h a: x", NS(1798718400, 0),
		   "<13>1 2027-01-01T00:00:01+05:30 h a - - - x\n");
	rfc5424_at("<13>Dec 31 17:00:00 h a: x", NS(1798718400, 0),
		   "<13>1 2026-12-31T17:00:00+05:30 h a - - - x\n");
	/* a year in the message wins */
	rfc5424_at("<13>Dec 31 2019 23:59:59 h a: x", NS(1798761600, 0),
		   "<13>1 2019-12-31T23:59:59+05:30 h a - - - x\n");
}

/* With the zone the receiver passes (meta->zone): a stamp is converted at
 * the instant time_unix_nano has, in the offset that implies (America/Chicago
 * in November, -06:00, as a fixed zone; received 2026-11-28T05:38:10Z). */
static void test_stamp_at_the_instant(void **state)
{
	struct msg_zone zone = { .gmtoff = -21600, .guess = true };
	struct msg_meta meta = { .recv_realtime_ns = NS(1795844290, 0), .zone = &zone };
	const struct {
		const char *in, *want;
	} cases[] = {
		{ "<13>Nov 27 23:38:04 h a: x", "<13>1 2026-11-27T23:38:04-06:00 h a - - - x\n" },
		/* 2 h 30 ahead: --guess-timezone's -03:30 */
		{ "<13>Nov 28 02:08:04 h a: x", "<13>1 2026-11-28T02:08:04-03:30 h a - - - x\n" },
		/* a clock out of range, normalised */
		{ "<13>Nov 27 23:37:64 h a: x", "<13>1 2026-11-27T23:38:04-06:00 h a - - - x\n" },
		/* an RFC 3339 stamp --guess-timezone may move is written afresh */
		{ "<13>2026-11-28T05:38:04.5Z h a: x",
		  "<13>1 2026-11-28T05:38:04.5Z h a - - - x\n" },
		/* RFC 5424 without a zone, nine fraction digits */
		{ "<13>1 2026-11-27T23:38:04.123456789 h a - - - x",
		  "<13>1 2026-11-27T23:38:04.123456-06:00 h a - - - x\n" },
	};
	char out[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct syslog_msg m;
		enum syslog_parse_result r = syslog_parse(cases[i].in, strlen(cases[i].in), &m);
		size_t n = format_message(out, FORMAT_RFC5424, cases[i].in, strlen(cases[i].in), &m,
					  r, &meta);

		check_line(cases[i].in, "rfc5424", out, n, cases[i].want, sizeof(out));
	}
}

static size_t json_of(const char *in, const struct msg_meta *meta, char *out);

/* The listener's name: a JSON key after socket, an SD element of the
 * receiver's own after the message's SD (or for its '-'), malformed too. */
static void test_listener_named(void **state)
{
	struct msg_meta meta = { .recv_realtime_ns = NS(0, 1), .listener = "cisco_asa" };
	const struct {
		const char *in, *want;
	} cases[] = {
		{ "<13>1 2026-01-01T00:00:00Z h a - - - x",
		  "<13>1 2026-01-01T00:00:00Z h a - - [syslogrx@32473 listener=\"cisco_asa\"] x\n" },
		{ "<13>1 2026-01-01T00:00:00Z h a - - [x@1 a=\"b\"] x",
		  "<13>1 2026-01-01T00:00:00Z h a - - [x@1 a=\"b\"][syslogrx@32473 "
		  "listener=\"cisco_asa\"] x\n" },
		{ "<13>1 2026-01-01T00:00:00Z h a - - -",
		  "<13>1 2026-01-01T00:00:00Z h a - - "
		  "[syslogrx@32473 listener=\"cisco_asa\"]\n" },
		{ "<999>junk",
		  "<13>1 - - - - - [syslogrx@32473 listener=\"cisco_asa\"] <999>junk\n" },
	};
	char out[1024];
	size_t n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct syslog_msg m;
		enum syslog_parse_result r = syslog_parse(cases[i].in, strlen(cases[i].in), &m);

		n = format_message(out, FORMAT_RFC5424, cases[i].in, strlen(cases[i].in), &m, r,
				   &meta);
		check_line(cases[i].in, "rfc5424", out, n, cases[i].want,
			   format_max_len(FORMAT_RFC5424, strlen(cases[i].in)));
	}
	n = json_of("x", &meta, out);
	check_line(
		"listener", "json", out, n,
		"{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":0,\"time_unix_nano\":1000,\"app_name\":\"x\",\"malformed\":false,\"socket\":0,"
		"\"listener\":\"cisco_asa\",\"received\":\"1970-01-01T00:00:00.000001Z\","
		"\"raw\":\"x\"}\n",
		format_max_len(FORMAT_JSON, 1));
}

static size_t json_of(const char *in, const struct msg_meta *meta, char *out)
{
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(in, strlen(in), &m);

	return format_message(out, FORMAT_JSON, in, strlen(in), &m, r, meta);
}

static void test_json_meta(void **state)
{
	struct sockaddr_in6 src6 = { .sin6_family = AF_INET6, .sin6_port = htons(514) };
	struct sockaddr_in bad4 = src4;
	struct msg_meta meta = {
		.src = (struct sockaddr *)&src6,
		.src_len = sizeof(src6),
		.recv_realtime_ns = NS(0, 1),
		.socket_index = 4294967295u,
	};
	char out[1024];
	size_t n;
	const char *want;

	src6.sin6_addr = in6addr_loopback;
	n = json_of("x", &meta, out);
	want = "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":0,\"time_unix_nano\":1000,\"app_name\":\"x\",\"malformed\":false,\"source\":\"[::1]:514\","
	       "\"socket\":4294967295,\"received\":\"1970-01-01T00:00:00.000001Z\",\"raw\":\"x\"}\n";
	check_line("ipv6", "json", out, n, want, format_max_len(FORMAT_JSON, 1));

	/* no meta: no source, socket or received (a stamp: no clock read) */
	n = json_of("<13>1 2003-10-11T22:14:15Z - x - - -", NULL, out);
	check_line("no meta", "json", out, n,
		   "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":1,"
		   "\"timestamp\":\"2003-10-11T22:14:15Z\",\"time_unix_nano\":1065910455000000000,"
		   "\"app_name\":\"x\",\"malformed\":false,"
		   "\"raw\":\"<13>1 2003-10-11T22:14:15Z - x - - -\"}\n",
		   1024);

	/* an address too short for its family is left out */
	meta.src = (struct sockaddr *)&bad4;
	meta.src_len = 4;
	meta.recv_realtime_ns = NS(4102444799, 999999); /* 2099-12-31T23:59:59.999999Z */
	meta.socket_index = 0;
	n = json_of("x", &meta, out);
	check_line(
		"short src", "json", out, n,
		"{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":0,\"time_unix_nano\":4102444799999999000,\"app_name\":\"x\",\"malformed\":false,\"socket\":0,"
		"\"received\":\"2099-12-31T23:59:59.999999Z\",\"raw\":\"x\"}\n",
		1024);
}

/* json without raw (FORMAT_F_JSON_NO_RAW, the receiver's default): a parsed
 * message's line is the table's json line without its raw key; a malformed
 * one keeps raw (its only copy). Spelled out for one of each, and for every
 * case of the table by cutting the table's own raw key. */
static void test_json_no_raw(void **state)
{
	const struct msg_meta meta = table_meta;
	static char out[16384];
	const char *in = "<13>1 2026-11-22T03:12:00Z host app 7 - - hello";
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(in, strlen(in), &m);
	size_t n = format_message_flags(out, FORMAT_JSON, FORMAT_F_JSON_NO_RAW, in, strlen(in), &m,
					r, NULL);

	check_line("5424 no raw", "json", out, n,
		   "{\"pri\":13,\"facility\":1,\"severity\":5,\"version\":1,"
		   "\"timestamp\":\"2026-11-22T03:12:00Z\",\"time_unix_nano\":1795317120000000000,"
		   "\"hostname\":\"host\",\"app_name\":\"app\",\"procid\":\"7\",\"msg\":\"hello\","
		   "\"malformed\":false}\n",
		   format_max_len(FORMAT_JSON, strlen(in)));
	in = "<999>bad";
	r = syslog_parse(in, strlen(in), &m);
	n = format_message_flags(out, FORMAT_JSON, FORMAT_F_JSON_NO_RAW, in, strlen(in), &m, r,
				 NULL);
	check_line("malformed no raw", "json", out, n,
		   "{\"malformed\":true,\"raw\":\"<999>bad\"}\n", 1024);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fcase *c = &cases[i];
		const char *raw = strstr(c->json, ",\"raw\":\"");
		char want[4096];

		r = syslog_parse(c->in, c->len, &m);
		assert_non_null(raw);
		if (r == SYSLOG_MALFORMED)
			snprintf(want, sizeof(want), "%s", c->json);
		else
			snprintf(want, sizeof(want), "%.*s}\n", (int)(raw - c->json), c->json);
		n = format_message_flags(out, FORMAT_JSON, FORMAT_F_JSON_NO_RAW, c->in, c->len, &m,
					 r, &meta);
		check_line(c->name, "json no raw", out, n, want,
			   format_max_len(FORMAT_JSON, c->len));
		check_json_line(c->name, out, n);
	}
}

/* RFC 5424's SD: its control bytes escaped, its own backslash escapes kept;
 * byte-exact with FORMAT_F_EXACT_CONTROL. */
static void test_sd_controls(void **state)
{
	static const char in[] =
		"<13>1 2003-10-11T22:14:15Z h a - - [x@1 k=\"a\x1b[0m\\\"\t\"] m\x1b";
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(in, sizeof(in) - 1, &m);
	char out[256];
	size_t n;

	assert_int_equal(r, SYSLOG_OK_5424);
	n = format_message(out, FORMAT_RFC5424, in, sizeof(in) - 1, &m, r, NULL);
	check_line("sd", "rfc5424", out, n,
		   "<13>1 2003-10-11T22:14:15Z h a - - [x@1 k=\"a#033[0m\\\"#011\"] m#033\n",
		   sizeof(out));
	n = format_message_flags(out, FORMAT_RFC5424, FORMAT_F_EXACT_CONTROL, in, sizeof(in) - 1,
				 &m, r, NULL);
	check_line("sd", "rfc5424 exact", out, n,
		   "<13>1 2003-10-11T22:14:15Z h a - - [x@1 k=\"a\x1b[0m\\\"\t\"] m\x1b\n",
		   sizeof(out));
}

static size_t rfc5424_from(const char *in, size_t len, const struct sockaddr *sa, socklen_t salen,
			   unsigned int flags, char *out)
{
	struct msg_meta meta = { .src = sa, .src_len = salen, .recv_realtime_ns = RECV };
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(in, len, &m);

	return format_message_flags(out, FORMAT_RFC5424, flags, in, len, &m, r, &meta);
}

/* The sender: [origin ip=] first, HOSTNAME when the message has none; a
 * message's own origin element merged into it, the sender's ip last. */
static void test_origin(void **state)
{
	struct sockaddr_in6 src6 = { .sin6_family = AF_INET6, .sin6_port = htons(514) };
	static const char own[] =
		"<13>1 - h a - - [x@1 a=\"b\"][origin software=\"fw\\]\" ip=\"10.9.9.9\"][y@2 c=\"\x1b\"] m";
	char out[1024];
	size_t n;

	inet_pton(AF_INET6, "2001:db8::5", &src6.sin6_addr);
	n = rfc5424_from("<13>1 - - a - - - m", 19, (struct sockaddr *)&src6, sizeof(src6), 0, out);
	check_line(
		"ipv6", "rfc5424", out, n,
		"<13>1 2026-11-22T03:12:00.123456Z 2001:db8::5 a - - [origin ip=\"2001:db8::5\"] m\n",
		sizeof(out));
	n = rfc5424_from(own, sizeof(own) - 1, (struct sockaddr *)&src4, sizeof(src4), 0, out);
	check_line(
		"own origin", "rfc5424", out, n,
		"<13>1 2026-11-22T03:12:00.123456Z h a - - [origin software=\"fw\\]\" ip=\"10.9.9.9\" ip=\"127.0.0.1\"]"
		"[x@1 a=\"b\"][y@2 c=\"#033\"] m\n",
		sizeof(out));
	n = rfc5424_from(own, sizeof(own) - 1, (struct sockaddr *)&src4, sizeof(src4),
			 FORMAT_F_EXACT_CONTROL, out);
	check_line(
		"own origin exact", "rfc5424", out, n,
		"<13>1 2026-11-22T03:12:00.123456Z h a - - [origin software=\"fw\\]\" ip=\"10.9.9.9\" ip=\"127.0.0.1\"]"
		"[x@1 a=\"b\"][y@2 c=\"\x1b\"] m\n",
		sizeof(out));
	/* a dual-stack socket's IPv4-mapped sender is its IPv4 address */
	inet_pton(AF_INET6, "::ffff:192.0.2.7", &src6.sin6_addr);
	n = rfc5424_from("<13>Oct 11 22:14:15 app: m", 26, (struct sockaddr *)&src6, sizeof(src6),
			 0, out);
	check_line(
		"v4-mapped", "rfc5424", out, n,
		"<13>1 2026-10-11T22:14:15+05:30 192.0.2.7 app - - [origin ip=\"192.0.2.7\"] m\n",
		sizeof(out));
	/* no usable sender: '-' as before */
	n = rfc5424_from("<13>1 - - a - - - m", 19, (struct sockaddr *)&src4, 4, 0, out);
	check_line("short src", "rfc5424", out, n,
		   "<13>1 2026-11-22T03:12:00.123456Z - a - - - m\n", sizeof(out));
}

/* Worst cases reach but never pass format_max_len. */
static void test_max_len(void **state)
{
	static char in[4096], out[65536];
	struct syslog_msg m;
	enum syslog_parse_result r;
	size_t n;

	/* every byte a 4-byte "#033": the most a byte becomes */
	static char big[16384 + 64];

	memset(in, '\x1b', sizeof(in));
	r = syslog_parse(in, sizeof(in), &m);
	n = format_message(big, FORMAT_RAW, in, sizeof(in), &m, r, NULL);
	assert_int_equal(n + FORMAT_FRAME_PREFIX_MAX, format_max_len(FORMAT_RAW, sizeof(in)));
	n = format_message(big, FORMAT_RFC5424, in, sizeof(in), &m, r, NULL);
	assert_true(n <= format_max_len(FORMAT_RFC5424, sizeof(in)));
	{
		/* the longest sender address, as HOSTNAME and in [origin ip=] */
		struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };

		inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", &s6.sin6_addr);
		n = rfc5424_from(in, sizeof(in), (struct sockaddr *)&s6, sizeof(s6), 0, out);
		assert_true(n <= format_max_len(FORMAT_RFC5424, sizeof(in)));
		n = rfc5424_from("", 0, (struct sockaddr *)&s6, sizeof(s6), 0, out);
		assert_true(n <= format_max_len(FORMAT_RFC5424, 0));
	}
	memset(in, '\n', sizeof(in));
	r = syslog_parse(in, sizeof(in), &m);
	n = format_message_flags(out, FORMAT_RAW, FORMAT_F_EXACT_CONTROL, in, sizeof(in), &m, r,
				 NULL);
	assert_int_equal(n, 2 * sizeof(in) + 1);

	/* every byte of msg and raw a 6-byte \u00XX or \ufffd */
	memcpy(in, "<13>1 - - - - - - ", 18);
	memset(in + 18, 0x01, sizeof(in) - 18);
	r = syslog_parse(in, sizeof(in), &m);
	assert_int_equal(r, SYSLOG_OK_5424);
	n = format_message(out, FORMAT_JSON, in, sizeof(in), &m, r, NULL);
	assert_true(n > 2 * 6 * (sizeof(in) - 18));
	assert_true(n <= format_max_len(FORMAT_JSON, sizeof(in)));
}

static void test_format_from_name(void **state)
{
	enum out_format f = FORMAT_RAW;

	assert_int_equal(format_from_name("json", &f), 0);
	assert_int_equal(f, FORMAT_JSON);
	assert_int_equal(format_from_name("rfc5424", &f), 0);
	assert_int_equal(f, FORMAT_RFC5424);
	assert_int_equal(format_from_name("raw", &f), 0);
	assert_int_equal(f, FORMAT_RAW);
	assert_int_equal(format_from_name("JSON", &f), -EINVAL);
	assert_int_equal(format_from_name("", &f), -EINVAL);
	assert_int_equal(format_from_name("rfc3164", &f), -EINVAL);
	assert_int_equal(format_from_name(NULL, &f), -EINVAL);
	assert_int_equal(f, FORMAT_RAW);
}

/* The fast paths of raw and json match escape_line_ctl (escape_line when
 * byte-exact) and escape_json at every offset. */
static void test_same_as_escape(void **state)
{
	static const char alphabet[] =
		"ab \"\\\n\r\t\0\x01\x7f\xc3\xa9\xe2\x82\xac\xff\xc2\x9b\x85";
	static const char *const chars[] = {
		"a",
		"b",
		" ",
		"\xd0\x9f",
		"\xe6\x97\xa5",
		"\xf0\x9f\x98\x80",
		"\xe2\x82\xac",
		"\xc2\x9b",
		"\xc2\x85",
		"\xc2\xa0",
		"\x9b",
		"\xe9",
		"\x1b",
		"\\",
		"\xe2\x82",
	};
	static char in[300], out[4096], ref[4096];

	/* the SSE classifier: 0x80-0x9f of no sequence are C1 controls, 0xff is
	 * not a control, 0x1f is */
	assert_int_equal(format_message(out, FORMAT_RAW, "\x80\x9f\xff\x1f\x20", 5, NULL,
					SYSLOG_MALFORMED, NULL),
			 15);
	assert_memory_equal(out, "#200#237\xff#037 \n", 15);
	unsigned int seed = 1;

	for (int round = 0; round < 2000; round++) {
		size_t len = (seed = seed * 1103515245 + 12345) % sizeof(in), n, k;
		struct syslog_msg m;
		enum syslog_parse_result r;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245 + 12345;
			/* mostly plain text, so both the runs and the escapes are hit */
			in[i] = (seed >> 16) % 4 ? (char)('a' + (seed >> 20) % 26) :
						   alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
		}
		/* every other round whole characters: UTF-8 text whose sequences
		 * hold bytes 0x80..0x9f, C1 controls among them */
		for (size_t i = 0; round % 2 && i < len;) {
			const char *t;

			seed = seed * 1103515245 + 12345;
			t = chars[(seed >> 16) % (sizeof(chars) / sizeof(chars[0]))];
			if (i + strlen(t) > len)
				break;
			memcpy(in + i, t, strlen(t));
			i += strlen(t);
		}
		r = syslog_parse(in, len, &m);
		n = format_message(out, FORMAT_RAW, in, len, &m, r, NULL);
		k = escape_line_ctl(ref, in, len);
		ref[k++] = '\n';
		assert_int_equal(n, k);
		assert_memory_equal(out, ref, n);
		n = format_message_flags(out, FORMAT_RAW, FORMAT_F_EXACT_CONTROL, in, len, &m, r,
					 NULL);
		k = escape_line(ref, in, len);
		ref[k++] = '\n';
		assert_int_equal(n, k);
		assert_memory_equal(out, ref, n);

		/* raw is the last JSON key: its value is escape_json of the datagram */
		n = format_message(out, FORMAT_JSON, in, len, &m, r, NULL);
		k = escape_json(ref, in, len);
		memcpy(ref + k, "\"}\n", 3);
		k += 3;
		assert_true(n >= k);
		assert_memory_equal(out + n - k, ref, k);
		check_json_line("random", out, n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_year_rollover),
		cmocka_unit_test(test_stamp_at_the_instant),
		cmocka_unit_test(test_json_meta),
		cmocka_unit_test(test_max_len),
		cmocka_unit_test(test_sd_controls),
		cmocka_unit_test(test_format_from_name),
		cmocka_unit_test(test_same_as_escape),
		cmocka_unit_test(test_json_no_raw),
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_listener_named),
	};

	/* rfc5424 of RFC 3164 stamps uses the local offset: make it a known one */
	if (setenv("TZ", "IST-5:30", 1))
		return 1;
	tzset();
	src4.sin_family = AF_INET;
	src4.sin_port = htons(40000);
	src4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
