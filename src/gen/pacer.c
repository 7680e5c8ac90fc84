// SPDX-License-Identifier: MIT
/* Schedule arithmetic for sysloggen; see gen/pacer.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/clock.h"
#include "gen/pacer.h"
#include "common/parse_num.h"

uint64_t pace_split(uint64_t n, uint32_t parts, uint32_t idx)
{
	if (n == PACE_UNLIMITED)
		return PACE_UNLIMITED;
	return n / parts + (idx < n % parts);
}

uint64_t pace_due_ns(uint64_t j, uint64_t count, uint64_t dur_ns)
{
	/* 128-bit: j * dur_ns overflows 64 bits past ~18 s at 1G msgs */
	return count ? (uint64_t)((unsigned __int128)j * dur_ns / count) : 0;
}

uint64_t pace_due_by(uint64_t t_ns, uint64_t count, uint64_t dur_ns)
{
	unsigned __int128 n;

	if (!dur_ns || t_ns >= dur_ns)
		return count;
	/* due(j) = floor(j * dur / count) <= t  <=>  j < (t + 1) * count / dur */
	n = ((unsigned __int128)(t_ns + 1) * count + dur_ns - 1) / dur_ns;
	return n > count ? count : (uint64_t)n;
}

uint32_t pace_batch(uint64_t count, uint64_t dur_ns, bool paced)
{
	unsigned __int128 rate;

	if (!paced || !dur_ns)
		return PACE_BATCH_MAX;
	rate = (unsigned __int128)count * NSEC_PER_SEC / dur_ns; /* msgs/s */
	rate /= 1000;
	if (rate < 1)
		return 1;
	return rate > PACE_BATCH_MAX ? PACE_BATCH_MAX : (uint32_t)rate;
}

static int parse_seg(char *s, struct pace_seg *seg)
{
	char *x = strchr(s, 'x');
	uint64_t rate;
	double secs;
	int err;

	if (!x)
		return -EINVAL;
	*x = '\0';
	err = parse_u64(s, 0, 100000000, &rate);
	if (!err)
		err = parse_seconds(x + 1, 0.001, 86400 * 365, &secs);
	if (err)
		return err;
	seg->rate = rate;
	seg->paced = true;
	seg->dur_ns = llround(secs * NSEC_PER_SEC);
	seg->count = llround(rate * secs);
	return 0;
}

int pace_parse_profile(const char *s, struct pace_seg *segs, int max)
{
	char buf[1024], *tok, *save;
	int n = 0, err;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return -ERANGE;
		err = parse_seg(tok, &segs[n]);
		if (err)
			return err;
		n++;
	}
	return n ? n : -EINVAL;
}
