// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "common/parse_num.h"
#include "net/http_metrics.h"
#include "net/http_server.h"

struct http_metrics {
	int fd;	       /* ours until the server starts on it */
	int listen_fd; /* the listening socket, for a hand-over */
	struct http_server *srv;
	http_metrics_fill_fn fill; /* NULL: no /metrics here (--health) */
	void *ctx;
	http_health_fn health_fn; /* NULL: no /healthz, /readyz */
	void *health_ctx;
	char flag[32];
	char address[SOCKADDR_STRLEN];
};

int http_metrics_parse(const char *arg, struct sockaddr_storage *addr, socklen_t *len)
{
	uint64_t port;
	char buf[32];

	/* A port alone binds loopback: metrics are not for the network unless
	 * the operator says so. */
	if (!parse_u64(arg, 0, 65535, &port)) {
		snprintf(buf, sizeof(buf), "127.0.0.1:%llu", (unsigned long long)port);
		return parse_host_port(buf, addr, len);
	}
	return parse_host_port(arg, addr, len);
}

struct http_metrics *http_metrics_open(const char *flag, const char *arg)
{
	struct sockaddr_storage addr;
	socklen_t len;
	struct http_metrics *h;
	int one = 1, err;

	if (http_metrics_parse(arg, &addr, &len)) {
		pr_warn("%s %s: expected PORT or ADDR:PORT, e.g. 9464 or 127.0.0.1:9464\n", flag,
			arg);
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	snprintf(h->flag, sizeof(h->flag), "%s", flag);
	h->fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0)
		goto fail;
	setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* A backlog past the server's table: a burst of connections waits in
	 * the kernel for the server to take them (closing the oldest of its
	 * own if it must) rather than losing a probe's SYN to a full queue
	 * and its one-second retransmission. */
	if (bind(h->fd, (struct sockaddr *)&addr, len) ||
	    listen(h->fd, 4 * HTTP_SERVER_MAX_CONNECTIONS))
		goto fail;
	len = sizeof(addr);
	if (getsockname(h->fd, (struct sockaddr *)&addr, &len))
		goto fail;
	format_host_port((struct sockaddr *)&addr, h->address, sizeof(h->address));
	h->listen_fd = h->fd;
	return h;
fail:
	err = errno;
	if (err == EACCES && sockaddr_port(&addr) < 1024)
		pr_warn("%s %s: %s (a port below 1024 needs CAP_NET_BIND_SERVICE)\n", flag, arg,
			strerror(err));
	else
		pr_warn("%s %s: %s\n", flag, arg, strerror(err));
	if (h->fd >= 0)
		close(h->fd);
	free(h);
	errno = err;
	return NULL;
}

struct http_metrics *http_metrics_adopt(const char *flag, const char *arg, int fd)
{
	struct sockaddr_storage want, got;
	socklen_t wlen, glen = sizeof(got);
	struct http_metrics *h;

	if (http_metrics_parse(arg, &want, &wlen) ||
	    getsockname(fd, (struct sockaddr *)&got, &glen) || got.ss_family != want.ss_family ||
	    (sockaddr_port(&want) && sockaddr_port(&want) != sockaddr_port(&got))) {
		/* Another address asked for now: bind that one instead. */
		close(fd);
		return http_metrics_open(flag, arg);
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	snprintf(h->flag, sizeof(h->flag), "%s", flag);
	fcntl(fd, F_SETFD, FD_CLOEXEC); /* inherited: not for our own children */
	h->fd = h->listen_fd = fd;
	format_host_port((struct sockaddr *)&got, h->address, sizeof(h->address));
	return h;
}

int http_metrics_fd(const struct http_metrics *h)
{
	return h ? h->listen_fd : -1;
}

void http_metrics_quiesce(struct http_metrics *h)
{
	if (!h || !h->srv || h->listen_fd < 0)
		return;
	/* The server stops accepting and closes its copy, which leaves the
	 * new process's. */
	http_server_quiesce(h->srv);
	h->listen_fd = -1;
}

const char *http_metrics_address(const struct http_metrics *h)
{
	return h->address;
}

/* GET /metrics, /healthz, /readyz on the server's thread. */
_Static_assert(HTTP_HEALTH_BODY <= HTTP_SERVER_SCRATCH, "a health answer fits a slot");

static void fixed(struct http_reply *r, unsigned int status, const char *text)
{
	r->status = status;
	r->body = text;
	r->len = strlen(text);
}

static void on_request(void *ctx, const char *method, const char *path, struct http_reply *r)
{
	static const char not_found[] = "not found: GET /metrics, /healthz or /readyz\n";
	static const char metrics_only[] = "not found: the metrics are at /metrics\n";
	static const char health_only[] = "not found: GET /healthz or /readyz\n";
	static const char bad_method[] = "method not allowed: GET /metrics, /healthz or /readyz\n";
	static const char failed[] = "the metrics could not be written\n";
	struct http_metrics *h = ctx;
	struct prom_text p;
	int err;

	r->type = "text/plain";
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		fixed(r, 405, bad_method);
	} else if (h->health_fn && (!strcmp(path, "/healthz") || !strcmp(path, "/readyz"))) {
		/* Written into the connection's own slot: a probe allocates nothing. */
		r->status = h->health_fn(!strcmp(path, "/readyz"), r->scratch, r->scratch_len,
					 h->health_ctx);
		r->body = r->scratch;
		r->len = strlen(r->scratch);
	} else if (!h->fill) { /* --health: nothing else here */
		fixed(r, 404, health_only);
	} else if (strcmp(path, "/metrics")) {
		fixed(r, 404, h->health_fn ? not_found : metrics_only);
	} else {
		prom_text_init(&p);
		err = h->fill(&p, h->ctx);
		r->owned = err ? NULL : prom_text_take(&p, &r->len);
		if (!r->owned) {
			pr_warn("%s: GET /metrics: %s\n", h->flag, strerror(err ? -err : -p.error));
			prom_text_free(&p);
			fixed(r, 500, failed);
			return;
		}
		r->status = 200;
		r->body = r->owned;
		r->type = PROM_TEXT_CONTENT_TYPE;
	}
}

int http_metrics_start(struct http_metrics *h, http_metrics_fill_fn fill, void *ctx)
{
	h->fill = fill;
	h->ctx = ctx;
	h->srv = http_server_start(h->fd, fill ? "metrics" : "health", on_request, h);
	if (!h->srv) {
		pr_warn("%s %s: the HTTP server did not start: %s\n", h->flag, h->address,
			strerror(errno));
		return -EIO;
	}
	h->fd = -1; /* the server's now: http_server_stop closes it */
	return 0;
}

void http_metrics_set_health(struct http_metrics *h, http_health_fn fn, void *ctx)
{
	h->health_fn = fn;
	h->health_ctx = ctx;
}

void http_metrics_close(struct http_metrics *h)
{
	if (!h)
		return;
	/* Quiesced first: the socket may be another process's too now. */
	http_metrics_quiesce(h);
	http_server_stop(h->srv); /* joins its thread */
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}
