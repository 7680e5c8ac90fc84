/* SPDX-License-Identifier: MIT */
/*
 * Writing text into a buffer the caller sized beforehand (format_max_len(),
 * otlp_encode's bounds): no length checks here, by contract. One owner for
 * the formatters of syslog/ (format.c, otlp_encode.c).
 */
#ifndef SYSLOGRX_PUT_H
#define SYSLOGRX_PUT_H

#include <stdint.h>
#include <string.h>

static inline char *put_str(char *d, const char *s, size_t len)
{
	memcpy(d, s, len);
	return d + len;
}

#define PUT_LIT(d, lit) put_str(d, lit, sizeof(lit) - 1)

/* v in decimal, no padding. */
static inline char *put_u64(char *d, uint64_t v)
{
	char tmp[20];
	int k = 0;

	do {
		tmp[k++] = '0' + v % 10;
		v /= 10;
	} while (v);
	while (k)
		*d++ = tmp[--k];
	return d;
}

#endif
