// SPDX-License-Identifier: MIT
/* net/sender_pool: at most cap senders hold a slot; the least recently used
 * goes first; idle ones are found oldest first; a slot is found again by its
 * sender until it is released. Checked against a model (a plain array in use
 * order) over a long random sequence. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "net/sender_pool.h"

static void key_of(uint32_t n, uint8_t k[SENDER_POOL_KEY_BYTES])
{
	memset(k, 0, SENDER_POOL_KEY_BYTES);
	k[10] = k[11] = 0xff;
	memcpy(k + 12, &n, 4);
}

static void test_lru_eviction(void **state)
{
	struct sender_pool *p = sender_pool_new(3);
	uint8_t k[SENDER_POOL_KEY_BYTES], old[SENDER_POOL_KEY_BYTES], want[SENDER_POOL_KEY_BYTES];
	bool ev;
	uint32_t s1, s2, s3, s4;

	(void)state;
	assert_non_null(p);
	key_of(1, k);
	s1 = sender_pool_take(p, k, 10, &ev, old);
	assert_false(ev);
	key_of(2, k);
	s2 = sender_pool_take(p, k, 20, &ev, old);
	key_of(3, k);
	s3 = sender_pool_take(p, k, 30, &ev, old);
	assert_int_equal(sender_pool_used(p), 3);
	assert_true(s1 != s2 && s2 != s3 && s1 != s3);
	/* 1 used again: 2 is now the oldest, and goes for 4 */
	key_of(1, k);
	assert_int_equal(sender_pool_find(p, k, 40), (int)s1);
	key_of(4, k);
	s4 = sender_pool_take(p, k, 50, &ev, old);
	assert_true(ev);
	key_of(2, want);
	assert_memory_equal(old, want, SENDER_POOL_KEY_BYTES);
	assert_int_equal(s4, s2);
	assert_int_equal(sender_pool_find(p, want, 60), -1);
	assert_int_equal(sender_pool_used(p), 3);
	/* idle: 3 (used at 30) is the oldest now */
	assert_int_equal(sender_pool_oldest_idle(p, 30), -1);
	assert_int_equal(sender_pool_oldest_idle(p, 31), (int)s3);
	sender_pool_release(p, s3);
	assert_int_equal(sender_pool_oldest_idle(p, 41), (int)s1);
	key_of(3, k);
	assert_int_equal(sender_pool_find(p, k, 70), -1);
	assert_int_equal(sender_pool_used(p), 2);
	sender_pool_free(p);
}

static void test_bounds(void **state)
{
	(void)state;
	assert_null(sender_pool_new(0));
	assert_null(sender_pool_new(SENDER_POOL_MAX + 1));
}

/* The model: keys in use order, oldest first. */
struct model {
	uint32_t keys[64], slots[64];
	int n;
};

static int model_find(struct model *m, uint32_t key)
{
	for (int i = 0; i < m->n; i++)
		if (m->keys[i] == key)
			return i;
	return -1;
}

static void model_remove(struct model *m, int i)
{
	memmove(m->keys + i, m->keys + i + 1, (m->n - i - 1) * sizeof(m->keys[0]));
	memmove(m->slots + i, m->slots + i + 1, (m->n - i - 1) * sizeof(m->slots[0]));
	m->n--;
}

static void model_push(struct model *m, uint32_t key, uint32_t slot)
{
	m->keys[m->n] = key;
	m->slots[m->n++] = slot;
}

static void test_against_a_model(void **state)
{
	const uint32_t cap = 17;
	struct sender_pool *p = sender_pool_new(cap);
	struct model m = { 0 };
	uint8_t k[SENDER_POOL_KEY_BYTES], old[SENDER_POOL_KEY_BYTES], want[SENDER_POOL_KEY_BYTES];
	unsigned int seed = 7;
	bool ev;

	(void)state;
	for (uint64_t t = 1; t <= 200000; t++) {
		uint32_t key = rand_r(&seed) % 40, r = rand_r(&seed) % 10;
		int i = model_find(&m, key), slot;

		key_of(key, k);
		if (r == 0 && m.n) { /* release the oldest idle one */
			slot = sender_pool_oldest_idle(p, t);
			assert_int_equal(slot, (int)m.slots[0]);
			sender_pool_release(p, slot);
			model_remove(&m, 0);
			continue;
		}
		slot = sender_pool_find(p, k, t);
		assert_int_equal(slot, i < 0 ? -1 : (int)m.slots[i]);
		if (i >= 0) {
			model_remove(&m, i);
			model_push(&m, key, slot);
			continue;
		}
		slot = sender_pool_take(p, k, t, &ev, old);
		assert_int_equal(ev, m.n == (int)cap);
		if (ev) {
			key_of(m.keys[0], want);
			assert_memory_equal(old, want, SENDER_POOL_KEY_BYTES);
			assert_int_equal(slot, (int)m.slots[0]);
			model_remove(&m, 0);
		}
		model_push(&m, key, slot);
		assert_memory_equal(sender_pool_key(p, slot), k, SENDER_POOL_KEY_BYTES);
		assert_int_equal(sender_pool_used(p), m.n);
	}
	sender_pool_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lru_eviction),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_against_a_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
