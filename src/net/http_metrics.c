// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>
#include "common/log.h"
#include "common/parse_num.h"
#include "net/http_metrics.h"

struct http_metrics {
	int fd;	       /* ours until MHD starts on it */
	int listen_fd; /* the listening socket, for a hand-over */
	struct MHD_Daemon *mhd;
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
	if (bind(h->fd, (struct sockaddr *)&addr, len) || listen(h->fd, 64))
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
	MHD_socket fd;

	if (!h || !h->mhd || h->listen_fd < 0)
		return;
	/* MHD stops accepting and gives the socket back; closing our copy
	 * leaves the new process's. */
	fd = MHD_quiesce_daemon(h->mhd);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	h->listen_fd = -1;
}

const char *http_metrics_address(const struct http_metrics *h)
{
	return h->address;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned int status, char *body, size_t len,
			      enum MHD_ResponseMemoryMode mode, const char *type)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* /healthz, /readyz: the callback's verdict and its few lines of why. */
static enum MHD_Result answer_health(struct http_metrics *h, struct MHD_Connection *c, bool ready)
{
	char *body = malloc(HTTP_HEALTH_BODY);
	unsigned int status;

	if (!body)
		return MHD_NO;
	status = h->health_fn(ready, body, HTTP_HEALTH_BODY, h->health_ctx);
	return answer(c, status, body, strlen(body), MHD_RESPMEM_MUST_FREE, "text/plain");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	static char not_found[] = "not found: GET /metrics, /healthz or /readyz\n";
	static char metrics_only[] = "not found: the metrics are at /metrics\n";
	static char health_only[] = "not found: GET /healthz or /readyz\n";
	static char bad_method[] = "method not allowed: GET /metrics, /healthz or /readyz\n";
	static char failed[] = "the metrics could not be written\n";
	struct http_metrics *h = cls;
	struct prom_text p;
	size_t len;
	char *body;
	int err;

	/* MHD names its thread "MHD-single"; ours says what it serves. */
	pthread_setname_np(pthread_self(), h->fill ? "metrics" : "health");

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, bad_method, strlen(bad_method),
			      MHD_RESPMEM_PERSISTENT, "text/plain");
	if (h->health_fn && (!strcmp(url, "/healthz") || !strcmp(url, "/readyz")))
		return answer_health(h, c, !strcmp(url, "/readyz"));
	if (!h->fill) /* --health: nothing else here */
		return answer(c, MHD_HTTP_NOT_FOUND, health_only, strlen(health_only),
			      MHD_RESPMEM_PERSISTENT, "text/plain");
	if (strcmp(url, "/metrics"))
		return answer(c, MHD_HTTP_NOT_FOUND, h->health_fn ? not_found : metrics_only,
			      strlen(h->health_fn ? not_found : metrics_only),
			      MHD_RESPMEM_PERSISTENT, "text/plain");
	prom_text_init(&p);
	err = h->fill(&p, h->ctx);
	body = err ? NULL : prom_text_take(&p, &len);
	if (!body) {
		pr_warn("%s: GET /metrics: %s\n", h->flag, strerror(err ? -err : -p.error));
		prom_text_free(&p);
		return answer(c, MHD_HTTP_INTERNAL_SERVER_ERROR, failed, strlen(failed),
			      MHD_RESPMEM_PERSISTENT, "text/plain");
	}
	return answer(c, MHD_HTTP_OK, body, len, MHD_RESPMEM_MUST_FREE, PROM_TEXT_CONTENT_TYPE);
}

int http_metrics_start(struct http_metrics *h, http_metrics_fill_fn fill, void *ctx)
{
	sigset_t all, old;

	h->fill = fill;
	h->ctx = ctx;
	/* MHD's thread inherits a mask with every signal blocked, so SIGTERM,
	 * SIGINT and SIGHUP reach the program's own threads, never this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* One internal thread polls and answers: scrapes are rare and small. */
	/* MHD_USE_ITC: stopped by its own pipe, never by shutdown() on the
	 * listening socket, which another process may share (a hand-over). */
	/* Anyone who can connect must not hold the scrapes off: a few
	 * connections per client address (the rest are closed at accept), a
	 * bound on them all, each closed after HTTP_METRICS_IDLE_S without a
	 * byte, and a small memory pool each (a request is one line and a few
	 * headers). */
	h->mhd = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC, 0, NULL, NULL,
		on_request, h, MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)HTTP_METRICS_MAX_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned int)HTTP_METRICS_MAX_PER_ADDRESS, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)HTTP_METRICS_IDLE_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		(size_t)HTTP_METRICS_CONNECTION_MEMORY, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->mhd) {
		pr_warn("%s %s: the HTTP server (libmicrohttpd) did not start\n", h->flag,
			h->address);
		return -EIO;
	}
	h->fd = -1; /* MHD's now: MHD_stop_daemon closes it */
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
	if (h->mhd)
		MHD_stop_daemon(h->mhd); /* joins its thread */
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}
