// SPDX-License-Identifier: MIT
/*
 * OTLP logs encoder (see otlp_encode.h). Protobuf is written front to back:
 * every nested message's length is computed from the lengths of what it
 * holds before it is written, so nothing is moved afterwards.
 *
 * Field numbers (opentelemetry-proto, checked against the collector's pdata):
 *   ExportLogsServiceRequest  resource_logs 1
 *   ResourceLogs              resource 1, scope_logs 2
 *   ScopeLogs                 scope 1, log_records 2
 *   InstrumentationScope      name 1, version 2
 *   LogRecord                 time_unix_nano 1 (fixed64), severity_number 2,
 *                             severity_text 3, body 5, attributes 6,
 *                             observed_time_unix_nano 11 (fixed64)
 *   KeyValue                  key 1, value 2
 *   AnyValue                  string_value 1, bool_value 2, int_value 3,
 *                             kvlist_value 6, bytes_value 7
 *   KeyValueList              values 1
 *   ExportLogsServiceResponse partial_success 1
 *   ExportLogsPartialSuccess  rejected_log_records 1, error_message 2
 */
#include <stdbool.h>
#include <string.h>
#include "common/put.h"
#include "common/escape.h"
#include "common/sockaddr.h"
#include "syslog/format.h"
#include "syslog/otlp_encode.h"
#include "syslog/sd.h"

/* tags: field << 3 | wire type (0 varint, 1 fixed64, 2 length-delimited) */
#define TAG_LD(f) ((char)((f) << 3 | 2))
#define TAG_VARINT(f) ((char)((f) << 3 | 0))
#define TAG_FIXED64(f) ((char)((f) << 3 | 1))

#define SCOPE_NAME "syslogrx"

static const struct {
	int number;
	const char *text;
} severities[8] = {
	{ 21, "emerg" },   { 19, "alert" },  { 18, "crit" }, { 17, "err" },
	{ 13, "warning" }, { 10, "notice" }, { 9, "info" },  { 5, "debug" },
};

int otlp_severity_number(int severity)
{
	return severity >= 0 && severity < 8 ? severities[severity].number : 0;
}

const char *otlp_severity_text(int severity)
{
	return severity >= 0 && severity < 8 ? severities[severity].text : NULL;
}

/* ---- the attributes, one list for both encodings -------------------------- */

enum attr_kind { A_STR, A_INT, A_BOOL };

struct attr {
	const char *key;
	enum attr_kind kind;
	const char *s;
	size_t n;
	size_t utf8_n; /* A_STR: its length as valid UTF-8 (utf8_repair) */
	uint64_t i;
};

#define MAX_ATTRS 12

struct plan {
	struct attr a[MAX_ATTRS];
	unsigned int n;
	char peer[SOCKADDR_STRLEN];  /* "1.2.3.4:514", split into ip and port */
	const struct syslog_str *sd; /* NULL: none */
	const char *body;
	size_t body_len;
	bool body_bytes; /* not valid UTF-8: bytesValue */
};

static void add_str(struct plan *p, const char *key, const char *s, size_t n)
{
	p->a[p->n++] = (struct attr){
		.key = key, .kind = A_STR, .s = s, .n = n, .utf8_n = utf8_repair(NULL, s, n)
	};
}

static void add_field(struct plan *p, const char *key, const struct syslog_str *v)
{
	if (v->p)
		add_str(p, key, v->p, v->len);
}

static void add_int(struct plan *p, const char *key, uint64_t v)
{
	p->a[p->n++] = (struct attr){ .key = key, .kind = A_INT, .i = v };
}

/* A body goes out as a string when it is valid UTF-8 without NUL, else as
 * bytesValue: byte for byte either way. */
static bool is_text(const char *s, size_t n)
{
	return !memchr(s, '\0', n) && utf8_repair(NULL, s, n) == n;
}

