// SPDX-License-Identifier: MIT
/*
 * tcp:HOST:PORT sink: forwards to another syslog server over TCP with RFC 6587
 * octet-counted framing ("LEN SP MSG"), one frame per line the output stage
 * formatted (lines never hold a raw '\n': every format escapes it).
 *
 * While the server is down, write() retries with backoff and does not return:
 * the output stage stalls, the input window fills, the workers stop reading and
 * the kernel drops (counted by the tracer). Before each write the socket is
 * checked for the server's FIN, so a server that closed cleanly (a restart)
 * makes us reconnect first instead of writing into a dead connection.
 *
 * TCP's acknowledgement only says the server's kernel has the bytes: a server
 * that stops with data unread in its socket buffer loses it, and plain syslog
 * over TCP has no application acknowledgement to tell us. So the buffers sent
 * in the last REPLAY_NS before a connection ends are sent again on the next
 * one: at least once, with possible duplicates (counted, logged), rather than
 * a silent loss.
 *
 * tls:HOST:PORT is the same with a TLS session on the connection (RFC 5425:
 * the same octet-counted frames, over TLS; tls.c). A server whose
 * certificate is refused is an outage like any other once running (the
 * window holds, we retry); at start, when the server answers and is
 * refused, syslogrx does not start: that is a setting to fix, not a wait.
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
#include "common/signals.h"
#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "rx/settings/config.h"
#include "rx/sink/sink.h"
#include "rx/sink/tls.h"
#include "common/sockaddr.h"

#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000
#define REPLAY_SLOTS 16
#define REPLAY_NS 1000000000ULL
#define REPLAY_MERGE_NS 100000000ULL
#define REPLAY_MERGE_BYTES (256 << 10)

/* A buffer of frames already sent on the current connection. */
struct sent_buf {
	char *data;
	size_t len, cap;
	uint64_t msgs;
	uint64_t sent_ns;
};

struct sink_tcp {
	struct sink base;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	int fd;
	struct tls_client *tls;	     /* tls:HOST:PORT, else NULL */
	struct tls_session *session; /* with tls, while fd is connected */
	char why[512];		     /* why the last connection attempt failed */
	bool said_down;		     /* the outage is logged already */
	int backoff_ms;
	struct sent_buf cur;		    /* the frames being sent, built from lines */
	struct sent_buf hist[REPLAY_SLOTS]; /* recently sent, oldest at hist_next */
	unsigned int hist_next;
	bool replay;	  /* the last connection ended: resend hist first */
	uint64_t lost_ns; /* when it ended */
	uint64_t reconnects;
	uint64_t resent; /* messages sent again after a connection ended */
};

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
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

static void disconnect(struct sink_tcp *t)
{
	tls_session_end(t->session);
	t->session = NULL;
	close(t->fd);
	t->fd = -1;
}

/* A connection, and with tls a verified session on it; else -errno, and
 * t->why says why. */
static int try_connect(struct sink_tcp *t)
{
	int one = 1, err;

	t->fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->fd < 0) {
		err = -errno;
		snprintf(t->why, sizeof(t->why), "%s", strerror(-err));
		return err;
	}
	setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(t->fd, (struct sockaddr *)&t->addr, t->addrlen)) {
		err = -errno;
		snprintf(t->why, sizeof(t->why), "%s", strerror(-err));
		disconnect(t);
		return err;
	}
	if (!t->tls)
		return 0;
	err = tls_session_start(t->tls, t->fd, &t->session, t->why, sizeof(t->why));
	if (err)
		disconnect(t);
	return err;
}

static int conn_send(struct sink_tcp *t, const char *p, size_t len)
{
	return t->session ? tls_session_send(t->session, p, len) : send_all(t->fd, p, len);
}

