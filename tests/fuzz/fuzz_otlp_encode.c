// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the OTLP encoder on any datagram. The first input byte
 * picks --otlp-original and an IPv4 or IPv6 sender; the rest is the datagram.
 * The protobuf record is decoded here against the LogRecord schema (field
 * numbers and wire types of the opentelemetry-proto LogRecord and
 * AnyValue messages), every message consuming exactly its length, and every
 * string field is checked with a UTF-8 validator written from the Unicode
 * standard's table of well-formed byte sequences (Table 3-7), not with the
 * encoder's own; with --otlp-original the body must be the datagram, byte
 * for byte. The OTLP/JSON record is checked with the same validator. And
 * utf8_repair itself: its output is valid, and valid input comes out as is.
 */
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/escape.h"
#include "syslog/msgtime.h"
#include "syslog/otlp_encode.h"
#include "syslog/syslog_parse.h"
#include "fuzz_check.h"

typedef const unsigned char *cursor;

/* Every byte of s is in a well-formed UTF-8 sequence (Unicode's Table 3-7). */
static bool well_formed(const unsigned char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = table_3_7_len(s + i, n - i)))
			return false;
	return true;
}

/* ---- a protobuf reader that knows only the LogRecord schema ---------------- */

static uint64_t varint(cursor *p, cursor end)
{
	return get_varint(p, end);
}

/* A length-delimited field's payload: [*p, *p + len) inside end. */
static cursor payload(cursor *p, cursor end, size_t *len)
{
	uint64_t n = varint(p, end);
	cursor at = *p;

	CHECK(n <= (uint64_t)(end - *p));
	*len = n;
	*p += n;
	return at;
}

static void string_field(cursor *p, cursor end)
{
	size_t n;
	cursor s = payload(p, end, &n);

	CHECK(well_formed(s, n));
}

struct body {
	cursor p;
	size_t n;
	bool seen, bytes;
};

static void anyvalue(cursor p, cursor end, struct body *body, int depth);

/* KeyValue: key 1 (string), value 2 (AnyValue). */
static void keyvalue(cursor p, cursor end, int depth)
{
	bool key = false;

	while (p < end) {
		uint64_t tag = varint(&p, end);
		size_t n;
		cursor v;

		if (tag == (1 << 3 | 2)) {
			string_field(&p, end);
			key = true;
		} else {
			CHECK(tag == (2 << 3 | 2));
			v = payload(&p, end, &n);
			anyvalue(v, v + n, NULL, depth + 1);
		}
	}
	CHECK(key);
}

/* AnyValue: string 1, bool 2, int 3, kvlist 6 (KeyValueList: values 1), bytes 7. */
static void anyvalue(cursor p, cursor end, struct body *body, int depth)
{
	CHECK(depth < 8); /* the encoder nests three deep at most */
	while (p < end) {
		uint64_t tag = varint(&p, end);
		size_t n;
		cursor v;

		switch (tag) {
		case 1 << 3 | 2:
		case 7 << 3 | 2:
			v = payload(&p, end, &n);
			if (tag == (1 << 3 | 2))
				CHECK(well_formed(v, n));
			if (body)
				*body = (struct body){ v, n, true, tag == (7 << 3 | 2) };
			break;
		case 2 << 3 | 0:
		case 3 << 3 | 0:
			varint(&p, end);
			break;
		case 6 << 3 | 2: {
			cursor list = payload(&p, end, &n), lend = list + n;

			while (list < lend) {
				CHECK(varint(&list, lend) == (1 << 3 | 2));
				v = payload(&list, lend, &n);
				keyvalue(v, v + n, depth + 1);
			}
			break;
		}
		default:
			CHECK(0);
		}
	}
}

/* ScopeLogs.log_records (2): one LogRecord, all of the output. */
static void check_pb(const char *out, size_t len, const struct otlp_rec *rec)
{
	cursor p = (cursor)out, end = p + len, rec_end;
	struct body body = { 0 };
	size_t n;

	CHECK(varint(&p, end) == (2 << 3 | 2));
	p = payload(&p, end, &n);
	rec_end = p + n;
	CHECK(rec_end == end);
	while (p < end) {
		uint64_t tag = varint(&p, end);
		cursor v;

		switch (tag) {
		case 1 << 3 | 1: /* time_unix_nano, observed_time_unix_nano */
		case 11 << 3 | 1:
			CHECK(end - p >= 8);
			p += 8;
			break;
		case 2 << 3 | 0: /* severity_number */
			varint(&p, end);
			break;
		case 3 << 3 | 2: /* severity_text */
			string_field(&p, end);
			break;
		case 5 << 3 | 2: /* body */
			v = payload(&p, end, &n);
			anyvalue(v, v + n, &body, 0);
			break;
		case 6 << 3 | 2: /* attributes */
			v = payload(&p, end, &n);
			keyvalue(v, v + n, 0);
			break;
		default:
			CHECK(0);
		}
	}
	if (rec->original) {
		CHECK(body.seen && body.n == rec->len);
		CHECK(!rec->len || !memcmp(body.p, rec->data, rec->len));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	struct sockaddr_in src4 = { .sin_family = AF_INET,
				    .sin_port = htons(514),
				    .sin_addr.s_addr = htonl(0xc0000207) };
	struct sockaddr_in6 src6 = { .sin6_family = AF_INET6, .sin6_port = htons(65535) };
	const char *data;
	struct syslog_msg m;
	enum syslog_parse_result r;
	struct otlp_rec rec;
	size_t len, max, n;
	char *out;

	if (!size)
		return 0;
	data = (const char *)bytes + 1;
	len = size - 1;
	memset(&src6.sin6_addr, 0xab, sizeof(src6.sin6_addr));
	r = syslog_parse(data, len, &m);
	rec = (struct otlp_rec){
		.data = data,
		.len = len,
		.m = &m,
		.r = r,
		.time_ns = syslog_time_ns(&m, r, 1795317120123456789ull, 0),
		.observed_ns = 1795317120123456789ull,
		.src = bytes[0] & 2 ? (struct sockaddr *)&src6 : (struct sockaddr *)&src4,
		.src_len = bytes[0] & 2 ? sizeof(src6) : sizeof(src4),
		.original = bytes[0] & 1,
	};
	max = OTLP_RECORD_MAX(len);
	out = malloc(max > UTF8_REPAIR_MAX(len) ? max : UTF8_REPAIR_MAX(len));
	CHECK(out); /* exact size: ASan sees any overflow */

	n = otlp_pb_record(out, &rec);
	CHECK(n <= max);
	check_pb(out, n, &rec);

	n = otlp_json_record(out, &rec);
	CHECK(n <= max && n >= 2 && out[0] == '{' && out[n - 1] == '}');
	CHECK(well_formed((cursor)out, n));
	for (size_t i = 0; i < n; i++)
		CHECK((unsigned char)out[i] >= 0x20);

	n = utf8_repair(out, data, len);
	CHECK(n <= UTF8_REPAIR_MAX(len) && n == utf8_repair(NULL, data, len));
	CHECK(well_formed((cursor)out, n));
	if (well_formed((cursor)data, len))
		CHECK(n == len && !memcmp(out, data, len));
	free(out);
	return 0;
}
