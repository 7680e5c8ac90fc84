// SPDX-License-Identifier: MIT
/*
 * Output formats (see syslog/format.h). The hot path copies runs of bytes
 * that need no escaping with memcpy, found 16 bytes at a time (the scanner
 * of common/bytescan.h, the parser's too), and hands
 * only the bytes that do to escape_line()/escape_json(): the output is
 * byte for byte theirs, at close to memcpy speed for ordinary text.
 * Numbers are written by hand, not with snprintf.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>
#include "common/put.h"
#include "common/array.h"
#include "common/bytescan.h"
#include "common/clock.h"
#include "common/escape.h"
#include "common/sockaddr.h"
#include "syslog/format.h"
#include "syslog/format_time.h"
#include "syslog/msgtime.h"
#include "syslog/sd.h"

typedef unsigned char u8;

/* " [syslogrx@32473 listener=\"NAME\"]" or ",\"listener\":\"NAME\"" at most */
#define FIXED_LISTENER (40 + FORMAT_LISTENER_MAX)
/* "<191>1 " + converted stamp + "- " x5 + BOM + '\n' (64), the sender's
 * address as HOSTNAME (45), [origin ip="ADDR"] (59) and the listener's SD */
#define FIXED_RFC5424 (192 + FIXED_LISTENER)
/* keys, numbers, source, received, ..., Cisco's SD (80) */
#define FIXED_JSON (512 + 80 + FIXED_LISTENER)

static const struct {
	const char *name;
	enum out_format fmt;
} format_names[] = {
	{ "raw", FORMAT_RAW },
	{ "json", FORMAT_JSON },
	{ "rfc5424", FORMAT_RFC5424 },
	{ "original", FORMAT_ORIGINAL },
};

const char *format_name(enum out_format fmt)
{
	for (size_t i = 0; i < ARRAY_SIZE(format_names); i++)
		if (format_names[i].fmt == fmt)
			return format_names[i].name;
	return "?";
}

int format_from_name(const char *name, enum out_format *out)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(format_names); i++) {
		if (!strcmp(name, format_names[i].name)) {
			*out = format_names[i].fmt;
			return 0;
		}
	}
	return -EINVAL;
}

static size_t line_max_len(enum out_format fmt, size_t len)
{
	switch (fmt) {
	case FORMAT_RAW:
		return ESCAPE_LINE_MAX(len) + 1;
	case FORMAT_ORIGINAL:
		return 4 * len + 1; /* "#012" for a '\n' */
	case FORMAT_RFC5424:
		/* header fields are copied, MSG escaped: all from distinct bytes */
		return ESCAPE_LINE_MAX(len) + FIXED_RFC5424;
	case FORMAT_JSON:
		/* fields (distinct bytes of data) plus raw, both escaped, plus
		 * the parsed SD: its values escaped and 3 bytes of JSON per
		 * byte of SD syntax at most ("[a]" -> "\"a\":{}," ) */
		return 3 * ESCAPE_JSON_MAX(len) + 3 * len + FIXED_JSON;
	}
	return 0;
}

size_t format_max_len(enum out_format fmt, size_t len)
{
	return line_max_len(fmt, len) + FORMAT_FRAME_PREFIX_MAX;
}

/* ---- escaping: memcpy the clean runs ------------------------------------ */

/* Bytes at the start of s that escape_line() copies unchanged. */
static size_t line_clean(const u8 *s, size_t len)
{
	return BYTESCAN_CLEAN(s, len, line);
}

/*
 * The ctl and sd classes stop their scan at the bytes 0x80..0x9f, in which a
 * C1 control always has a byte: U+0080..U+009F is C2 80..C2 9F, and a lone
 * byte is one. Most such bytes continue a valid UTF-8 sequence (Cyrillic
 * D0 9F, CJK E6 97 A5): this looks back for the sequence's first byte and
 * goes on past it when it is no C1 control. Where it stops is where a
 * character starts (the C2 of a C1 control), so the escaper sees it whole.
 */