/* Connects, retrying with exponential backoff until it works or we must stop. */
static int ensure_connected(struct sink_tcp *t)
{
	while (t->fd < 0) {
		int err = try_connect(t);

		if (!err) {
			if (t->backoff_ms || t->said_down)
				pr_warn("%s: connected again\n", t->base.name);
			sink_set_down(&t->base, false);
			t->said_down = false;
			t->backoff_ms = 0;
			t->reconnects++;
			return 0;
		}
		sink_set_down(&t->base, true);
		if (t->base.abort && flag_get(t->base.abort))
			return err;
		if (!t->backoff_ms && !t->said_down)
			pr_warn("%s: %s; retrying with backoff (%d ms doubling to %d ms), the input "
				"window holds what arrives meanwhile\n",
				t->base.name, t->why, BACKOFF_MIN_MS, BACKOFF_MAX_MS);
		t->backoff_ms = t->backoff_ms ? t->backoff_ms * 2 : BACKOFF_MIN_MS;
		if (t->backoff_ms > BACKOFF_MAX_MS)
			t->backoff_ms = BACKOFF_MAX_MS;
		/* In slices: a stop that gives up (abort) is not kept waiting. */
		for (int left = t->backoff_ms; left > 0 && !(t->base.abort && flag_get(t->base.abort));
		     left -= 50)
			sleep_ms(left < 50 ? left : 50);
	}
	return 0;
}

/* The server never sends us anything: readable means it closed (or reset);
 * over TLS, once the session's own records (tickets) are read. */
static bool peer_closed(struct sink_tcp *t)
{
	struct pollfd p = { .fd = t->fd, .events = POLLIN | POLLRDHUP };

	if (t->session)
		return tls_session_closed(t->session);
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}

/* Lines -> "LEN SP LINE" frames in t->cur. Returns the frames' length. */
static size_t build_frames(struct sink_tcp *t, const char *buf, size_t len)
{
	struct sent_buf *f = &t->cur;
	size_t out = 0;

	f->msgs = 0;
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t ll = nl ? (size_t)(nl - buf) : len;
		size_t need = out + 21 + ll;

		if (array_reserve((void **)&f->data, &f->cap, need, 1, 4096))
			return (size_t)-1;
		out += sprintf(f->data + out, "%zu ", ll);
		memcpy(f->data + out, buf, ll);
		out += ll;
		f->msgs++;
		ll += nl ? 1 : 0;
		buf += ll;
		len -= ll;
	}
	f->len = out;
	return out;
}

/*
 * Keeps what was just sent for a replay. A large buffer swaps into the
 * history (nothing copied); small ones sent close together (low rates) are
 * appended to the newest slot, so the slots always span the last second.
 */
static void remember_sent(struct sink_tcp *t)
{
	struct sent_buf *last = &t->hist[(t->hist_next + REPLAY_SLOTS - 1) % REPLAY_SLOTS];
	struct sent_buf *slot = &t->hist[t->hist_next];
	struct sent_buf old = *slot;
	uint64_t now = mono_ns();

	if (last->len && now - last->sent_ns < REPLAY_MERGE_NS &&
	    last->len + t->cur.len <= REPLAY_MERGE_BYTES) {
		if (last->len + t->cur.len > last->cap) {
			char *p = realloc(last->data, REPLAY_MERGE_BYTES);

			if (!p)
				goto rotate; /* keep it whole in a slot of its own */
			last->data = p;
			last->cap = REPLAY_MERGE_BYTES;
		}
		memcpy(last->data + last->len, t->cur.data, t->cur.len);
		last->len += t->cur.len;
		last->msgs += t->cur.msgs;
		last->sent_ns = now;
		t->cur.len = 0;
		return;
	}
rotate:
	*slot = t->cur;
	slot->sent_ns = now;
	t->cur = old;
	t->cur.len = 0;
	t->hist_next = (t->hist_next + 1) % REPLAY_SLOTS;
}

/* After a connection ended: what it got in its final second. */
static int replay_recent(struct sink_tcp *t)
{
	uint64_t since = t->lost_ns - REPLAY_NS, msgs = 0;

	for (unsigned int k = 0; k < REPLAY_SLOTS; k++) {
		struct sent_buf *h = &t->hist[(t->hist_next + k) % REPLAY_SLOTS];
		int err;

		if (!h->len || h->sent_ns < since)
			continue;
		err = conn_send(t, h->data, h->len);
		if (err)
			return err;
		msgs += h->msgs;
	}
	if (msgs)
		pr_warn("%s: sent again the %llu message(s) of the last second before the "
			"connection ended (the server may have had them unread: duplicates possible)\n",
			t->base.name, (unsigned long long)msgs);
	t->resent += msgs;
	return 0;
}

