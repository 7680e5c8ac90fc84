/* SPDX-License-Identifier: MIT */
/*
 * src/gen/: the load generator's parts (this pacer, procstat and procmon,
 * the per-second monitor of a receiver). Uses common only.
 *
 * sysloggen's schedule, as pure arithmetic: a run is a list of segments, each
 * with a message count and a length. In a paced segment message j (0-based)
 * is due at seg_start + j * dur_ns / count: an absolute schedule, so lateness
 * never accumulates into drift. An unpaced segment sends as fast as it can,
 * either a count or until its length has passed.
 */
#ifndef SYSLOGRX_PACER_H
#define SYSLOGRX_PACER_H

#include <stdbool.h>
#include <stdint.h>

#define PACE_SEGS_MAX 64
#define PACE_BATCH_MAX 64
#define PACE_UNLIMITED UINT64_MAX

struct pace_seg {
	uint64_t count;	 /* messages; PACE_UNLIMITED: until dur_ns (unpaced) */
	uint64_t dur_ns; /* length; 0 for an unpaced count (as long as it takes) */
	uint64_t rate;	 /* target msgs/s as given (0 = unpaced, or silence) */
	bool paced;	 /* false: as fast as possible */
};

/* Part idx of n split into parts pieces that differ by at most one. */
uint64_t pace_split(uint64_t n, uint32_t parts, uint32_t idx);

/* Offset of message j of a paced segment of count messages over dur_ns. */
uint64_t pace_due_ns(uint64_t j, uint64_t count, uint64_t dur_ns);

/* How many of a paced segment's messages are due by offset t_ns (0..count). */
uint64_t pace_due_by(uint64_t t_ns, uint64_t count, uint64_t dur_ns);

/* Messages per sendmmsg for a sender running at rate msgs/s: rate / 1000,
 * in [1, PACE_BATCH_MAX], i.e. about one call per millisecond. Each wake-up
 * costs ~30 us of system time on a VM, so one per message at 9k/s would burn
 * a third of a core; a 1 ms burst moves any 1 s window by at most 0.1%.
 * PACE_BATCH_MAX when unpaced. */
uint32_t pace_batch(uint64_t count, uint64_t dur_ns, bool paced);

/* "RATExSECS,RATExSECS,...": count = round(RATE * SECS), RATE 0 = silence.
 * Returns the number of segments, or -EINVAL / -ERANGE. */
int pace_parse_profile(const char *s, struct pace_seg *segs, int max);

#endif