static inline __attribute__((always_inline)) size_t c1_clean(const u8 *s, size_t len,
							     size_t (*scan)(const u8 *, size_t))
{
	size_t i = 0, lead, n;

	for (;;) {
		i += scan(s + i, len - i);
		if (i == len || s[i] < 0x80)
			return i;
		for (lead = i; lead > 0 && i - lead < 3 && (s[lead - 1] & 0xc0) == 0x80; lead--)
			;
		if (!lead-- || s[lead] < 0xc0)
			return i; /* a byte 0x80..0x9f of no sequence */
		n = utf8_seq_len(s + lead, len - lead);
		if (!n || lead + n <= i)
			return i;
		/* from that first byte, character by character while not ASCII */
		for (i = lead; i < len && s[i] >= 0x80; i += n) {
			n = utf8_seq_len(s + i, len - i);
			if (n == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0)
				return i; /* U+0080..U+009F */
			if (!n && s[i] < 0xa0)
				return i; /* a byte 0x80..0x9f of no sequence */
			n = n ? n : 1;
		}
	}
}

static size_t ctl_scan(const u8 *s, size_t len)
{
	return BYTESCAN_CLEAN(s, len, ctl);
}

/* Bytes at the start of s that escape_line_ctl() copies unchanged. */
static size_t ctl_clean(const u8 *s, size_t len)
{
	return c1_clean(s, len, ctl_scan);
}

static size_t json_scan(const u8 *s, size_t len)
{
	return BYTESCAN_CLEAN(s, len, json);
}

/* Bytes at the start of s that escape_json() copies unchanged: the scan
 * stops at each byte from 0x80 up; a valid sequence that is no C1 control
 * is copied too, so UTF-8 text goes in runs, not a character at a time. */
static size_t json_clean(const u8 *s, size_t len)
{
	size_t i = 0, n;

	for (;;) {
		i += json_scan(s + i, len - i);
		if (i == len)
			return i;
		n = s[i] >= 0x80 ? utf8_seq_len(s + i, len - i) : 0;
		if (!n || (n == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0))
			return i;
		i += n;
	}
}

/*
 * escape_line() / escape_json() of src, byte-identical, faster on text with few
 * bytes to escape: clean runs are copied with memcpy, and only the character at
 * the end of each run (a whole valid UTF-8 sequence, or one byte) goes through
 * the escaper. Inlined with constant functions, one copy per caller.
 */
static inline __attribute__((always_inline)) char *
put_escaped(char *d, const char *src, size_t len, size_t (*clean)(const u8 *, size_t),
	    size_t (*escape)(char *, const char *, size_t))
{
	const u8 *s = (const u8 *)src;

	while (len) {
		size_t k = clean(s, len);

		memcpy(d, s, k);
		d += k;
		s += k;
		len -= k;
		if (!len)
			break;
		k = *s >= 0x80 ? utf8_seq_len(s, len) : 1;
		if (!k)
			k = 1;
		d += escape(d, (const char *)s, k);
		s += k;
		len -= k;
	}
	return d;
}

static size_t sd_scan(const u8 *s, size_t len)
{
	return BYTESCAN_CLEAN(s, len, sd);
}

/* Bytes at the start of s that escape_ctl() copies unchanged. */
static size_t sd_clean(const u8 *s, size_t len)
{
	return c1_clean(s, len, sd_scan);
}

/* One line: control bytes escaped unless the output is byte-exact. */
static char *put_line(char *d, const char *src, size_t len, unsigned int flags)
{
	if (flags & FORMAT_F_EXACT_CONTROL)
		return put_escaped(d, src, len, line_clean, escape_line);
	return put_escaped(d, src, len, ctl_clean, escape_line_ctl);
}

/* put_line() of text that must be UTF-8 (an RFC 5424 MSG after its BOM):
 * each byte of an invalid sequence as U+FFFD, as the json format writes it. */
static char *put_line_utf8(char *d, const char *src, size_t len, unsigned int flags)
{
	const u8 *s = (const u8 *)src, *run = s, *end;

	if (!len) /* a BOM and no text: msg is absent (NULL) */
		return d;
	for (end = s + len; s < end;) {
		size_t n = *s < 0x80 ? 1 : utf8_seq_len(s, end - s);

		if (n) {
			s += n;
			continue;
		}
		d = put_line(d, (const char *)run, s - run, flags);
		d = PUT_LIT(d, "\xef\xbf\xbd");
		run = ++s;
	}
	return put_line(d, (const char *)run, s - run, flags);
}

