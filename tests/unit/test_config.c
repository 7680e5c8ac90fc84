// SPDX-License-Identifier: MIT
/* Flag parsing: every flag, suffixes, bad values named in the error. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common/array.h"
#include "common/redact.h"
#include "rx/settings/config.h"

static char err[256];

#define PARSE(c, ...)                                                          \
	({                                                                     \
		char *argv_[] = { "syslogrx", __VA_ARGS__, NULL };             \
		config_parse((c), sizeof(argv_) / sizeof(argv_[0]) - 1, argv_, \
			     ARGP_NO_EXIT | ARGP_NO_ERRS, err, sizeof(err));   \
	})

static void test_defaults(void **state)
{
	struct config c;
	char *argv[] = { "syslogrx", NULL };

	assert_int_equal(config_parse(&c, 1, argv, ARGP_NO_EXIT | ARGP_NO_ERRS, err, sizeof(err)),
			 0);
	assert_string_equal(c.listen, "127.0.0.1:5514");
	assert_int_equal(c.sockets, 4);
	assert_int_equal(c.threads, 2);
	assert_int_equal(c.balance, BALANCE_RANDOM);
	assert_int_equal(c.rcvbuf, 0);
	assert_int_equal(c.batch, 64);
	/* A newcomer who sends a message sees it. */
	assert_int_equal(c.output, OUTPUT_STDOUT);
	assert_string_equal(c.user, "");
	assert_int_equal(c.format, FORMAT_RAW);
	assert_true(c.trace);
	assert_int_equal(c.window, 10000);
	assert_int_equal(c.window_bytes, 64ULL << 20);
	assert_string_equal(c.summary, "");
}

/* --listen, repeated: one listener each, named or after its port. */
static void test_listeners(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--listen", "127.0.0.1:5514"), 0);
	assert_int_equal(c.nr_listeners, 1);
	assert_string_equal(c.listeners[0].name, "5514");
	assert_false(c.listener_names); /* one unnamed listener: records as they were */
	assert_int_equal(PARSE(&c, "--listen", "edge=127.0.0.1:5514"), 0);
	assert_string_equal(c.listen, "127.0.0.1:5514");
	assert_string_equal(c.listeners[0].name, "edge");
	assert_true(c.listener_names);
	assert_int_equal(PARSE(&c, "--listen", "127.0.0.1:5514", "--listen",
			       "cisco_asa=0.0.0.0:5000", "--listen", "v6.a-1=[::1]:5514",
			       "--sockets", "2"),
			 0);
	assert_int_equal(c.nr_listeners, 3);
	assert_string_equal(c.listen, "127.0.0.1:5514");
	assert_string_equal(c.listeners[0].name, "5514");
	assert_string_equal(c.listeners[1].name, "cisco_asa");
	assert_string_equal(c.listeners[1].addr, "0.0.0.0:5000");
	assert_string_equal(c.listeners[2].name, "v6.a-1");
	assert_string_equal(c.listeners[2].addr, "[::1]:5514");
	assert_true(c.listener_names);
}

static void test_listeners_refused(void **state)
{
	static const struct {
		const char *a, *b, *want;
	} bad[] = {
		{ "127.0.0.1:5514", "127.0.0.1:5514", "one address and port in two listeners" },
		{ "0.0.0.0:5514", "x=127.0.0.1:5514", "one address and port in two listeners" },
		{ "[::]:5514", "x=[::1]:5514", "one address and port in two listeners" },
		{ "127.0.0.1:5514", "[::1]:5514", "both named '5514'" },
		{ "a=127.0.0.1:5514", "a=127.0.0.1:5515", "both named 'a'" },
		{ "Cisco=127.0.0.1:5514", "127.0.0.1:5515", "--listen Cisco=127.0.0.1:5514: name" },
		{ "_x=127.0.0.1:5514", "127.0.0.1:5515", "--listen _x=127.0.0.1:5514: name" },
		{ "a b=127.0.0.1:5514", "127.0.0.1:5515", "name 'a b'" },
		{ "=127.0.0.1:5514", "127.0.0.1:5515", "a NAME= of 1 to 32" },
		{ "abcdefghijabcdefghijabcdefghijabc=127.0.0.1:5514", "127.0.0.1:5515",
		  "a NAME= of 1 to 32" },
		{ "a=localhost:5514", "127.0.0.1:5515", "not [NAME=]ADDR:PORT" },
	};
	struct config c;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE(&c, "--listen", (char *)bad[i].a, "--listen",
				       (char *)bad[i].b),
				 EINVAL);
		if (!strstr(err, bad[i].want))
			fail_msg("--listen %s --listen %s: '%s' lacks '%s'", bad[i].a, bad[i].b,
				 err, bad[i].want);
	}
	/* 32 bytes is the most a name takes */
	assert_int_equal(PARSE(&c, "--listen", "abcdefghijabcdefghijabcdefghijab=127.0.0.1:5514"),
			 0);
	/* Each listener binds its --max-sockets pool: counted in the bound. */
	assert_int_equal(PARSE(&c, "--listen", "127.0.0.1:5514", "--listen", "127.0.0.1:5515",
			       "--max-sockets", "8"),
			 0);
	assert_int_equal(PARSE(&c, "--listen", "127.0.0.1:5514", "--listen", "127.0.0.1:5515",
			       "--sockets", "2", "--max-sockets", "3000"),
			 EINVAL);
	assert_non_null(strstr(err, "(--max-sockets 3000) for 2 listeners: at most"));
}

