// SPDX-License-Identifier: MIT
/*
 * The balancer's refusals, with real sockets and the real program (root):
 * the map must hold exactly the group's sockets, slot by slot, and a policy
 * name that is not one is an error. leastloaded is tested on its mechanism:
 * with one socket read after every datagram and the other never, the queues
 * it sees must send everything to the one that is read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <poll.h>
#include <unistd.h>
#include "net/balancer.h"
#include "net/socket_group.h"

#define N 4

/* A fresh group per test: a socket leaves a sockarray only when the map is
 * freed, which the kernel does after an RCU grace period, not at close. */
static int setup(void **state)
{
	static struct socket_group g;

	if (socket_group_open(&g, "127.0.0.1:0", N, 0))
		return -1;
	*state = &g;
	return 0;
}

static int teardown(void **state)
{
	socket_group_close(*state);
	return 0;
}

static void cookies_of(const struct socket_group *g, uint64_t *c)
{
	for (unsigned int i = 0; i < g->n; i++)
		c[i] = g->socks[i].cookie;
}

static void test_every_slot_must_hold_its_socket(void **state)
{
	struct socket_group *g = *state;
	struct balancer *b = balancer_open(BALANCE_RANDOM, N);
	uint64_t cookies[N];

	assert_non_null(b);
	cookies_of(g, cookies);
	for (unsigned int i = 0; i < N - 1; i++)
		assert_int_equal(balancer_set_socket(b, i, g->socks[i].fd), 0);
	assert_int_equal(balancer_verify(b, cookies, N), -ENOENT); /* slot 3 empty */

	/* Sockets in the wrong slots: the cookies say so. */
	assert_int_equal(balancer_set_socket(b, 3, g->socks[0].fd),
			 -EBUSY); /* one slot per socket */
	assert_int_equal(balancer_set_socket(b, 0, g->socks[3].fd), 0);
	assert_int_equal(balancer_set_socket(b, 3, g->socks[0].fd), 0);
	assert_int_equal(balancer_verify(b, cookies, N), -EXDEV);

	assert_int_equal(balancer_set_socket(b, 0, g->socks[0].fd), -EBUSY);
	balancer_close(b);
}

static void test_group_and_map_must_agree_on_n(void **state)
{
	struct socket_group *g = *state;
	struct balancer *b = balancer_open(BALANCE_ROUNDROBIN, N - 1);
	uint64_t cookies[N];

	assert_non_null(b);
	cookies_of(g, cookies);
	for (unsigned int i = 0; i < N - 1; i++)
		assert_int_equal(balancer_set_socket(b, i, g->socks[i].fd), 0);
	assert_int_equal(balancer_verify(b, cookies, N), -EXDEV);
	assert_int_equal(balancer_set_socket(b, N - 1, g->socks[N - 1].fd), -EINVAL);
	balancer_close(b);
}

static void test_full_map_verifies_attaches_and_detaches(void **state)
{
	struct socket_group *g = *state;
	struct balancer *b = balancer_open(BALANCE_RANDOM, N);
	uint64_t cookies[N], steered[N] = {}, failures = 1;

	assert_non_null(b);
	cookies_of(g, cookies);
	for (unsigned int i = 0; i < N; i++)
		assert_int_equal(balancer_set_socket(b, i, g->socks[i].fd), 0);
	assert_int_equal(balancer_verify(b, cookies, N), 0);
	assert_int_equal(balancer_attach(b, g->socks[2].fd), 0);
	assert_int_equal(balancer_read(b, steered, &failures), 0);
	assert_int_equal(failures, 0);
	assert_int_equal(balancer_detach(g->socks[1].fd), 0);	    /* any socket of the group */
	assert_int_equal(balancer_detach(g->socks[1].fd), -ENOENT); /* nothing left */
	balancer_close(b);
}

/*
 * Two sockets: socket 1 is read after every datagram, socket 0 never. Sends
 * `count` datagrams one at a time and returns how many reached socket 0.
 * leastloaded keeps at most one there (a tie goes to either, and then socket
 * 0's queue is the longer one for good); random about half.
 */
