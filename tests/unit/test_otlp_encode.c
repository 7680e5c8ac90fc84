// SPDX-License-Identifier: MIT
/*
 * OTLP encoder: byte-exact protobuf and OTLP/JSON for an RFC 5424 message
 * with structured data (escapes included), an RFC 3164 one without a year
 * received across New Year, a malformed datagram and a body that is not
 * UTF-8; the request frame; the response parser; the normalised time.
 * The expected bytes were checked field by field against an independent
 * decoder (tests/support/otlp_wire.py) and by a real collector
 * (tests/integration/outputs/test_otlp.py).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "syslog/msgtime.h"
#include "syslog/otlp_encode.h"
#include "syslog/syslog_parse.h"

#define IN(x) x, sizeof(x) - 1
#define SEC 1000000000ULL

struct enc {
	char buf[OTLP_RECORD_MAX(512)];
	size_t len;
};

static bool original; /* --otlp-original */
static struct sockaddr_in src4 = { .sin_family = AF_INET, .sin_port = 0x409c /* 40000 */ };
static const char *listener; /* the record's listener name, NULL = none */

static void encode(struct enc *e, enum otlp_encoding enc, const char *data, size_t len,
		   uint64_t recv_ns, long gmtoff)
{
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(data, len, &m);
	struct otlp_rec rec = {
		.data = data,
		.len = len,
		.m = &m,
		.r = r,
		.time_ns = syslog_time_ns(&m, r, recv_ns, gmtoff),
		.observed_ns = recv_ns,
		.src = (const struct sockaddr *)&src4,
		.src_len = sizeof(src4),
		.original = original,
		.listener = listener,
	};

	src4.sin_addr.s_addr = htonl(0x7f000001);
	assert_true(OTLP_RECORD_MAX(len) <= sizeof(e->buf));
	e->len = enc == OTLP_JSON ? otlp_json_record(e->buf, &rec) : otlp_pb_record(e->buf, &rec);
	assert_true(e->len <= OTLP_RECORD_MAX(len));
}

static void print_hex(const char *what, const char *p, size_t n)
{
	fprintf(stderr, "%s (%zu bytes): ", what, n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%02x", (unsigned char)p[i]);
	fprintf(stderr, "\n");
}

static void expect_hex(const struct enc *e, const char *hex)
{
	size_t n = strlen(hex) / 2;
	char *want = malloc(n + 1);

	for (size_t i = 0; i < n; i++)
		sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&want[i]);
	if (e->len != n || memcmp(e->buf, want, n))
		print_hex("got", e->buf, e->len);
	assert_int_equal(e->len, n);
	assert_memory_equal(e->buf, want, n);
	free(want);
}

static void expect_json(const struct enc *e, const char *json)
{
	if (e->len != strlen(json) || memcmp(e->buf, json, e->len))
		fprintf(stderr, "got: %.*s\n", (int)e->len, e->buf);
	assert_int_equal(e->len, strlen(json));
	assert_memory_equal(e->buf, json, e->len);
}

/* 2026-11-22T03:12:00.123456Z */
#define RECV (1795317120 * SEC + 123456000)
static const char msg5424[] =
	"<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
	"[exampleSDID@32473 iut=\"3\" eventSource=\"App\"][x@1 q=\"a\\\"b\\]\"] "
	"An application event";

static void test_5424_json(void **state)
{
	struct enc e;

	encode(&e, OTLP_JSON, IN(msg5424), RECV, 0);
	expect_json(
		&e,
		"{\"timeUnixNano\":\"1065910455003000000\",\"observedTimeUnixNano\":\"1795317120123456000\","
		"\"severityNumber\":10,\"severityText\":\"notice\","
		"\"body\":{\"stringValue\":\"An application event\"},\"attributes\":["
		"{\"key\":\"priority\",\"value\":{\"intValue\":\"165\"}},"
		"{\"key\":\"facility\",\"value\":{\"intValue\":\"20\"}},"
		"{\"key\":\"version\",\"value\":{\"intValue\":\"1\"}},"
		"{\"key\":\"hostname\",\"value\":{\"stringValue\":\"mymachine.example.com\"}},"
		"{\"key\":\"appname\",\"value\":{\"stringValue\":\"evntslog\"}},"
		"{\"key\":\"msg_id\",\"value\":{\"stringValue\":\"ID47\"}},"
		"{\"key\":\"structured_data\",\"value\":{\"kvlistValue\":{\"values\":["
		"{\"key\":\"exampleSDID@32473\",\"value\":{\"kvlistValue\":{\"values\":["
		"{\"key\":\"iut\",\"value\":{\"stringValue\":\"3\"}},"
		"{\"key\":\"eventSource\",\"value\":{\"stringValue\":\"App\"}}]}}},"
		"{\"key\":\"x@1\",\"value\":{\"kvlistValue\":{\"values\":["
		"{\"key\":\"q\",\"value\":{\"stringValue\":\"a\\\"b]\"}}]}}}]}}},"
		"{\"key\":\"net.transport\",\"value\":{\"stringValue\":\"IP.UDP\"}},"
		"{\"key\":\"net.peer.ip\",\"value\":{\"stringValue\":\"127.0.0.1\"}},"
		"{\"key\":\"net.peer.port\",\"value\":{\"stringValue\":\"40000\"}}]}");
}