static void test_every_flag(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--listen", "[::1]:5514", "--sockets", "32", "--threads", "2",
			       "--balance", "roundrobin", "--rcvbuf", "16M", "--batch", "128",
			       "--output", "file:/tmp/x.log", "--format", "json", "--summary",
			       "/tmp/s.json", "--duration", "2.5", "--cost-ns", "1500", "--window",
			       "100000", "--window-bytes", "1G", "--output-rate", "40000",
			       "--no-trace", "--stats-interval", "0.5", "-v"),
			 0);
	assert_string_equal(c.listen, "[::1]:5514");
	assert_int_equal(c.sockets, 32);
	assert_int_equal(c.threads, 2);
	assert_int_equal(c.balance, BALANCE_ROUNDROBIN);
	assert_int_equal(c.rcvbuf, 16ULL << 20);
	assert_int_equal(c.batch, 128);
	assert_int_equal(c.output, OUTPUT_FILE);
	assert_string_equal(c.output_arg, "/tmp/x.log");
	assert_int_equal(c.format, FORMAT_JSON);
	assert_string_equal(c.summary, "/tmp/s.json");
	assert_true(c.duration > 2.49 && c.duration < 2.51);
	assert_int_equal(c.nr_cost_ns, 1);
	assert_int_equal(c.cost_ns[0], 1500);
	assert_int_equal(c.window, 100000);
	assert_int_equal(c.window_bytes, 1ULL << 30);
	assert_int_equal(c.output_rate, 40000);
	assert_false(c.trace);
	assert_true(c.stats_interval > 0.49 && c.stats_interval < 0.51);
	assert_true(c.verbose);
}

static void test_outputs(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--output", "stdout"), 0);
	assert_int_equal(c.output, OUTPUT_STDOUT);
	assert_int_equal(PARSE(&c, "--output", "null"), 0);
	assert_int_equal(c.output, OUTPUT_NULL);
	assert_int_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601"), 0);
	assert_int_equal(c.output, OUTPUT_TCP);
	assert_string_equal(c.output_arg, "127.0.0.1:601");
	assert_int_equal(PARSE(&c, "--balance", "hash"), 0);
	assert_int_equal(c.balance, BALANCE_HASH);
}

static void test_size_suffixes(void **state)
{
	static const struct {
		const char *arg;
		uint64_t want;
	} cases[] = {
		{ "212992", 212992 },  { "64K", 65536 },  { "64k", 65536 },
		{ "16M", 16 << 20 },   { "1G", 1 << 30 }, { "32MB", 32 << 20 },
		{ "32MiB", 32 << 20 },
	};
	struct config c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(PARSE(&c, "--rcvbuf", (char *)cases[i].arg), 0);
		assert_int_equal(c.rcvbuf, cases[i].want);
	}
}

/* Each bad value fails, and the message names the flag and the value. */
static void test_bad_values(void **state)
{
	static const char *const cases[][3] = {
		{ "--sockets", "0", "--sockets 0" },
		{ "--sockets", "abc", "--sockets abc" },
		{ "--sockets", "-1", "--sockets -1" },
		{ "--sockets", "99999", "--sockets 99999" },
		{ "--threads", "0", "--threads 0" },
		{ "--balance", "fastest", "--balance fastest" },
		{ "--rcvbuf", "12X", "--rcvbuf 12X" },
		{ "--rcvbuf", "2G", "--rcvbuf 2G" },
		{ "--rcvbuf", "", "--rcvbuf " },
		{ "--batch", "0", "--batch 0" },
		{ "--batch", "5000", "--batch 5000" },
		{ "--output", "file:", "--output file:" },
		{ "--output", "kafkaz", "--output kafkaz" },
		{ "--format", "xml", "--format xml" },
		{ "--duration", "soon", "--duration soon" },
		{ "--duration", "0", "--duration 0" },
		{ "--cost-ns", "1.5", "--cost-ns 1.5" },
		{ "--cost-ns", "1000,", "--cost-ns 1000," },
		{ "--cost-ns", ",1000", "--cost-ns ,1000" },
		{ "--cost-ns", "1000,x", "--cost-ns 1000,x" },
		{ "--window", "0", "--window 0" },
		{ "--window-bytes", "1K", "--window-bytes 1K" },
		{ "--stats-interval", "-1", "--stats-interval -1" },
	};
	struct config c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = PARSE(&c, (char *)cases[i][0], (char *)cases[i][1]);

		assert_int_not_equal(ret, 0);
		if (!strstr(err, cases[i][2]))
			fail_msg("%s %s: error '%s' does not name it", cases[i][0], cases[i][1],
				 err);
	}
}

static void test_threads_more_than_sockets(void **state)
{
	struct config c;

	assert_int_not_equal(PARSE(&c, "--sockets", "2", "--threads", "3"), 0);
	assert_non_null(strstr(err, "--threads 3 is more than --sockets 2"));
	/* Order does not matter: checked once all flags are in. */
	assert_int_not_equal(PARSE(&c, "--threads", "3", "--sockets", "2"), 0);
	assert_int_equal(PARSE(&c, "--threads", "2", "--sockets", "2"), 0);
}