static unsigned int unread_socket_share(enum balance_policy policy, unsigned int count)
{
	struct socket_group g;
	struct balancer *b;
	uint64_t cookies[2], steered[2] = {}, failures = 1;
	unsigned int on0 = 0;
	char buf[64];
	int tx;

	assert_int_equal(socket_group_open(&g, "127.0.0.1:0", 2, 0), 0);
	b = balancer_open(policy, 2);
	assert_non_null(b);
	cookies_of(&g, cookies);
	for (unsigned int i = 0; i < 2; i++)
		assert_int_equal(balancer_set_socket(b, i, g.socks[i].fd), 0);
	assert_int_equal(balancer_verify(b, cookies, 2), 0);
	assert_int_equal(balancer_attach(b, g.socks[0].fd), 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(tx >= 0);
	for (unsigned int i = 0; i < count; i++) {
		assert_int_equal(sendto(tx, "<13>x", 5, 0, (struct sockaddr *)&g.addr, g.addrlen),
				 5);
		/* Wait until it is queued on one of the two: socket 1 is read,
		 * socket 0 only counted once, by its steered count. Bounded:
		 * a datagram on loopback is queued within the sendto. */
		for (unsigned int spins = 0;; spins++) {
			struct pollfd p = { .fd = g.socks[1].fd, .events = POLLIN };
			uint64_t st[2] = {}, f = 0;

			assert_true(spins < 100000);
			if (poll(&p, 1, 0) == 1) {
				assert_int_equal(recv(g.socks[1].fd, buf, sizeof(buf), 0), 5);
				break;
			}
			assert_int_equal(balancer_read(b, st, &f), 0);
			if (st[0] > on0) {
				on0 = st[0];
				break;
			}
		}
	}
	assert_int_equal(balancer_read(b, steered, &failures), 0);
	assert_int_equal(failures, 0);
	assert_int_equal(steered[0] + steered[1], count);
	assert_int_equal(steered[0], on0);
	close(tx);
	balancer_close(b);
	socket_group_close(&g);
	return on0;
}

static void test_leastloaded_sends_to_the_socket_that_is_read(void **state)
{
	uint64_t q[2];
	struct balancer *b;

	assert_true(unread_socket_share(BALANCE_LEASTLOADED, 400) <= 1);
	/* The same harness with random: about 200 (binomial, sd 10). */
	assert_true(unread_socket_share(BALANCE_RANDOM, 400) > 100);

	b = balancer_open(BALANCE_RANDOM, 2);
	assert_non_null(b);
	assert_int_equal(balancer_read_queued(b, q), -ENOENT); /* leastloaded only */
	balancer_close(b);
}

/* A live resize: slots in selection hold their sockets, the rest are empty;
 * a socket connected away has left the group and no slot takes it. */
static void test_live_prefix_and_connect_away(void **state)
{
	struct socket_group *g = *state;
	struct balancer *b = balancer_open(BALANCE_RANDOM, N);
	uint64_t cookies[N];

	assert_non_null(b);
	assert_int_equal(balancer_slots(b), N);
	cookies_of(g, cookies);
	for (unsigned int i = 0; i < 2; i++)
		assert_int_equal(balancer_set_socket(b, i, g->socks[i].fd), 0);
	assert_int_equal(balancer_verify_live(b, cookies, 2), 0);
	assert_int_equal(balancer_verify_live(b, cookies, 3), -ENOENT);
	assert_int_equal(balancer_verify_live(b, cookies, 1), -EEXIST); /* slot 1 still filled */
	assert_int_equal(balancer_clear_socket(b, 1), 0);
	assert_int_equal(balancer_clear_socket(b, 1), 0); /* already empty: fine */
	assert_int_equal(balancer_verify_live(b, cookies, 1), 0);
	assert_int_equal(balancer_verify_live(b, cookies, N + 1), -EXDEV);

	assert_int_equal(socket_group_queued(g, 3), 0);
	assert_int_equal(socket_group_connect_away(g, 3), 0);
	assert_true(g->socks[3].away);
	assert_int_not_equal(balancer_set_socket(b, 3, g->socks[3].fd), 0);
	assert_int_equal(socket_group_rcu_grace_period(), 0);
	socket_group_close_one(g, 3);
	assert_int_equal(g->socks[3].fd, -1);
	balancer_close(b);
}

static void test_policy_names(void **state)
{
	enum balance_policy p;

	assert_int_equal(balance_policy_from_name("random", &p), 0);
	assert_int_equal(p, BALANCE_RANDOM);
	assert_int_equal(balance_policy_from_name("roundrobin", &p), 0);
	assert_int_equal(p, BALANCE_ROUNDROBIN);
	assert_int_equal(balance_policy_from_name("hash", &p), 0);
	assert_int_equal(p, BALANCE_HASH);
	assert_int_equal(balance_policy_from_name("leastloaded", &p), 0);
	assert_int_equal(p, BALANCE_LEASTLOADED);
	assert_int_equal(balance_policy_from_name("Random", &p), -EINVAL);
	assert_string_equal(balance_policy_name(BALANCE_ROUNDROBIN), "roundrobin");
	errno = 0;
	assert_null(balancer_open(BALANCE_HASH, N)); /* hash means no program */
	assert_int_equal(errno, EINVAL);
	assert_null(balancer_open(BALANCE_RANDOM, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_slot_must_hold_its_socket, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_group_and_map_must_agree_on_n, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_full_map_verifies_attaches_and_detaches, setup,
						teardown),
		cmocka_unit_test(test_leastloaded_sends_to_the_socket_that_is_read),
		cmocka_unit_test_setup_teardown(test_live_prefix_and_connect_away, setup, teardown),
		cmocka_unit_test(test_policy_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
