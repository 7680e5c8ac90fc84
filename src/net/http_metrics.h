/* SPDX-License-Identifier: MIT */
/*
 * --metrics ADDR:PORT: GET /metrics in the Prometheus text format, served by
 * net/http_server (one thread of its own), for syslogrx and the tools;
 * with a health callback also /healthz and /readyz (syslogrx's --health
 * serves those alone).
 * The caller's fill callback writes the text on that thread at each scrape;
 * it must only read (relaxed loads, BPF map lookups, getsockopt), never take
 * a lock a receiving thread waits on.
 *
 * Two steps, because of privileges: http_metrics_open() binds (a port below
 * 1024 needs CAP_NET_BIND_SERVICE) before capabilities are dropped;
 * http_metrics_start() starts the thread after, so it runs with none.
 */
#ifndef SYSLOGRX_HTTP_METRICS_H
#define SYSLOGRX_HTTP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include "common/prom_text.h"
#include "common/sockaddr.h"

/* Writes the exposition text; 0, or -errno to answer 500. */
typedef int (*http_metrics_fill_fn)(struct prom_text *p, void *ctx);

/* GET /healthz (ready false) or /readyz (true): writes a few lines of text
 * saying why into buf (len bytes, NUL-terminated) and returns the status,
 * 200 or 503. Called on the server's thread, like the fill callback. */
typedef unsigned int (*http_health_fn)(bool ready, char *buf, size_t len, void *ctx);
#define HTTP_HEALTH_BODY 1024 /* written into the connection's slot */

struct http_metrics;

/* "9464" (127.0.0.1:9464), "127.0.0.1:9464", "[::1]:9464", "0.0.0.0:9464".
 * 0 or -EINVAL. */
int http_metrics_parse(const char *arg, struct sockaddr_storage *addr, socklen_t *len);

/* Binds and listens. NULL + errno, having logged one line naming --metrics
 * (flag is the flag's name for messages, e.g. "--metrics"). */
struct http_metrics *http_metrics_open(const char *flag, const char *arg);
/* Serves on fd, a listening socket handed over by an older process (checked
 * by the hand-over); if it is not bound where arg asks, it is closed and arg
 * bound as http_metrics_open does. */
struct http_metrics *http_metrics_adopt(const char *flag, const char *arg, int fd);
/* The listening socket, to hand over with the receiver's (-1: none). */
int http_metrics_fd(const struct http_metrics *h);
/* Stops accepting (a new process serves the socket now); scrapes already
 * accepted are answered. */
void http_metrics_quiesce(struct http_metrics *h);
/* The address bound ("127.0.0.1:9464"), the port resolved if 0 was asked. */
const char *http_metrics_address(const struct http_metrics *h);
/* Serves /healthz and /readyz from fn too; before http_metrics_start. */
void http_metrics_set_health(struct http_metrics *h, http_health_fn fn, void *ctx);
/* Starts serving (fill NULL: /healthz and /readyz only, --health). 0 or
 * -errno (logged). */
int http_metrics_start(struct http_metrics *h, http_metrics_fill_fn fill, void *ctx);
/* Stops the thread (waiting for a scrape in progress) and closes. NULL ok. */
void http_metrics_close(struct http_metrics *h);

#endif
