/* SPDX-License-Identifier: MIT */
/* What the fuzz targets share: CHECK (abort, so libFuzzer keeps the input),
 * an independent UTF-8 validator and a protobuf varint reader that fails on one running past its end. */
#ifndef SYSLOGRX_FUZZ_CHECK_H
#define SYSLOGRX_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/*
 * The length of the well-formed UTF-8 sequence at s, 0 if there is none:
 * Unicode's Table 3-7 row by row, written apart from common/escape.c and the encoders so that
 * a wrong decoder there cannot pass its own check.
 */
static inline size_t table_3_7_len(const unsigned char *s, size_t n)
{
	static const struct {
		unsigned char lead_lo, lead_hi, second_lo, second_hi, len;
	} rows[] = {
		{ 0x00, 0x7f, 0, 0, 1 },       { 0xc2, 0xdf, 0x80, 0xbf, 2 },
		{ 0xe0, 0xe0, 0xa0, 0xbf, 3 }, { 0xe1, 0xec, 0x80, 0xbf, 3 },
		{ 0xed, 0xed, 0x80, 0x9f, 3 }, { 0xee, 0xef, 0x80, 0xbf, 3 },
		{ 0xf0, 0xf0, 0x90, 0xbf, 4 }, { 0xf1, 0xf3, 0x80, 0xbf, 4 },
		{ 0xf4, 0xf4, 0x80, 0x8f, 4 },
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		if (s[0] < rows[r].lead_lo || s[0] > rows[r].lead_hi)
			continue;
		if (rows[r].len > n)
			return 0;
		if (rows[r].len == 1)
			return 1;
		if (s[1] < rows[r].second_lo || s[1] > rows[r].second_hi)
			return 0;
		for (size_t k = 2; k < rows[r].len; k++)
			if (s[k] < 0x80 || s[k] > 0xbf)
				return 0;
		return rows[r].len;
	}
	return 0;
}

static inline uint64_t get_varint(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;

	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char c = *(*p)++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	CHECK(0);
	return 0;
}

#endif
