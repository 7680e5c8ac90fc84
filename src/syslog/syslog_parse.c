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

/*
 * RFC 3339 as RFC 5424 restricts it: YYYY-MM-DDTHH:MM:SS[.1-6 digits]
 * then Z or +HH:MM/-HH:MM, upper case. Returns its length, or 0.
 */
static size_t parse_rfc3339(const u8 *s, size_t n, size_t i, struct syslog_tm *tm)
{
	int year = num(s, n, i, 4), mon = num(s, n, i + 5, 2), mday = num(s, n, i + 8, 2);
	int hour = num(s, n, i + 11, 2), min = num(s, n, i + 14, 2), sec = num(s, n, i + 17, 2);
	size_t j = i + 19;

	if (year < 0 || at(s, n, i + 4) != '-' || mon < 1 || mon > 12 || at(s, n, i + 7) != '-' ||
	    mday < 1 || mday > 31 || at(s, n, i + 10) != 'T' || hour < 0 || hour > 23 ||
	    at(s, n, i + 13) != ':' || min < 0 || min > 59 || at(s, n, i + 16) != ':' || sec < 0 ||
	    sec > 60)
		return 0;
	tm->year = year;
	tm->mon = mon;
	tm->mday = mday;
	tm->hour = hour;
	tm->min = min;
	tm->sec = sec;
	tm->frac = 0;
	tm->frac_digits = 0;
	if (at(s, n, j) == '.') {
		j++;
		while (is_digit(at(s, n, j)) && tm->frac_digits < 6) {
			tm->frac = tm->frac * 10 + (s[j++] - '0');
			tm->frac_digits++;
		}
		if (!tm->frac_digits || is_digit(at(s, n, j)))
			return 0;
	}
	tm->has_tz = true;
	if (at(s, n, j) == 'Z') {
		tm->tz_min = 0;
		return j + 1 - i;
	}
	int sign = at(s, n, j), oh = num(s, n, j + 1, 2), om = num(s, n, j + 4, 2);

	if ((sign != '+' && sign != '-') || oh < 0 || oh > 23 || at(s, n, j + 3) != ':' || om < 0 ||
	    om > 59)
		return 0;
	tm->tz_min = (sign == '-' ? -1 : 1) * (oh * 60 + om);
	return j + 6 - i;
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

/*
 * "Mmm dd [yyyy ]hh:mm:ss[.frac]", dd as "dd", " d" or "d".
 * Returns its length, or 0. No timezone: tm->has_tz false.
 */
static size_t parse_bsd_ts(const u8 *s, size_t n, size_t i, struct syslog_tm *tm)
{
	int mon = parse_month(s, n, i), mday, year = 0, hour, min, sec;
	size_t j = i + 4;

	if (!mon || at(s, n, i + 3) != ' ')
		return 0;
	if (at(s, n, j) == ' ')
		j++;
	if (!is_digit(at(s, n, j)))
		return 0;
	mday = s[j++] - '0';
	if (is_digit(at(s, n, j)))
		mday = mday * 10 + (s[j++] - '0');
	if (mday < 1 || mday > 31 || at(s, n, j) != ' ')
		return 0;
	j++;
	if (at(s, n, j + 4) == ' ' && (year = num(s, n, j, 4)) >= 0)
		j += 5;
	else
		year = 0;
	hour = num(s, n, j, 2);
	min = num(s, n, j + 3, 2);
	sec = num(s, n, j + 6, 2);
	if (hour < 0 || hour > 23 || at(s, n, j + 2) != ':' || min < 0 || min > 59 ||
	    at(s, n, j + 5) != ':' || sec < 0 || sec > 60)
		return 0;
	j += 8;
	memset(tm, 0, sizeof(*tm));
	tm->year = year;
	tm->mon = mon;
	tm->mday = mday;
	tm->hour = hour;
	tm->min = min;
	tm->sec = sec;
	if (at(s, n, j) == '.' && is_digit(at(s, n, j + 1))) {
		j++;
		while (is_digit(at(s, n, j)) && tm->frac_digits < 9) {
			tm->frac = tm->frac * 10 + (s[j++] - '0');
			tm->frac_digits++;
		}
		if (is_digit(at(s, n, j)))
			return 0;
	}
	return j - i;
}

/* Cisco's " UTC" after the time: 1-5 letters, then ':'. Returns its length. */
static size_t cisco_tz(const u8 *s, size_t n, size_t i, struct syslog_tm *tm)
{
	size_t k = 0;

	if (at(s, n, i) != ' ')
		return 0;
	while (k < 6 && (at(s, n, i + 1 + k) | 0x20) >= 'a' && (at(s, n, i + 1 + k) | 0x20) <= 'z')
		k++;
	if (k < 1 || k > 5 || at(s, n, i + 1 + k) != ':')
		return 0;
	if (k == 3 && (!memcmp(s + i + 1, "UTC", 3) || !memcmp(s + i + 1, "GMT", 3))) {
		tm->has_tz = true;
		tm->tz_min = 0;
	}
	return k + 1;
}

/* A Cisco timestamp, with its '*' or '.' (clock not in sync) marker, starts at i. */
static bool cisco_ts_at(const u8 *s, size_t n, size_t i)
{
	struct syslog_tm tm;

	if (at(s, n, i) == '*' || at(s, n, i) == '.')
		i++;
	return parse_bsd_ts(s, n, i, &tm) != 0;
}

/* After "SEQ: ": Cisco's "HOST: " when a timestamp follows it. */
static size_t cisco_host(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	size_t t = token_len(s, n, i);

	if (t < 2 || t - 1 > SYSLOG_HOSTNAME_MAX || s[i + t - 1] != ':' || is_nil(s, n, i, t - 1) ||
	    !all_print(s + i, t - 1) || !cisco_ts_at(s, n, i + t + 1))
		return 0;
	set_str(&m->hostname, s, i, t - 1);
	return t + 1;
}

/* TAG: APP: or APP[PROCID]: followed by a space or the end. Returns bytes used. */
static size_t parse_tag(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	size_t a = i, colon, p = 0, plen = 0;

	while (a < n && a - i <= SYSLOG_APP_NAME_MAX && is_print(s[a]) && s[a] != '[' &&
	       s[a] != ':')
		a++;
	if (a == i || a - i > SYSLOG_APP_NAME_MAX || is_nil(s, n, i, a - i))
		return 0;
	if (at(s, n, a) == '[') {
		p = a + 1;
		while (p + plen < n && plen <= SYSLOG_PROCID_MAX && is_print(s[p + plen]) &&
		       s[p + plen] != ']')
			plen++;
		if (!plen || plen > SYSLOG_PROCID_MAX || at(s, n, p + plen) != ']' ||
		    is_nil(s, n, p, plen))
			return 0;
		colon = p + plen + 1;
	} else {
		colon = a;
	}
	if (at(s, n, colon) != ':' || (colon + 1 < n && s[colon + 1] != ' '))
		return 0;
	set_str(&m->app_name, s, i, a - i);
	if (plen)
		set_str(&m->procid, s, p, plen);
	return colon + 1 - i + (colon + 1 < n);
}

/* The timestamp of a 3164 header at i, with what ends it; returns bytes used. */
static size_t ts_3164(const u8 *s, size_t n, size_t i, bool cisco, struct syslog_msg *m)
{
	struct syslog_tm *tm = &m->tm;
	size_t j = i, t, end;

	t = parse_rfc3339(s, n, i, tm);
	if (t && (i + t == n || s[i + t] == ' ')) {
		m->flags |= SYSLOG_F_ISO_TIMESTAMP_3164;
		set_str(&m->timestamp, s, i, t);
		return t + (i + t < n);
	}
	if (at(s, n, j) == '*' || at(s, n, j) == '.')
		j++;
	t = parse_bsd_ts(s, n, j, tm);
	if (!t)
		return 0;
	if (cisco)
		t += cisco_tz(s, n, j + t, tm);
	end = j + t;
	if (at(s, n, end) == ':')
		end++;
	if (end < n && s[end] != ' ')
		return 0;
	if (tm->year)
		m->flags |= SYSLOG_F_TS_YEAR;
	set_str(&m->timestamp, s, j, t);
	return end + (end < n) - i;
}

static void parse_3164(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	bool cisco = false;
	size_t k = i, t;

	m->version = 0;
	while (k < n && is_digit(s[k]))
		k++;
	if (k > i && at(s, n, k) == ':' && at(s, n, k + 1) == ' ') {
		/* Cisco IOS "SEQ: [HOST: ]" */
		cisco = true;
		m->flags |= SYSLOG_F_SEQUENCE;
		i = k + 2;
		if (!cisco_ts_at(s, n, i))
			i += cisco_host(s, n, i, m);
	} else if ((at(s, n, i) == '*' || at(s, n, i) == '.') && cisco_ts_at(s, n, i)) {
		cisco = true;
	}

	t = ts_3164(s, n, i, cisco, m);
	if (!t) {
		m->flags |= SYSLOG_F_NO_TIMESTAMP;
		memset(&m->tm, 0, sizeof(m->tm));
	}
	i += t;

	if (t && !cisco) {
		t = token_len(s, n, i);
		if (t && i + t < n && t <= SYSLOG_HOSTNAME_MAX && s[i + t - 1] != ':' &&
		    !is_nil(s, n, i, t) && !memchr(s + i, '[', t) && all_print(s + i, t)) {
			set_str(&m->hostname, s, i, t);
			i += t + 1;
		}
	}
	if (!m->hostname.p)
		m->flags |= SYSLOG_F_NO_HOSTNAME;

	i += parse_tag(s, n, i, m);
	if (i < n)
		set_str(&m->msg, s, i, n - i);
}

/* One STRUCTURED-DATA name (SD-ID or PARAM-NAME): returns its length, or 0. */
static size_t sd_name(const u8 *s, size_t n, size_t i)
{
	size_t k = 0;

	while (i + k < n && k <= SYSLOG_SD_NAME_MAX) {
		u8 c = s[i + k];

		if (!is_print(c) || c == '=' || c == ']' || c == '"')
			break;
		k++;
	}
	return k <= SYSLOG_SD_NAME_MAX ? k : 0;
}

/* 1*SD-ELEMENT at *pos (which holds '['); false when broken. */
static bool parse_sd(const u8 *s, size_t n, size_t *pos)
{
	size_t i = *pos, k;

	while (at(s, n, i) == '[') {
		i++;
		if (!(k = sd_name(s, n, i)))
			return false;
		i += k;
		while (at(s, n, i) == ' ') {
			i++;
			if (!(k = sd_name(s, n, i)))
				return false;
			i += k;
			if (at(s, n, i) != '=' || at(s, n, i + 1) != '"')
				return false;
			i += 2;
			for (;;) {
				int c = at(s, n, i);

				if (c < 0 || c == '\n' || c == '\r' || c == 0)
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

/* One of HOSTNAME APP-NAME PROCID MSGID and its space; 0 or a SYSLOG_F_ error. */
static uint32_t header_field(const u8 *s, size_t n, size_t *pos, size_t max, struct syslog_str *str)
{
	size_t i = *pos, t = token_len(s, n, i);

	if (i + t >= n)
		return SYSLOG_F_TRUNCATED_HEADER;
	if (!t || t > max || !all_print(s + i, t))
		return SYSLOG_F_BAD_HEADER;
	if (!(t == 1 && s[i] == '-'))
		set_str(str, s, i, t);
	*pos = i + t + 1;
	return 0;
}

/* After "<PRI>1 ": 0 when well formed, else the SYSLOG_F_ reason. */
static uint32_t parse_5424(const u8 *s, size_t n, size_t i, struct syslog_msg *m)
{
	size_t t = token_len(s, n, i);
	uint32_t err;

	m->version = 1;
	if (i + t >= n)
		return SYSLOG_F_TRUNCATED_HEADER;
	if (t == 1 && s[i] == '-')
		m->flags |= SYSLOG_F_NO_TIMESTAMP;
	else if (parse_rfc3339(s, n, i, &m->tm) != t)
		return SYSLOG_F_BAD_TIMESTAMP;
	else
		set_str(&m->timestamp, s, i, t);
	i += t + 1;

	if ((err = header_field(s, n, &i, SYSLOG_HOSTNAME_MAX, &m->hostname)) ||
	    (err = header_field(s, n, &i, SYSLOG_APP_NAME_MAX, &m->app_name)) ||
	    (err = header_field(s, n, &i, SYSLOG_PROCID_MAX, &m->procid)) ||
	    (err = header_field(s, n, &i, SYSLOG_MSGID_MAX, &m->msgid)))
		return err;

	if (i >= n)
		return SYSLOG_F_TRUNCATED_HEADER;
	if (s[i] == '-') {
		i++;
	} else {
		size_t start = i;

		if (s[i] != '[' || !parse_sd(s, n, &i))
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

static enum syslog_parse_result malformed(struct syslog_msg *m, uint32_t why)
{
	struct syslog_str none = { 0 };

	m->flags |= why;
	m->timestamp = m->hostname = m->app_name = m->procid = none;
	m->msgid = m->structured_data = m->msg = none;
	memset(&m->tm, 0, sizeof(m->tm));
	m->bom = false;
	return SYSLOG_MALFORMED;
}

enum syslog_parse_result syslog_parse(const char *data, size_t len, struct syslog_msg *out)
{
	const u8 *s = (const u8 *)data;
	size_t n = len, i = 0;
	uint32_t err;

	memset(out, 0, sizeof(*out));
	out->pri = out->facility = out->severity = -1;

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
			return err ? malformed(out, err) : SYSLOG_OK_5424;
		}
	} else {
		out->flags |= SYSLOG_F_NO_PRI;
	}
	parse_3164(s, n, i, out);
	return SYSLOG_OK_3164;
}