/* The thread count follows the socket count unless given. */
static void test_threads_follow_sockets(void **state)
{
	struct config c;
	char buf[64];

	assert_int_equal(PARSE(&c, "--sockets", "1"), 0);
	assert_int_equal(c.threads, 1);
	assert_int_equal(PARSE(&c, "--sockets", "8"), 0);
	assert_int_equal(c.threads, 2);
	assert_int_equal(PARSE(&c, "--threads", "1", "--sockets", "8"), 0);
	assert_int_equal(c.threads, 1);
	/* Given, it is checked: never silently lowered. */
	assert_int_not_equal(PARSE(&c, "--sockets", "1", "--threads", "2"), 0);
	assert_non_null(strstr(err, "--threads 2 is more than --sockets 1"));
	assert_int_equal(PARSE(&c, "--output", "file:/tmp/x"), 0);
	assert_string_equal(config_output_name(&c, buf, sizeof(buf)), "file:/tmp/x");
	assert_int_equal(PARSE(&c, "--output", "null"), 0);
	assert_string_equal(config_output_name(&c, buf, sizeof(buf)), "null");
}

static void test_user(void **state)
{
	struct config c;
	char longname[100];

	assert_int_equal(PARSE(&c, "--user", "nobody"), 0);
	assert_string_equal(c.user, "nobody");
	assert_int_not_equal(PARSE(&c, "--user", ""), 0);
	assert_non_null(strstr(err, "--user"));
	memset(longname, 'u', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_not_equal(PARSE(&c, "--user", longname), 0);
	assert_non_null(strstr(err, "--user"));
}

/* --protect: IPv4 mapped into 128 bits, the prefix length with it; a
 * weight or none (never shed); host bits past the prefix refused. */
static void test_protect(void **state)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 0, [14] = 1 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	struct config c;

	assert_int_equal(PARSE(&c, "--fair-share", "--protect", "10.0.1.0/24", "--protect",
			       "2001:db8::/32=4", "--protect", "10.0.0.7"),
			 0);
	assert_true(c.fair_share);
	assert_int_equal(c.nr_protect, 3);
	assert_memory_equal(c.protect[0].addr, v4, 16);
	assert_int_equal(c.protect[0].prefixlen, 96 + 24);
	assert_int_equal(c.protect[0].weight, 0);
	assert_memory_equal(c.protect[1].addr, v6, 16);
	assert_int_equal(c.protect[1].prefixlen, 32);
	assert_int_equal(c.protect[1].weight, 4);
	assert_int_equal(c.protect[2].prefixlen, 128);
	assert_int_equal(c.protect[2].addr[15], 7);
	static char *const bad[] = { "10.0.1.1/24",	 "10.0.0.0/33", "10.0.0.0/24=0",
				     "10.0.0.0/24=1001", "host",	"::/129" };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_not_equal(PARSE(&c, "--fair-share", "--protect", bad[i]), 0);
		assert_non_null(strstr(err, "--protect"));
		assert_non_null(strstr(err, bad[i]));
	}
}

/* One value for all threads, or exactly one per thread (a slow worker on purpose). */
static void test_cost_ns_per_thread(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--threads", "2", "--cost-ns", "2000,40000"), 0);
	assert_int_equal(c.nr_cost_ns, 2);
	assert_int_equal(c.cost_ns[0], 2000);
	assert_int_equal(c.cost_ns[1], 40000);
	assert_int_equal(PARSE(&c, "--cost-ns", "1,2,3", "--sockets", "4", "--threads", "3"), 0);
	assert_int_equal(c.nr_cost_ns, 3);
	assert_int_equal(c.cost_ns[2], 3);
	assert_int_not_equal(PARSE(&c, "--threads", "2", "--cost-ns", "1,2,3"), 0);
	assert_non_null(strstr(err, "--cost-ns: 3 values for 2 threads"));
	assert_int_equal(PARSE(&c, "--threads", "1", "--sockets", "1"), 0);
	assert_int_equal(c.nr_cost_ns, 1);
	assert_int_equal(c.cost_ns[0], 0);
}

static void test_ordered(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--sockets", "4"), 0);
	assert_false(c.ordered);
	assert_int_equal(PARSE(&c, "--ordered"), 0);
	assert_true(c.ordered);
	assert_int_equal(c.ordered_hold_ms, CONFIG_ORDERED_HOLD_MS);
	assert_int_equal(PARSE(&c, "--ordered=50"), 0);
	assert_int_equal(c.ordered_hold_ms, 50);
	assert_int_not_equal(PARSE(&c, "--ordered=0"), 0);
	assert_non_null(strstr(err, "--ordered=0"));
	assert_int_not_equal(PARSE(&c, "--ordered=soon"), 0);
	assert_non_null(strstr(err, "--ordered=soon"));
	assert_int_not_equal(PARSE(&c, "--ordered", "--output", "tcp:127.0.0.1:514",
				   "--disk-buffer", "/tmp/x"),
			     0);
	assert_non_null(strstr(err, "--ordered and --disk-buffer"));
}