static char *put_json(char *d, const char *src, size_t len)
{
	return put_escaped(d, src, len, json_clean, escape_json);
}

char *format_put_json(char *d, const char *src, size_t len)
{
	return put_json(d, src, len);
}

/* An SD value, unescaped (\" \\ \]) then JSON-escaped, run by run. */
char *format_put_json_sd_value(char *d, const struct syslog_str *raw)
{
	const char *p = raw->p, *end = raw->p + raw->len, *run = p;

	for (; p < end; p++) {
		if (*p == '\\' && p + 1 < end && (p[1] == '"' || p[1] == '\\' || p[1] == ']')) {
			d = put_json(d, run, p - run);
			run = ++p; /* the escaped byte starts the next run */
		}
	}
	return put_json(d, run, end - run);
}

/* ---- structured data as it goes out (sd.h) ------------------------------ */

/* Writes text of an SD field: put_sd_text (rfc5424) or put_json_piece. */
typedef char *(*sd_put_fn)(char *d, const char *s, size_t n, unsigned int flags);

/* STRUCTURED-DATA text as it goes out: its own '\\' escapes kept, control
 * bytes as "#ooo" unless the output is byte-exact. */
static char *put_sd_text(char *d, const char *s, size_t n, unsigned int flags)
{
	if (flags & FORMAT_F_EXACT_CONTROL)
		return put_str(d, s, n);
	return put_escaped(d, s, n, sd_clean, escape_ctl);
}

static char *put_json_piece(char *d, const char *s, size_t n, unsigned int flags)
{
	return put_json(d, s, n);
}

/* An SD-ID or PARAM-NAME. The parser lets through the bytes RFC 5424
 * allows, and names past its 32 bytes as syslog-ng 3.38 reads them: json
 * writes them whole, as syslog-ng's $SDATA does (json escapes any byte);
 * rfc5424 cuts them to 32 bytes to stay valid, and should a name come with
 * other bytes, writes each byte RFC 5424 does not allow as '_'. */
static char *put_sd_name(char *d, const struct syslog_str *name, sd_put_fn put, unsigned int flags)
{
	char fixed[SYSLOG_SD_NAME_MAX];
	uint32_t n = name->len < SYSLOG_SD_NAME_MAX ? name->len : SYSLOG_SD_NAME_MAX;

	if (put == put_json_piece || sd_name_ok(name))
		return put(d, name->p, name->len, flags);
	for (uint32_t i = 0; i < n; i++) {
		u8 c = name->p[i];

		fixed[i] = c < 33 || c > 126 || c == '=' || c == ']' || c == '"' ? '_' : c;
	}
	return put(d, fixed, n, flags);
}

/* The params of an element, " NAME=\"VALUE\"" each, values as RFC 5424 wants them. */
static char *put_sd_params(char *d, struct sd_iter params, sd_put_fn put, unsigned int flags)
{
	struct syslog_str name, raw, run, fix;
	struct sd_value_iter v;

	while (sd_next_param(&params, &name, &raw)) {
		d = put(d, " ", 1, flags);
		d = put_sd_name(d, &name, put, flags);
		d = put(d, "=\"", 2, flags);
		sd_value_init(&v, &raw);
		while (sd_value_next(&v, &run, &fix)) {
			d = put(d, run.p, run.len, flags);
			d = put(d, fix.p, fix.len, flags);
		}
		d = put(d, "\"", 1, flags);
	}
	return d;
}

/* The message's own elements that sd_walk keeps (skip: an SD-ID merged
 * elsewhere), rebuilt; the dropped ones counted at *dropped. */
