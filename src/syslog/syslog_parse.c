// SPDX-License-Identifier: MIT
/*
 * Syslog parser (see syslog/syslog_parse.h for what is accepted).
 * Every read goes through a bounds check against n, the datagram's length
 * after its trailing '\n' '\r' NUL are stripped: nothing past data[len).
 */
#include <string.h>
#include "common/bytescan.h"
#include "common/escape.h"
#include "syslog/syslog_parse.h"

typedef unsigned char u8;

/* Byte at i, or -1 past the end: keeps every lookahead bounds-checked. */
static inline int at(const u8 *s, size_t n, size_t i)
{
	return i < n ? s[i] : -1;
}

static inline bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* PRINTUSASCII of RFC 5424 */
static inline bool is_print(int c)
{
	return c >= 33 && c <= 126;
}

/* "-": NILVALUE in RFC 5424, so never a field taken from a 3164 header */
static inline bool is_nil(const u8 *s, size_t n, size_t i, size_t len)
{
	return len == 1 && at(s, n, i) == '-';
}

/* Value of cnt digits at s[i], or -1. */
static int num(const u8 *s, size_t n, size_t i, int cnt)
{
	int v = 0;

	for (int k = 0; k < cnt; k++) {
		int c = at(s, n, i + k);

		if (!is_digit(c))
			return -1;
		v = v * 10 + (c - '0');
	}
	return v;
}

static void set_str(struct syslog_str *str, const u8 *s, size_t off, size_t len)
{
	if (!len)
		return;
	str->p = (const char *)s + off;
	str->len = len;
}

/* Bytes up to the next space (or the end). */
static size_t token_len(const u8 *s, size_t n, size_t i)
{
	const u8 *sp;

	if (i >= n)
		return 0;
	sp = memchr(s + i, ' ', n - i);
	return sp ? (size_t)(sp - (s + i)) : n - i;
}

static bool all_print(const u8 *s, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (!is_print(s[k]))
			return false;
	return true;
}

/*
 * HAS_NUL and INVALID_UTF8 over the whole datagram. Most messages are
 * ASCII: skip to the next NUL or non-ASCII byte (common/bytescan.h), look at
 * it, go on.
 */
static uint32_t scan_bytes(const u8 *s, size_t n)
{
	const uint32_t all = SYSLOG_F_HAS_NUL | SYSLOG_F_INVALID_UTF8;
	uint32_t f = 0;
	size_t i = 0;

	while (f != all) {
		i += BYTESCAN_CLEAN(s + i, n - i, odd);
		if (i >= n)
			break;
		if (s[i] == 0) {
			f |= SYSLOG_F_HAS_NUL;
			i++;
		} else {
			size_t k = utf8_seq_len(s + i, n - i);

			if (!k) {
				f |= SYSLOG_F_INVALID_UTF8;
				k = 1;
			}
			i += k;
		}
	}
	return f;
}

/* "<" 1-3 digits ">" with a value 0..191; returns it, or -1. */
static int parse_pri(const u8 *s, size_t n, size_t *pos)
{
	size_t i = 1;
	int v = 0;

	while (i <= 3 && is_digit(at(s, n, i)))
		v = v * 10 + (s[i++] - '0');
	if (i == 1 || at(s, n, i) != '>' || v > 191)
		return -1;
	*pos = i + 1;
	return v;
}

static const char month_names[] = "janfebmaraprmayjunjulaugsepoctnovdec";

/* 1..12 for a month name (any case) at s[i], or 0. */
static int parse_month(const u8 *s, size_t n, size_t i)
{
	if (n < 3 || i > n - 3)
		return 0;
	for (int m = 0; m < 12; m++)
		if ((s[i] | 0x20) == month_names[3 * m] &&
		    (s[i + 1] | 0x20) == month_names[3 * m + 1] &&
		    (s[i + 2] | 0x20) == month_names[3 * m + 2])
			return m + 1;
	return 0;
}

/* 1..12 for a month name at s[i] (its first letter upper case, the rest any
 * case, as syslog-ng reads it), or 0. */
static int month_at(const u8 *s, size_t n, size_t i)
{
	int c = at(s, n, i);

	if (c < 'A' || c > 'Z')
		return 0;
	return parse_month(s, n, i);
}