static void make_plan(struct plan *p, const struct otlp_rec *rec)
{
	const struct syslog_msg *m = rec->m;
	size_t n;

	p->n = 0;
	p->sd = NULL;
	if (m->pri >= 0) {
		add_int(p, "priority", m->pri);
		add_int(p, "facility", m->facility);
	}
	if (rec->r == SYSLOG_MALFORMED) {
		p->a[p->n++] = (struct attr){ .key = "syslogrx.malformed", .kind = A_BOOL, .i = 1 };
		p->body = rec->data;
		p->body_len = rec->len;
	} else {
		if (rec->r == SYSLOG_OK_5424)
			add_int(p, "version", 1);
		add_field(p, "hostname", &m->hostname);
		add_field(p, "appname", &m->app_name);
		add_field(p, "proc_id", &m->procid);
		add_field(p, "msg_id", &m->msgid);
		if (m->structured_data.p && rec->r == SYSLOG_OK_5424)
			p->sd = &m->structured_data;
		p->body = m->msg.p;
		p->body_len = m->msg.len;
	}
	if (rec->original) {
		p->body = rec->data;
		p->body_len = rec->len;
	}
	p->body_bytes = p->body && !is_text(p->body, p->body_len);
	add_str(p, "net.transport", "IP.UDP", 6);
	n = rec->src ? sockaddr_format(p->peer, sizeof(p->peer), rec->src, rec->src_len) : 0;
	if (n) {
		char *colon = memrchr(p->peer, ':', n);
		char *ip = p->peer;
		size_t iplen = colon - p->peer;

		if (*ip == '[') {
			ip++;
			iplen -= 2;
		}
		add_str(p, "net.peer.ip", ip, iplen);
		add_str(p, "net.peer.port", colon + 1, n - (colon + 1 - p->peer));
	}
	if (rec->listener)
		add_str(p, "syslogrx.listener", rec->listener, strnlen(rec->listener, 32));
}

/* ---- protobuf ---------------------------------------------------------------- */

