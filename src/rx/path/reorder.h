/* SPDX-License-Identifier: MIT */
/*
 * --ordered: a stage between the workers' input window and the output stage
 * that puts the messages back in the order the kernel received them, while
 * one flow is spread over every socket and thread.
 *
 * Each datagram carries the kernel's arrival stamp (SO_TIMESTAMPNS, in
 * msg_rec.recv_ns), taken on loopback in netif_rx, before the UDP lookup and
 * so before the SK_REUSEPORT program picks a socket. The stage pops the
 * workers' batches (each one socket's messages in arrival order: a sorted
 * run), keeps them in a min-heap of batch heads by stamp (a k-way merge: a
 * message costs a sift over the held batches, not over every held message)
 * and writes a message once it is `hold` old (stamp + hold <= now; in rounds, up to 1 ms
 * early, so that it wakes about once a millisecond): a batch that a worker
 * read late can still be placed if it arrives within the hold. A message that
 * arrives after a later-stamped one was already written is written at once
 * and counted as late. So that the hold never stops the workers, at most half
 * the input window is held: past that the oldest are written early. Every
 * output gets the same ordered stream: the output
 * stage reads the stage's own window as it would the workers'.
 *
 * Backpressure is unchanged: held messages stay in the input window until
 * written, and the stage waits for room in its output window.
 */
#ifndef SYSLOGRX_REORDER_H
#define SYSLOGRX_REORDER_H

#include <pthread.h>
#include <stdint.h>
#include "rx/path/window.h"

struct reorder_stats {
	uint64_t hold_ns;
	uint64_t merged;     /* messages written through the stage */
	uint64_t late;	     /* arrived after a later-stamped message was written */
	uint64_t unstamped;  /* no kernel stamp (recv_ns 0): placed by arrival time */
	uint64_t held_hwm;   /* most messages held at once */
	uint64_t lag_max_ns; /* longest from a kernel stamp to this stage: the
				 * hold that would have placed every message */
};

struct reorder;

/* A stage from `in` (the workers') to `out` (the output stage's; initialised
 * by the caller). force: stop now, holding nothing back. NULL + errno. */
struct reorder *reorder_new(struct window *in, struct window *out, uint64_t hold_ns,
			    const volatile int *force);
int reorder_start(struct reorder *ro);
/* Returns once `in` is closed and drained: everything held is written, then
 * `out` is closed. */
int reorder_join(struct reorder *ro);
void reorder_free(struct reorder *ro);

/* Held messages still count in `in` (their batches are released when
 * written): in-flight is `in` + `out`. */
void reorder_get_stats(struct reorder *ro, struct reorder_stats *out);

#endif