/* syslog-ng's fixed-width number: up to w leading spaces, then digits, w
 * bytes in all; its value, or -1. */
static int fixed_num(const u8 *s, size_t n, size_t i, int w)
{
	int v = 0, k = 0;

	/* the common case: two digits */
	if (w == 2 && i + 1 < n && is_digit(s[i]) && is_digit(s[i + 1]))
		return (s[i] - '0') * 10 + (s[i + 1] - '0');

	while (k < w && at(s, n, i + k) == ' ')
		k++;
	if (k == w)
		return -1;
	for (; k < w; k++) {
		int c = at(s, n, i + k);

		if (!is_digit(c))
			return -1;
		v = v * 10 + (c - '0');
	}
	return v;
}

/* "hh:mm:ss" at i into tm: false when it is not one. */
static bool clock_at(const u8 *s, size_t n, size_t i, struct syslog_tm *tm)
{
	int hour = fixed_num(s, n, i, 2), min = fixed_num(s, n, i + 3, 2);
	int sec = fixed_num(s, n, i + 6, 2);

	if (hour < 0 || at(s, n, i + 2) != ':' || min < 0 || at(s, n, i + 5) != ':' || sec < 0)
		return false;
	tm->hour = hour;
	tm->min = min;
	tm->sec = sec;
	return true;
}

/* Fractions after '.' or ',' (Aruba) at i: up to 9 digits kept, more
 * skipped. Returns the bytes used. */
static size_t frac_at(const u8 *s, size_t n, size_t i, struct syslog_tm *tm)
{
	size_t j = i;

	if (at(s, n, j) != '.' && at(s, n, j) != ',')
		return 0;
	j++;
	while (is_digit(at(s, n, j))) {
		if (tm->frac_digits < 9) {
			tm->frac = tm->frac * 10 + (s[j] - '0');
			tm->frac_digits++;
		}
		j++;
	}
	return j - i;
}

/*
 * An ISO 8601 stamp as syslog-ng reads it in either header:
 * YYYY-MM-DD[T ]hh:mm:ss[(.|,)frac][Z|+hh:mm|-hh:mm]; without a zone it is
 * in the receiver's. Returns its length, or 0; *strict whether it is RFC
 * 3339 as RFC 5424 restricts it (what parse_rfc3339 accepts).
 */
static size_t iso_at(const u8 *s, size_t n, size_t i, struct syslog_tm *tm, bool *strict)
{
	int year = fixed_num(s, n, i, 4), mon = fixed_num(s, n, i + 5, 2);
	int mday = fixed_num(s, n, i + 8, 2), sep = at(s, n, i + 10);
	size_t j = i + 19, f;

	memset(tm, 0, sizeof(*tm));
	if (year < 0 || mon < 1 || mon > 12 || at(s, n, i + 4) != '-' || at(s, n, i + 7) != '-' ||
	    mday < 0 || (sep != 'T' && sep != ' ') || !clock_at(s, n, i + 11, tm))
		return 0;
	tm->year = year ? year : 1; /* 0 would read as "no year" */
	tm->mon = mon;
	tm->mday = mday;
	f = frac_at(s, n, j, tm);
	*strict = sep == 'T' && !memchr(s + i, ' ', 19) && mday >= 1 && mday <= 31 &&
		  tm->hour <= 23 && tm->min <= 59 && tm->sec <= 60 &&
		  (!f || (s[j] == '.' && f >= 2 && f <= 7));
	j += f;
	if (at(s, n, j) == 'Z') {
		tm->has_tz = true;
		return j + 1 - i;
	}
	int sign = at(s, n, j), oh = num(s, n, j + 1, 2), om = num(s, n, j + 4, 2);

	if ((sign == '+' || sign == '-') && oh >= 0 && at(s, n, j + 3) == ':' && om >= 0 &&
	    !is_digit(at(s, n, j + 6))) {
		tm->has_tz = true;
		tm->tz_min = (sign == '-' ? -1 : 1) * (oh * 60 + om);
		*strict &= oh <= 23 && om <= 59;
		j += 6;
	} else {
		*strict = false;
	}
	return j - i;
}

