// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: syslog_parse() then format_message() in every format.
 * Checks, beyond ASan/UBSan's own: every field lies inside the input; header
 * fields keep the RFC 5424 rules the header promises; each output fits its
 * exact-size buffer (format_max_len) and is one line; json is valid UTF-8;
 * the rfc5424 line parses back as RFC 5424 with the same header fields
 * (the sender's address where HOSTNAME was absent), the sender's origin
 * element before the message's own SD, and SD that RFC 5424 allows, by a
 * checker of its own (each SD-ID once, syslogrx@32473 only as the listener's
 * last element, '"' '\\' ']' escaped in values, values UTF-8); escaped
 * outputs hold no C0 or C1 control;
 * the OTLP records (protobuf and JSON) fit OTLP_RECORD_MAX, the protobuf
 * one's length prefix covers exactly what follows, the JSON one is valid
 * UTF-8 with no control byte.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/escape.h"
#include "syslog/format.h"
#include "syslog/msgtime.h"
#include "syslog/otlp_encode.h"
#include "syslog/sd.h"
#include "syslog/syslog_parse.h"
#include "fuzz_check.h"

static void check_inside(const struct syslog_str *s, const char *data, size_t len)
{
	if (!s->p) {
		CHECK(s->len == 0);
		return;
	}
	CHECK(s->len > 0);
	CHECK(s->p >= data && s->len <= len && s->p - data <= (ptrdiff_t)(len - s->len));
}

/* Bytes of 33..126; within RFC 5424's limit when read from RFC 5424 (an
 * RFC 3164 token may be longer). */
static void check_header_field(const struct syslog_str *s, size_t max, enum syslog_parse_result r)
{
	CHECK(r != SYSLOG_OK_5424 || s->len <= max);
	for (uint32_t i = 0; i < s->len; i++)
		CHECK(s->p[i] >= 33 && s->p[i] <= 126);
}

static bool same(const struct syslog_str *a, const struct syslog_str *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->p, b->p, a->len));
}

static void check_msg(const char *data, size_t len, const struct syslog_msg *m,
		      enum syslog_parse_result r)
{
	const struct syslog_str *all[] = { &m->timestamp, &m->hostname, &m->app_name,
					   &m->procid,	  &m->msgid,	&m->structured_data,
					   &m->msg };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		check_inside(all[i], data, len);
		if (r == SYSLOG_MALFORMED)
			CHECK(!all[i]->p);
	}
	check_header_field(&m->hostname, SYSLOG_HOSTNAME_MAX, r);
	check_header_field(&m->app_name, SYSLOG_APP_NAME_MAX, r);
	check_header_field(&m->procid, SYSLOG_PROCID_MAX, r);
	check_header_field(&m->msgid, SYSLOG_MSGID_MAX, r);
	if (m->flags & SYSLOG_F_NO_PRI)
		CHECK(m->pri == 13);
	CHECK(m->pri >= -1 && m->pri <= 191);
	CHECK(m->pri < 0 ? m->facility == -1 && m->severity == -1 :
			   m->facility == m->pri >> 3 && m->severity == (m->pri & 7));
	if (r == SYSLOG_OK_5424)
		CHECK(m->version == 1 && m->pri >= 0);
	if (r == SYSLOG_OK_3164)
		CHECK(m->version == 0 && !m->structured_data.p && !m->msgid.p && !m->bom);
}

static void check_json(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	CHECK(n >= 3 && s[0] == '{' && s[n - 2] == '}' && s[n - 1] == '\n');
	for (size_t i = 0; i < n - 1;) {
		size_t k = table_3_7_len(u + i, n - 1 - i);

		CHECK(k && u[i] >= 0x20);
		CHECK(!(k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)); /* C1 as \u00XX */
		i += k;
	}
}

/*
 * STRUCTURED-DATA as RFC 5424 6.3 has it, read byte by byte apart from
 * syslog/sd.c: 1*("[" SD-NAME *(SP SD-NAME "=" DQUOTE value DQUOTE) "]"),
 * SD-NAME 1*32 of 33..126 but '=' ']' '"' (and SP), a value's '"' '\\' ']'
 * escaped, a value valid UTF-8; no SD-ID twice; syslogrx@32473 only last,
 * as listener="edge-a" (meta's listener).
 */
