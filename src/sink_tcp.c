// SPDX-License-Identifier: MIT
/*
 * tcp:HOST:PORT sink: forwards to another syslog server over TCP with RFC 6587
 * octet-counted framing ("LEN SP MSG"), one frame per line the output stage
 * formatted (lines never hold a raw '\n': every format escapes it).
 *
 * While the server is down, write() retries with backoff and does not return:
 * the output stage stalls, the input window fills, the workers stop reading and
 * the kernel drops (counted by the tracer). A buffer whose write failed is sent
 * again whole after reconnecting (at least once). Before each write the socket
 * is checked for the server's FIN, so a server that closed cleanly (a restart)
 * makes us reconnect first instead of writing into a dead connection.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include "log.h"
#include "sink.h"
#include "socket_group.h"

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000
#define FRAME_BUF_BYTES (1 << 20)

struct sink_tcp {
	struct sink base;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int fd;
	int backoff_ms;
	char *frames;		/* one buffer of frames, built from lines */
	size_t frames_cap;
	uint64_t reconnects;
};

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int try_connect(struct sink_tcp *t)
{
	int one = 1;

	t->fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->fd < 0)
		return -errno;
	setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(t->fd, (struct sockaddr *)&t->addr, t->addrlen)) {
		int err = -errno;

		close(t->fd);
		t->fd = -1;
		return err;
	}
	return 0;
}

/* Connects, retrying with exponential backoff until it works or we must stop. */
static int ensure_connected(struct sink_tcp *t)
{
	while (t->fd < 0) {
		int err = try_connect(t);

		if (!err) {
			if (t->backoff_ms)
				pr_warn("%s: connected again\n", t->base.name);
			t->backoff_ms = 0;
			t->reconnects++;
			return 0;
		}
		if (t->base.abort && *t->base.abort)
			return err;
		if (!t->backoff_ms)
			pr_warn("%s: %s; retrying (the input window holds what arrives meanwhile)\n",
				t->base.name, strerror(-err));
		t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : BACKOFF_MIN_MS;
		if (t->backoff_ms > BACKOFF_MAX_MS)
			t->backoff_ms = BACKOFF_MAX_MS;
		sleep_ms(t->backoff_ms);
	}
	return 0;
}

/* The server never sends us anything: readable means it closed (or reset). */
static bool peer_closed(struct sink_tcp *t)
{
	struct pollfd p = { .fd = t->fd, .events = POLLIN | POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}

/* Lines -> "LEN SP LINE" frames. Returns the frames' length. */
static size_t build_frames(struct sink_tcp *t, const char *buf, size_t len)
{
	size_t out = 0;

	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t ll = nl ? (size_t)(nl - buf) : len;
		size_t need = out + 21 + ll;

		if (need > t->frames_cap) {
			size_t cap = t->frames_cap * 2 > need ? t->frames_cap * 2 : need;
			char *p = realloc(t->frames, cap);

			if (!p)
				return (size_t)-1;
			t->frames = p;
			t->frames_cap = cap;
		}
		out += sprintf(t->frames + out, "%zu ", ll);
		memcpy(t->frames + out, buf, ll);
		out += ll;
		ll += nl ? 1 : 0;
		buf += ll;
		len -= ll;
	}
	return out;
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static int tcp_write(struct sink *s, const char *buf, size_t len)
{
	struct sink_tcp *t = (struct sink_tcp *)s;
	size_t flen = build_frames(t, buf, len);
	int err;

	if (flen == (size_t)-1)
		return -ENOMEM;
	for (;;) {
		err = ensure_connected(t);
		if (err)
			return err;
		if (peer_closed(t)) {
			close(t->fd);
			t->fd = -1;
			continue;
		}
		err = send_all(t->fd, t->frames, flen);
		if (!err)
			return 0;
		pr_warn("%s: %s; reconnecting and sending the buffer again\n", s->name,
			strerror(-err));
		close(t->fd);
		t->fd = -1;
		if (s->abort && *s->abort)
			return err;
	}
}

static int tcp_reopen(struct sink *s)
{
	return 0;	/* a connection has nothing to rotate */
}

static void tcp_close(struct sink *s)
{
	struct sink_tcp *t = (struct sink_tcp *)s;

	if (t->fd >= 0) {
		/* Our half closed, then wait (bounded) for the server's: what we
		 * sent is then in its hands, not in our socket buffer. */
		shutdown(t->fd, SHUT_WR);
		struct pollfd p = { .fd = t->fd, .events = POLLIN };
		char sink_buf[256];

		while (poll(&p, 1, 2000) > 0 && read(t->fd, sink_buf, sizeof(sink_buf)) > 0)
			;
		close(t->fd);
	}
	free(t->frames);
	free(t);
}

static const struct sink_ops tcp_ops = {
	.write = tcp_write,
	.reopen = tcp_reopen,
	.close = tcp_close,
};

struct sink *sink_tcp_open(const struct config *c)
{
	struct sink_tcp *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->base.ops = &tcp_ops;
	t->fd = -1;
	snprintf(t->base.name, sizeof(t->base.name), "tcp:%s", c->output_arg);
	if (parse_host_port(c->output_arg, &t->addr, &t->addrlen)) {
		pr_warn("--output tcp:%s: expected tcp:HOST:PORT with a numeric address "
			"(127.0.0.1:601, [::1]:601)\n", c->output_arg);
		free(t);
		errno = EINVAL;
		return NULL;
	}
	/* Connect now so a wrong address shows at start; a server that is not up
	 * yet is not an error: we retry as for any outage. */
	if (try_connect(t))
		pr_warn("%s: not reachable yet; will retry\n", t->base.name);
	return &t->base;
}