static bool iso_shape(const u8 *s, size_t n, size_t i)
{
	return n - i >= 19 && s[i + 4] == '-' && s[i + 7] == '-' &&
	       (s[i + 10] == 'T' || s[i + 10] == ' ') && s[i + 13] == ':' && s[i + 16] == ':';
}

/*
 * The BSD stamps syslog-ng knows, each by its fixed layout:
 *   Mmm dd yyyy hh:mm:ss[:]      Cisco PIX/ASA
 *   Mmm dd hh:mm:ss yyyy         Linksys (then white space)
 *   Mmm dd hh:mm:ss[.frac]       RFC 3164, the year guessed
 * dd is "dd" or " d". Returns the length, or 0; *colon 1 when the PIX
 * stamp's ':' follows (syslog-ng reads it as the stamp's, then one more).
 */
static size_t bsd_at(const u8 *s, size_t n, size_t i, struct syslog_tm *tm, size_t *colon)
{
	size_t left = n - i;
	int mon = month_at(s, n, i), mday = fixed_num(s, n, i + 4, 2), year = -1;
	const u8 *p = s + i;

	memset(tm, 0, sizeof(*tm));
	if (!mon || at(s, n, i + 3) != ' ' || mday < 0 || at(s, n, i + 6) != ' ')
		return 0;
	tm->mon = mon;
	tm->mday = mday;
	if (left >= 21 && p[11] == ' ' && p[14] == ':' && p[17] == ':' &&
	    (p[20] == ':' || p[20] == ' ') && (year = num(s, n, i + 7, 4)) >= 0) {
		if (!clock_at(s, n, i + 12, tm))
			return 0;
		tm->year = year ? year : 1;
		*colon = p[20] == ':';
		return 20;
	}
	if (left < 15 || p[9] != ':' || p[12] != ':' || !clock_at(s, n, i + 7, tm))
		return 0;
	if (left >= 21 && p[15] == ' ' && (year = num(s, n, i + 16, 4)) >= 0 &&
	    (p[20] == ' ' || (p[20] >= '\t' && p[20] <= '\r'))) {
		tm->year = year ? year : 1;
		return 20;
	}
	return 15 + frac_at(s, n, i + 15, tm);
}

/* The stamp of a 3164 header at i and the ':' Cisco puts after it; 0 when
 * there is none. */
static size_t ts_3164(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	struct syslog_tm *tm = &m->tm;
	size_t t, colon = 0;

	if (i >= n)
		return 0;
	if (iso_shape(s, n, i)) {
		bool strict;

		t = iso_at(s, n, i, tm, &strict);
		if (!t)
			return 0;
		if (strict)
			m->flags |= SYSLOG_F_ISO_TIMESTAMP_3164;
	} else if (!(t = bsd_at(s, n, i, tm, &colon))) {
		return 0;
	}
	if (tm->year)
		m->flags |= SYSLOG_F_TS_YEAR;
	set_str(&m->timestamp, s, i, t);
	return t + colon + (at(s, n, i + t + colon) == ':');
}

struct v6_guess {
	uint8_t seg, digits;
	bool failed;
};

/* syslog-ng's test of a host name that may hold ':': an IPv6 address so
 * far (hex digits, at most 4 a group, at most 8 groups). */
static void v6_feed(struct v6_guess *g, int c)
{
	bool hex = is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');

	if (g->failed)
		return;
	if (c != ':' && !hex)
		g->failed = true;
	else if (hex && ++g->digits > 4)
		g->failed = true;
	else if (c == ':' && (g->digits = 0, ++g->seg >= 8))
		g->failed = true;
}

/* HOSTNAME as syslog-ng scans it: up to a space, '[', or a ':' that cannot
 * be in an IPv6 address, at most 255 bytes. Returns the bytes scanned. */