static char *put_sd_elems(char *d, const struct syslog_str *sd, const char *skip, sd_put_fn put,
			  unsigned int flags, uint32_t *dropped)
{
	struct sd_walk w;
	struct sd_iter params;
	struct syslog_str id;

	sd_walk_init(&w, sd, skip);
	while (sd_walk_next(&w, &id, &params)) {
		struct syslog_str text;

		/* An SD-ID past RFC 5424's 32 bytes (syslog-ng reads up to 248):
		 * cut, two could become one SD-ID twice, so rfc5424 drops the
		 * element (counted); json keeps it whole. */
		if (put != put_json_piece && id.len > SYSLOG_SD_NAME_MAX) {
			w.dropped++;
			continue;
		}
		if (sd_elem_verbatim(&w, &id, params, &text)) {
			d = put(d, text.p, text.len, flags);
			continue;
		}
		d = put(d, "[", 1, flags);
		d = put_sd_name(d, &id, put, flags);
		d = put_sd_params(d, params, put, flags);
		d = put(d, "]", 1, flags);
	}
	if (dropped)
		*dropped += w.dropped;
	return d;
}

/* ---- json ---------------------------------------------------------------- */

/* "key":"escaped", when present */
static char *json_field(char *d, const char *key, size_t key_len, const struct syslog_str *v)
{
	if (!v->p)
		return d;
	d = put_str(d, key, key_len);
	d = put_json(d, v->p, v->len);
	return PUT_LIT(d, "\",");
}

#define JSON_FIELD(d, key, v) json_field(d, "\"" key "\":\"", sizeof(key) + 3, v)

/* Cisco's sequence number and clock mark as syslog-ng's SDATA has them:
 * "structured_data":"[meta sequenceId=\"N\"][timeQuality isSynced=\"0\"]". */
static char *json_cisco_sd(char *d, const struct syslog_msg *m)
{
	if (!(m->flags & SYSLOG_F_SEQUENCE) && m->synced < 0)
		return d;
	d = PUT_LIT(d, "\"structured_data\":\"");
	if (m->flags & SYSLOG_F_SEQUENCE) {
		d = PUT_LIT(d, "[meta sequenceId=\\\"");
		memcpy(d, m->seq.p, m->seq.len); /* digits */
		d += m->seq.len;
		d = PUT_LIT(d, "\\\"]");
	}
	if (m->synced >= 0) {
		d = PUT_LIT(d, "[timeQuality isSynced=\\\"");
		*d++ = '0' + m->synced;
		d = PUT_LIT(d, "\\\"]");
	}
	return PUT_LIT(d, "\",");
}

/* "sd":{"ID":{"name":"value",...},...}, values unescaped then escaped; the
 * elements sd_walk keeps (structured_data's, which counts what it drops) */
static char *json_sd(char *d, const struct syslog_str *sd)
{
	struct sd_walk w;
	struct sd_iter params;
	struct syslog_str id, name, raw;
	bool first = true;

	d = PUT_LIT(d, "\"sd\":{");
	sd_walk_init(&w, sd, NULL);
	while (sd_walk_next(&w, &id, &params)) {
		bool pfirst = true;

		if (!first)
			*d++ = ',';
		first = false;
		*d++ = '"';
		d = put_json(d, id.p, id.len);
		d = PUT_LIT(d, "\":{");
		while (sd_next_param(&params, &name, &raw)) {
			if (!pfirst)
				*d++ = ',';
			pfirst = false;
			*d++ = '"';
			d = put_json(d, name.p, name.len);
			d = PUT_LIT(d, "\":\"");
			d = format_put_json_sd_value(d, &raw);
			*d++ = '"';
		}
		*d++ = '}';
	}
	return PUT_LIT(d, "},");
}

