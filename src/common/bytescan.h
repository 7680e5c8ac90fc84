/* SPDX-License-Identifier: MIT */
/*
 * Finding the first byte of a class in a buffer, 16 bytes at a time with SSE2
 * (always there on x86-64), 64 at a time while the text is clean: the one
 * scanner of the parser (syslog_parse.c: NUL and non-ASCII bytes) and of the
 * formatter (format.c: the bytes escape_line() and escape_json() change).
 *
 * A class is two functions: NAME_special16(s) gives 0xff in each of the 16
 * bytes at s that belongs to it, NAME_special(c) the same for one byte;
 * BYTESCAN_CLEAN(s, len, NAME) is the number of bytes at the start of s that
 * do not. Inlined with constant classifiers: each caller gets straight-line
 * code. Reads never go past s[len).
 */
#ifndef SYSLOGRX_BYTESCAN_H
#define SYSLOGRX_BYTESCAN_H

#include <stdbool.h>
#include <stddef.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef unsigned char bytescan_u8;

/* escape_line(): '\\' '\n' '\r' NUL */
static inline bool line_special(bytescan_u8 c)
{
	return c == '\\' || c == '\n' || c == '\r' || c == 0;
}

/* escape_json() may change it: controls, '"', '\\', >= 0x80 */
static inline bool json_special(bytescan_u8 c)
{
	return c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
}

/* escape_line_ctl() (control bytes escaped, rsyslog's #ooo): below 0x20, DEL,
 * '\\', and 0x80..0x9f, in which every C1 control has a byte (format.c's
 * c1_clean tells a C1 control from the UTF-8 sequences that hold one) */
static inline bool ctl_special(bytescan_u8 c)
{
	return c < 0x20 || c == 0x7f || c == '\\' || (c >= 0x80 && c < 0xa0);
}

/* escape_ctl() (structured data, whose own escapes stay): below 0x20, DEL, 0x80..0x9f */
static inline bool sd_special(bytescan_u8 c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0);
}

/* NUL or not ASCII (the parser's HAS_NUL / INVALID_UTF8 scan) */
static inline bool odd_special(bytescan_u8 c)
{
	return c == 0 || c >= 0x80;
}

#ifdef __SSE2__
static inline __m128i line_special16(const bytescan_u8 *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);
	__m128i nl = _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'));
	__m128i cr = _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'));
	__m128i z = _mm_cmpeq_epi8(v, _mm_setzero_si128());
	__m128i bs = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));

	return _mm_or_si128(_mm_or_si128(nl, cr), _mm_or_si128(z, bs));
}

static inline __m128i ctl_special16(const bytescan_u8 *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);
	/* unsigned v <= 0x1f; signed v < (char)0xa0: 0x80..0x9f */
	__m128i low = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
	__m128i c1 = _mm_cmplt_epi8(v, _mm_set1_epi8((char)0xa0));
	__m128i del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f));
	__m128i bs = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));

	return _mm_or_si128(_mm_or_si128(low, c1), _mm_or_si128(del, bs));
}

static inline __m128i sd_special16(const bytescan_u8 *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);
	__m128i low = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
	__m128i c1 = _mm_cmplt_epi8(v, _mm_set1_epi8((char)0xa0));

	return _mm_or_si128(_mm_or_si128(low, c1), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f)));
}

static inline __m128i json_special16(const bytescan_u8 *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);
	/* signed compare: below 0x20 and from 0x80 up are both "less than 0x20" */
	__m128i low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
	__m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
	__m128i bs = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));

	return _mm_or_si128(low, _mm_or_si128(q, bs));
}

/* Only the high bit counts for movemask: set for >= 0x80, and for NUL by the compare. */
static inline __m128i odd_special16(const bytescan_u8 *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)s);

	return _mm_or_si128(v, _mm_cmpeq_epi8(v, _mm_setzero_si128()));
}
#endif

static inline __attribute__((always_inline)) size_t
bytescan_clean(const bytescan_u8 *s, size_t len,
#ifdef __SSE2__
	       __m128i (*special16)(const bytescan_u8 *),
#endif
	       bool (*special)(bytescan_u8))
{
	size_t i = 0;

#ifdef __SSE2__
	for (; i + 64 <= len; i += 64)
		if (_mm_movemask_epi8(_mm_or_si128(
			    _mm_or_si128(special16(s + i), special16(s + i + 16)),
			    _mm_or_si128(special16(s + i + 32), special16(s + i + 48)))))
			break;
	for (; i + 16 <= len; i += 16) {
		int mask = _mm_movemask_epi8(special16(s + i));

		if (mask)
			return i + __builtin_ctz(mask);
	}
#endif
	for (; i < len; i++)
		if (special(s[i]))
			break;
	return i;
}

#ifdef __SSE2__
#define BYTESCAN_CLEAN(s, len, kind) bytescan_clean(s, len, kind##_special16, kind##_special)
#else
#define BYTESCAN_CLEAN(s, len, kind) bytescan_clean(s, len, kind##_special)
#endif

#endif