static void test_unknown_flag_and_argument(void **state)
{
	struct config c;

	assert_int_not_equal(PARSE(&c, "--frobnicate"), 0);
	assert_int_not_equal(PARSE(&c, "stray"), 0);
	assert_non_null(strstr(err, "'stray'"));
}

static void test_kafka(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--output", "kafka:127.0.0.1:9092/syslog"), 0);
	assert_int_equal(c.output, OUTPUT_KAFKA);
	assert_string_equal(c.output_arg, "127.0.0.1:9092/syslog");
	assert_string_equal(c.kafka.brokers, "127.0.0.1:9092");
	assert_string_equal(c.kafka.topic, "syslog");
	assert_int_equal(c.kafka.key, KAFKA_KEY_NONE);
	assert_int_equal(c.kafka.nr_opts, 0);
	assert_true(c.drain_timeout > 9.99 && c.drain_timeout < 10.01);

	assert_int_equal(PARSE(&c, "--output", "kafka:k1:9092,[::1]:9093,10.0.0.7:19092/a.b_c-1",
			       "--kafka-key", "source", "--kafka-opt", "acks=1", "--kafka-opt",
			       "compression.type=lz4", "--kafka-opt", "client.id=a=b",
			       "--drain-timeout", "2.5"),
			 0);
	assert_string_equal(c.kafka.brokers, "k1:9092,[::1]:9093,10.0.0.7:19092");
	assert_string_equal(c.kafka.topic, "a.b_c-1");
	assert_int_equal(c.kafka.key, KAFKA_KEY_SOURCE);
	assert_int_equal(c.kafka.nr_opts, 3);
	assert_string_equal(c.kafka.opts[0], "acks=1");
	assert_string_equal(c.kafka.opts[1], "compression.type=lz4");
	assert_string_equal(c.kafka.opts[2], "client.id=a=b");
	assert_true(c.drain_timeout > 2.49 && c.drain_timeout < 2.51);

	assert_int_equal(PARSE(&c, "--output", "kafka:h:1/t", "--kafka-key", "hostname"), 0);
	assert_int_equal(c.kafka.key, KAFKA_KEY_HOSTNAME);
	assert_int_equal(PARSE(&c, "--output", "kafka:h:1/t", "--kafka-key", "app"), 0);
	assert_int_equal(c.kafka.key, KAFKA_KEY_APP);
	assert_int_equal(PARSE(&c, "--output", "kafka:h:1/t", "--drain-timeout", "0"), 0);
	assert_true(c.drain_timeout == 0);
	assert_true(c.stall_timeout > 29.99 && c.stall_timeout < 30.01);
	assert_int_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601", "--stall-timeout", "2.5"), 0);
	assert_true(c.stall_timeout > 2.49 && c.stall_timeout < 2.51);

	/* --framing: the format's default, newline for original; the frame
	 * and the whole datagram only where a frame or record holds them */
	assert_int_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601"), 0);
	assert_int_equal(config_framing(&c), FRAMING_OCTET);
	assert_int_equal(config_format_flags(&c) & (FORMAT_F_OCTET_FRAME | FORMAT_F_WHOLE),
			 FORMAT_F_OCTET_FRAME | FORMAT_F_WHOLE);
	assert_int_equal(PARSE(&c, "--output", "tls:127.0.0.1:6514", "--format", "original"), 0);
	assert_int_equal(config_framing(&c), FRAMING_NEWLINE);
	assert_int_equal(config_format_flags(&c) & (FORMAT_F_OCTET_FRAME | FORMAT_F_WHOLE), 0);
	assert_int_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601", "--format", "original",
			       "--framing", "octet"),
			 0);
	assert_int_equal(config_framing(&c), FRAMING_OCTET);
	assert_int_equal(PARSE(&c, "--output", "kafka:h:1/t", "--format", "original"), 0);
	assert_int_equal(config_format_flags(&c) & (FORMAT_F_OCTET_FRAME | FORMAT_F_WHOLE),
			 FORMAT_F_WHOLE);
	assert_int_equal(PARSE(&c, "--format", "original"), 0);
	assert_int_equal(config_format_flags(&c) & (FORMAT_F_OCTET_FRAME | FORMAT_F_WHOLE), 0);
	assert_int_not_equal(PARSE(&c, "--output", "file:/x", "--framing", "octet"), 0);
	assert_non_null(strstr(err, "--framing needs --output tcp:HOST:PORT or tls:HOST:PORT"));
	assert_int_not_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601", "--framing", "lf"), 0);
	assert_non_null(strstr(err, "--framing lf: expected octet or newline"));
	assert_int_not_equal(PARSE(&c, "--output", "otlp:http://h:1", "--format", "original"), 0);
	assert_non_null(strstr(err, "--otlp-original makes the datagram its body"));
}