/* A named listener: the last attribute, syslogrx.listener. */
static void test_listener_attribute(void **state)
{
	static const char tail[] =
		"{\"key\":\"net.peer.port\",\"value\":{\"stringValue\":\"40000\"}},"
		"{\"key\":\"syslogrx.listener\",\"value\":{\"stringValue\":\"cisco_asa\"}}]}";
	static const char pb_key[] = "\x0a\x11"
				     "syslogrx.listener"
				     "\x12\x0b\x0a\x09"
				     "cisco_asa";
	struct enc e;

	listener = "cisco_asa";
	encode(&e, OTLP_JSON, IN(msg5424), RECV, 0);
	listener = NULL;
	assert_true(e.len > sizeof(tail) - 1);
	assert_memory_equal(e.buf + e.len - (sizeof(tail) - 1), tail, sizeof(tail) - 1);
	listener = "cisco_asa";
	encode(&e, OTLP_PROTOBUF, IN(msg5424), RECV, 0);
	listener = NULL;
	/* KeyValue { key 1, value 2 AnyValue { string_value 1 } } */
	assert_non_null(memmem(e.buf, e.len, pb_key, sizeof(pb_key) - 1));
}

static void test_5424_protobuf(void **state)
{
	struct enc e;

	encode(&e, OTLP_PROTOBUF, IN(msg5424), RECV, 0);
	expect_hex(&e,
		   /* log_records (2), 365 bytes; time_unix_nano (1, fixed64) */
		   "12ed02"
		   "09c02cd450e9dfca0e"
		   /* severity_number (2) 10, severity_text (3) "notice" */
		   "100a"
		   "1a066e6f74696365"
		   /* body (5): AnyValue string_value (1) */
		   "2a160a14416e206170706c69636174696f6e206576656e74"
		   /* attributes (6): priority 165, facility 20, version 1 (int_value 3) */
		   "320f0a087072696f72697479120318a501"
		   "320e0a08666163696c69747912021814"
		   "320d0a0776657273696f6e12021801"
		   /* hostname, appname, msg_id (string_value 1) */
		   "32230a08686f73746e616d6512170a156d796d616368696e652e6578616d706c652e636f6d"
		   "32150a076170706e616d65120a0a0865766e74736c6f67"
		   "32100a066d73675f696412060a0449443437"
		   /* structured_data: kvlist_value (6) of kvlists */
		   "32680a0f737472756374757265645f646174611255"
		   "3253"
		   "0a390a116578616d706c6553444944403332343733122432220a0a0a0369757412030a0133"
		   "0a140a0b6576656e74536f7572636512050a03417070"
		   "0a160a03784031120f320d0a0b0a017112060a046122625d"
		   /* net.transport, net.peer.ip, net.peer.port */
		   "32190a0d6e65742e7472616e73706f727412080a0649502e554450"
		   "321a0a0b6e65742e706565722e6970120b0a093132372e302e302e31"
		   "32180a0d6e65742e706565722e706f727412070a053430303030"
		   /* observed_time_unix_nano (11, fixed64) */
		   "5900ca22a4683fea18");
}

/* RFC 3164 without a year, sent 23:59:59 on New Year's Eve, received
 * 2027-01-01T00:00:05Z: it is 2026's. In UTC+01:00 (gmtoff 3600), the same
 * stamp is local time: one hour earlier in UTC. */
#define NEWYEAR (1798761605 * SEC)
static const char msg3164[] = "<38>Dec 31 23:59:59 host1 su[123]: 'su root' failed";

