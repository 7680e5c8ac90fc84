/* SPDX-License-Identifier: MIT */
/*
 * HOST:PORT, both ways: the one place an address is parsed from a flag or
 * written into a message, a summary or a record key.
 */
#ifndef SYSLOGRX_SOCKADDR_H
#define SYSLOGRX_SOCKADDR_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Longest text sockaddr_format writes: "[v6-address]:65535" and a NUL. */
#define SOCKADDR_STRLEN (INET6_ADDRSTRLEN + 8)

/* "127.0.0.1:5514", "[::1]:5514", "0.0.0.0:514" -> address. -EINVAL if not one. */
int parse_host_port(const char *s, struct sockaddr_storage *addr, socklen_t *len);

/*
 * Writes "1.2.3.4:514" or "[::1]:514" at buf (no NUL when it fills cap
 * exactly; a NUL after it when there is room). Returns the length, 0 for an
 * address of another family or one too short for its family. IPv4 is written
 * without inet_ntop: it is on the per-message path of the json format.
 */
size_t sockaddr_format(char *buf, size_t cap, const struct sockaddr *sa, socklen_t len);

/* The address alone: "1.2.3.4", "2001:db8::1" (an IPv4-mapped IPv6 one as
 * "1.2.3.4"), no NUL added. 0 as sockaddr_format() has it, or when it does not
 * fit cap. At most INET6_ADDRSTRLEN - 1 bytes. */
size_t sockaddr_format_ip(char *buf, size_t cap, const struct sockaddr *sa, socklen_t len);

/* The same for messages and summaries: always a NUL-terminated string, "?"
 * for what is not an IPv4/IPv6 address. */
void format_host_port(const struct sockaddr *sa, char *buf, size_t len);

/*
 * A host as 16 bytes, the form the tracer's per-sender map keys on
 * (include/bpf/tracer.h): IPv6 as is, IPv4 as ::ffff:a.b.c.d. A dual-stack
 * socket's IPv4-mapped sender and a plain IPv4 one come out the same.
 * -EINVAL for another family or a short address.
 */
int sockaddr_addr16(const struct sockaddr *sa, socklen_t len, uint8_t out[16]);
/* "192.0.2.1" for an IPv4-mapped one, "2001:db8::1" for the rest. */
void format_addr16(const uint8_t a[16], char *buf, size_t len);

/* Port of an IPv4/IPv6 address, host order. */
uint16_t sockaddr_port(const struct sockaddr_storage *ss);

#endif