static void test_otlp(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--output", "otlp:http://127.0.0.1:4318"), 0);
	assert_int_equal(c.output, OUTPUT_OTLP);
	assert_string_equal(c.output_arg, "http://127.0.0.1:4318/v1/logs");
	assert_true(c.otlp.gzip && !c.otlp.json && !c.otlp.nr_headers && !c.otlp.original);
	assert_string_equal(c.timezone, "local");
	assert_int_equal(c.tz_kind, TZ_LOCAL);
	assert_int_equal(PARSE(&c, "--output", "otlp:http://h:1/"), 0);
	assert_string_equal(c.output_arg, "http://h:1/v1/logs");
	assert_int_equal(PARSE(&c, "--output", "otlp:https://[::1]:4318/otlp/v1/logs",
			       "--otlp-encoding", "json", "--otlp-compression", "none",
			       "--otlp-header", "Authorization=Bearer a=b", "--otlp-header",
			       "X-Scope-OrgID=t1", "--otlp-ca", "/dev/null", "--timezone", "-05:30",
			       "--otlp-original"),
			 0);
	assert_true(c.otlp.original);
	assert_string_equal(c.output_arg, "https://[::1]:4318/otlp/v1/logs");
	assert_true(!c.otlp.gzip && c.otlp.json);
	assert_int_equal(c.otlp.nr_headers, 2);
	assert_string_equal(c.otlp.headers[0], "Authorization=Bearer a=b");
	assert_string_equal(c.otlp.ca, "/dev/null");
	assert_int_equal(c.tz_kind, TZ_FIXED);
	assert_int_equal(c.tz_offset, -(5 * 3600 + 30 * 60));
	assert_int_equal(PARSE(&c, "--timezone", "Europe/Paris"), 0);
	assert_int_equal(c.tz_kind, TZ_NAMED);
	assert_false(c.guess_tz);
	assert_int_equal(PARSE(&c, "--timezone", "local", "--guess-timezone"), 0);
	assert_int_equal(c.tz_kind, TZ_LOCAL);
	assert_true(c.guess_tz);
	assert_int_equal(PARSE(&c, "--output", "otlp:http://h:1", "--disk-buffer", "/tmp"), 0);
}

static void test_tls(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--output", "tls:127.0.0.1:6514", "--tls-ca", "/dev/null",
			       "--tls-cert", "/dev/null", "--tls-key", "/dev/null", "--tls-name",
			       "syslog.example", "--disk-buffer", "/tmp"),
			 0);
	assert_int_equal(c.output, OUTPUT_TLS);
	assert_string_equal(c.output_arg, "127.0.0.1:6514");
	assert_string_equal(c.tls.ca, "/dev/null");
	assert_string_equal(c.tls.cert, "/dev/null");
	assert_string_equal(c.tls.key, "/dev/null");
	assert_string_equal(c.tls.name, "syslog.example");
	assert_true(config_output_is_network(&c));
	/* the system's CAs, HOST as the name */
	assert_int_equal(PARSE(&c, "--output", "tls:[::1]:6514"), 0);
	assert_true(!c.tls.ca[0] && !c.tls.name[0]);

	assert_int_not_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601", "--tls-ca", "/dev/null"),
			     0);
	assert_non_null(strstr(err, "--tls-ca, --tls-cert, --tls-key and --tls-name need --output "
				    "tls:HOST:PORT"));
	assert_int_not_equal(PARSE(&c, "--output", "tls:127.0.0.1:6514", "--tls-key", "/dev/null"),
			     0);
	assert_non_null(strstr(err, "--tls-cert and --tls-key go together"));
	assert_int_not_equal(
		PARSE(&c, "--output", "tls:127.0.0.1:6514", "--tls-ca", "/nonexistent/ca.pem"), 0);
	assert_non_null(strstr(err, "--tls-ca /nonexistent/ca.pem: cannot read it"));
	assert_int_not_equal(PARSE(&c, "--output", "tls:127.0.0.1:6514", "--tls-name", "a b"), 0);
	assert_non_null(strstr(err, "--tls-name a b: expected a DNS name or an IP address"));
	assert_int_not_equal(PARSE(&c, "--output", "tls:"), 0);
}

