/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP/1.1 server for GET endpoints (--metrics, --health): one
 * thread, one epoll loop, a connection table fixed at start. Whatever a
 * client does, it holds at most one slot for at most HTTP_SERVER_DEADLINE_S
 * from accept: the request must be complete and the answer sent by then
 * (a byte now and then does not extend it), and when the table is full the
 * oldest connection still sending its request is closed to make room.
 * Every answer ends the connection (Connection: close).
 */
#ifndef SYSLOGRX_HTTP_SERVER_H
#define SYSLOGRX_HTTP_SERVER_H

#include <stddef.h>

/* What any client that can connect may hold (docs/security.md): connections
 * in all and per client address, seconds from accept to the last byte of
 * the answer, bytes of request (request line and headers), and bytes of an
 * answer written into the slot itself (larger ones are the handler's). */
#define HTTP_SERVER_MAX_CONNECTIONS 256
#define HTTP_SERVER_MAX_PER_ADDRESS 4
#define HTTP_SERVER_DEADLINE_S 3
#define HTTP_SERVER_REQUEST_MAX 2048
#define HTTP_SERVER_SCRATCH 1024

/* The answer a handler fills. body/len is sent; owned (malloc'd, or NULL)
 * is freed once sent or given up. scratch is the slot's own buffer of
 * scratch_len bytes, for a small body that needs no allocation. */
struct http_reply {
	unsigned int status;
	const char *type;
	const char *body;
	size_t len;
	char *owned;
	char *scratch;
	size_t scratch_len;
};

/* method and path (the query string cut off) of a complete request. Runs on
 * the server's thread; it must not wait on a lock another thread holds long. */
typedef void (*http_handler_fn)(void *ctx, const char *method, const char *path,
				struct http_reply *r);

struct http_server;

/* Serves listen_fd (a listening socket, the server's from now on) on a
 * thread named name, every signal blocked. NULL + errno. */
struct http_server *http_server_start(int listen_fd, const char *name, http_handler_fn fn,
				      void *ctx);
/* Stops accepting and closes the listening socket (another process may
 * serve it now); connections already accepted are answered. */
void http_server_quiesce(struct http_server *s);
/* Stops the thread, closes every connection and the listening socket
 * (unless quiesced). NULL ok. */
void http_server_stop(struct http_server *s);

#endif