static size_t host_end(const u8 *s, size_t n, size_t i)
{
	struct v6_guess g = { 0 };
	size_t k = 0, max = n - i < SYSLOG_HOSTNAME_MAX ? n - i : SYSLOG_HOSTNAME_MAX;

	/* most names hold no ':': to the first space or '[' and done */
	while (k < max && s[i + k] != ' ' && s[i + k] != '[' && s[i + k] != ':')
		k++;
	if (k == max || s[i + k] != ':')
		return k;
	k = 0;
	while (i + k < n && s[i + k] != ' ' && s[i + k] != '[' && k < SYSLOG_HOSTNAME_MAX) {
		v6_feed(&g, s[i + k]);
		if (s[i + k] == ':' && g.failed)
			break;
		k++;
	}
	return k;
}

/* A 3164 HOSTNAME is one only when a space ends it: its length, or 0. */
static size_t host_len(const u8 *s, size_t n, size_t i)
{
	size_t k = host_end(s, n, i);

	return at(s, n, i + k) == ' ' ? k : 0;
}

/* An RFC 5424 header token syslogrx can carry: 1..max bytes of 33..126,
 * not "-" (NILVALUE). */
static void set_field(struct syslog_str *str, const u8 *s, size_t n, size_t i, size_t len,
		      size_t max)
{
	if (len && len <= max && !is_nil(s, n, i, len) && all_print(s + i, len))
		set_str(str, s, i, len);
}

/* An RFC 3164 header token: bytes of 33..126 of any length, "-" too, as
 * syslog-ng keeps them (the rfc5424 format cuts them to RFC 5424's limits). */
static void set_token(struct syslog_str *str, const u8 *s, size_t i, size_t len)
{
	if (all_print(s + i, len))
		set_str(str, s, i, len);
}

/*
 * TAG as syslog-ng reads it: APP up to a space, '[' or ':'; then
 * "[PROCID]" (up to ']', a space or ':'), then ':' and one space, each when
 * there. Returns the bytes used.
 */
static size_t parse_tag(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	size_t a = i, p;
	bool print = true;

	/* checked on the way: one pass over the TAG */
	while (a < n && s[a] != ' ' && s[a] != '[' && s[a] != ':')
		print &= is_print(s[a++]);
	if (print)
		set_str(&m->app_name, s, i, a - i);
	p = a;
	if (p < n && s[p] == '[') {
		p++;
		while (p < n && s[p] != ' ' && s[p] != ']' && s[p] != ':')
			p++;
		if (p < n)
			set_token(&m->procid, s, a + 1, p - a - 1);
		if (p < n && s[p] == ']')
			p++;
	}
	if (p < n && s[p] == ':')
		p++;
	if (p < n && s[p] == ' ')
		p++;
	return p - i;
}

static size_t skip_spaces(const u8 *s, size_t n, size_t i)
{
	while (i < n && s[i] == ' ')
		i++;
	return i;
}

static bool starts(const u8 *s, size_t n, size_t i, const char *lit, size_t len)
{
	return n - i >= len && s[i] == (u8)lit[0] && !memcmp(s + i, lit, len);
}

#define STARTS(s, n, i, lit) starts(s, n, i, lit, sizeof(lit) - 1)

/* The header after a 3164 stamp: [HOST ]TAG, AIX's "Message forwarded from
 * HOST:", or syslogd's "last message repeated" (no host, no tag). */
static size_t after_stamp(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	size_t t;

	i = skip_spaces(s, n, i);
	if (STARTS(s, n, i, "Message forwarded from ")) {
		i += sizeof("Message forwarded from ") - 1;
		t = i;
		while (t < n && s[t] != ':')
			t++;
		set_token(&m->hostname, s, i, t - i);
		i = t;
		while (i < n && (s[i] == ' ' || s[i] == ':'))
			i++;
	} else if (n - i > sizeof("last message repeated") - 1 &&
		   STARTS(s, n, i, "last message repeated")) {
		return i;
	} else if ((t = host_len(s, n, i))) {
		set_token(&m->hostname, s, i, t);
		i = skip_spaces(s, n, i + t);
	}
	return i + parse_tag(s, n, i, m);
}