static size_t vlen(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static char *put_varint(char *d, uint64_t v)
{
	while (v >= 0x80) {
		*d++ = (char)(v | 0x80);
		v >>= 7;
	}
	*d++ = (char)v;
	return d;
}

/* A length-delimited field of n bytes with a one-byte tag. */
static size_t ld_size(size_t n)
{
	return 1 + vlen(n) + n;
}

static char *put_ld_head(char *d, char tag, size_t n)
{
	*d++ = tag;
	return put_varint(d, n);
}

static char *put_ld(char *d, char tag, const char *s, size_t n)
{
	d = put_ld_head(d, tag, n);
	memcpy(d, s, n);
	return d + n;
}

static char *put_fixed64(char *d, char tag, uint64_t v)
{
	*d++ = tag;
	for (int i = 0; i < 8; i++)
		*d++ = (char)(v >> (8 * i));
	return d;
}

/* AnyValue of an attribute. */
static size_t anyvalue_size(const struct attr *a)
{
	switch (a->kind) {
	case A_STR:
		return ld_size(a->utf8_n);
	case A_INT:
		return 1 + vlen(a->i);
	case A_BOOL:
		return 2;
	}
	return 0;
}

static size_t kv_size(const struct attr *a)
{
	return ld_size(strlen(a->key)) + ld_size(anyvalue_size(a));
}

static char *put_kv(char *d, char tag, const struct attr *a)
{
	d = put_ld_head(d, tag, kv_size(a));
	d = put_ld(d, TAG_LD(1), a->key, strlen(a->key));
	d = put_ld_head(d, TAG_LD(2), anyvalue_size(a));
	switch (a->kind) {
	case A_STR:
		d = put_ld_head(d, TAG_LD(1), a->utf8_n);
		return d + utf8_repair(d, a->s, a->n);
	case A_INT:
		*d++ = TAG_VARINT(3);
		return put_varint(d, a->i);
	case A_BOOL:
		*d++ = TAG_VARINT(2);
		*d++ = (char)a->i;
		return d;
	}
	return d;
}

/* structured_data: KeyValue{ "structured_data", AnyValue{ kvlist{ KeyValue{
 * SD-ID, AnyValue{ kvlist{ KeyValue{ name, AnyValue{ string } }... } } }... } } } */
/* Every SD-ID, param name and value goes out as valid UTF-8 (the parser
 * takes names of PRINTUSASCII already; the encoder does not rely on it). */
static size_t utf8_len(const struct syslog_str *v)
{
	return utf8_repair(NULL, v->p, v->len);
}

static char *put_ld_utf8(char *d, char tag, const struct syslog_str *v)
{
	d = put_ld_head(d, tag, utf8_len(v));
	return d + utf8_repair(d, v->p, v->len);
}

static size_t param_kv_size(const struct syslog_str *name, const struct syslog_str *raw)
{
	return ld_size(utf8_len(name)) + ld_size(ld_size(sd_unescape_utf8(NULL, raw)));
}

static size_t elem_kvl_size(struct sd_iter params)
{
	struct syslog_str name, raw;
	size_t n = 0;

	while (sd_next_param(&params, &name, &raw))
		n += ld_size(param_kv_size(&name, &raw));
	return n;
}

static size_t elem_kv_size(const struct syslog_str *id, struct sd_iter params)
{
	return ld_size(utf8_len(id)) + ld_size(ld_size(elem_kvl_size(params)));
}

static size_t sd_kvl_size(const struct syslog_str *sd)
{
	struct sd_walk w;
	struct sd_iter params;
	struct syslog_str id;
	size_t n = 0;

	sd_walk_init(&w, sd, NULL);
	while (sd_walk_next(&w, &id, &params))
		n += ld_size(elem_kv_size(&id, params));
	return n;
}

#define SD_KEY "structured_data"

static size_t sd_kv_size(size_t kvl)
{
	return ld_size(sizeof(SD_KEY) - 1) + ld_size(ld_size(kvl));
}

/* The elements sd_walk keeps (sd.h), as sd_kvl_size() counted them; the
 * dropped ones added at *dropped. */
static char *put_sd(char *d, const struct syslog_str *sd, uint32_t *dropped)
{
	size_t kvl = sd_kvl_size(sd);
	struct sd_walk w;
	struct sd_iter params;
	struct syslog_str id, name, raw;

	d = put_ld_head(d, TAG_LD(6), sd_kv_size(kvl));
	d = put_ld(d, TAG_LD(1), SD_KEY, sizeof(SD_KEY) - 1);
	d = put_ld_head(d, TAG_LD(2), ld_size(kvl));
	d = put_ld_head(d, TAG_LD(6), kvl);
	sd_walk_init(&w, sd, NULL);
	while (sd_walk_next(&w, &id, &params)) {
		size_t ekvl = elem_kvl_size(params);

		d = put_ld_head(d, TAG_LD(1), elem_kv_size(&id, params));
		d = put_ld_utf8(d, TAG_LD(1), &id);
		d = put_ld_head(d, TAG_LD(2), ld_size(ekvl));
		d = put_ld_head(d, TAG_LD(6), ekvl);
		while (sd_next_param(&params, &name, &raw)) {
			size_t ulen = sd_unescape_utf8(NULL, &raw);

			d = put_ld_head(d, TAG_LD(1), param_kv_size(&name, &raw));
			d = put_ld_utf8(d, TAG_LD(1), &name);
			d = put_ld_head(d, TAG_LD(2), ld_size(ulen));
			d = put_ld_head(d, TAG_LD(1), ulen);
			d += sd_unescape_utf8(d, &raw);
		}
	}
	if (dropped)
		*dropped += w.dropped;
	return d;
}

size_t otlp_pb_record(char *dst, const struct otlp_rec *rec)
{
	const struct syslog_msg *m = rec->m;
	const char *sevtext = otlp_severity_text(m->severity);
	struct plan p;
	size_t size = 0, sd_kvl = 0;
	char *d = dst;

	make_plan(&p, rec);
	if (rec->time_ns)
		size += 9;
	if (sevtext)
		size += 1 + vlen(otlp_severity_number(m->severity)) + ld_size(strlen(sevtext));
	if (p.body)
		size += ld_size(ld_size(p.body_len));
	for (unsigned int i = 0; i < p.n; i++)
		size += ld_size(kv_size(&p.a[i]));
	if (p.sd) {
		sd_kvl = sd_kvl_size(p.sd);
		size += ld_size(sd_kv_size(sd_kvl));
	}
	size += 9; /* observed_time_unix_nano */

	d = put_ld_head(d, TAG_LD(2), size);
	if (rec->time_ns)
		d = put_fixed64(d, TAG_FIXED64(1), rec->time_ns);
	if (sevtext) {
		*d++ = TAG_VARINT(2);
		d = put_varint(d, otlp_severity_number(m->severity));
		d = put_ld(d, TAG_LD(3), sevtext, strlen(sevtext));
	}
	if (p.body) {
		d = put_ld_head(d, TAG_LD(5), ld_size(p.body_len));
		d = put_ld(d, p.body_bytes ? TAG_LD(7) : TAG_LD(1), p.body, p.body_len);
	}
	/* attributes in the order: PRI, header, structured_data, network */
	for (unsigned int i = 0; i < p.n; i++) {
		if (p.sd && !strcmp(p.a[i].key, "net.transport"))
			d = put_sd(d, p.sd, rec->sd_dropped);
		d = put_kv(d, TAG_LD(6), &p.a[i]);
	}
	d = put_fixed64(d, TAG_FIXED64(11), rec->observed_ns);
	return d - dst;
}

/* ---- OTLP/JSON ------------------------------------------------------------------ */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *put_base64(char *d, const unsigned char *s, size_t n)
{
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = s[i] << 16 | s[i + 1] << 8 | s[i + 2];

		*d++ = b64[v >> 18];
		*d++ = b64[v >> 12 & 63];
		*d++ = b64[v >> 6 & 63];
		*d++ = b64[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = s[i] << 16;

		*d++ = b64[v >> 18];
		*d++ = b64[v >> 12 & 63];
		d = PUT_LIT(d, "==");
	} else if (n - i == 2) {
		uint32_t v = s[i] << 16 | s[i + 1] << 8;

		*d++ = b64[v >> 18];
		*d++ = b64[v >> 12 & 63];
		*d++ = b64[v >> 6 & 63];
		*d++ = '=';
	}
	return d;
}

static char *json_kv_head(char *d, const char *key, size_t klen)
{
	d = PUT_LIT(d, "{\"key\":\"");
	d = format_put_json(d, key, klen);
	return PUT_LIT(d, "\",\"value\":");
}

static char *json_attr(char *d, const struct attr *a)
{
	d = json_kv_head(d, a->key, strlen(a->key));
	switch (a->kind) {
	case A_STR:
		d = PUT_LIT(d, "{\"stringValue\":\"");
		d = format_put_json(d, a->s, a->n);
		return PUT_LIT(d, "\"}}");
	case A_INT:
		d = PUT_LIT(d, "{\"intValue\":\"");
		d = put_u64(d, a->i);
		return PUT_LIT(d, "\"}}");
	case A_BOOL:
		return a->i ? PUT_LIT(d, "{\"boolValue\":true}}") :
			      PUT_LIT(d, "{\"boolValue\":false}}");
	}
	return d;
}

static char *json_sd(char *d, const struct syslog_str *sd, uint32_t *dropped)
{
	struct sd_walk w;
	struct sd_iter params;
	struct syslog_str id, name, raw;
	bool first = true;

	d = json_kv_head(d, SD_KEY, sizeof(SD_KEY) - 1);
	d = PUT_LIT(d, "{\"kvlistValue\":{\"values\":[");
	sd_walk_init(&w, sd, NULL);
	while (sd_walk_next(&w, &id, &params)) {
		bool pfirst = true;

		if (!first)
			*d++ = ',';
		first = false;
		d = json_kv_head(d, id.p, id.len);
		d = PUT_LIT(d, "{\"kvlistValue\":{\"values\":[");
		while (sd_next_param(&params, &name, &raw)) {
			if (!pfirst)
				*d++ = ',';
			pfirst = false;
			d = json_kv_head(d, name.p, name.len);
			d = PUT_LIT(d, "{\"stringValue\":\"");
			d = format_put_json_sd_value(d, &raw);
			d = PUT_LIT(d, "\"}}");
		}
		d = PUT_LIT(d, "]}}}");
	}
	if (dropped)
		*dropped += w.dropped;
	return PUT_LIT(d, "]}}}");
}

size_t otlp_json_record(char *dst, const struct otlp_rec *rec)
{
	const struct syslog_msg *m = rec->m;
	const char *sevtext = otlp_severity_text(m->severity);
	struct plan p;
	char *d = dst;

	make_plan(&p, rec);
	*d++ = '{';
	if (rec->time_ns) {
		d = PUT_LIT(d, "\"timeUnixNano\":\"");
		d = put_u64(d, rec->time_ns);
		d = PUT_LIT(d, "\",");
	}
	d = PUT_LIT(d, "\"observedTimeUnixNano\":\"");
	d = put_u64(d, rec->observed_ns);
	*d++ = '"';
	if (sevtext) {
		d = PUT_LIT(d, ",\"severityNumber\":");
		d = put_u64(d, otlp_severity_number(m->severity));
		d = PUT_LIT(d, ",\"severityText\":\"");
		d = put_str(d, sevtext, strlen(sevtext));
		*d++ = '"';
	}
	if (p.body) {
		if (p.body_bytes) {
			d = PUT_LIT(d, ",\"body\":{\"bytesValue\":\"");
			d = put_base64(d, (const unsigned char *)p.body, p.body_len);
		} else {
			d = PUT_LIT(d, ",\"body\":{\"stringValue\":\"");
			d = format_put_json(d, p.body, p.body_len);
		}
		d = PUT_LIT(d, "\"}");
	}
	d = PUT_LIT(d, ",\"attributes\":[");
	for (unsigned int i = 0; i < p.n; i++) {
		if (i)
			*d++ = ',';
		if (p.sd && !strcmp(p.a[i].key, "net.transport")) {
			d = json_sd(d, p.sd, rec->sd_dropped);
			*d++ = ',';
		}
		d = json_attr(d, &p.a[i]);
	}
	return PUT_LIT(d, "]}") - dst;
}

/* ---- the request around the records ------------------------------------------ */

static const char json_head[] = "{\"resourceLogs\":[{\"resource\":{},\"scopeLogs\":[{\"scope\":{"
				"\"name\":\"" SCOPE_NAME "\"},\"logRecords\":[";
static const char json_tail[] = "]}]}]}";

size_t otlp_head(char *dst, enum otlp_encoding enc, size_t records_len)
{
	char *d = dst;
	size_t scope = ld_size(sizeof(SCOPE_NAME) - 1);
	size_t sl, rl;

	if (enc == OTLP_JSON)
		return PUT_LIT(d, json_head) - dst;
	sl = ld_size(scope) + records_len; /* ScopeLogs */
	rl = ld_size(sl);		   /* ResourceLogs: scope_logs only */
	d = put_ld_head(d, TAG_LD(1), rl);
	d = put_ld_head(d, TAG_LD(2), sl);
	d = put_ld_head(d, TAG_LD(1), scope);
	d = put_ld(d, TAG_LD(1), SCOPE_NAME, sizeof(SCOPE_NAME) - 1);
	return d - dst;
}

size_t otlp_tail(char *dst, enum otlp_encoding enc)
{
	if (enc == OTLP_JSON)
		return PUT_LIT(dst, json_tail) - dst;
	return 0;
}

/* ---- the response ------------------------------------------------------------------ */

static bool get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* Skips a field of wire type wt; false if it runs past end. */
static bool skip_field(const unsigned char **p, const unsigned char *end, unsigned int wt)
{
	uint64_t v;

	switch (wt) {
	case 0:
		return get_varint(p, end, &v);
	case 1:
		*p += 8;
		return *p <= end;
	case 2:
		if (!get_varint(p, end, &v) || v > (uint64_t)(end - *p))
			return false;
		*p += v;
		return true;
	case 5:
		*p += 4;
		return *p <= end;
	}
	return false;
}

static void copy_msg(char *msg, size_t cap, const char *s, size_t n)
{
	if (!cap)
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(msg, s, n);
	msg[n] = '\0';
}

static int parse_pb_response(const unsigned char *p, const unsigned char *end, uint64_t *rejected,
			     char *msg, size_t cap)
{
	uint64_t key, n;

	while (p < end) {
		if (!get_varint(&p, end, &key))
			return -1;
		if (key != (uint64_t)(unsigned char)TAG_LD(1)) {
			if (!skip_field(&p, end, key & 7))
				return -1;
			continue;
		}
		/* partial_success */
		if (!get_varint(&p, end, &n) || n > (uint64_t)(end - p))
			return -1;
		const unsigned char *q = p, *qend = p + n;

		p = qend;
		while (q < qend) {
			uint64_t k, v;

			if (!get_varint(&q, qend, &k))
				return -1;
			if (k == (uint64_t)(unsigned char)TAG_VARINT(1)) {
				if (!get_varint(&q, qend, &v))
					return -1;
				*rejected = v;
			} else if (k == (uint64_t)(unsigned char)TAG_LD(2)) {
				if (!get_varint(&q, qend, &v) || v > (uint64_t)(qend - q))
					return -1;
				copy_msg(msg, cap, (const char *)q, v);
				q += v;
			} else if (!skip_field(&q, qend, k & 7)) {
				return -1;
			}
		}
	}
	return 0;
}

/* OTLP/JSON: {"partialSuccess":{"rejectedLogRecords":"N","errorMessage":"..."}};
 * the number may be a string or a number. Only these two keys are looked for. */
static int parse_json_response(const char *s, size_t len, uint64_t *rejected, char *msg, size_t cap)
{
	const char *end = s + len;
	const char *k = memmem(s, len, "\"rejectedLogRecords\"", 20);
	const char *e = memmem(s, len, "\"errorMessage\"", 14);

	if (k) {
		for (k += 20; k < end && (*k == ' ' || *k == ':' || *k == '"'); k++)
			;
		for (; k < end && *k >= '0' && *k <= '9'; k++)
			*rejected = *rejected * 10 + (*k - '0');
	}
	if (e) {
		const char *q;

		for (e += 14; e < end && *e != '"'; e++)
			;
		if (e < end) {
			e++;
			for (q = e; q < end && *q != '"'; q++)
				if (*q == '\\')
					q++;
			copy_msg(msg, cap, e, (q < end ? q : end) - e);
		}
	}
	return 0;
}

int otlp_parse_response(const char *body, size_t len, enum otlp_encoding enc, uint64_t *rejected,
			char *msg, size_t cap)
{
	*rejected = 0;
	if (cap)
		msg[0] = '\0';
	if (enc == OTLP_JSON)
		return parse_json_response(body, len, rejected, msg, cap);
	return parse_pb_response((const unsigned char *)body, (const unsigned char *)body + len,
				 rejected, msg, cap);
}
