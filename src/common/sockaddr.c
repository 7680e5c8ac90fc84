// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/parse_num.h"
#include "common/sockaddr.h"

int parse_host_port(const char *s, struct sockaddr_storage *addr, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *port_s;
	uint64_t port;
	size_t hl;

	memset(addr, 0, sizeof(*addr));
	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		hl = end - s - 1;
		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, hl);
		port_s = end + 2;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = colon - s;
		if (hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, s, hl);
		port_s = colon + 1;
	}
	host[hl] = '\0';
	if (parse_u64(port_s, 0, 65535, &port))
		return -EINVAL;

	if (s[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;

		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)addr;

		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			return -EINVAL;
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
	}
	return 0;
}

/* Decimal digits of v at d, returns the end. */
static char *put_dec(char *d, unsigned int v)
{
	char tmp[10];
	int n = 0;

	do
		tmp[n++] = '0' + v % 10;
	while ((v /= 10));
	while (n)
		*d++ = tmp[--n];
	return d;
}

size_t sockaddr_format(char *buf, size_t cap, const struct sockaddr *sa, socklen_t len)
{
	char tmp[SOCKADDR_STRLEN], *d = tmp;
	size_t n;

	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		const unsigned char *a = (const unsigned char *)&in->sin_addr;

		for (int k = 0; k < 4; k++) {
			d = put_dec(d, a[k]);
			*d++ = k < 3 ? '.' : ':';
		}
		d = put_dec(d, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		*d++ = '[';
		if (!inet_ntop(AF_INET6, &in6->sin6_addr, d, INET6_ADDRSTRLEN))
			return 0;
		d += strlen(d);
		*d++ = ']';
		*d++ = ':';
		d = put_dec(d, ntohs(in6->sin6_port));
	} else {
		return 0;
	}
	n = d - tmp;
	if (n > cap)
		return 0;
	memcpy(buf, tmp, n);
	if (n < cap)
		buf[n] = '\0';
	return n;
}

size_t sockaddr_format_ip(char *buf, size_t cap, const struct sockaddr *sa, socklen_t len)
{
	char tmp[INET6_ADDRSTRLEN], *d = tmp;
	const unsigned char *a4 = NULL;
	size_t n;

	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		a4 = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a6))
			a4 = a6->s6_addr + 12;
		else if (!inet_ntop(AF_INET6, a6, tmp, sizeof(tmp)))
			return 0;
		else
			d += strlen(tmp);
	} else {
		return 0;
	}
	for (int k = 0; a4 && k < 4; k++) {
		d = put_dec(d, a4[k]);
		if (k < 3)
			*d++ = '.';
	}
	n = d - tmp;
	if (n > cap)
		return 0;
	memcpy(buf, tmp, n);
	return n;
}

void format_host_port(const struct sockaddr *sa, char *buf, size_t len)
{
	socklen_t salen = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						      sizeof(struct sockaddr_in);

	if (len && (!sockaddr_format(buf, len, sa, salen) || !memchr(buf, '\0', len)))
		snprintf(buf, len, "?");
}

uint16_t sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static const uint8_t v4_mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

int sockaddr_addr16(const struct sockaddr *sa, socklen_t len, uint8_t out[16])
{
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memcpy(out, v4_mapped_prefix, sizeof(v4_mapped_prefix));
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 0;
	}
	return -EINVAL;
}

void format_addr16(const uint8_t a[16], char *buf, size_t len)
{
	bool v4 = !memcmp(a, v4_mapped_prefix, sizeof(v4_mapped_prefix));

	if (!inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? a + 12 : a, buf, len))
		snprintf(buf, len, "?");
}
