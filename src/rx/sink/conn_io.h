/* SPDX-License-Identifier: MIT */
/*
 * What the tcp and tls outputs' connections share, one connection
 * (tcp.c) or one per sender (tcp_pool.c): a send bounded by the stall
 * timeout, the check for a server that closed, the backoff between
 * connection attempts.
 */
#ifndef SYSLOGRX_SINK_CONN_IO_H
#define SYSLOGRX_SINK_CONN_IO_H

#include <stddef.h>
#include "rx/sink/sink.h"
#include "rx/sink/tls.h"

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000

/* Sends all of p on the non-blocking fd, or -errno: -ETIMEDOUT when the
 * socket took nothing for stall_ms (the server's window stays shut),
 * -ECANCELED once a stop gave up (*stop). */
int conn_send_all(int fd, const char *p, size_t len, int stall_ms, const volatile int *stop);

/* The server never sends us anything: readable means it closed (or reset:
 * over TCP that shows in SO_ERROR; over TLS, -1: an end without its
 * close_notify); over TLS, once the session's own records (tickets) are
 * read. */
int conn_peer_closed(int fd, struct tls_session *session);

/* The next wait after a failed attempt (BACKOFF_MIN_MS doubling to
 * BACKOFF_MAX_MS in *backoff_ms), slept in slices so that a stop that gives
 * up (s->abort) is not kept waiting. */
void conn_backoff(int *backoff_ms, const struct sink *s);

#endif
