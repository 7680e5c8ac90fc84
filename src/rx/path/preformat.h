/* SPDX-License-Identifier: MIT */
/*
 * Formatting in the workers: a worker formats its batch's lines (json,
 * rfc5424, raw) into the batch's output area before it hands the batch on,
 * so the formatting scales with --threads and the output stage only writes.
 * The output stage still formats what a worker did not: a batch read back
 * from the disk buffer, one whose lines would pass PREFORMAT_MAX_BYTES, and
 * every batch of an async sink (Kafka, OTLP), of --output-rate (paced per
 * message) and of --ordered (merged across batches).
 */
#ifndef SYSLOGRX_PREFORMAT_H
#define SYSLOGRX_PREFORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include "rx/path/window.h"
#include "rx/sink/sink.h"
#include "syslog/format.h"

/* A batch's output area is never larger: a batch whose lines would need more
 * is left for the output stage to format (into its own fixed buffer). */
#define PREFORMAT_MAX_BYTES (4u << 20)

/* --timezone's offset, cached a minute (localtime_r once a minute). */
struct tz_cache {
	int64_t minute; /* -1: none yet */
	long gmtoff;
	struct msg_zone zone; /* what msg_meta.zone points to */
	int64_t wall_hour;    /* offset_at's: the wall-clock hour it last looked up */
	long wall_off;
};

/* What the workers need to format as the output stage would. */
struct preformat {
	enum out_format format;
	unsigned int flags; /* FORMAT_F_* */
	bool parse;	    /* the format reads the fields */
	const struct sink *sink;
};

/* The meta of record r (sender, receive time, socket, listener, zone). */
void preformat_meta(const struct sink *s, struct tz_cache *tz, const struct msg_rec *r,
		    struct msg_meta *meta);

/*
 * Formats every message of b into b->out and counts the malformed ones in
 * b->out_bad (b->formatted then). On ENOMEM, or past PREFORMAT_MAX_BYTES, b
 * stays unformatted (the output stage formats it): never a lost message.
 */
void batch_preformat(const struct preformat *pf, struct tz_cache *tz, struct batch *b);

#endif