static void connection_lost(struct sink_tcp *t)
{
	disconnect(t);
	if (!t->replay)
		t->lost_ns = mono_ns();
	t->replay = true;
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
			connection_lost(t);
			continue;
		}
		if (t->replay) {
			err = replay_recent(t);
			if (err) {
				connection_lost(t);
				continue;
			}
			t->replay = false;
		}
		err = conn_send(t, t->cur.data, flen);
		if (!err) {
			remember_sent(t);
			return 0;
		}
		pr_warn("%s: %s; reconnecting and sending the buffer again\n", s->name,
			strerror(-err));
		connection_lost(t);
		if (s->abort && flag_get(s->abort))
			return err;
	}
}

static int tcp_reopen(struct sink *s)
{
	return 0; /* a connection has nothing to rotate */
}

static void tcp_close(struct sink *s)
{
	struct sink_tcp *t = (struct sink_tcp *)s;

	if (t->fd >= 0) {
		/* With TLS, its close_notify first: the server then knows the
		 * stream ended whole. */
		tls_session_end(t->session);
		/* Our half closed, then wait (bounded) for the server's: what we
		 * sent is then in its hands, not in our socket buffer. */
		shutdown(t->fd, SHUT_WR);
		struct pollfd p = { .fd = t->fd, .events = POLLIN };
		char sink_buf[256];

		while (poll(&p, 1, 2000) > 0 && read(t->fd, sink_buf, sizeof(sink_buf)) > 0)
			;
		close(t->fd);
	}
	tls_client_free(t->tls);
	free(t->cur.data);
	for (unsigned int k = 0; k < REPLAY_SLOTS; k++)
		free(t->hist[k].data);
	free(t);
}

static const struct sink_ops tcp_ops = {
	.write = tcp_write,
	.reopen = tcp_reopen,
	.close = tcp_close,
};

struct sink *sink_tcp_open(const struct config *c)
{
	const char *kind = c->output == OUTPUT_TLS ? "tls" : "tcp";
	struct sink_tcp *t = calloc(1, sizeof(*t));
	char host[INET6_ADDRSTRLEN];
	uint8_t a16[16];
	int err;

	if (!t)
		return NULL;
	t->base.ops = &tcp_ops;
	t->base.settle_ns = REPLAY_NS;
	t->fd = -1;
	snprintf(t->base.name, sizeof(t->base.name), "%s:%s", kind, c->output_arg);
	if (parse_host_port(c->output_arg, &t->addr, &t->addrlen)) {
		pr_warn("--output %s:%s: expected %s:HOST:PORT with a numeric address "
			"(127.0.0.1:%s, [::1]:%s)\n",
			kind, c->output_arg, kind, c->output == OUTPUT_TLS ? "6514" : "601",
			c->output == OUTPUT_TLS ? "6514" : "601");
		free(t);
		errno = EINVAL;
		return NULL;
	}
	if (c->output == OUTPUT_TLS) {
		sockaddr_addr16((struct sockaddr *)&t->addr, t->addrlen, a16);
		format_addr16(a16, host, sizeof(host));
		t->tls = tls_client_new(c, host);
		if (!t->tls) {
			err = errno;
			free(t);
			errno = err;
			return NULL;
		}
	}
	/* Connect now so a wrong address shows at start; a server that is not up
	 * yet is not an error: we retry as for any outage. A TLS server that
	 * answers and is not trusted is: no wait mends the setting. */
	err = try_connect(t);
	if (err == -EPROTO) {
		pr_warn("--output %s: %s (see --tls-ca, --tls-name)\n", t->base.name, t->why);
		tcp_close(&t->base);
		errno = EPROTO;
		return NULL;
	}
	if (err) {
		sink_set_down(&t->base, true);
		pr_warn("%s: not reachable yet; will retry (%s)\n", t->base.name, t->why);
		t->said_down = true; /* once: the retries do not say it again */
	}
	return &t->base;
}