static void test_3164_time(void **state)
{
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(IN(msg3164), &m);

	assert_int_equal(r, SYSLOG_OK_3164);
	/* 2026-12-31T23:59:59Z */
	assert_int_equal(syslog_time_ns(&m, r, NEWYEAR, 0), 1798761599 * SEC);
	assert_int_equal(syslog_time_ns(&m, r, NEWYEAR, 3600), (1798761599 - 3600) * SEC);
	/* A January message received in December belongs to next year. */
	static const char jan[] = "<38>Jan  1 00:00:01 h a: x";
	r = syslog_parse(IN(jan), &m);
	assert_int_equal(syslog_time_ns(&m, r, NEWYEAR - 10 * SEC, 0), (1798761600 + 1) * SEC);
	/* An offset in the stamp wins over gmtoff; the fraction is kept. */
	static const char off[] = "<38>1 2026-11-22T08:42:00.123456+05:30 h a - - - x";
	r = syslog_parse(IN(off), &m);
	assert_int_equal(syslog_time_ns(&m, r, RECV, 3600), 1795317120 * SEC + 123456000);
	/* No stamp: 0 (timeUnixNano is left out). */
	static const char none[] = "<38>just text";
	r = syslog_parse(IN(none), &m);
	assert_int_equal(syslog_time_ns(&m, r, RECV, 0), 0);
}

static void test_3164_json(void **state)
{
	struct enc e;

	encode(&e, OTLP_JSON, IN(msg3164), NEWYEAR, 0);
	expect_json(&e, "{\"timeUnixNano\":\"1798761599000000000\",\"observedTimeUnixNano\":"
			"\"1798761605000000000\",\"severityNumber\":9,\"severityText\":\"info\","
			"\"body\":{\"stringValue\":\"'su root' failed\"},\"attributes\":["
			"{\"key\":\"priority\",\"value\":{\"intValue\":\"38\"}},"
			"{\"key\":\"facility\",\"value\":{\"intValue\":\"4\"}},"
			"{\"key\":\"hostname\",\"value\":{\"stringValue\":\"host1\"}},"
			"{\"key\":\"appname\",\"value\":{\"stringValue\":\"su\"}},"
			"{\"key\":\"proc_id\",\"value\":{\"stringValue\":\"123\"}},"
			"{\"key\":\"net.transport\",\"value\":{\"stringValue\":\"IP.UDP\"}},"
			"{\"key\":\"net.peer.ip\",\"value\":{\"stringValue\":\"127.0.0.1\"}},"
			"{\"key\":\"net.peer.port\",\"value\":{\"stringValue\":\"40000\"}}]}");
}

static void test_3164_protobuf(void **state)
{
	struct enc e;

	encode(&e, OTLP_PROTOBUF, IN(msg3164), NEWYEAR, 0);
	expect_hex(&e, "12d701"
		       "09003602e0247cf618"
		       "1009"
		       "1a04696e666f"
		       "2a120a1027737520726f6f7427206661696c6564"
		       "320e0a087072696f7269747912021826"
		       "320e0a08666163696c69747912021804"
		       "32130a08686f73746e616d6512070a05686f737431"
		       "320f0a076170706e616d6512040a027375"
		       "32100a0770726f635f696412050a03313233"
		       "32190a0d6e65742e7472616e73706f727412080a0649502e554450"
		       "321a0a0b6e65742e706565722e6970120b0a093132372e302e302e31"
		       "32180a0d6e65742e706565722e706f727412070a053430303030"
		       "5900f2a245267cf618");
}

/* Malformed: the whole datagram is the body, syslogrx.malformed true. */
static void test_malformed(void **state)
{
	struct enc e;

	encode(&e, OTLP_JSON, IN("<999>oops"), RECV, 0);
	expect_json(&e,
		    "{\"observedTimeUnixNano\":\"1795317120123456000\",\"body\":{\"stringValue\":"
		    "\"<999>oops\"},\"attributes\":["
		    "{\"key\":\"syslogrx.malformed\",\"value\":{\"boolValue\":true}},"
		    "{\"key\":\"net.transport\",\"value\":{\"stringValue\":\"IP.UDP\"}},"
		    "{\"key\":\"net.peer.ip\",\"value\":{\"stringValue\":\"127.0.0.1\"}},"
		    "{\"key\":\"net.peer.port\",\"value\":{\"stringValue\":\"40000\"}}]}");
	encode(&e, OTLP_PROTOBUF, IN("<999>oops"), RECV, 0);
	/* no time, no severity; body; syslogrx.malformed bool_value (2) true */
	expect_hex(&e, "128101"
		       "2a0b0a093c3939393e6f6f7073"
		       "32180a127379736c6f6772782e6d616c666f726d656412021001"
		       "32190a0d6e65742e7472616e73706f727412080a0649502e554450"
		       "321a0a0b6e65742e706565722e6970120b0a093132372e302e302e31"
		       "32180a0d6e65742e706565722e706f727412070a053430303030"
		       "5900ca22a4683fea18");
}

