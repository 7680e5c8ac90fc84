// SPDX-License-Identifier: MIT
/* net/arrival_stamp: once arrival_stamps_wait says so, a datagram to a socket
 * that asked for stamps carries one the kernel took on arrival: older than
 * the clock read just after sendto, which delivers over loopback. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "common/clock.h"
#include "net/arrival_stamp.h"

static void test_after_the_wait_datagrams_are_stamped_on_arrival(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd, on = 1;

	(void)state;
	/* The receiver's sockets ask for stamps first (they keep the kernel's
	 * switch on), then it waits; so does this socket. */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	assert_int_equal(arrival_stamps_wait(5000), 0);

	for (int i = 0; i < 100; i++) {
		char byte = (char)i, ctl[CMSG_SPACE(sizeof(struct timespec))];
		struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
		struct msghdr h = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		uint64_t before = clock_ns(CLOCK_REALTIME), sent, stamp;

		assert_int_equal(sendto(fd, &byte, 1, 0, (struct sockaddr *)&a, sizeof(a)), 1);
		sent = clock_ns(CLOCK_REALTIME);
		assert_int_equal(recvmsg(fd, &h, 0), 1);
		stamp = arrival_stamp(&h);
		assert_true(stamp >= before);
		assert_true(stamp <= sent);
	}
	close(fd);
}

static void test_no_stamp_is_0(void **state)
{
	struct msghdr h = { 0 };

	(void)state;
	assert_int_equal(arrival_stamp(&h), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_after_the_wait_datagrams_are_stamped_on_arrival),
		cmocka_unit_test(test_no_stamp_is_0),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