static void test_redact(void **state)
{
	char b[128];

	assert_string_equal(redact_url(b, sizeof(b), "http://svc:S3cretPass@h:4318/v1/logs"),
			    "http://svc:***@h:4318/v1/logs");
	assert_string_equal(redact_url(b, sizeof(b), "https://T0ken@h:4318"), "https://***@h:4318");
	/* the last '@' of the authority ends the userinfo; one in the path is not it */
	assert_string_equal(redact_url(b, sizeof(b), "http://a:p@ss@h:1/x@y"),
			    "http://a:***@h:1/x@y");
	assert_string_equal(redact_url(b, sizeof(b), "http://h:1/x@y"), "http://h:1/x@y");
	assert_string_equal(redact_url(b, sizeof(b), "127.0.0.1:514"), "127.0.0.1:514");
	/* a spec that is not a URL: its kind, then the same userinfo */
	assert_string_equal(redact_url(b, sizeof(b), "kafka:svc:S3cret@h:9092/t"),
			    "kafka:svc:***@h:9092/t");
	assert_string_equal(redact_url(b, sizeof(b), "tcp:h:514"), "tcp:h:514");
	assert_string_equal(redact_url(b, sizeof(b), "file:/var/log/a@b"), "file:/var/log/a@b");
	assert_string_equal(redact_url(b, sizeof(b), "file:logs@2026"), "file:logs@2026");
	assert_string_equal(redact_header(b, sizeof(b), "Authorization=Bearer T0ken"),
			    "Authorization=***");
	assert_string_equal(redact_header(b, sizeof(b), "T0ken"), "***");

	/* the summary's and the logs' output name */
	struct config c;

	assert_int_equal(PARSE(&c, "--output", "otlp:http://svc:S3cretPass@h:4318"), 0);
	assert_string_equal(c.output_arg, "http://svc:S3cretPass@h:4318/v1/logs"); /* for curl */
	assert_string_equal(config_output_name(&c, b, sizeof(b)),
			    "otlp:http://svc:***@h:4318/v1/logs");
	assert_int_not_equal(PARSE(&c, "--output", "otlp:ftp://svc:S3cretPass@h:1"), 0);
	assert_null(strstr(err, "S3cretPass"));
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* --otlp-header-file: KEY=VALUE lines; a link, a group/world-writable file
 * refused; an error never shows a value. */
static void test_otlp_header_file(void **state)
{
	char dir[] = "/tmp/test_config.XXXXXX", path[64], link[64];
	struct config c;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/headers", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	write_file(path,
		   "# the collector's token\n\nAuthorization=Bearer T0ken\r\nX-Scope-OrgID=t1\n",
		   0600);
	assert_int_equal(PARSE(&c, "--output", "otlp:http://h:1", "--otlp-header-file", path,
			       "--otlp-header", "X-Extra=1"),
			 0);
	assert_int_equal(c.otlp.nr_headers, 3);
	assert_string_equal(c.otlp.headers[0], "Authorization=Bearer T0ken");
	assert_string_equal(c.otlp.headers[1], "X-Scope-OrgID=t1");
	assert_string_equal(c.otlp.headers[2], "X-Extra=1");

	assert_int_equal(chmod(path, 0620), 0);
	assert_int_not_equal(PARSE(&c, "--output", "otlp:http://h:1", "--otlp-header-file", path),
			     0);
	assert_non_null(strstr(err, "--otlp-header-file"));
	assert_non_null(strstr(err, "writable by group or others (mode 0620): refused"));
	assert_int_equal(chmod(path, 0602), 0);
	assert_int_not_equal(PARSE(&c, "--output", "otlp:http://h:1", "--otlp-header-file", path),
			     0);
	assert_non_null(strstr(err, "(mode 0602)"));
	assert_int_equal(chmod(path, 0600), 0);

	assert_int_equal(symlink(path, link), 0);
	assert_int_not_equal(PARSE(&c, "--output", "otlp:http://h:1", "--otlp-header-file", link),
			     0);
	assert_non_null(strstr(err, "it is a symbolic link: refused"));

	write_file(path, "X-Ok=1\nAuthorization Bearer S3cret\n", 0600);
	assert_int_not_equal(PARSE(&c, "--output", "otlp:http://h:1", "--otlp-header-file", path),
			     0);
	assert_non_null(strstr(err, ":2 ***: expected KEY=VALUE"));
	assert_null(strstr(err, "S3cret"));
	write_file(path, "Bad Key=S3cret\n", 0600);
	assert_int_not_equal(PARSE(&c, "--output", "otlp:http://h:1", "--otlp-header-file", path),
			     0);
	assert_null(strstr(err, "S3cret"));

	unlink(link);
	unlink(path);
	rmdir(dir);
}

static void test_otlp_bad(void **state)
{
	static const char *const cases[][3] = {
		{ "--output", "otlp:", "--output otlp:" },
		{ "--output", "otlp:h:4318", "--output otlp:h:4318" },	     /* no scheme */
		{ "--output", "otlp:ftp://h:1", "--output otlp:ftp://h:1" }, /* not http */
		{ "--output", "otlp:http://h/v1/logs",
		  "--output otlp:http://h/v1/logs" }, /* port */
		{ "--otlp-encoding", "xml", "--otlp-encoding xml" },
		{ "--otlp-compression", "zstd", "--otlp-compression zstd" },
		{ "--otlp-header", "NoEquals", "--otlp-header ***: expected KEY=VALUE" },
		{ "--otlp-header", "A:b=c", "--otlp-header A:b=***: expected KEY=VALUE" },
		{ "--otlp-ca", "/nonexistent/ca.pem", "--otlp-ca /nonexistent/ca.pem" },
		{ "--timezone", "Mars/Olympus", "--timezone Mars/Olympus" },
		{ "--timezone", "+25:00", "--timezone +25:00" },
		{ "--timezone", "../../etc/passwd", "--timezone ../../etc/passwd" },
	};
	struct config c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[] = { "syslogrx",	      "--output",	   "otlp:http://h:1",
				 (char *)cases[i][0], (char *)cases[i][1], NULL };

		assert_int_not_equal(config_parse(&c, 5, argv, ARGP_NO_EXIT | ARGP_NO_ERRS, err,
						  sizeof(err)),
				     0);
		if (!strstr(err, cases[i][2]))
			fail_msg("%s %s: error '%s' does not name '%s'", cases[i][0], cases[i][1],
				 err, cases[i][2]);
	}
	/* combinations refused at start */
	assert_int_not_equal(PARSE(&c, "--otlp-encoding", "json"), 0);
	assert_non_null(strstr(err, "need --output otlp:URL"));
	assert_int_not_equal(PARSE(&c, "--output", "otlp:http://h:1", "--otlp-ca", "/dev/null"), 0);
	assert_non_null(strstr(err, "https://"));
	assert_int_not_equal(PARSE(&c, "--output", "otlp:https://h:1", "--otlp-cert", "/dev/null"),
			     0);
	assert_non_null(strstr(err, "--otlp-cert and --otlp-key go together"));
	assert_int_not_equal(PARSE(&c, "--output", "otlp:http://h:1", "--format", "json"), 0);
	assert_non_null(strstr(err, "--format json does not apply to --output otlp"));
	assert_int_not_equal(PARSE(&c, "--otlp-original"), 0);
	assert_non_null(strstr(err, "--otlp-original needs --output otlp:URL"));
	assert_int_not_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601", "--otlp-original"), 0);
	assert_non_null(strstr(err, "--otlp-original needs --output otlp:URL"));
}

