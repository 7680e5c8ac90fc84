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

size_t escape_ctl(char *dst, const char *src, size_t len)
{
	char *d = dst;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = src[i];

		if (c < 0x20 || c == 0x7f) {
			*d++ = '#';
			*d++ = '0' + (c >> 6);
			*d++ = '0' + ((c >> 3) & 7);
			*d++ = '0' + (c & 7);
		} else {
			*d++ = c;
		}
	}
	return d - dst;
}

size_t escape_line_ctl(char *dst, const char *src, size_t len)
{
	char *d = dst;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = src[i];

		if (c == '\\' || c == '\n' || c == '\r' || c == '\0')
			d += escape_line(d, &src[i], 1);
		else
			d += escape_ctl(d, &src[i], 1);
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

			if (n) {
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
