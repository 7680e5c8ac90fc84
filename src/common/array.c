// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "common/array.h"

int array_reserve(void **v, size_t *cap, size_t need, size_t elem, size_t min)
{
	size_t n = *cap ? *cap : min;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	p = realloc(*v, n * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void array_sort(void *v, size_t n, size_t elem, int (*cmp)(const void *, const void *))
{
	if (n)
		qsort(v, n, elem, cmp);
}

bool array_has_u64(const uint64_t *v, size_t n, uint64_t key)
{
	return n && bsearch(&key, v, n, sizeof(*v), cmp_u64);
}
