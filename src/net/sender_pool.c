// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "common/clock.h"
#include "net/sender_pool.h"

#define NIL UINT32_MAX

struct entry {
	uint64_t used_ns;
	uint8_t key[SENDER_POOL_KEY_BYTES]; /* after used_ns: no padding */
	uint32_t newer, older;		    /* the LRU list (used) */
	uint32_t chain;			    /* the next in its bucket (used), or in the free list */
};

struct sender_pool {
	struct entry *e;
	uint32_t *bucket;
	uint32_t cap, mask, used;
	uint32_t newest, oldest, free;
	uint64_t seed[2];
};

_Static_assert(sizeof(struct entry) + 2 * sizeof(uint32_t) <= SENDER_POOL_SLOT_BYTES,
	       "SENDER_POOL_SLOT_BYTES is what the header documents");

static uint32_t bucket_of(const struct sender_pool *p, const uint8_t key[SENDER_POOL_KEY_BYTES])
{
	uint64_t a, b, h;
	uint32_t tag;

	memcpy(&a, key, 8);
	memcpy(&b, key + 8, 8);
	memcpy(&tag, key + 16, 4);
	h = (a ^ p->seed[0]) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 32;
	h = (h ^ b ^ p->seed[1]) * 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 29;
	h = (h ^ tag) * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 32;
	return (uint32_t)h & p->mask;
}

struct sender_pool *sender_pool_new(uint32_t cap)
{
	struct sender_pool *p;
	uint32_t n = 1;

	if (!cap || cap > SENDER_POOL_MAX) {
		errno = EINVAL;
		return NULL;
	}
	while (n < cap)
		n <<= 1;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->e = calloc(cap, sizeof(*p->e));
	p->bucket = malloc(n * sizeof(*p->bucket));
	if (!p->e || !p->bucket) {
		sender_pool_free(p);
		errno = ENOMEM;
		return NULL;
	}
	if (getrandom(p->seed, sizeof(p->seed), GRND_NONBLOCK) != sizeof(p->seed))
		p->seed[0] = mono_ns(), p->seed[1] = (uintptr_t)p;
	memset(p->bucket, 0xff, n * sizeof(*p->bucket));
	p->cap = cap;
	p->mask = n - 1;
	p->newest = p->oldest = NIL;
	for (uint32_t i = 0; i < cap; i++)
		p->e[i].chain = i + 1 < cap ? i + 1 : NIL;
	p->free = 0;
	return p;
}

void sender_pool_free(struct sender_pool *p)
{
	if (!p)
		return;
	free(p->e);
	free(p->bucket);
	free(p);
}

static void lru_unlink(struct sender_pool *p, uint32_t i)
{
	struct entry *e = &p->e[i];

	if (e->newer != NIL)
		p->e[e->newer].older = e->older;
	else
		p->newest = e->older;
	if (e->older != NIL)
		p->e[e->older].newer = e->newer;
	else
		p->oldest = e->newer;
}

static void lru_push_newest(struct sender_pool *p, uint32_t i)
{
	struct entry *e = &p->e[i];

	e->newer = NIL;
	e->older = p->newest;
	if (p->newest != NIL)
		p->e[p->newest].newer = i;
	p->newest = i;
	if (p->oldest == NIL)
		p->oldest = i;
}

static void touch(struct sender_pool *p, uint32_t i, uint64_t now_ns)
{
	p->e[i].used_ns = now_ns;
	if (p->newest != i) {
		lru_unlink(p, i);
		lru_push_newest(p, i);
	}
}

int sender_pool_find(struct sender_pool *p, const uint8_t key[SENDER_POOL_KEY_BYTES],
		     uint64_t now_ns)
{
	for (uint32_t i = p->bucket[bucket_of(p, key)]; i != NIL; i = p->e[i].chain) {
		if (!memcmp(p->e[i].key, key, SENDER_POOL_KEY_BYTES)) {
			touch(p, i, now_ns);
			return (int)i;
		}
	}
	return -1;
}

static void chain_unlink(struct sender_pool *p, uint32_t i)
{
	uint32_t *link = &p->bucket[bucket_of(p, p->e[i].key)];

	while (*link != i)
		link = &p->e[*link].chain;
	*link = p->e[i].chain;
}

void sender_pool_release(struct sender_pool *p, uint32_t slot)
{
	chain_unlink(p, slot);
	lru_unlink(p, slot);
	p->e[slot].chain = p->free;
	p->free = slot;
	p->used--;
}

uint32_t sender_pool_take(struct sender_pool *p, const uint8_t key[SENDER_POOL_KEY_BYTES],
			  uint64_t now_ns, bool *evicted, uint8_t old_key[SENDER_POOL_KEY_BYTES])
{
	uint32_t i, b;

	*evicted = p->free == NIL;
	if (*evicted) {
		i = p->oldest;
		if (old_key)
			memcpy(old_key, p->e[i].key, SENDER_POOL_KEY_BYTES);
		sender_pool_release(p, i);
	}
	i = p->free;
	p->free = p->e[i].chain;
	memcpy(p->e[i].key, key, SENDER_POOL_KEY_BYTES);
	b = bucket_of(p, key);
	p->e[i].chain = p->bucket[b];
	p->bucket[b] = i;
	p->e[i].used_ns = now_ns;
	lru_push_newest(p, i);
	p->used++;
	return i;
}

int sender_pool_oldest_idle(const struct sender_pool *p, uint64_t before_ns)
{
	if (p->oldest == NIL || p->e[p->oldest].used_ns >= before_ns)
		return -1;
	return (int)p->oldest;
}

const uint8_t *sender_pool_key(const struct sender_pool *p, uint32_t slot)
{
	return p->e[slot].key;
}

uint32_t sender_pool_used(const struct sender_pool *p)
{
	return p->used;
}

uint32_t sender_pool_cap(const struct sender_pool *p)
{
	return p->cap;
}
