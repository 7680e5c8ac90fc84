/* SPDX-License-Identifier: MIT */
/* Checked number parsing for command lines: a bad value is an error, never a 0. */
#ifndef SYSLOGRX_PARSE_NUM_H
#define SYSLOGRX_PARSE_NUM_H

#include <stdint.h>

/* Whole decimal number in [min, max]. Returns 0, or -EINVAL / -ERANGE. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Byte count with an optional K/M/G suffix (powers of 1024, case-insensitive,
 * an optional trailing 'B' or 'iB'), in [min, max]. */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Seconds, decimal fractions allowed ("0.5"), in [min, max]. */
int parse_seconds(const char *s, double min, double max, double *out);

#endif
