/* SPDX-License-Identifier: MIT */
/* Arrays: their length, their growth, and sorting/searching of u64 keys. */
#ifndef SYSLOGRX_ARRAY_H
#define SYSLOGRX_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Makes *v (an array of *cap elements of elem bytes) hold at least need
 * elements, doubling from min so that n pushes cost O(n). Elements past the
 * old capacity are uninitialised. 0, or -ENOMEM with *v and *cap unchanged.
 */
int array_reserve(void **v, size_t *cap, size_t need, size_t elem, size_t min);

/* Room for one more element after the n in use, for an array v with size_t cap. */
#define ARRAY_PUSH_ROOM(v, cap, n, min) \
	array_reserve((void **)&(v), &(cap), (size_t)(n) + 1, sizeof(*(v)), (min))

/* qsort(), also of an empty array that was never allocated (qsort's base
 * may not be NULL, even for no element). */
void array_sort(void *v, size_t n, size_t elem, int (*cmp)(const void *, const void *));

/* Whether key is in v[0..n), sorted by cmp_u64 (v may be NULL when n is 0). */
bool array_has_u64(const uint64_t *v, size_t n, uint64_t key);

/* qsort/bsearch comparator of uint64_t. */
int cmp_u64(const void *a, const void *b);

#endif