static char *format_json(char *d, const char *data, size_t len, const struct syslog_msg *m,
			 enum syslog_parse_result r, const struct msg_meta *meta,
			 unsigned int flags)
{
	uint64_t time_ns;

	*d++ = '{';
	if (m->pri >= 0) {
		d = PUT_LIT(d, "\"pri\":");
		d = put_u64(d, m->pri);
		d = PUT_LIT(d, ",\"facility\":");
		d = put_u64(d, m->facility);
		d = PUT_LIT(d, ",\"severity\":");
		d = put_u64(d, m->severity);
		*d++ = ',';
	}
	if (r != SYSLOG_MALFORMED) {
		d = PUT_LIT(d, "\"version\":");
		*d++ = '0' + (m->version == 1);
		*d++ = ',';
		d = JSON_FIELD(d, "timestamp", &m->timestamp);
		time_ns = meta_time_ns(m, r, meta);
		if (time_ns) {
			d = PUT_LIT(d, "\"time_unix_nano\":");
			d = put_u64(d, time_ns);
			*d++ = ',';
		}
		d = JSON_FIELD(d, "hostname", &m->hostname);
		d = JSON_FIELD(d, "app_name", &m->app_name);
		d = JSON_FIELD(d, "procid", &m->procid);
		d = JSON_FIELD(d, "msgid", &m->msgid);
		if (m->structured_data.p) { /* absent when every element is dropped */
			char *key = d, *val;

			d = PUT_LIT(d, "\"structured_data\":\"");
			val = d;
			d = put_sd_elems(d, &m->structured_data, NULL, put_json_piece, 0,
					 meta ? meta->sd_dropped : NULL);
			if (d == val)
				d = key;
			else if (r == SYSLOG_OK_5424)
				d = json_sd(PUT_LIT(d, "\","), &m->structured_data);
			else
				d = PUT_LIT(d, "\",");
		}
		if (r == SYSLOG_OK_3164)
			d = json_cisco_sd(d, m);
		d = JSON_FIELD(d, "msg", &m->msg);
		d = PUT_LIT(d, "\"malformed\":false");
	} else {
		d = PUT_LIT(d, "\"malformed\":true");
	}
	if (meta) {
		if (meta->src) {
			char *start = d;

			d = PUT_LIT(d, ",\"source\":\"");
			size_t n = sockaddr_format(d, SOCKADDR_STRLEN, meta->src, meta->src_len);

			if (n) {
				d += n;
				*d++ = '"';
			} else {
				d = start;
			}
		}
		d = PUT_LIT(d, ",\"socket\":");
		d = put_u64(d, meta->socket_index);
		if (meta->listener) {
			d = PUT_LIT(d, ",\"listener\":\"");
			d = put_str(d, meta->listener,
				    strnlen(meta->listener, FORMAT_LISTENER_MAX));
			*d++ = '"';
		}
		d = PUT_LIT(d, ",\"received\":\"");
		d = format_put_utc_us(d, meta->recv_realtime_ns);
		*d++ = '"';
	}
	/* Without raw, a parsed message is in the output once (as msg); a
	 * malformed one has no msg: raw is its only copy. */
	if ((flags & FORMAT_F_JSON_NO_RAW) && r != SYSLOG_MALFORMED)
		return PUT_LIT(d, "}\n");
	d = PUT_LIT(d, ",\"raw\":\"");
	d = put_json(d, data, len);
	return PUT_LIT(d, "\"}\n");
}

/* ---- rfc5424 ------------------------------------------------------------- */

static char *put_field(char *d, const struct syslog_str *v)
{
	if (!v->p) {
		*d++ = '-';
	} else {
		memcpy(d, v->p, v->len);
		d += v->len;
	}
	*d++ = ' ';
	return d;
}

/* A header field cut to RFC 5424's limit (RFC 3164 tokens may be longer). */
static char *put_field_max(char *d, const struct syslog_str *v, uint32_t max)
{
	struct syslog_str cut = { v->p, v->len < max ? v->len : max };

	return put_field(d, &cut);
}

/* The receiver's own SD element: which --listen the message came by. */
static char *put_listener_sd(char *d, const struct msg_meta *meta)
{
	d = PUT_LIT(d, "[" SD_OWN_ID " listener=\"");
	d = put_str(d, meta->listener, strnlen(meta->listener, FORMAT_LISTENER_MAX));
	return PUT_LIT(d, "\"]");
}

/* The sender's address as text ("1.2.3.4", "2001:db8::1"); n 0 when there is none. */
struct sender_ip {
	char ip[INET6_ADDRSTRLEN];
	size_t n;
};

static void sender_of(struct sender_ip *s, const struct msg_meta *meta)
{
	s->n = meta && meta->src ?
		       sockaddr_format_ip(s->ip, sizeof(s->ip), meta->src, meta->src_len) :
		       0;
}

