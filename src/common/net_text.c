// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/escape.h"
#include "common/net_text.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* The code point of the valid sequence s[0, n). */
static unsigned int code_point(const unsigned char *s, size_t n)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	unsigned int cp = s[0] & lead_mask[n];

	for (size_t i = 1; i < n; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

static bool control(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

static size_t sanitise(char *dst, size_t cap, const char *src, size_t len, bool octal)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, j = 0;

	if (!cap)
		return 0;
	while (i < len) {
		size_t n = utf8_seq_len(s + i, len - i);
		char piece[8];
		const char *out;
		size_t olen;

		if (!n) {
			out = REPLACEMENT, olen = 3, n = 1;
		} else if (control(code_point(s + i, n))) {
			if (octal) {
				snprintf(piece, sizeof(piece), "#%03o", code_point(s + i, n));
				out = piece, olen = 4;
			} else {
				out = " ", olen = 1;
			}
		} else {
			out = (const char *)s + i, olen = n;
		}
		if (j + olen > cap - 1)
			break; /* whole characters only */
		memcpy(dst + j, out, olen);
		j += olen;
		i += n;
	}
	dst[j] = '\0';
	return j;
}

size_t net_text_label(char *dst, size_t cap, const char *src, size_t len)
{
	return sanitise(dst, cap, src, len, false);
}

size_t net_text_log(char *dst, size_t cap, const char *src, size_t len)
{
	return sanitise(dst, cap, src, len, true);
}
