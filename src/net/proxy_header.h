/* SPDX-License-Identifier: MIT */
/*
 * The PROXY protocol header (versions 1 and 2 of HAProxy's specification)
 * that opens a TCP connection on behalf of one UDP sender: it names the
 * sender's address and port as the source, and the listener's as the
 * destination, so that the receiving end (syslog-ng's proxied-tcp, SC4S with
 * SC4S_SOURCE_PROXYCONNECT) sees the device, not syslogrx.
 *
 * UDP has no connection: the header says TCP (TCP4/TCP6, v2's STREAM), the
 * transport of the connection it opens, as a TCP load balancer's would.
 */
#ifndef SYSLOGRX_PROXY_HEADER_H
#define SYSLOGRX_PROXY_HEADER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum proxy_version {
	PROXY_NONE = 0,
	PROXY_V1,
	PROXY_V2,
};

/* v1 at its longest ("PROXY TCP6 " two full IPv6 addresses, two ports, CRLF)
 * is 104 bytes (the spec's 107 counts its worst case generously); v2 with two
 * IPv6 addresses 52. */
#define PROXY_HEADER_MAX 108

/* "v1", "v2" -> the version; -EINVAL for anything else. */
int proxy_version_parse(const char *s, enum proxy_version *out);
const char *proxy_version_name(enum proxy_version v);

/*
 * The header for a connection that carries src's datagrams, which came to
 * the listener bound at dst. An IPv4 sender (or an IPv4-mapped one on a
 * dual-stack socket) gives TCP4 / AF_INET, with a wildcard or IPv4-mapped
 * listener written as IPv4; an IPv6 sender gives TCP6 / AF_INET6, with an
 * IPv4 listener written IPv4-mapped. Another family: v1's "PROXY UNKNOWN",
 * v2's LOCAL command (the receiver then uses the connection's own address).
 * Writes at most PROXY_HEADER_MAX bytes; returns the length, 0 if cap is too
 * small or v is PROXY_NONE.
 */
size_t proxy_header(enum proxy_version v, uint8_t *buf, size_t cap, const struct sockaddr *src,
		    socklen_t src_len, const struct sockaddr *dst, socklen_t dst_len);

#endif