static bool is_origin(const struct syslog_str *id)
{
	return id->len == 6 && !memcmp(id->p, "origin", 6);
}

/*
 * [origin ip="ADDR"] (RFC 5424 7.2.1), ADDR the address the datagram came
 * from. An SD-ID appears once in a message (RFC 5424 6.3.2) and "ip" may
 * repeat, so a message's own origin element gives its params to this one:
 * theirs first, the sender's ip last, so a reader that keeps the last ip
 * (syslog-ng's ${.SDATA.origin.ip}) has the address the kernel saw, not one
 * a sender wrote.
 */
static char *sd_origin(char *d, const struct sender_ip *src, const struct syslog_str *sd,
		       unsigned int flags)
{
	struct sd_iter it, params;
	struct syslog_str id;

	d = PUT_LIT(d, "[origin");
	sd_iter_init(&it, sd);
	while (sd_next_elem(&it, &id, &params)) {
		if (!is_origin(&id))
			continue;
		d = put_sd_params(d, params, put_sd_text, flags);
	}
	d = PUT_LIT(d, " ip=\"");
	d = put_str(d, src->ip, src->n);
	return PUT_LIT(d, "\"]");
}

/*
 * The SD field: the sender's origin first, then the message's own elements,
 * then which --listen it came by (when records name it); "-" when there is
 * none.
 */
static char *put_sd_field(char *d, const struct syslog_str *sd, const struct sender_ip *src,
			  const struct msg_meta *meta, unsigned int flags)
{
	char *start = d;

	if (src->n)
		d = sd_origin(d, src, sd, flags);
	if (sd->p)
		d = put_sd_elems(d, sd, src->n ? "origin" : NULL, put_sd_text, flags,
				 meta ? meta->sd_dropped : NULL);
	if (meta && meta->listener)
		d = put_listener_sd(d, meta);
	if (d == start)
		*d++ = '-';
	return d;
}

/* HOSTNAME: the message's, else the sender's address (as syslog-ng fills it). */
static char *put_hostname(char *d, const struct syslog_str *v, const struct sender_ip *src)
{
	if (v->p || !src->n)
		return put_field(d, v);
	d = put_str(d, src->ip, src->n);
	*d++ = ' ';
	return d;
}

static char *format_rfc5424(char *d, const char *data, size_t len, const struct syslog_msg *m,
			    enum syslog_parse_result r, const struct msg_meta *meta,
			    unsigned int flags)
{
	static const struct syslog_str none;
	struct sender_ip src;

	sender_of(&src, meta);
	*d++ = '<';
	d = put_u64(d, m->pri >= 0 ? m->pri : 13);
	d = PUT_LIT(d, ">1 ");
	if (r == SYSLOG_MALFORMED) {
		*d++ = '-';
		*d++ = ' ';
		d = put_hostname(d, &none, &src);
		d = PUT_LIT(d, "- - - ");
		d = put_sd_field(d, &none, &src, meta, flags);
		*d++ = ' ';
		d = put_line(d, data, len, flags);
		*d++ = '\n';
		return d;
	}
	if (m->timestamp.p && !(m->flags & SYSLOG_F_TS_NOT_3339) &&
	    (r == SYSLOG_OK_5424 || ((m->flags & SYSLOG_F_ISO_TIMESTAMP_3164) &&
				     !(meta && meta->zone && meta->zone->guess)))) {
		d = put_field(d, &m->timestamp);
	} else if (m->timestamp.p) {
		char *e = meta && meta->zone ? format_put_instant_3339(d, m, r, meta) : NULL;

		d = e ? e : format_put_bsd_as_3339(d, &m->tm, meta);
		*d++ = ' ';
	} else {
		/* no stamp: when it was received (meta_time_ns) */
		d = format_put_utc_us(d, format_recv_ns(meta));
		*d++ = ' ';
	}
	d = put_hostname(d, &m->hostname, &src);
	d = put_field_max(d, &m->app_name, SYSLOG_APP_NAME_MAX);
	d = put_field_max(d, &m->procid, SYSLOG_PROCID_MAX);
	d = put_field(d, &m->msgid);
	d = put_sd_field(d, &m->structured_data, &src, meta, flags);
	if (m->msg.p || m->bom) {
		*d++ = ' ';
		if (m->bom) {
			d = PUT_LIT(d, "\xef\xbb\xbf");
			d = put_line_utf8(d, m->msg.p, m->msg.len, flags);
		} else {
			d = put_line(d, m->msg.p, m->msg.len, flags);
		}
	}
	*d++ = '\n';
	return d;
}