/* A body that is not UTF-8 is bytesValue (base64 in JSON), never altered. */
static void test_not_utf8(void **state)
{
	struct enc e;

	encode(&e, OTLP_JSON, IN("<14>Oct 11 22:14:15 h a: \xff\xfe!"), RECV, 0);
	expect_json(&e, "{\"timeUnixNano\":\"1791756855000000000\",\"observedTimeUnixNano\":"
			"\"1795317120123456000\",\"severityNumber\":9,\"severityText\":\"info\","
			"\"body\":{\"bytesValue\":\"//4h\"},\"attributes\":["
			"{\"key\":\"priority\",\"value\":{\"intValue\":\"14\"}},"
			"{\"key\":\"facility\",\"value\":{\"intValue\":\"1\"}},"
			"{\"key\":\"hostname\",\"value\":{\"stringValue\":\"h\"}},"
			"{\"key\":\"appname\",\"value\":{\"stringValue\":\"a\"}},"
			"{\"key\":\"net.transport\",\"value\":{\"stringValue\":\"IP.UDP\"}},"
			"{\"key\":\"net.peer.ip\",\"value\":{\"stringValue\":\"127.0.0.1\"}},"
			"{\"key\":\"net.peer.port\",\"value\":{\"stringValue\":\"40000\"}}]}");
	encode(&e, OTLP_PROTOBUF, IN("<14>Oct 11 22:14:15 h a: \xff\xfe!"), RECV, 0);
	/* body: AnyValue bytes_value (7) ff fe 21 */
	expect_hex(&e, "12b301"
		       "09006625d25d99dd18"
		       "1009"
		       "1a04696e666f"
		       "2a053a03fffe21"
		       "320e0a087072696f726974791202180e"
		       "320e0a08666163696c69747912021801"
		       "320f0a08686f73746e616d6512030a0168"
		       "320e0a076170706e616d6512030a0161"
		       "32190a0d6e65742e7472616e73706f727412080a0649502e554450"
		       "321a0a0b6e65742e706565722e6970120b0a093132372e302e302e31"
		       "32180a0d6e65742e706565722e706f727412070a053430303030"
		       "5900ca22a4683fea18");
}

static struct enc e_sd;

static bool has(const struct enc *e, const char *bytes, size_t n)
{
	return memmem(e->buf, e->len, bytes, n) != NULL;
}

/* Invalid UTF-8 in an SD value: U+FFFD per bad byte in the protobuf string
 * (escapes undone first, valid sequences kept); the body, valid, stays a string. */
static void test_not_utf8_sd(void **state)
{
	static const char in[] = "<14>1 - h a - - [x@1 v=\"a\xe9\\\"\xc3\xa9\xc3\"] ok";
	/* KeyValue{ "v", AnyValue{ string "a" FFFD '"' "é" FFFD } } */
	static const char value[] = "\x0a\x01v\x12\x0c\x0a\x0a"
				    "a\xef\xbf\xbd\"\xc3\xa9\xef\xbf\xbd";

	encode(&e_sd, OTLP_PROTOBUF, IN(in), RECV, 0);
	assert_true(has(&e_sd, value, sizeof(value) - 1));
	assert_true(has(&e_sd, "\x2a\x04\x0a\x02ok", 6)); /* body: string_value "ok" */
	encode(&e_sd, OTLP_JSON, IN(in), RECV, 0);
	assert_true(has(&e_sd, IN("{\"key\":\"v\",\"value\":{\"stringValue\":"
				  "\"a\\ufffd\\\"\xc3\xa9\\ufffd\"}}")));
}

/* --otlp-original: the body is the datagram, a string when it is valid
 * UTF-8 without NUL, else bytesValue; the attributes are unchanged. */
