// SPDX-License-Identifier: MIT
#include "rx/path/recv_slot.h"

/* The slot that holds a datagram of len bytes. */
static size_t slot_for(size_t len)
{
	size_t slot = (len + RECV_SLOT_ROUND - 1) / RECV_SLOT_ROUND * RECV_SLOT_ROUND;

	return slot < RECV_SLOT_ROUND ? RECV_SLOT_ROUND :
	       slot > RECV_SLOT_MAX   ? RECV_SLOT_MAX :
					slot;
}

void recv_slot_init(struct recv_slot *s)
{
	s->size = RECV_SLOT_START;
	s->seen = 0;
	s->reads = 0;
}

void recv_slot_update(struct recv_slot *s, unsigned int n, unsigned int over, size_t longest,
		      size_t fit)
{
	if (over && over * RECV_SLOT_GROW_SHARE > n) {
		s->size = slot_for(longest);
		s->seen = 0;
		s->reads = 0;
		return;
	}
	if (fit > s->seen)
		s->seen = fit;
	if (++s->reads < RECV_SLOT_DECAY_READS)
		return;
	s->size = slot_for(s->seen);
	s->seen = 0;
	s->reads = 0;
}
