// SPDX-License-Identifier: MIT
/* net/proxy_header: the bytes of HAProxy's PROXY protocol specification, written out by
 * hand from the spec (sections 2.1 and 2.2), for each family a sender and a
 * listener can have. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "net/proxy_header.h"

static struct sockaddr_storage v4(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;

	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &a->sin_addr), 1);
	return ss;
}

static struct sockaddr_storage v6(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

	a->sin6_family = AF_INET6;
	a->sin6_port = htons(port);
	assert_int_equal(inet_pton(AF_INET6, ip, &a->sin6_addr), 1);
	return ss;
}

static size_t header(enum proxy_version v, uint8_t *buf, size_t cap, struct sockaddr_storage src,
		     struct sockaddr_storage dst)
{
	return proxy_header(v, buf, cap, (struct sockaddr *)&src, sizeof(src),
			    (struct sockaddr *)&dst, sizeof(dst));
}

static void expect_v1(struct sockaddr_storage src, struct sockaddr_storage dst, const char *want)
{
	uint8_t buf[PROXY_HEADER_MAX];
	size_t n = header(PROXY_V1, buf, sizeof(buf), src, dst);

	assert_int_equal(n, strlen(want));
	assert_memory_equal(buf, want, n);
}

static void test_v1(void **state)
{
	(void)state;
	expect_v1(v4("192.0.2.10", 51000), v4("10.1.2.3", 514),
		  "PROXY TCP4 192.0.2.10 10.1.2.3 51000 514\r\n");
	/* a wildcard listener: its own family's wildcard */
	expect_v1(v4("192.0.2.10", 1), v4("0.0.0.0", 5514),
		  "PROXY TCP4 192.0.2.10 0.0.0.0 1 5514\r\n");
	/* an IPv4 sender on a dual-stack [::] listener is IPv4 on both sides */
	expect_v1(v6("::ffff:192.0.2.10", 65535), v6("::", 514),
		  "PROXY TCP4 192.0.2.10 0.0.0.0 65535 514\r\n");
	expect_v1(v6("::ffff:192.0.2.10", 7), v6("::ffff:127.0.0.1", 514),
		  "PROXY TCP4 192.0.2.10 127.0.0.1 7 514\r\n");
	expect_v1(v6("2001:db8::1", 40000), v6("2001:db8::2", 6514),
		  "PROXY TCP6 2001:db8::1 2001:db8::2 40000 6514\r\n");
	/* the longest one the spec allows fits */
	expect_v1(v6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", 65535),
		  v6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", 65535),
		  "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe "
		  "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe 65535 65535\r\n");
	/* no datagram of an IPv4 sender reaches a listener bound to an IPv6 address */
	expect_v1(v4("192.0.2.10", 1), v6("2001:db8::2", 514), "PROXY UNKNOWN\r\n");
}

static void test_v2(void **state)
{
	static const uint8_t tcp4[] = {
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, /* sig */
		0x21,					     /* version 2, PROXY */
		0x11,					     /* AF_INET, STREAM */
		0x00, 0x0c,				     /* 12 bytes of addresses */
		192,  0,    2,	  10,	10,   1,    2,	  3, /* src, dst */
		0xc7, 0x38, 0x02, 0x02,			     /* 51000, 514 */
	};
	static const uint8_t tcp6_head[] = { 0x21, 0x21, 0x00, 0x24 };
	static const uint8_t local[] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51,
					 0x55, 0x49, 0x54, 0x0a, 0x20, 0x00, 0x00, 0x00 };
	static const uint8_t zero4[4], ports12[] = { 0, 1, 0, 2 };
	uint8_t buf[PROXY_HEADER_MAX];
	size_t n;

	(void)state;
	n = header(PROXY_V2, buf, sizeof(buf), v4("192.0.2.10", 51000), v4("10.1.2.3", 514));
	assert_int_equal(n, sizeof(tcp4));
	assert_memory_equal(buf, tcp4, n);
	/* IPv4-mapped sender on [::]: the same IPv4 form */
	n = header(PROXY_V2, buf, sizeof(buf), v6("::ffff:192.0.2.10", 51000), v6("::", 514));
	assert_int_equal(n, sizeof(tcp4));
	assert_memory_equal(buf, tcp4, 16 + 4);
	assert_memory_equal(buf + 20, zero4, 4);
	n = header(PROXY_V2, buf, sizeof(buf), v6("2001:db8::1", 1), v6("2001:db8::2", 2));
	assert_int_equal(n, 16 + 36);
	assert_memory_equal(buf + 12, tcp6_head, 4);
	assert_int_equal(buf[16], 0x20);
	assert_int_equal(buf[16 + 15], 1);
	assert_int_equal(buf[32 + 15], 2);
	assert_memory_equal(buf + 48, ports12, 4);
	/* no address to give: LOCAL, the receiver uses the connection's own */
	n = header(PROXY_V2, buf, sizeof(buf), v4("192.0.2.10", 1), v6("2001:db8::2", 514));
	assert_int_equal(n, sizeof(local));
	assert_memory_equal(buf, local, n);
}

static void test_short_buffer_and_no_version(void **state)
{
	uint8_t buf[PROXY_HEADER_MAX];

	(void)state;
	assert_int_equal(header(PROXY_V1, buf, 20, v4("192.0.2.10", 1), v4("10.1.2.3", 2)), 0);
	assert_int_equal(header(PROXY_V2, buf, 27, v4("192.0.2.10", 1), v4("10.1.2.3", 2)), 0);
	assert_int_equal(header(PROXY_V2, buf, 28, v4("192.0.2.10", 1), v4("10.1.2.3", 2)), 28);
	assert_int_equal(
		header(PROXY_NONE, buf, sizeof(buf), v4("192.0.2.10", 1), v4("10.1.2.3", 2)), 0);
}

static void test_version_names(void **state)
{
	enum proxy_version v;

	(void)state;
	assert_int_equal(proxy_version_parse("v1", &v), 0);
	assert_int_equal(v, PROXY_V1);
	assert_int_equal(proxy_version_parse("v2", &v), 0);
	assert_int_equal(v, PROXY_V2);
	assert_int_not_equal(proxy_version_parse("2", &v), 0);
	assert_string_equal(proxy_version_name(PROXY_V2), "v2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_short_buffer_and_no_version),
		cmocka_unit_test(test_version_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
