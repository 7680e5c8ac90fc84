/* SPDX-License-Identifier: MIT */
/*
 * Datagrams received per source address, counted by one worker (--senders).
 *
 * A fixed-size open-addressing table, allocated once: a sender is looked up
 * in a window of SENDERS_PROBE slots from its hash; a new sender takes an
 * empty slot of that window or, when none is left, the slot with the
 * smallest count (a heavy sender is not pushed out by a flood of one-message
 * forged addresses). What an evicted slot held is added to `evicted`, so
 *   received = the sum over the slots + evicted_received, to the datagram.
 * Memory: entries x 32 bytes per worker, whatever the traffic.
 *
 * One writer (the owning worker), any number of readers: a reader copies the
 * table between two reads of a sequence count that the writer makes odd
 * while a slot changes hands; a count going up alone needs no retry.
 */
#ifndef SYSLOGRX_SENDERS_H
#define SYSLOGRX_SENDERS_H

#include <stdint.h>

#define SENDERS_PROBE 8

struct sender_slot {
	uint64_t addr[2]; /* 16 bytes, IPv4 mapped (common/sockaddr.h) */
	uint64_t count;	  /* 0: empty */
	uint64_t pad;
};

struct sender_table {
	uint32_t mask;		   /* slots - 1 (a power of two) */
	uint32_t seq;		   /* odd while a slot changes hands */
	uint64_t received;	   /* every datagram counted */
	uint64_t evicted;	   /* slots given to another sender */
	uint64_t evicted_received; /* what those slots held */
	struct sender_slot slots[];
};

/* A table of at least `entries` slots (rounded up to a power of two). */
struct sender_table *sender_table_new(uint32_t entries);
void sender_table_free(struct sender_table *t);
/* The writer: n datagrams from addr. No allocation, no syscall. */
void sender_table_count(struct sender_table *t, const uint8_t addr[16], uint64_t n);

struct sender_table_stats {
	uint64_t received, evicted, evicted_received;
};
/* Any thread: calls fn for each slot in use, from a consistent copy when the
 * writer allows one within a few tries (always once it has stopped). */
int sender_table_read(const struct sender_table *t, struct sender_table_stats *st,
		      int (*fn)(const uint8_t addr[16], uint64_t count, void *ctx), void *ctx);

#endif
