// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rx/path/senders.h"

#define READ_TRIES 8

struct sender_table *sender_table_new(uint32_t entries)
{
	struct sender_table *t;
	uint32_t n = SENDERS_PROBE;

	while (n < entries && n < (1U << 30))
		n <<= 1;
	t = calloc(1, sizeof(*t) + (size_t)n * sizeof(t->slots[0]));
	if (t)
		t->mask = n - 1;
	return t;
}

void sender_table_free(struct sender_table *t)
{
	free(t);
}

/* The two words mixed with murmur3's finaliser: an IPv4 address sits in the
 * high half of the second word, which a plain multiply would never carry
 * down to the low bits that pick the slot. */
static uint32_t hash16(const uint64_t a[2])
{
	uint64_t h = a[0] * 0x9e3779b97f4a7c15ULL ^ a[1];

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

void sender_table_count(struct sender_table *t, const uint8_t addr[16], uint64_t n)
{
	uint64_t a[2];
	uint32_t h, victim = 0;
	uint64_t least = UINT64_MAX;

	memcpy(a, addr, sizeof(a));
	h = hash16(a);
	__atomic_store_n(&t->received, t->received + n, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < SENDERS_PROBE; i++) {
		struct sender_slot *s = &t->slots[(h + i) & t->mask];

		if (s->count && s->addr[0] == a[0] && s->addr[1] == a[1]) {
			__atomic_store_n(&s->count, s->count + n, __ATOMIC_RELAXED);
			return;
		}
		if (s->count < least) {
			least = s->count;
			victim = (h + i) & t->mask;
		}
	}
	/* An empty slot of the window (count 0 is least), or the smallest. */
	struct sender_slot *s = &t->slots[victim];

	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (s->count) {
		__atomic_store_n(&t->evicted, t->evicted + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&t->evicted_received, t->evicted_received + s->count,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&s->addr[0], a[0], __ATOMIC_RELAXED);
	__atomic_store_n(&s->addr[1], a[1], __ATOMIC_RELAXED);
	__atomic_store_n(&s->count, n, __ATOMIC_RELAXED);
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE);
}

int sender_table_read(const struct sender_table *t, struct sender_table_stats *st,
		      int (*fn)(const uint8_t addr[16], uint64_t count, void *ctx), void *ctx)
{
	size_t n = (size_t)t->mask + 1;
	struct sender_slot *copy = calloc(n, sizeof(*copy));
	int err = 0;

	if (!copy)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	for (int tries = 0; tries < READ_TRIES; tries++) {
		uint32_t before = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);

		if (before & 1)
			continue;
		st->received = __atomic_load_n(&t->received, __ATOMIC_RELAXED);
		st->evicted = __atomic_load_n(&t->evicted, __ATOMIC_RELAXED);
		st->evicted_received = __atomic_load_n(&t->evicted_received, __ATOMIC_RELAXED);
		for (size_t i = 0; i < n; i++) {
			copy[i].addr[0] = __atomic_load_n(&t->slots[i].addr[0], __ATOMIC_RELAXED);
			copy[i].addr[1] = __atomic_load_n(&t->slots[i].addr[1], __ATOMIC_RELAXED);
			copy[i].count = __atomic_load_n(&t->slots[i].count, __ATOMIC_RELAXED);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&t->seq, __ATOMIC_RELAXED) == before)
			break;
	}
	for (size_t i = 0; !err && i < n; i++) {
		uint8_t addr[16];

		if (!copy[i].count)
			continue;
		memcpy(addr, copy[i].addr, sizeof(addr));
		err = fn(addr, copy[i].count, ctx);
	}
	free(copy);
	return err;
}