/* original: the datagram as it came (format.h). */
static char *format_original(char *d, const char *data, size_t len, unsigned int flags,
			     const struct msg_meta *meta)
{
	const char *p, *end;

	if (flags & FORMAT_F_WHOLE) {
		d = put_str(d, data, len);
		*d++ = '\n';
		return d;
	}
	while (len && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == '\0'))
		len--;
	/* syslog-ng's network() ends a message at a '\n' and at a NUL: each
	 * inside as rsyslog writes it. memchr and strnlen find the common
	 * case, neither there, at their vector speed. */
	end = data + len;
	if (memchr(data, '\n', len) || strnlen(data, len) != len) {
		for (p = data; p < end; p++) {
			if (*p != '\n' && *p)
				continue;
			d = put_str(d, data, p - data);
			d = *p ? PUT_LIT(d, "#012") : PUT_LIT(d, "#000");
			data = p + 1;
		}
		if (meta && meta->breaks_escaped)
			(*meta->breaks_escaped)++;
	}
	d = put_str(d, data, end - data);
	*d++ = '\n';
	return d;
}

static size_t format_line(char *dst, enum out_format fmt, unsigned int flags, const char *data,
			  size_t len, const struct syslog_msg *m, enum syslog_parse_result r,
			  const struct msg_meta *meta)
{
	char *d = dst;

	switch (fmt) {
	case FORMAT_RAW:
		d = put_line(d, data, len, flags);
		*d++ = '\n';
		break;
	case FORMAT_ORIGINAL:
		d = format_original(d, data, len, flags, meta);
		break;
	case FORMAT_JSON:
		d = format_json(d, data, len, m, r, meta, flags);
		break;
	case FORMAT_RFC5424:
		d = format_rfc5424(d, data, len, m, r, meta, flags);
		break;
	}
	return d - dst;
}

size_t format_message_flags(char *dst, enum out_format fmt, unsigned int flags, const char *data,
			    size_t len, const struct syslog_msg *m, enum syslog_parse_result r,
			    const struct msg_meta *meta)
{
	char *d;
	size_t n;

	if (!(flags & FORMAT_F_OCTET_FRAME))
		return format_line(dst, fmt, flags, data, len, m, r, meta);
	/* The line after room for the prefix, then moved to follow it: its
	 * length is only known once it is written. */
	n = format_line(dst + FORMAT_FRAME_PREFIX_MAX, fmt, flags, data, len, m, r, meta) - 1;
	d = put_u64(dst, n);
	*d++ = ' ';
	memmove(d, dst + FORMAT_FRAME_PREFIX_MAX, n);
	return d + n - dst;
}

size_t format_message(char *dst, enum out_format fmt, const char *data, size_t len,
		      const struct syslog_msg *m, enum syslog_parse_result r,
		      const struct msg_meta *meta)
{
	return format_message_flags(dst, fmt, 0, data, len, m, r, meta);
}

uint64_t format_count_messages(const char *buf, size_t len, unsigned int flags)
{
	const char *p = buf, *end = buf + len, *nl;
	uint64_t n = 0;

	if (!(flags & FORMAT_F_OCTET_FRAME)) {
		for (; (nl = memchr(p, '\n', end - p)); p = nl + 1)
			n++;
		return n;
	}
	while (p < end) {
		size_t flen = 0;

		while (p < end && *p >= '0' && *p <= '9')
			flen = flen * 10 + (*p++ - '0');
		p++; /* the SP */
		p += flen < (size_t)(end - p) ? flen : (size_t)(end - p);
		n++;
	}
	return n;
}
