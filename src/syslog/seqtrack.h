/* SPDX-License-Identifier: MIT */
/*
 * Receiver-side loss accounting: finds a sequence marker in each message and
 * keeps, per flow, which sequence numbers arrived.
 *
 * Markers recognised (found with memmem on a fixed token, never reading past
 * the message's len):
 *   sysloggen, RFC 5424:  [seq@32473 run="RUN" flow="F" seq="N"]
 *   sysloggen, RFC 3164:  seq@32473 run=RUN flow=F seq=N<space>
 *   loggen (syslog-ng):   seq: N, thread: F, runid: RUN,
 * and sysloggen's end marker, sent after a flow's last message (K copies):
 *   RFC 5424:  [seq@32473 run="RUN" flow="F" end="N" copies="K"]
 *   RFC 3164:  seq@32473 run=RUN flow=F end=N copies=K<space>
 * RUN is 1..SEQTRACK_RUN_MAX bytes of [A-Za-z0-9._:-] (loggen's: digits),
 * F a decimal < 2^32, N a decimal < 2^64. A marker must be complete up to its
 * terminator ('"]' quoted, ' ' unquoted, ',' for loggen): a marker cut off by
 * the end of the datagram is not counted.
 *
 * A flow is (marker kind, run id, flow id); sysloggen and loggen flows with
 * the same run text are different flows. Sequence numbers start at 0 per flow.
 * Per flow:
 *   received   - distinct sequence numbers seen
 *   duplicates - arrivals of a number already seen
 *   reordered  - first arrivals of a number lower than the highest seen then
 *                (a subset of received)
 *   untracked  - arrivals that could not be classified: a number below the
 *                flow's bitmap window (see below), or any message of a flow
 *                that did not fit in the flow table. Not in received.
 *   missing    - once an end marker arrived (the flow is closed): sent -
 *                received, the tail included; before: (highest seen + 1) -
 *                received, the gaps (a loss after the last number received
 *                is invisible then). Late arrivals counted as untracked may
 *                have filled a gap, so missing can be high by at most
 *                untracked.
 * Every data message with a marker is exactly one of received, duplicates,
 * untracked:  sequenced = received + duplicates + untracked.
 * End markers are not messages of the flow's sequence: they are counted apart
 * (end_markers, and per flow end_markers_lost = K - copies that arrived), so a
 * receiver's datagram count is sequenced + end_markers + unsequenced, and the
 * kernel's drops of a sysloggen run are missing + end_markers_lost.
 *
 * Memory: a flow's bitmap starts small and doubles as its highest number
 * grows, up to window_bits (default 2^24 numbers = 2 MiB) and while the sum
 * over flows stays under memory_max (default 64 MiB). Past that the bitmap
 * is a sliding window over the newest numbers: arrivals that fall below the
 * window are untracked. At most flows_max (default 1024) flows are kept; a
 * flow costs under 256 bytes besides its bitmap. So the whole tracker stays
 * under memory_max + flows_max * 256 bytes + flows_max * 24 bytes of tables
 * (64.3 MiB at the defaults), whatever arrives. No allocation per message: only when a flow
 * is first seen or its bitmap grows.
 *
 * Forged markers: a marker is believed only if its number is at most
 * jump_max (default 2^20) past its flow's highest number (a new flow's first
 * number below jump_max), and an end marker's count likewise and with at most
 * SEQTRACK_COPIES_MAX copies. Any other is implausible: counted as such (and
 * as unsequenced), creating no flow and changing no figure, so one datagram
 * with seq=10^18 is not a gap of 10^18. A sender that can forge markers can
 * still move the figures by up to jump_max per datagram: the accounting is
 * for a lab's own traffic (syslogrx runs it only with --sequences).
 *
 * Not thread-safe: one thread (the output stage) calls it; seqtrack_missing()
 * alone may be read from another.
 */
#ifndef SYSLOGRX_SEQTRACK_H
#define SYSLOGRX_SEQTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEQTRACK_RUN_MAX 32