static void test_original(void **state)
{
	static const char bad[] = "<14>1 - h a - - [x@1 v=\"\xe9\"] m";

	original = true;
	encode(&e_sd, OTLP_JSON, IN("<14>1 - h a - - [x@1 v=\"\\\"\"] m\tn"), RECV, 0);
	assert_true(has(&e_sd, IN(",\"body\":{\"stringValue\":"
				  "\"<14>1 - h a - - [x@1 v=\\\"\\\\\\\"\\\"] m\\tn\"},")));
	assert_true(has(&e_sd, IN("{\"key\":\"appname\",\"value\":{\"stringValue\":\"a\"}}")));
	encode(&e_sd, OTLP_PROTOBUF, IN(bad), RECV, 0);
	/* body: AnyValue{ bytes_value (7): the datagram } */
	assert_true(has(&e_sd, "\x2a\x1f\x3a\x1d", 4));
	assert_true(has(&e_sd, IN(bad)));
	encode(&e_sd, OTLP_JSON, IN(bad), RECV, 0);
	assert_true(
		has(&e_sd,
		    IN("\"body\":{\"bytesValue\":\"PDE0PjEgLSBoIGEgLSAtIFt4QDEgdj0i6SJdIG0=\"}")));
	original = false;
}

/* The most bad bytes cost: an SD value of 0xff only, every byte U+FFFD (3
 * bytes in protobuf, 6 in JSON) and the datagram again as the body. */
static void test_bad_bytes_bound(void **state)
{
	char in[512];
	size_t n = 0;

	n += sprintf(in, "<14>1 - h a - - [a b=\"");
	memset(in + n, 0xff, sizeof(in) - n - 2);
	memcpy(in + sizeof(in) - 2, "\"]", 2);
	original = true;
	for (int enc = 0; enc < 2; enc++) {
		encode(&e_sd, enc ? OTLP_JSON : OTLP_PROTOBUF, in, sizeof(in), RECV, 0);
		assert_true(e_sd.len > (enc ? 6 : 3) * (sizeof(in) - n - 2)); /* all replaced */
	}
	original = false;
}

static void test_frame(void **state)
{
	char buf[OTLP_FRAME_MAX];
	size_t n;

	/* 300 bytes of records: ExportLogsServiceRequest{ResourceLogs{ScopeLogs{
	 * scope{name "syslogrx"}, records}}} */
	n = otlp_head(buf, OTLP_PROTOBUF, 300);
	struct enc e;
	memcpy(e.buf, buf, n);
	e.len = n;
	expect_hex(&e, "0abb02"
		       "12b802"
		       "0a0a"
		       "0a087379736c6f677278");
	assert_int_equal(otlp_tail(buf, OTLP_PROTOBUF), 0);
	n = otlp_head(buf, OTLP_JSON, 300);
	n += otlp_tail(buf + n, OTLP_JSON);
	memcpy(e.buf, buf, n);
	e.len = n;
	expect_json(&e, "{\"resourceLogs\":[{\"resource\":{},\"scopeLogs\":[{\"scope\":{\"name\":"
			"\"syslogrx\"},\"logRecords\":[]}]}]}");
}

static void test_response(void **state)
{
	uint64_t rejected = 99;
	char msg[16];
	/* partial_success{rejected_log_records 5, error_message "too old logs"} */
	static const char pb[] = "\x0a\x10\x08\x05\x12\x0ctoo old logs";
	static const char js[] = "{\"partialSuccess\":{\"rejectedLogRecords\":\"7\","
				 "\"errorMessage\":\"a very long message here\"}}";

	assert_int_equal(otlp_parse_response(pb, sizeof(pb) - 1, OTLP_PROTOBUF, &rejected, msg,
					     sizeof(msg)),
			 0);
	assert_int_equal(rejected, 5);
	assert_string_equal(msg, "too old logs");
	assert_int_equal(otlp_parse_response("", 0, OTLP_PROTOBUF, &rejected, msg, sizeof(msg)), 0);
	assert_int_equal(rejected, 0);
	assert_string_equal(msg, "");
	/* truncated: not a response */
	assert_int_equal(otlp_parse_response(pb, 5, OTLP_PROTOBUF, &rejected, msg, sizeof(msg)),
			 -1);
	assert_int_equal(
		otlp_parse_response(js, sizeof(js) - 1, OTLP_JSON, &rejected, msg, sizeof(msg)), 0);
	assert_int_equal(rejected, 7);
	assert_string_equal(msg, "a very long mes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_5424_json),
		cmocka_unit_test(test_5424_protobuf),
		cmocka_unit_test(test_3164_time),
		cmocka_unit_test(test_3164_json),
		cmocka_unit_test(test_3164_protobuf),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_not_utf8),
		cmocka_unit_test(test_not_utf8_sd),
		cmocka_unit_test(test_original),
		cmocka_unit_test(test_bad_bytes_bound),
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_response),
		cmocka_unit_test(test_listener_attribute),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