static size_t strict_name(const unsigned char *s, size_t n, size_t i)
{
	size_t k = 0;

	while (i + k < n && s[i + k] >= 33 && s[i + k] <= 126 && s[i + k] != '=' &&
	       s[i + k] != ']' && s[i + k] != '"')
		k++;
	CHECK(k >= 1 && k <= 32);
	return k;
}

#define LISTENER_ELEM "[syslogrx@32473 listener=\"edge-a\"]"

static void check_strict_sd(const struct syslog_str *sd)
{
	const unsigned char *s = (const unsigned char *)sd->p;
	size_t n = sd->len, i = 0, ids = 0, id_at[512], id_len[512];

	CHECK(n >= sizeof(LISTENER_ELEM) - 1);
	CHECK(!memcmp(s + n - (sizeof(LISTENER_ELEM) - 1), LISTENER_ELEM,
		      sizeof(LISTENER_ELEM) - 1));
	while (i < n) {
		size_t k;

		CHECK(s[i++] == '[');
		k = strict_name(s, n, i);
		for (size_t j = 0; j < ids; j++)
			CHECK(id_len[j] != k || memcmp(s + id_at[j], s + i, k));
		CHECK(!(k == 14 && !memcmp(s + i, "syslogrx@32473", 14)) ||
		      i - 1 == n - (sizeof(LISTENER_ELEM) - 1));
		CHECK(ids < 512);
		id_at[ids] = i, id_len[ids++] = k;
		i += k;
		while (i < n && s[i] == ' ') {
			i++;
			i += strict_name(s, n, i);
			CHECK(i + 1 < n && s[i] == '=' && s[i + 1] == '"');
			for (i += 2; i < n && s[i] != '"';) {
				if (s[i] == '\\') {
					CHECK(i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\\' ||
							    s[i + 1] == ']'));
					i += 2;
					continue;
				}
				CHECK(s[i] != ']');
				k = table_3_7_len(s + i, n - i);
				CHECK(k);
				i += k;
			}
			CHECK(i < n && s[i++] == '"');
		}
		CHECK(i < n && s[i++] == ']');
	}
}

/* meta's sender, as HOSTNAME and in the origin element */
#define SENDER "127.0.0.1"
#define ORIGIN "[origin ip=\"" SENDER "\"]"
static const struct syslog_str sender = { SENDER, sizeof(SENDER) - 1 };

/* A field as the rfc5424 format writes it: cut to max, "-" (an RFC 3164
 * token) read back as NILVALUE. */
static struct syslog_str as_5424(const struct syslog_str *in, uint32_t max)
{
	struct syslog_str out = { in->p, in->len < max ? in->len : max };

	if (out.len == 1 && out.p[0] == '-')
		out = (struct syslog_str){ 0 };
	return out;
}

static bool has_origin(const struct syslog_str *sd)
{
	struct sd_iter it, params;
	struct syslog_str id;

	sd_iter_init(&it, sd);
	while (sd_next_elem(&it, &id, &params))
		if (id.len == 6 && !memcmp(id.p, "origin", 6))
			return true;
	return false;
}

static void check_rfc5424(const char *s, size_t n, const struct syslog_msg *in,
			  enum syslog_parse_result in_r)
{
	struct syslog_msg m;

	CHECK(syslog_parse(s, n - 1, &m) == SYSLOG_OK_5424);
	CHECK(m.pri == (in->pri >= 0 ? in->pri : 13));
	if (in_r == SYSLOG_MALFORMED)
		return;
	struct syslog_str host = as_5424(&in->hostname, SYSLOG_HOSTNAME_MAX);
	struct syslog_str app = as_5424(&in->app_name, SYSLOG_APP_NAME_MAX);
	struct syslog_str procid = as_5424(&in->procid, SYSLOG_PROCID_MAX);

