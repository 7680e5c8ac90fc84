// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "common/parse_num.h"

static int parse_scaled(const char *s, uint64_t min, uint64_t max, int allow_suffix, uint64_t *out)
{
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL; /* strtoull would accept "-1" and " 1" */
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (allow_suffix && *end) {
		switch (toupper((unsigned char)*end)) {
		case 'K':
			mult = 1ULL << 10;
			break;
		case 'M':
			mult = 1ULL << 20;
			break;
		case 'G':
			mult = 1ULL << 30;
			break;
		default:
			return -EINVAL;
		}
		end++;
		if (!strcasecmp(end, "B") || !strcasecmp(end, "iB"))
			end += strlen(end);
	}
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	v *= mult;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	return parse_scaled(s, min, max, 0, out);
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	return parse_scaled(s, min, max, 1, out);
}

int parse_seconds(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
