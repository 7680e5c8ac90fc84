/* SPDX-License-Identifier: MIT */
/*
 * The TLS half of the tls:HOST:PORT output (RFC 5425): tcp.c connects and
 * frames, this file puts a verified TLS session (OpenSSL) on the socket.
 * What the files say (CA, certificate, key) is read once, at start, into a
 * context; each connection is a session of that context.
 */
#ifndef SYSLOGRX_SINK_TLS_H
#define SYSLOGRX_SINK_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rx/settings/config.h"

struct tls_client;  /* the context: CA, client certificate, the name to verify */
struct tls_session; /* one connection's */

/* PEM files and the flags that named them (for the errors). ca "" is the
 * system's CAs; cert "" is none (and key with it). */
struct tls_files {
	const char *ca, *cert, *key;
	const char *ca_flag, *cert_flag, *key_flag;
};

/* Reads the files as a TLS client would: 0, or -EINVAL having logged which
 * flag's file is wrong and why (the otlp output checks its own with it:
 * curl would only say so once a collector answers). */
int tls_files_check(const struct tls_files *f);

/*
 * Reads --tls-ca, --tls-cert and --tls-key; host is the HOST of
 * tls:HOST:PORT, the name verified unless --tls-name says another.
 * NULL having logged which flag's file is wrong and why.
 */
struct tls_client *tls_client_new(const struct config *c, const char *host);
void tls_client_free(struct tls_client *tc);

/*
 * The handshake on connected non-blocking socket fd, done by deadline_ns
 * (mono_ns) or given up. 0 and *out, or -EPROTO when the server cannot be
 * trusted (its certificate, its name: *why says which, escaped for a log
 * line), or another -errno: -ETIMEDOUT past the deadline, -ECANCELED once
 * *stop is set (a stop that gave up; NULL: never), else the connection
 * failed (*why says how).
 */
int tls_session_start(struct tls_client *tc, int fd, uint64_t deadline_ns, const volatile int *stop,
		      struct tls_session **out, char *why, size_t whylen);
/* Sends all of p, or -errno: -ETIMEDOUT when the socket took nothing for
 * stall_ms (the server stopped reading), -ECANCELED once *stop is set (a
 * stop that gave up; NULL: never). */
int tls_session_send(struct tls_session *ts, const char *p, size_t len, int stall_ms,
		     const volatile int *stop);
/* 1: the server closed the session (its close_notify), -1: the connection
 * ended without it (a reset, a FIN alone), 0: neither; what it may send besides (TLS 1.3 session tickets) is read
 * and dropped. */
int tls_session_closed(struct tls_session *ts);
/* Sends close_notify (best effort) and frees; the socket stays open. */
void tls_session_end(struct tls_session *ts);

#endif