/* The fixed tokens the scan looks for. */
#define SEQTRACK_TOKEN "seq@32473 run="
#define SEQTRACK_LOGGEN_TOKEN "seq: "

enum seqtrack_kind {
	SEQTRACK_SYSLOGGEN = 0,
	SEQTRACK_LOGGEN = 1,
};

#define SEQTRACK_DEF_WINDOW_BITS (1ULL << 24)
#define SEQTRACK_DEF_MEMORY_MAX (64ULL << 20)
#define SEQTRACK_DEF_FLOWS_MAX 1024
#define SEQTRACK_DEF_JUMP_MAX (1ULL << 20)
#define SEQTRACK_COPIES_MAX 100 /* sysloggen sends at most 100 end markers */

struct seqtrack_opts {
	uint64_t window_bits; /* per flow, rounded up to a power of two; 0 = default */
	uint64_t memory_max;  /* bytes of bitmap over all flows; 0 = default */
	uint32_t flows_max;   /* 0 = default */
	uint64_t jump_max;    /* most a number may jump past its flow's highest; 0 = default */
};

struct seqtrack_totals {
	uint64_t sequenced;   /* messages with a marker */
	uint64_t unsequenced; /* messages without one (observe returned false) */
	uint64_t implausible; /* markers not believed (part of unsequenced) */
	uint64_t received;
	uint64_t missing;
	uint64_t duplicates;
	uint64_t reordered;
	uint64_t untracked;
	uint64_t flows;		   /* flows tracked */
	uint64_t refused;	   /* messages of flows that did not fit in the table
				 * (part of untracked) */
	uint64_t end_markers;	   /* end marker arrivals (not in sequenced) */
	uint64_t end_markers_lost; /* copies announced and not arrived */
	uint64_t flows_closed;	   /* flows whose end marker arrived */
	uint64_t sent;		   /* over closed flows: what their senders sent */
};

struct seqtrack_flow_stats {
	enum seqtrack_kind kind;
	const char *run; /* NUL-terminated, valid during the callback */
	uint32_t flow;
	uint64_t received;
	uint64_t missing;
	uint64_t duplicates;
	uint64_t reordered;
	uint64_t untracked;
	uint64_t max_seq; /* highest number seen */
	bool closed;	  /* an end marker arrived: sent is the sender's count */
	uint64_t sent;
	uint64_t end_markers; /* arrivals */
	uint64_t end_markers_lost;
	uint64_t window_bits; /* current bitmap size */
};

/* A marker found in a message: where it says it came from. */
struct seqtrack_marker {
	enum seqtrack_kind kind;
	uint8_t run_len;
	char run[SEQTRACK_RUN_MAX + 1];
	uint32_t flow;
	bool end; /* an end marker: seq is the count sent, copies K */
	uint64_t seq;
	uint64_t copies;
};

struct seqtrack;

/* NULL + errno on failure. */
struct seqtrack *seqtrack_new(void);
struct seqtrack *seqtrack_new_opts(const struct seqtrack_opts *opts);
void seqtrack_free(struct seqtrack *t);

/* Pure: finds and parses a marker in msg[0..len). Returns true if found. */
bool seqtrack_parse(const char *msg, size_t len, struct seqtrack_marker *m);

/* Accounts one message. Returns true if it carried a marker. */
bool seqtrack_observe(struct seqtrack *t, const char *msg, size_t len);

void seqtrack_totals(const struct seqtrack *t, struct seqtrack_totals *out);

/* The totals' missing, kept up to date as messages are observed. The one
 * read that is safe from another thread while seqtrack_observe runs (a
 * metrics scrape); equal to seqtrack_totals' missing once observing stops. */
uint64_t seqtrack_missing(const struct seqtrack *t);

/* Calls fn for each flow in order of first appearance; stops and returns
 * fn's value when it is non-zero, else returns 0. */
int seqtrack_for_each_flow(const struct seqtrack *t,
			   int (*fn)(const struct seqtrack_flow_stats *f, void *ctx), void *ctx);

#endif
