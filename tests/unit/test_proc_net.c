// SPDX-License-Identifier: MIT
/* The /proc/net/udp{,6} row parser, on lines copied from a 6.18 kernel. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "net/proc_net.h"

/* 127.0.0.1:5514, 832 bytes queued, 17 drops, uid 1000 (x86: little-endian words). */
static const char v4_line[] =
	" 6595: 0100007F:158A 00000000:0000 07 00000000:00000340 00:00000000 00000000  1000        0 13091 2 00000000bece4e97 17        \n";

/* [::1]:5514, 7 drops. */
static const char v6_line[] =
	" 6595: 00000000000000000000000001000000:158A 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 13092 2 000000004d2d616c 7\n";

/* [::ffff:10.1.2.3]:514, a v4-mapped address on a v6 socket, connected. */
static const char v6_mapped_line[] =
	"  514: 0000000000000000FFFF00000302010A:0202 0000000000000000FFFF00000100007F:D431 01 00000000:00001200 00:00000000 00000000     0        0 99 2 0000000000000000 4294967295\n";

static void test_v4(void **state)
{
	struct udp_sock_row r;

	assert_int_equal(proc_net_udp_parse_line(v4_line, AF_INET, &r), 0);
	assert_int_equal(r.family, AF_INET);
	assert_string_equal(r.local, "127.0.0.1:5514");
	assert_int_equal(r.port, 5514);
	assert_int_equal(r.inode, 13091);
	assert_int_equal(r.rx_queue, 0x340);
	assert_int_equal(r.drops, 17);
	assert_int_equal(r.uid, 1000);
}

static void test_v6(void **state)
{
	struct udp_sock_row r;

	assert_int_equal(proc_net_udp_parse_line(v6_line, AF_INET6, &r), 0);
	assert_int_equal(r.family, AF_INET6);
	assert_string_equal(r.local, "[::1]:5514");
	assert_int_equal(r.port, 5514);
	assert_int_equal(r.inode, 13092);
	assert_int_equal(r.rx_queue, 0);
	assert_int_equal(r.drops, 7);
	assert_int_equal(r.uid, 0);
}

static void test_v6_mapped(void **state)
{
	struct udp_sock_row r;

	assert_int_equal(proc_net_udp_parse_line(v6_mapped_line, AF_INET6, &r), 0);
	assert_string_equal(r.local, "[::ffff:10.1.2.3]:514");
	assert_int_equal(r.port, 514);
	assert_int_equal(r.inode, 99);
	assert_int_equal(r.rx_queue, 0x1200);
	assert_int_equal(r.drops, 4294967295ULL);
}

static void test_malformed(void **state)
{
	static const char *const bad_v4[] = {
		"",
		"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n",
		/* a field missing (no drops) */
		" 6595: 0100007F:158A 00000000:0000 07 00000000:00000340 00:00000000 00000000     0        0 13091 2 00000000bece4e97\n",
		/* a field too many */
		" 6595: 0100007F:158A 00000000:0000 07 00000000:00000340 00:00000000 00000000     0        0 13091 2 00000000bece4e97 0 9\n",
		/* non-hex port */
		" 6595: 0100007F:15ZA 00000000:0000 07 00000000:00000340 00:00000000 00000000     0        0 13091 2 00000000bece4e97 0\n",
		/* negative drops */
		" 6595: 0100007F:158A 00000000:0000 07 00000000:00000340 00:00000000 00000000     0        0 13091 2 00000000bece4e97 -1\n",
		/* no colon after the slot */
		" 6595 0100007F:158A 00000000:0000 07 00000000:00000340 00:00000000 00000000     0        0 13091 2 00000000bece4e97 0\n",
		/* inode not decimal */
		" 6595: 0100007F:158A 00000000:0000 07 00000000:00000340 00:00000000 00000000     0        0 13a91 2 00000000bece4e97 0\n",
	};
	struct udp_sock_row r;

	for (size_t i = 0; i < sizeof(bad_v4) / sizeof(bad_v4[0]); i++)
		assert_int_equal(proc_net_udp_parse_line(bad_v4[i], AF_INET, &r), -EINVAL);
	/* A v6 row is not a v4 row, and the other way round. */
	assert_int_equal(proc_net_udp_parse_line(v6_line, AF_INET, &r), -EINVAL);
	assert_int_equal(proc_net_udp_parse_line(v4_line, AF_INET6, &r), -EINVAL);
	assert_int_equal(proc_net_udp_parse_line(v4_line, AF_UNIX, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4),
		cmocka_unit_test(test_v6),
		cmocka_unit_test(test_v6_mapped),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