	CHECK(same(&m.hostname, in->hostname.p ? &host : &sender));
	CHECK(same(&m.app_name, &app) && same(&m.procid, &procid) && same(&m.msgid, &in->msgid));
	/* the sender's [origin ip=] first (when the message had an origin
	 * element of its own, that one is merged), then the message's own SD
	 * as RFC 5424 allows it, then the listener's */
	CHECK(m.structured_data.len >= sizeof(ORIGIN) - 1);
	if (!has_origin(&in->structured_data))
		CHECK(!memcmp(m.structured_data.p, ORIGIN, sizeof(ORIGIN) - 1));
	else
		CHECK(!memcmp(m.structured_data.p, "[origin ", 8));
	check_strict_sd(&m.structured_data);
	/* its stamp, or for a message without one the receive time */
	CHECK(m.timestamp.p);
	if (in_r == SYSLOG_OK_5424)
		CHECK((!in->timestamp.p || same(&m.timestamp, &in->timestamp) ||
		       (in->flags & SYSLOG_F_TS_NOT_3339)) &&
		      m.bom == in->bom);
}

static void check_otlp(const char *data, size_t size, const struct syslog_msg *m,
		       enum syslog_parse_result r, const struct msg_meta *meta)
{
	size_t max = OTLP_RECORD_MAX(size), n;
	char *out = malloc(max); /* exact size: ASan sees any overflow */
	struct otlp_rec rec = { .data = data,
				.len = size,
				.m = m,
				.r = r,
				.time_ns = syslog_time_ns(m, r, meta->recv_realtime_ns, 3600),
				.observed_ns = meta->recv_realtime_ns,
				.src = meta->src,
				.src_len = meta->src_len };
	const unsigned char *p, *end;

	CHECK(out);
	n = otlp_pb_record(out, &rec);
	CHECK(n <= max);
	p = (const unsigned char *)out;
	end = p + n;
	CHECK(*p++ == 0x12);
	CHECK(get_varint(&p, end) == (uint64_t)(end - p));
	n = otlp_json_record(out, &rec);
	CHECK(n <= max && n + 1 <= max);
	out[n] = '\n'; /* check_json's shape: one object, one line */
	check_json(out, n + 1);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	static const enum out_format fmts[] = { FORMAT_RAW, FORMAT_JSON, FORMAT_RFC5424 };
	const char *data = (const char *)bytes;
	struct sockaddr_in src = { .sin_family = AF_INET,
				   .sin_port = htons(514),
				   .sin_addr.s_addr = htonl(0x7f000001) };
	struct msg_meta meta = { .src = (struct sockaddr *)&src,
				 .src_len = sizeof(src),
				 .recv_realtime_ns = 1795317120123456789ull,
				 .socket_index = 1,
				 .listener = "edge-a" };
	/* the receiver's zone (stamps converted at their instant) or none */
	static const struct msg_zone zone = { .gmtoff = -21600, .guess = true };
	struct syslog_msg m;
	enum syslog_parse_result r = syslog_parse(data, size, &m);

	if (size && (bytes[size - 1] & 1))
		meta.zone = &zone;
	check_msg(data, size, &m, r);
	/* each format with control bytes escaped (the default), then byte-exact */
	for (size_t f = 0; f < 2 * sizeof(fmts) / sizeof(fmts[0]); f++) {
		unsigned int flags = f % 2 ? FORMAT_F_EXACT_CONTROL : 0;
		enum out_format fmt = fmts[f / 2];
		size_t max = format_max_len(fmt, size), n;
		char *out = malloc(max); /* exact size: ASan sees any overflow */

		CHECK(out);
		n = format_message_flags(out, fmt, flags, data, size, &m, r, &meta);
		CHECK(n <= max && n >= 1 && out[n - 1] == '\n');
		CHECK(!memchr(out, '\n', n - 1));
		if (fmt == FORMAT_JSON)
			check_json(out, n);
		if (fmt == FORMAT_RFC5424)
			check_rfc5424(out, n, &m, r);
		/* escaped: no control byte but the final '\n', no DEL, no C1
		 * (U+0080..U+009F, or a byte 0x80..0x9F of no valid sequence) */
		for (size_t i = 0; !flags && fmt != FORMAT_JSON && i + 1 < n;) {
			const unsigned char *u = (const unsigned char *)out + i;
			size_t k = table_3_7_len(u, n - 1 - i);

			CHECK(*u >= 0x20 && *u != 0x7f);
			CHECK(k ? !(k == 2 && u[0] == 0xc2 && u[1] < 0xa0) : *u >= 0xa0);
			i += k ? k : 1;
		}
		free(out);
	}
	check_otlp(data, size, &m, r, &meta);
	return 0;
}
