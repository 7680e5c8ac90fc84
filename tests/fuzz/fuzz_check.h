/* SPDX-License-Identifier: MIT */
/* What the fuzz targets share: CHECK (abort, so libFuzzer keeps the input)
 * and a protobuf varint reader that fails on one running past its end. */
#ifndef SYSLOGRX_FUZZ_CHECK_H
#define SYSLOGRX_FUZZ_CHECK_H

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
