// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/sockaddr.h"
#include "net/proxy_header.h"

/* The v2 signature: "\r\n\r\n\0\r\nQUIT\n". */
static const uint8_t v2_sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
				    0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a };

#define V2_CMD_LOCAL 0x20
#define V2_CMD_PROXY 0x21
#define V2_TCP4 0x11
#define V2_TCP6 0x21
#define V2_UNSPEC 0x00

int proxy_version_parse(const char *s, enum proxy_version *out)
{
	if (!strcmp(s, "v1"))
		*out = PROXY_V1;
	else if (!strcmp(s, "v2"))
		*out = PROXY_V2;
	else
		return -EINVAL;
	return 0;
}

const char *proxy_version_name(enum proxy_version v)
{
	return v == PROXY_V1 ? "v1" : v == PROXY_V2 ? "v2" : "none";
}

/* An endpoint as the header writes it: 16 bytes (IPv4-mapped for IPv4), a
 * port in host order. */
struct endpoint {
	uint8_t a[16];
	uint16_t port;
};

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static bool is_v4(const struct endpoint *e)
{
	return !memcmp(e->a, v4_mapped, sizeof(v4_mapped));
}

static bool is_any6(const struct endpoint *e)
{
	static const uint8_t zero[16];

	return !memcmp(e->a, zero, sizeof(zero));
}

static int endpoint_of(const struct sockaddr *sa, socklen_t len, struct endpoint *e)
{
	struct sockaddr_storage ss = { 0 };

	if (!sa || sockaddr_addr16(sa, len, e->a))
		return -EINVAL;
	memcpy(&ss, sa, len < sizeof(ss) ? len : sizeof(ss));
	e->port = sockaddr_port(&ss);
	return 0;
}

/* Both endpoints in the sender's family: a wildcard "::" listener is
 * "0.0.0.0" for an IPv4 sender; an IPv6 sender keeps dst as 16 bytes (an
 * IPv4 listener as IPv4-mapped, which is what a16 already holds). -EINVAL
 * for an IPv4 sender whose listener has a real IPv6 address (no such
 * datagram can arrive). */
static int same_family(struct endpoint *src, struct endpoint *dst, bool *v4)
{
	*v4 = is_v4(src);
	if (!*v4 || is_v4(dst))
		return 0;
	if (!is_any6(dst))
		return -EINVAL;
	memcpy(dst->a, v4_mapped, sizeof(v4_mapped)); /* 0.0.0.0, mapped */
	return 0;
}

static size_t header_v1(char *buf, size_t cap, const struct endpoint *src,
			const struct endpoint *dst, bool v4, bool known)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = v4 ? AF_INET : AF_INET6;
	int off = v4 ? 12 : 0, n;

	if (!known)
		n = snprintf(buf, cap, "PROXY UNKNOWN\r\n");
	else if (!inet_ntop(af, src->a + off, s, sizeof(s)) ||
		 !inet_ntop(af, dst->a + off, d, sizeof(d)))
		return 0;
	else
		n = snprintf(buf, cap, "PROXY %s %s %s %u %u\r\n", v4 ? "TCP4" : "TCP6", s, d,
			     src->port, dst->port);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static uint8_t *put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
	return p + 2;
}

static size_t header_v2(uint8_t *buf, size_t cap, const struct endpoint *src,
			const struct endpoint *dst, bool v4, bool known)
{
	size_t alen = !known ? 0 : v4 ? 12 : 36, off = v4 ? 12 : 0, asize = 16 - off;
	uint8_t *p = buf;

	if (cap < 16 + alen)
		return 0;
	memcpy(p, v2_sig, sizeof(v2_sig));
	p += sizeof(v2_sig);
	*p++ = known ? V2_CMD_PROXY : V2_CMD_LOCAL;
	*p++ = !known ? V2_UNSPEC : v4 ? V2_TCP4 : V2_TCP6;
	p = put_be16(p, alen);
	if (!known)
		return p - buf;
	memcpy(p, src->a + off, asize);
	p += asize;
	memcpy(p, dst->a + off, asize);
	p += asize;
	p = put_be16(p, src->port);
	p = put_be16(p, dst->port);
	return p - buf;
}

size_t proxy_header(enum proxy_version v, uint8_t *buf, size_t cap, const struct sockaddr *src,
		    socklen_t src_len, const struct sockaddr *dst, socklen_t dst_len)
{
	struct endpoint s, d;
	bool v4 = false, known;

	known = !endpoint_of(src, src_len, &s) && !endpoint_of(dst, dst_len, &d) &&
		!same_family(&s, &d, &v4);
	switch (v) {
	case PROXY_V1:
		return header_v1((char *)buf, cap, &s, &d, v4, known);
	case PROXY_V2:
		return header_v2(buf, cap, &s, &d, v4, known);
	default:
		return 0;
	}
}
