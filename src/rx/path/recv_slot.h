/* SPDX-License-Identifier: MIT */
/*
 * The size of the slot a worker receives each datagram into, in the batch
 * (rx/path/worker.c): it follows what arrives, so that a batch takes about
 * what its datagrams hold. A datagram longer than its slot is not lost (its
 * rest lands in the worker's overflow and it is copied whole past the
 * slots), so the slot follows the typical datagram, not the longest: it
 * grows at once when more than one datagram in RECV_SLOT_GROW_SHARE of a
 * read did not fit, and otherwise shrinks every RECV_SLOT_DECAY_READS reads
 * to the longest datagram that fit. A sender of an occasional 64 KiB
 * datagram cannot make every batch take 64 KiB per message.
 */
#ifndef SYSLOGRX_RECV_SLOT_H
#define SYSLOGRX_RECV_SLOT_H

#include <stddef.h>

#define RECV_SLOT_START 2048
#define RECV_SLOT_ROUND 256
#define RECV_SLOT_MAX 65536
#define RECV_SLOT_GROW_SHARE 8
#define RECV_SLOT_DECAY_READS 64

struct recv_slot {
	size_t size;	    /* bytes of one slot now */
	size_t seen;	    /* longest datagram that fit since the last change */
	unsigned int reads; /* reads since then */
};

void recv_slot_init(struct recv_slot *s);
/* After a read of n datagrams into slots of s->size: `over` of them were
 * longer (the longest of all: longest), the longest of the rest: fit. */
void recv_slot_update(struct recv_slot *s, unsigned int n, unsigned int over, size_t longest,
		      size_t fit);

#endif
