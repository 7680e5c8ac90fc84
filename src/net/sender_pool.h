/* SPDX-License-Identifier: MIT */
/*
 * A bounded table of per-sender slots, least recently used first out: the
 * PROXY protocol's connections, one per sender address, at most `cap` of
 * them however many addresses send (forged ones included).
 *
 * The key is the sender's address as 16 bytes (sockaddr_addr16: IPv4 as
 * IPv4-mapped), not its port: a device that sends from a new source port now
 * and then keeps its connection; then 4 bytes the caller chooses (the
 * listener: a header names one). Slots are numbered 0..cap-1, so that the
 * caller keeps its per-connection state in an array of its own.
 *
 * Memory is fixed at sender_pool_new: SENDER_POOL_SLOT_BYTES a slot. The
 * hash is keyed with a random seed, so that addresses chosen to collide
 * cannot be predicted; a chain is at most cap long in any case.
 * Not thread-safe: one owner (the output stage) uses it.
 */
#ifndef SYSLOGRX_SENDER_POOL_H
#define SYSLOGRX_SENDER_POOL_H

#include <stdbool.h>
#include <stdint.h>

#define SENDER_POOL_MAX 65536
/* The key: the address (16 bytes), then a 4-byte tag. */
#define SENDER_POOL_KEY_BYTES 20
/* A slot's entry and its two hash buckets. */
#define SENDER_POOL_SLOT_BYTES 48

struct sender_pool;

/* cap: 1..SENDER_POOL_MAX; NULL with errno set otherwise or without memory. */
struct sender_pool *sender_pool_new(uint32_t cap);
void sender_pool_free(struct sender_pool *p);

/* The slot that holds key, marked used at now_ns; -1 if none does. */
int sender_pool_find(struct sender_pool *p, const uint8_t key[SENDER_POOL_KEY_BYTES],
		     uint64_t now_ns);

/*
 * A slot for key, which no slot holds: a free one if there is one, else the
 * least recently used, taken from its sender (*evicted true, its key in
 * old_key when old_key is not NULL: the caller closes that connection).
 */
uint32_t sender_pool_take(struct sender_pool *p, const uint8_t key[SENDER_POOL_KEY_BYTES],
			  uint64_t now_ns, bool *evicted, uint8_t old_key[SENDER_POOL_KEY_BYTES]);

/* Frees a slot (its connection closed). */
void sender_pool_release(struct sender_pool *p, uint32_t slot);

/* The least recently used slot if it was last used before before_ns, else
 * -1: the caller closes it and releases it, and asks again. */
int sender_pool_oldest_idle(const struct sender_pool *p, uint64_t before_ns);

/* The key a used slot holds. */
const uint8_t *sender_pool_key(const struct sender_pool *p, uint32_t slot);

uint32_t sender_pool_used(const struct sender_pool *p);
uint32_t sender_pool_cap(const struct sender_pool *p);

#endif