/* syslog-ng's RFC 3164 reading, from just after the PRI. */
static void parse_3164(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	size_t k = i, t;

	m->version = 0;
	/* Cisco's sequence number "SEQ: " */
	while (k < n && is_digit(s[k]))
		k++;
	if (at(s, n, k) == ':' && at(s, n, k + 1) == ' ') {
		m->flags |= SYSLOG_F_SEQUENCE;
		m->seq.p = (const char *)s + i;
		m->seq.len = k - i;
		i = k + 1;
	}
	i = skip_spaces(s, n, i);
	/* Cisco's clock marks: '*' not in sync, '.' in sync */
	if (at(s, n, i) == '*' || at(s, n, i) == '.')
		m->synced = s[i++] == '.';
	t = ts_3164(s, n, i, m);
	if (t) {
		i = after_stamp(s, n, i + t, m);
	} else {
		m->flags |= SYSLOG_F_NO_TIMESTAMP;
		memset(&m->tm, 0, sizeof(m->tm));
		i += parse_tag(s, n, i, m);
	}
	if (!m->hostname.p)
		m->flags |= SYSLOG_F_NO_HOSTNAME;
	if (i < n)
		set_str(&m->msg, s, i, n - i);
}

/* One STRUCTURED-DATA name (SD-ID or PARAM-NAME): returns its length, or 0. */
static size_t sd_name(const u8 *s, size_t n, size_t i)
{
	size_t k = 0;

	while (i + k < n) {
		u8 c = s[i + k];

		if (!is_print(c) || c == '=' || c == ']' || c == '"')
			break;
		k++;
	}
	return k;
}

/*
 * 1*SD-ELEMENT at *pos (which holds '['); false when broken. Names longer
 * than RFC 5424's 32 bytes are taken as syslog-ng 3.38 takes them: an SD-ID
 * of up to SD_ID_MAX bytes, a PARAM-NAME of up to SD_PARAM_MAX less the ID's.
 */
#define SD_ID_MAX 248
#define SD_PARAM_MAX 255

static bool parse_sd(const u8 *s, size_t n, size_t *pos)
{
	size_t i = *pos, k, id;

	while (at(s, n, i) == '[') {
		i++;
		if (!(id = sd_name(s, n, i)) || id > SD_ID_MAX)
			return false;
		i += id;
		while (at(s, n, i) == ' ') {
			i++;
			if (!(k = sd_name(s, n, i)) || id + k > SD_PARAM_MAX)
				return false;
			i += k;
			if (at(s, n, i) != '=' || at(s, n, i + 1) != '"')
				return false;
			i += 2;
			for (;;) {
				int c = at(s, n, i);

				/* an unescaped ']' ends no value: broken, as syslog-ng has it */
				if (c < 0 || c == '\n' || c == '\r' || c == 0 || c == ']')
					return false;
				i++;
				if (c == '"')
					break;
				if (c == '\\') {
					/* \" \\ \] are escapes; anything else is kept as two bytes */
					c = at(s, n, i);
					if (c < 0 || c == '\n' || c == '\r' || c == 0)
						return false;
					i++;
				}
			}
		}
		if (at(s, n, i) != ']')
			return false;
		i++;
	}
	*pos = i;
	return true;
}

/*
 * One of APP-NAME PROCID MSGID and its space: any bytes up to a space, "-"
 * none, cut to max as syslog-ng cuts them; carried when printable. 0 or the
 * SYSLOG_F_ reason the header is not RFC 5424.
 */
static uint32_t header_field(const u8 *s, size_t n, size_t *pos, size_t max, struct syslog_str *str)
{
	size_t i = *pos, t = token_len(s, n, i);

	if (i + t >= n)
		return SYSLOG_F_TRUNCATED_HEADER;
	set_field(str, s, n, i, t < max ? t : max, max);
	*pos = i + t + 1;
	return 0;
}

/* After "<PRI>1 ": 0 when syslog-ng reads it as RFC 5424, else the
 * SYSLOG_F_ reason it does not. */