static void test_kafka_bad(void **state)
{
	static const char *const cases[][3] = {
		{ "--output", "kafka:", "--output kafka:" },
		{ "--output", "kafka:h:9092", "--output kafka:h:9092" }, /* no topic */
		{ "--output", "kafka:h:9092/", "--output kafka:h:9092/" },
		{ "--output", "kafka:/t", "--output kafka:/t" },   /* no broker */
		{ "--output", "kafka:h/t", "--output kafka:h/t" }, /* no port */
		{ "--output", "kafka:h:0/t", "--output kafka:h:0/t" },
		{ "--output", "kafka:h:70000/t", "--output kafka:h:70000/t" },
		{ "--output", "kafka:h:1,,h:2/t", "--output kafka:h:1,,h:2/t" },
		{ "--output", "kafka:h:1/bad topic", "--output kafka:h:1/bad topic" },
		{ "--output", "kafka:h:1/..", "--output kafka:h:1/.." },
		/* credentials are --kafka-opt sasl.*: a user:password@ is refused, shown as *** */
		{ "--output", "kafka:svc:pw@h:1/t", "--output kafka:svc:***@h:1/t: expected" },
		{ "--output", "kafka:[::1:1/t", "--output kafka:[::1:1/t" },
		{ "--kafka-key", "pid", "--kafka-key pid" },
		/* the value may be a secret (sasl.password=...): never shown */
		{ "--kafka-opt", "acks", "--kafka-opt ***: expected KEY=VALUE" },
		{ "--kafka-opt", "=1", "--kafka-opt =***: expected KEY=VALUE" },
		{ "--drain-timeout", "-1", "--drain-timeout -1" },
		{ "--drain-timeout", "5000", "--drain-timeout 5000" },
		{ "--stall-timeout", "0.5",
		  "--stall-timeout 0.5: expected seconds from 1 to 3600" },
		{ "--stall-timeout", "5000", "--stall-timeout 5000" },
	};
	struct config c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = PARSE(&c, "--output", "kafka:h:1/t", (char *)cases[i][0],
				(char *)cases[i][1]);

		assert_int_not_equal(ret, 0);
		if (!strstr(err, cases[i][2]))
			fail_msg("%s %s: error '%s' does not name it", cases[i][0], cases[i][1],
				 err);
	}
	/* 250 bytes of topic: over Kafka's limit. */
	char longdest[300] = "kafka:h:1/";
	memset(longdest + strlen(longdest), 't', 250);
	assert_int_not_equal(PARSE(&c, "--output", longdest), 0);
	/* More than CONFIG_MAX_KAFKA_OPTS --kafka-opt flags. */
	char *argv[2 + 2 * (CONFIG_MAX_KAFKA_OPTS + 1) + 1];
	int argc = 0;

	argv[argc++] = "syslogrx";
	argv[argc++] = "--output=kafka:h:1/t";
	for (int i = 0; i <= CONFIG_MAX_KAFKA_OPTS; i++) {
		argv[argc++] = "--kafka-opt";
		argv[argc++] = "linger.ms=1";
	}
	argv[argc] = NULL;
	assert_int_not_equal(
		config_parse(&c, argc, argv, ARGP_NO_EXIT | ARGP_NO_ERRS, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "at most 64"));
	/* Kafka flags without a kafka output would be ignored: an error. */
	assert_int_not_equal(PARSE(&c, "--kafka-key", "source"), 0);
	assert_non_null(strstr(err, "--output kafka"));
	assert_int_not_equal(PARSE(&c, "--output", "file:/tmp/x", "--kafka-opt", "acks=1"), 0);
}

/* Issue 25: table size (0 = off, else 16 .. 2^20) and the top shown. */
static void test_senders(void **state)
{
	static const char *const bad[][3] = {
		{ "--senders", "8", "--senders 8" },
		{ "--senders", "2000000", "--senders 2000000" },
		{ "--senders", "x", "--senders x" },
		{ "--senders-top", "0", "--senders-top 0" },
		{ "--senders-top", "1001", "--senders-top 1001" },
	};
	struct config c;

	(void)state;
	assert_int_equal(PARSE(&c, "--output", "null"), 0);
	assert_int_equal(c.senders, 4096);
	assert_int_equal(c.senders_top, 20);
	assert_int_equal(PARSE(&c, "--senders", "0", "--senders-top", "1"), 0);
	assert_int_equal(c.senders, 0);
	assert_int_equal(c.senders_top, 1);
	assert_int_equal(PARSE(&c, "--senders", "1048576", "--senders-top", "1000"), 0);
	assert_int_equal(c.senders, 1048576);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(PARSE(&c, (char *)bad[i][0], (char *)bad[i][1]), 0);
		if (!strstr(err, bad[i][2]))
			fail_msg("%s %s: error '%s' does not name it", bad[i][0], bad[i][1], err);
	}
}

