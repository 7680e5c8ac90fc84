// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <string.h>
#include "common/escape.h"

size_t escape_line(char *dst, const char *src, size_t len)
{
	char *d = dst;

	for (size_t i = 0; i < len; i++) {
		char c = src[i];

		switch (c) {
		case '\\':
			*d++ = '\\';
			*d++ = '\\';
			break;
		case '\n':
			*d++ = '\\';
			*d++ = 'n';
			break;
		case '\r':
			*d++ = '\\';
			*d++ = 'r';
			break;
		case '\0':
			*d++ = '\\';
			*d++ = '0';
			break;
		default:
			*d++ = c;
		}
	}
	return d - dst;
}

size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n;
	unsigned int cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates and code points past U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* '#' and three octal digits: ESC -> "#033", U+009B -> "#233" (rsyslog's form) */
static char *put_octal(char *d, unsigned int c)
{
	*d++ = '#';
	*d++ = '0' + (c >> 6);
	*d++ = '0' + ((c >> 3) & 7);
	*d++ = '0' + (c & 7);
	return d;
}

/*
 * At a byte >= 0x80: how many bytes stand together there (a valid UTF-8
 * sequence, or 1: a byte of an invalid one), and in *c1 the C1 control they
 * are, 0 if none. A C1 control is U+0080..U+009F (C2 80..C2 9F), or a byte
 * 0x80..0x9F of no valid sequence: a terminal in an 8-bit mode runs either
 * (0x9B is CSI, as ESC [ is).
 */
static size_t high_char(const unsigned char *s, size_t len, unsigned int *c1)
{
	size_t n = utf8_seq_len(s, len);

	*c1 = 0;
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		*c1 = s[1]; /* U+0080..U+009F: the code point is the second byte */
	else if (!n && s[0] < 0xa0)
		*c1 = s[0];
	return n ? n : 1;
}

size_t escape_ctl(char *dst, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	char *d = dst;
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		unsigned int c1;
		size_t n;

		if (c < 0x20 || c == 0x7f) {
			d = put_octal(d, c);
			i++;
		} else if (c < 0x80) {
			*d++ = c;
			i++;
		} else {
			n = high_char(s + i, len - i, &c1);
			if (c1) {
				d = put_octal(d, c1);
			} else {
				memcpy(d, s + i, n);
				d += n;
			}
			i += n;
		}
	}
	return d - dst;
}

size_t escape_line_ctl(char *dst, const char *src, size_t len)
{
	char *d = dst;
	size_t i = 0;

	while (i < len) {
		unsigned char c = src[i];
		unsigned int c1;
		size_t n = 1;

		if (c == '\\' || c == '\n' || c == '\r' || c == '\0')
			d += escape_line(d, &src[i], 1);
		else if (c < 0x80)
			d += escape_ctl(d, &src[i], 1);
		else { /* a whole sequence, so that a C1 control in it is seen */
			n = high_char((const unsigned char *)src + i, len - i, &c1);
			d += escape_ctl(d, &src[i], n);
		}
		i += n;
	}
	return d - dst;
}

/* Bytes of s below 0x80 from its start, 8 at a time while they last. */
static size_t ascii_run(const unsigned char *s, size_t len)
{
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, s + i, 8);
		if (w & 0x8080808080808080ULL)
			break;
	}
	while (i < len && s[i] < 0x80)
		i++;
	return i;
}

size_t utf8_repair(char *dst, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, out = 0;

	while (i < len) {
		size_t k = ascii_run(s + i, len - i);

		while (i + k < len && s[i + k] >= 0x80) {
			size_t n = utf8_seq_len(s + i + k, len - i - k);

			if (!n)
				break;
			k += n;
			k += ascii_run(s + i + k, len - i - k);
		}
		if (dst)
			memcpy(dst + out, s + i, k);
		out += k;
		i += k;
		if (i < len) { /* one byte of an invalid sequence */
			if (dst)
				memcpy(dst + out, "\xef\xbf\xbd", 3);
			out += 3;
			i++;
		}
	}
	return out;
}

size_t escape_json(char *dst, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	char *d = dst;
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*d++ = c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t n = utf8_seq_len(s + i, len - i);

			if (n == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
				/* a C1 control, U+0080..U+009F: as the C0 ones */
				memcpy(d, "\\u00", 4);
				d[4] = hex[s[i + 1] >> 4];
				d[5] = hex[s[i + 1] & 0xf];
				d += 6;
				i += 2;
			} else if (n) {
				memcpy(d, s + i, n);
				d += n;
				i += n;
			} else {
				memcpy(d, "\\ufffd", 6);
				d += 6;
				i++;
			}
			continue;
		}
		*d++ = '\\';
		switch (c) {
		case '"':
			*d++ = '"';
			break;
		case '\\':
			*d++ = '\\';
			break;
		case '\n':
			*d++ = 'n';
			break;
		case '\r':
			*d++ = 'r';
			break;
		case '\t':
			*d++ = 't';
			break;
		default:
			*d++ = 'u';
			*d++ = '0';
			*d++ = '0';
			*d++ = hex[c >> 4];
			*d++ = hex[c & 0xf];
		}
		i++;
	}
	return d - dst;
}