static uint32_t parse_5424(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	size_t t;
	uint32_t err;

	m->version = 1;
	if (at(s, n, i) == '-') {
		m->flags |= SYSLOG_F_NO_TIMESTAMP;
		t = 1;
	} else {
		bool strict;

		t = iso_at(s, n, i, &m->tm, &strict);
		if (!t)
			return i >= n ? SYSLOG_F_TRUNCATED_HEADER : SYSLOG_F_BAD_TIMESTAMP;
		if (!strict)
			m->flags |= SYSLOG_F_TS_NOT_3339;
		set_str(&m->timestamp, s, i, t);
	}
	i += t;
	if (i >= n)
		return SYSLOG_F_TRUNCATED_HEADER;
	if (s[i++] != ' ')
		return SYSLOG_F_BAD_TIMESTAMP;

	t = host_end(s, n, i);
	if (i + t >= n)
		return SYSLOG_F_TRUNCATED_HEADER;
	if (s[i + t] != ' ')
		return SYSLOG_F_BAD_HEADER;
	set_field(&m->hostname, s, n, i, t, SYSLOG_HOSTNAME_MAX);
	i += t + 1;

	if ((err = header_field(s, n, &i, SYSLOG_APP_NAME_MAX, &m->app_name)) ||
	    (err = header_field(s, n, &i, SYSLOG_PROCID_MAX, &m->procid)) ||
	    (err = header_field(s, n, &i, SYSLOG_MSGID_MAX, &m->msgid)))
		return err;

	if (at(s, n, i) == '-') {
		i++;
	} else if (at(s, n, i) == '[') {
		size_t start = i;

		if (!parse_sd(s, n, &i))
			return SYSLOG_F_BAD_SD;
		set_str(&m->structured_data, s, start, i - start);
	}
	if (i == n)
		return 0;
	if (s[i] != ' ')
		return SYSLOG_F_BAD_SD;
	i++;
	if (n - i >= 3 && s[i] == 0xef && s[i + 1] == 0xbb && s[i + 2] == 0xbf) {
		m->bom = true;
		i += 3;
	}
	if (i < n)
		set_str(&m->msg, s, i, n - i);
	return 0;
}

/* Every field absent again (PRI and the byte flags stay). */
static void clear_fields(struct syslog_msg *m)
{
	struct syslog_str none = { 0 };

	m->timestamp = m->hostname = m->app_name = m->procid = none;
	m->msgid = m->structured_data = m->msg = none;
	memset(&m->tm, 0, sizeof(m->tm));
	m->bom = false;
	m->version = 0;
	m->seq = none;
	m->synced = -1;
	m->flags &= ~(SYSLOG_F_NO_TIMESTAMP | SYSLOG_F_TS_NOT_3339);
}

static enum syslog_parse_result malformed(struct syslog_msg *m, uint32_t why)
{
	m->flags |= why;
	clear_fields(m);
	return SYSLOG_MALFORMED;
}

enum syslog_parse_result syslog_parse(const char *data, size_t len, struct syslog_msg *out)
{
	const u8 *s = (const u8 *)data;
	size_t n = len, i = 0;
	uint32_t err;

	memset(out, 0, sizeof(*out));
	out->pri = out->facility = out->severity = -1;
	out->synced = -1;

	/* trailing newline(s) and NULs (C senders counting the terminator) */
	while (n > 0) {
		u8 c = s[n - 1];

		if (c == '\n' || c == '\r')
			out->flags |= SYSLOG_F_TRAILING_NEWLINE;
		else if (c == 0)
			out->flags |= SYSLOG_F_TRAILING_NUL;
		else
			break;
		n--;
	}
	if (!n)
		return malformed(out, SYSLOG_F_EMPTY);
	out->flags |= scan_bytes(s, n);

	if (s[0] == '<') {
		int pri = parse_pri(s, n, &i);

		if (pri < 0)
			return malformed(out, SYSLOG_F_BAD_PRI);
		out->pri = pri;
		out->facility = pri >> 3;
		out->severity = pri & 7;
		if (at(s, n, i) == '1' && at(s, n, i + 1) == ' ') {
			err = parse_5424(s, n, i + 2, out);
			if (!err)
				return SYSLOG_OK_5424;
			/* not RFC 5424 after all: read as RFC 3164, as SC4S does */
			clear_fields(out);
			out->flags |= err;
		}
	} else {
		/* RFC 3164 4.3.3: a relay gives a message without PRI <13> */
		out->flags |= SYSLOG_F_NO_PRI;
		out->pri = 13;
		out->facility = 1;
		out->severity = 5;
	}
	parse_3164(s, n, i, out);
	return SYSLOG_OK_3164;
}