static void test_disk_buffer(void **state)
{
	static const char *const bad[][3] = {
		{ "--disk-buffer-size", "1K", "--disk-buffer-size 1K" },
		{ "--disk-buffer-mode", "always", "--disk-buffer-mode always" },
		{ "--disk-buffer-sync", "-1", "--disk-buffer-sync -1" },
	};
	struct config c;

	assert_int_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601"), 0);
	assert_string_equal(c.disk_buffer, "");
	assert_int_equal(c.disk_buffer_size, 1ULL << 30);
	assert_int_equal(c.disk_buffer_mode, 0);
	assert_int_equal(c.disk_buffer_sync_ms, 1000);
	assert_int_equal(PARSE(&c, "--output", "kafka:h:1/t", "--disk-buffer", "/var/spool/rx",
			       "--disk-buffer-size", "2G", "--disk-buffer-mode", "reliable",
			       "--disk-buffer-sync", "0"),
			 0);
	assert_string_equal(c.disk_buffer, "/var/spool/rx");
	assert_int_equal(c.disk_buffer_size, 2ULL << 30);
	assert_int_equal(c.disk_buffer_mode, 1);
	assert_int_equal(c.disk_buffer_sync_ms, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_not_equal(PARSE(&c, "--output", "tcp:127.0.0.1:601", "--disk-buffer",
					   "/d", (char *)bad[i][0], (char *)bad[i][1]),
				     0);
		if (!strstr(err, bad[i][2]))
			fail_msg("%s %s: error '%s' does not name it", bad[i][0], bad[i][1], err);
	}
	/* Only for network outputs; its settings only with it. */
	assert_int_not_equal(PARSE(&c, "--output", "file:/tmp/x", "--disk-buffer", "/d"), 0);
	assert_non_null(strstr(err, "--disk-buffer needs"));
	assert_int_not_equal(
		PARSE(&c, "--output", "tcp:127.0.0.1:601", "--disk-buffer-mode", "reliable"), 0);
	assert_non_null(strstr(err, "need --disk-buffer DIR"));
}

/* Issue 19: sequence accounting off unless asked for, its bounds only with
 * it; control bytes escaped unless --no-escape-control. */
static void test_input_flags(void **state)
{
	struct config c;

	assert_int_equal(PARSE(&c, "--output", "null"), 0);
	assert_false(c.sequences);
	assert_true(c.escape_control);
	assert_int_equal(c.sequence_flows, 1024);
	assert_int_equal(c.sequence_jump, 1ULL << 20);
	assert_int_equal(PARSE(&c, "--sequences", "--sequence-flows", "7", "--sequence-jump", "100",
			       "--no-escape-control"),
			 0);
	assert_true(c.sequences);
	assert_false(c.escape_control);
	assert_int_equal(c.sequence_flows, 7);
	assert_int_equal(c.sequence_jump, 100);
	assert_int_not_equal(PARSE(&c, "--sequence-flows", "7"), 0);
	assert_non_null(strstr(err, "need --sequences"));
	assert_int_not_equal(PARSE(&c, "--sequences", "--sequence-flows", "0"), 0);
	assert_non_null(strstr(err, "--sequence-flows 0"));
	assert_int_not_equal(PARSE(&c, "--sequences", "--sequence-jump", "x"), 0);
	assert_non_null(strstr(err, "--sequence-jump x"));
	/* json's raw key for every message only when asked, and only for json */
	assert_int_equal(PARSE(&c, "--format", "json"), 0);
	assert_false(c.json_raw);
	assert_int_equal(PARSE(&c, "--format", "json", "--json-raw"), 0);
	assert_true(c.json_raw);
	assert_int_not_equal(PARSE(&c, "--json-raw"), 0);
	assert_non_null(strstr(err, "--json-raw needs --format json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_flag),
		cmocka_unit_test(test_outputs),
		cmocka_unit_test(test_size_suffixes),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_threads_more_than_sockets),
		cmocka_unit_test(test_threads_follow_sockets),
		cmocka_unit_test(test_user),
		cmocka_unit_test(test_protect),
		cmocka_unit_test(test_cost_ns_per_thread),
		cmocka_unit_test(test_ordered),
		cmocka_unit_test(test_unknown_flag_and_argument),
		cmocka_unit_test(test_kafka),
		cmocka_unit_test(test_otlp),
		cmocka_unit_test(test_tls),
		cmocka_unit_test(test_otlp_bad),
		cmocka_unit_test(test_redact),
		cmocka_unit_test(test_otlp_header_file),
		cmocka_unit_test(test_kafka_bad),
		cmocka_unit_test(test_disk_buffer),
		cmocka_unit_test(test_input_flags),
		cmocka_unit_test(test_senders),
		cmocka_unit_test(test_listeners),
		cmocka_unit_test(test_listeners_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
