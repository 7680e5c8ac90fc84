// SPDX-License-Identifier: MIT
/*
 * CRC-32 by folding 64 bytes at a time with carry-less multiplies, then a
 * Barrett reduction: Intel's "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ" (2009), in the form Chromium's zlib uses
 * (crc32_simd.c); the constants are the paper's, for the bit-reflected
 * polynomial. Lengths below 64 and the tail below 16 go to zlib.
 */
#include <zlib.h>
#include "common/crc32_fast.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define FOLD_ATTR __attribute__((target("pclmul,sse4.1")))

/* One 128-bit lane folded forward over the next 128 (or 512) bits: k is the
 * pair of constants for that distance. */
static inline FOLD_ATTR __m128i fold(__m128i x, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(hi, lo), next);
}

/* len >= 64, a multiple of 16; crc is the inverted (internal) value. */
static FOLD_ATTR uint32_t crc_pclmul(const unsigned char *buf, size_t len, uint32_t crc)
{
	const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
	const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
	const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
	const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i x1, x2, x3, x4;

	x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)buf), _mm_cvtsi32_si128(crc));
	x2 = _mm_loadu_si128((const __m128i *)(buf + 16));
	x3 = _mm_loadu_si128((const __m128i *)(buf + 32));
	x4 = _mm_loadu_si128((const __m128i *)(buf + 48));
	buf += 64;
	len -= 64;
	for (; len >= 64; buf += 64, len -= 64) {
		x1 = fold(x1, k1k2, _mm_loadu_si128((const __m128i *)buf));
		x2 = fold(x2, k1k2, _mm_loadu_si128((const __m128i *)(buf + 16)));
		x3 = fold(x3, k1k2, _mm_loadu_si128((const __m128i *)(buf + 32)));
		x4 = fold(x4, k1k2, _mm_loadu_si128((const __m128i *)(buf + 48)));
	}
	x1 = fold(x1, k3k4, x2);
	x1 = fold(x1, k3k4, x3);
	x1 = fold(x1, k3k4, x4);
	for (; len >= 16; buf += 16, len -= 16)
		x1 = fold(x1, k3k4, _mm_loadu_si128((const __m128i *)buf));
	/* 128 bits to 64, then 64 to 32 (Barrett). */
	x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
	x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
	x2 = _mm_srli_si128(x1, 4);
	x1 = _mm_and_si128(x1, mask32);
	x1 = _mm_clmulepi64_si128(x1, k5k0, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	x2 = _mm_and_si128(x1, mask32);
	x2 = _mm_clmulepi64_si128(x2, poly, 0x10);
	x2 = _mm_and_si128(x2, mask32);
	x2 = _mm_clmulepi64_si128(x2, poly, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	return _mm_extract_epi32(x1, 1);
}

/* Filled in by whichever thread gets here first: several workers may race to
 * fill it in, each with the same answer (relaxed atomics: no torn read). */
static int have_pclmul(void)
{
	static int have = -1;
	int h = __atomic_load_n(&have, __ATOMIC_RELAXED);

	if (h < 0) {
		h = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
		__atomic_store_n(&have, h, __ATOMIC_RELAXED);
	}
	return h;
}
#endif

uint32_t crc32_fast(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

#if defined(__x86_64__)
	if (len >= 64 && have_pclmul()) {
		size_t chunk = len & ~(size_t)15;

		crc = ~crc_pclmul(p, chunk, ~crc);
		p += chunk;
		len -= chunk;
	}
#endif
	return len ? crc32(crc, p, len) : crc;
}
