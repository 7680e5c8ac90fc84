// SPDX-License-Identifier: MIT
/*
 * tcp:HOST:PORT and tls:HOST:PORT with --proxy-protocol v1|v2: one
 * connection per sender address, opened with a PROXY header that names the
 * sender (the address and port of the datagram that opened it) and the
 * listener it came by (its address as bound), so that the server (syslog-ng's
 * proxied-tcp, SC4S with SC4S_SOURCE_PROXYCONNECT) takes the device, not
 * syslogrx, as the message's source. Each message is written on its sender's
 * connection, in the order it came: order is kept per sender.
 *
 * An async sink (sink.h): a message stays in the input window (and the disk
 * buffer) until the server's TCP has acknowledged every byte of it (the
 * socket's bytes_acked past the message's end); until then it is held here
 * (pending) and, when its connection ends, sent again first on a new one
 * (counted resent). A connection the server reset may have lost what it
 * acknowledged: those messages are counted uncertain, as the one-connection
 * output counts them. While the server is down, a write retries with
 * backoff and does not return: the window fills, as for one connection.
 *
 * The connections are a bounded pool (net/sender_pool.h): at most
 * --proxy-connections; a new sender takes the least recently used one's
 * place (closed once what it holds is acknowledged), and a connection with
 * nothing to send for --proxy-idle closes. Memory: the pool's slots, a
 * connection's state each, and the pending messages, which the window
 * bounds.
 */
#include <errno.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include "common/clock.h"
#include "common/log.h"
#include "common/poll_until.h"
#include "common/sockaddr.h"
#include "net/proxy_header.h"
#include "net/sender_pool.h"
#include "rx/sink/conn_io.h"
#include "rx/sink/tcp_pool.h"
#include "rx/sink/tls.h"

#define MS_NS 1000000ULL
#define CONNECT_MS 10000
#define CLOSE_MS 2000
/* File descriptors kept for the rest of the program beside the pool's. */
#define FD_RESERVE 256

const char *const pool_close_names[POOL_CLOSE_REASONS] = {
	[POOL_CLOSE_IDLE] = "idle",
	[POOL_CLOSE_FULL] = "full",
	[POOL_CLOSE_LOST] = "lost",
	[POOL_CLOSE_STOP] = "stop",
};

/* A message written (or to be written) on its sender's connection, not yet
 * acknowledged by the server's TCP. */
struct pend {
	struct pend *next;
	void *opaque;
	uint64_t end; /* the connection's bytes_acked once all of it is acknowledged */
	bool sent;    /* written on a connection at least once */
	uint32_t len;
	char data[];
};

struct pconn {
	int fd; /* -1: not connected (a free slot, or one to open again) */
	struct tls_session *session;
	struct sockaddr_storage src; /* the sender, as the header names it */
	socklen_t src_len;
	uint32_t listener;	  /* its index in laddr */
	struct pend *head, *tail; /* oldest first */
	uint64_t acked;		  /* bytes_acked when last looked */
	uint64_t wrote;		  /* tcp: bytes_acked once all written is acknowledged */
	uint64_t progress_ns;	  /* when it last had a byte acknowledged */
	uint64_t conn_msgs;	  /* messages acknowledged on this connection */
	uint64_t open_ns;	  /* when it was opened */
	/* The server ended it within a second of its opening (a connection
	 * limit, a server that refuses the header): its next opens back off
	 * until it makes progress. */
	int lost_backoff_ms;
	bool lost_young;
	uint32_t busy_at; /* its index in busy[] while head != NULL */
	bool used;	  /* the slot holds a sender */
};

struct sink_pool {
	struct sink base;
	enum proxy_version version;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct tls_client *tls;
	struct sender_pool *pool;
	struct pconn *conns;
	uint32_t *busy; /* slots with pending messages */
	uint32_t nr_busy;
	uint32_t cap;
	bool newline; /* --framing newline: a '\n' after each message */
	uint64_t idle_ns;
	int stall_ms;
	double drain_timeout;
	/* the listeners' addresses as bound, for the header's destination */
	const struct listener_spec *listeners;
	unsigned int nr_listeners;
	struct sockaddr_storage *laddr;
	socklen_t *laddr_len;
	char why[512];
	bool said_down;
	int backoff_ms;
	uint64_t lost_said_ns, lost_unsaid; /* the lost connections, said every 10 s */
	bool finished;
	/* Read by a scrape (relaxed atomics). */
	uint64_t open, peak, opens, closes[POOL_CLOSE_REASONS];
};

static const struct sink_ops pool_ops;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The socket's bytes the server's TCP acknowledged so far (a count that
 * the end of each message written is compared with). */
static uint64_t bytes_acked(int fd)
{
	struct tcp_info ti = { 0 };
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
	    len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof(ti.tcpi_bytes_acked))
		return 0;
	return ti.tcpi_bytes_acked;
}

/*
 * Where the acknowledged count will be once everything written on c is
 * (len: the bytes just written). Over TCP we count what we wrote from the
 * count at the connection's start. Over TLS the library writes records of
 * its own: the unacknowledged bytes (SIOCOUTQ) added to the acknowledged
 * count, read again until no acknowledgement came in between (one that did
 * would carry the mark past all that was written: never reached).
 */
static uint64_t acked_mark(struct pconn *c, size_t len)
{
	uint64_t a1 = 0;
	int outq = 0;

	if (!c->session)
		return c->wrote += len;
	for (int i = 0; i < 16; i++) {
		a1 = bytes_acked(c->fd);
		if (ioctl(c->fd, SIOCOUTQ, &outq) || outq < 0)
			outq = 0;
		if (bytes_acked(c->fd) == a1)
			break;
	}
	return a1 + (uint64_t)outq;
}

static int send_all(struct sink_pool *t, struct pconn *c, const char *p, size_t len)
{
	if (c->session)
		return tls_session_send(c->session, p, len, t->stall_ms, t->base.abort);
	return conn_send_all(c->fd, p, len, t->stall_ms, t->base.abort);
}

static void busy_add(struct sink_pool *t, struct pconn *c)
{
	c->busy_at = t->nr_busy;
	t->busy[t->nr_busy++] = c - t->conns;
}

static void busy_del(struct sink_pool *t, struct pconn *c)
{
	uint32_t last = t->busy[--t->nr_busy];

	t->busy[c->busy_at] = last;
	t->conns[last].busy_at = c->busy_at;
}

static void disconnect(struct sink_pool *t, struct pconn *c, enum pool_close why)
{
	if (c->fd < 0)
		return;
	tls_session_end(c->session);
	c->session = NULL;
	close(c->fd);
	c->fd = -1;
	sink_count(&t->closes[why], 1);
	__atomic_fetch_sub(&t->open, 1, __ATOMIC_RELAXED);
}

/* A connection for c's sender, its PROXY header first; -errno with t->why. */
static int try_connect(struct sink_pool *t, struct pconn *c)
{
	uint64_t deadline = mono_ns() + CONNECT_MS * MS_NS;
	uint8_t hdr[PROXY_HEADER_MAX];
	socklen_t elen = sizeof(int);
	int one = 1, err = 0, fd;
	size_t n;

	fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(t->why, sizeof(t->why), "%s", strerror(errno));
		return -errno;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&t->addr, t->addrlen) && errno != EINPROGRESS)
		err = -errno;
	else if ((err = poll_until_unless(fd, POLLOUT, deadline, t->base.abort)) > 0)
		err = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) ? -errno : -err;
	if (err) {
		snprintf(t->why, sizeof(t->why), "%s",
			 err == -ETIMEDOUT ? "no answer to the connection in time" :
			 err == -ECANCELED ? "the stop gave up" :
					     strerror(-err));
		close(fd);
		return err;
	}
	c->fd = fd;
	if (__atomic_add_fetch(&t->open, 1, __ATOMIC_RELAXED) > t->peak)
		__atomic_store_n(&t->peak, t->open, __ATOMIC_RELAXED);
	sink_count(&t->opens, 1);
	if (t->tls) {
		err = tls_session_start(t->tls, fd, deadline, t->base.abort, &c->session, t->why,
					sizeof(t->why));
		if (err) {
			disconnect(t, c, POOL_CLOSE_LOST);
			return err;
		}
	}
	n = proxy_header(t->version, hdr, sizeof(hdr), (struct sockaddr *)&c->src, c->src_len,
			 (struct sockaddr *)&t->laddr[c->listener], t->laddr_len[c->listener]);
	c->wrote = bytes_acked(fd); /* nothing of ours sent yet */
	err = send_all(t, c, (const char *)hdr, n);
	if (err) {
		snprintf(t->why, sizeof(t->why), "the PROXY header: %s", strerror(-err));
		disconnect(t, c, POOL_CLOSE_LOST);
		return err;
	}
	acked_mark(c, n);
	c->acked = bytes_acked(fd);
	c->progress_ns = c->open_ns = mono_ns();
	c->conn_msgs = 0;
	return 0;
}

/* Connects c, retrying with backoff until it works or a stop gives up. */
static int ensure_connected(struct sink_pool *t, struct pconn *c)
{
	while (c->fd < 0) {
		int err = try_connect(t, c);

		if (!err) {
			sink_set_down(&t->base, false);
			if (t->said_down)
				pr_warn("%s: connected again\n", t->base.name);
			t->said_down = false;
			t->backoff_ms = 0;
			return 0;
		}
		sink_set_down(&t->base, true);
		if (sink_aborted(&t->base))
			return err;
		if (!t->said_down)
			pr_warn("%s: %s; retrying with backoff (%d ms doubling to %d ms), the input "
				"window holds what arrives meanwhile\n",
				t->base.name, t->why, BACKOFF_MIN_MS, BACKOFF_MAX_MS);
		t->said_down = true;
		conn_backoff(&t->backoff_ms, &t->base);
	}
	return 0;
}

/*
 * c's connection is given up (why: the server ended it, a send failed, it
 * stalled), said at most every 10 s. Its pending messages are sent again
 * on the next one; a reset may have dropped what it acknowledged too:
 * counted uncertain.
 */
static void connection_lost(struct sink_pool *t, struct pconn *c, bool aborted, const char *why)
{
	socklen_t elen = sizeof(int);
	uint64_t now = mono_ns();
	int err = 0;

	if (c->fd < 0)
		return;
	if (!getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &elen) && err == ECONNRESET)
		aborted = true;
	if (aborted && c->conn_msgs)
		sink_count(&t->base.uncertain, c->conn_msgs);
	if (now - c->open_ns < 1000 * MS_NS)
		c->lost_young = true;
	disconnect(t, c, POOL_CLOSE_LOST);
	t->lost_unsaid++;
	if (t->lost_said_ns && now - t->lost_said_ns < 10000 * MS_NS)
		return;
	pr_warn("%s: %llu sender connection(s) given up (the last: %s); reconnecting and sending "
		"again what was not acknowledged (syslogrx_proxy_closes_total{reason=\"lost\"}; "
		"what a reset connection had acknowledged: output_uncertain)\n",
		t->base.name, (unsigned long long)t->lost_unsaid, why);
	t->lost_said_ns = now;
	t->lost_unsaid = 0;
}

/* Writes from p on (p NULL: every pending message) on c's connection,
 * opening it first when needed (then every pending one is written, the ones
 * sent before counted resent). */
static int write_from(struct sink_pool *t, struct pconn *c, struct pend *p)
{
	for (;;) {
		struct pend *q;
		bool fresh;
		int err;

		/* a server that closed since: a new connection, not a write into
		 * the old one */
		if (c->fd >= 0 && (err = conn_peer_closed(c->fd, c->session)))
			connection_lost(t, c, err < 0, "the server closed it");
		fresh = c->fd < 0;

		if (fresh && c->lost_young)
			conn_backoff(&c->lost_backoff_ms, &t->base);
		err = ensure_connected(t, c);
		if (err)
			return err;
		/* a new connection: everything not acknowledged, in order */
		q = fresh || !p ? c->head : p;
		for (; q; q = q->next) {
			if (q != p && q->sent)
				sink_count(&t->base.resent, 1);
			err = send_all(t, c, q->data, q->len);
			if (err)
				break;
			q->sent = true;
			q->end = acked_mark(c, q->len);
		}
		if (!err)
			return 0;
		connection_lost(t, c, err == -ECONNRESET,
				err == -ETIMEDOUT ? "stalled: the server took nothing for "
						    "--stall-timeout" :
						    strerror(-err));
		if (sink_aborted(&t->base))
			return err;
		p = NULL;
	}
}

/* Releases c's messages its server acknowledged; a connection that ended
 * or stalled is opened again and sent what it had not acknowledged.
 * Returns how many were released. */
static int serve(struct sink_pool *t, struct pconn *c, uint64_t now)
{
	int done = 0, closed;
	uint64_t acked;

	if (c->fd >= 0 && (closed = conn_peer_closed(c->fd, c->session)))
		connection_lost(t, c, closed < 0, "the server closed it");
	if (c->fd < 0) {
		if (write_from(t, c, NULL))
			return 0;
		now = mono_ns();
	}
	acked = bytes_acked(c->fd);
	if (acked != c->acked) {
		c->acked = acked;
		c->progress_ns = now;
	}
	while (c->head && c->head->sent && c->head->end <= acked) {
		struct pend *p = c->head;

		c->head = p->next;
		if (!c->head)
			c->tail = NULL;
		c->conn_msgs++;
		t->base.done(t->base.done_ctx, p->opaque, SINK_DELIVERED);
		free(p);
		done++;
	}
	if (done) {
		c->lost_young = false;
		c->lost_backoff_ms = 0;
	}
	if (!c->head) {
		busy_del(t, c);
		return done;
	}
	if (now - c->progress_ns > (uint64_t)t->stall_ms * MS_NS) {
		connection_lost(t, c, false,
				"stalled: the server acknowledged nothing for --stall-timeout");
	}
	return done;
}

/* Waits until c holds nothing unacknowledged (or a stop gives up). */
static void settle(struct sink_pool *t, struct pconn *c)
{
	while (c->head && !sink_aborted(&t->base)) {
		if (!serve(t, c, mono_ns()) && c->head)
			sleep_ms(1);
	}
}

/* Gives back every message c holds, undelivered (a stop that gave up). */
static void give_back(struct sink_pool *t, struct pconn *c)
{
	if (!c->head)
		return;
	busy_del(t, c);
	while (c->head) {
		struct pend *p = c->head;

		c->head = p->next;
		t->base.done(t->base.done_ctx, p->opaque, SINK_UNDELIVERED);
		free(p);
	}
	c->tail = NULL;
}

/* Closes a sender's connection and frees its slot. */
static void retire(struct sink_pool *t, uint32_t slot, enum pool_close why)
{
	struct pconn *c = &t->conns[slot];

	settle(t, c);
	give_back(t, c);
	disconnect(t, c, why);
	c->used = false;
}

static uint32_t listener_of(const struct sink_pool *t, const char *name)
{
	if (name)
		for (unsigned int i = 0; i < t->nr_listeners; i++)
			if (!strcmp(t->listeners[i].name, name))
				return i;
	return 0;
}

/* The sender's slot, taking the least recently used one's when full. */
static struct pconn *conn_for(struct sink_pool *t, const struct msg_meta *meta)
{
	static const struct sockaddr_storage none = { .ss_family = AF_UNSPEC };
	const struct sockaddr *src = meta->src ? meta->src : (const struct sockaddr *)&none;
	socklen_t src_len = meta->src ? meta->src_len : sizeof(none);
	uint64_t now = mono_ns();
	uint8_t key[SENDER_POOL_KEY_BYTES] = { 0 };
	uint32_t listener = listener_of(t, meta->listener);
	struct pconn *c;
	bool evicted;
	int slot;

	/* the sender and the listener: a header names both */
	sockaddr_addr16(src, src_len, key);
	memcpy(key + 16, &listener, sizeof(listener));
	slot = sender_pool_find(t->pool, key, now);
	if (slot >= 0)
		return &t->conns[slot];
	slot = (int)sender_pool_take(t->pool, key, now, &evicted, NULL);
	c = &t->conns[slot];
	if (evicted || c->used)
		retire(t, slot, POOL_CLOSE_FULL);
	memset(&c->src, 0, sizeof(c->src));
	memcpy(&c->src, src, src_len < sizeof(c->src) ? src_len : sizeof(c->src));
	c->src_len = src_len;
	c->listener = listener;
	c->used = true;
	c->lost_young = false; /* a new sender: no backoff of the last one's */
	c->lost_backoff_ms = 0;
	return c;
}

static int pool_produce(struct sink *s, const char *msg, size_t len, const char *key, size_t keylen,
			const struct msg_meta *meta, void *opaque)
{
	struct sink_pool *t = (struct sink_pool *)s;
	struct pconn *c = conn_for(t, meta);
	struct pend *p = malloc(sizeof(*p) + len + 1);

	if (!p)
		return -EAGAIN; /* the window's batches complete and free room */
	*p = (struct pend){ .opaque = opaque, .len = len + t->newline };
	memcpy(p->data, msg, len);
	if (t->newline)
		p->data[len] = '\n';
	if (!c->head) {
		busy_add(t, c);
		c->progress_ns = mono_ns(); /* a stall counts from its first wait */
	}
	if (c->tail)
		c->tail->next = p;
	else
		c->head = p;
	c->tail = p;
	/* A stop that gave up: it comes back undelivered from drain. */
	write_from(t, c, p);
	return 0;
}

static void close_idle(struct sink_pool *t, uint64_t now)
{
	int slot;

	if (now < t->idle_ns)
		return;
	while ((slot = sender_pool_oldest_idle(t->pool, now - t->idle_ns)) >= 0) {
		if (t->conns[slot].head)
			return; /* it holds messages: not idle; served below */
		retire(t, (uint32_t)slot, POOL_CLOSE_IDLE);
		sender_pool_release(t->pool, (uint32_t)slot);
	}
}

static int pool_poll(struct sink *s, int timeout_ms)
{
	struct sink_pool *t = (struct sink_pool *)s;
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * MS_NS;
	int done = 0;

	for (;;) {
		uint64_t now = mono_ns();

		/* backwards: serve() takes an emptied slot out by swapping the
		 * last one in, and that one was served already */
		for (uint32_t i = t->nr_busy; i-- > 0 && !sink_aborted(s);)
			done += serve(t, &t->conns[t->busy[i]], now);
		close_idle(t, now);
		if (done || !t->nr_busy || now >= deadline || sink_aborted(s))
			return done;
		sleep_ms(1);
	}
}

/* At the stop: waits for the acknowledgements, up to --drain-timeout; what
 * is left comes back undelivered (saved to the disk buffer, or counted). */
static uint64_t pool_drain(struct sink *s)
{
	struct sink_pool *t = (struct sink_pool *)s;
	uint64_t deadline = mono_ns() + (uint64_t)(t->drain_timeout * 1e9);
	uint64_t left = 0;

	while (t->nr_busy && mono_ns() < deadline && !sink_aborted(s))
		pool_poll(s, 10);
	for (uint32_t i = 0; i < t->cap; i++)
		for (struct pend *p = t->conns[i].head; p; p = p->next)
			left++;
	if (left)
		sink_say_unacknowledged(s, left, "message(s)", t->drain_timeout);
	while (t->nr_busy)
		give_back(t, &t->conns[t->busy[t->nr_busy - 1]]);
	return 0;
}

/*
 * Every connection's end: our FIN, then a bounded wait for the server's.
 * Its FIN with nothing of ours unacknowledged says it read it all; a reset
 * or no answer in time: what it acknowledged on that connection may not
 * have been read, counted uncertain. Idempotent.
 */
static void pool_finish(struct sink *s)
{
	struct sink_pool *t = (struct sink_pool *)s;
	uint64_t deadline = mono_ns() + CLOSE_MS * MS_NS, unsure = 0;
	char buf[256];

	if (t->finished)
		return;
	t->finished = true;
	for (uint32_t i = 0; i < t->cap; i++) {
		struct pconn *c = &t->conns[i];

		if (c->fd < 0)
			continue;
		tls_session_end(c->session);
		c->session = NULL;
		shutdown(c->fd, SHUT_WR);
	}
	for (uint32_t i = 0; i < t->cap; i++) {
		struct pconn *c = &t->conns[i];
		bool clean = false;
		ssize_t n;

		if (c->fd < 0)
			continue;
		while (poll_until_unless(c->fd, POLLIN, deadline, s->abort) > 0) {
			n = read(c->fd, buf, sizeof(buf));
			if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
				continue;
			clean = !n;
			break;
		}
		if (!clean)
			unsure += c->conn_msgs;
		disconnect(t, c, POOL_CLOSE_STOP);
	}
	if (!unsure)
		return;
	sink_count(&s->uncertain, unsure);
	pr_warn("stop: %s: %llu message(s) acknowledged may not have been read: a "
		"connection ended without the server's close (counted: output_uncertain)\n",
		s->name, (unsigned long long)unsure);
}

static void pool_close(struct sink *s)
{
	struct sink_pool *t = (struct sink_pool *)s;

	pool_finish(s);
	for (uint32_t i = 0; i < t->cap; i++)
		give_back(t, &t->conns[i]);
	tls_client_free(t->tls);
	sender_pool_free(t->pool);
	free(t->conns);
	free(t->busy);
	free(t->laddr);
	free(t->laddr_len);
	free(t);
}

static int pool_reopen(struct sink *s)
{
	return 0; /* connections have nothing to rotate */
}

static const struct sink_ops pool_ops = {
	.reopen = pool_reopen,
	.finish = pool_finish,
	.close = pool_close,
	.produce = pool_produce,
	.poll = pool_poll,
	.drain = pool_drain,
};

/* A descriptor per connection: the soft limit raised to the hard one when
 * the pool needs it; -EMFILE when even that is too few. */
static int room_for(uint32_t cap)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NOFILE, &r))
		return -errno;
	if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < cap + FD_RESERVE) {
		r.rlim_cur = r.rlim_max;
		if (r.rlim_max != RLIM_INFINITY && r.rlim_max < cap + FD_RESERVE)
			return -EMFILE;
		if (setrlimit(RLIMIT_NOFILE, &r))
			return -errno;
	}
	return 0;
}

static int parse_listeners(struct sink_pool *t, const struct config *c)
{
	t->listeners = c->listeners;
	t->nr_listeners = c->nr_listeners ? c->nr_listeners : 1;
	t->laddr = calloc(t->nr_listeners, sizeof(*t->laddr));
	t->laddr_len = calloc(t->nr_listeners, sizeof(*t->laddr_len));
	if (!t->laddr || !t->laddr_len)
		return -ENOMEM;
	for (unsigned int i = 0; i < t->nr_listeners; i++) {
		const char *a = c->nr_listeners ? c->listeners[i].addr : c->listen;

		if (parse_host_port(a, &t->laddr[i], &t->laddr_len[i]))
			t->laddr_len[i] = 0; /* the header says UNKNOWN / LOCAL */
	}
	return 0;
}

struct sink *sink_tcp_pool_open(const struct config *c)
{
	const char *kind = c->output == OUTPUT_TLS ? "tls" : "tcp";
	struct sink_pool *t = calloc(1, sizeof(*t));
	char host[INET6_ADDRSTRLEN];
	uint8_t a16[16];
	int err;

	/* docs/outputs.md gives a slot's bytes: its connection, its busy[]
	 * entry, its sender_pool entry. */
	_Static_assert(sizeof(struct pconn) + sizeof(uint32_t) + SENDER_POOL_SLOT_BYTES <= 276,
		       "a pool slot outgrew what docs/outputs.md says");
	if (!t)
		return NULL;
	t->base.ops = &pool_ops;
	t->base.resends = true;
	t->version = c->proxy.version;
	t->cap = c->proxy.connections;
	t->idle_ns = (uint64_t)(c->proxy.idle * 1e9);
	t->stall_ms = (int)(c->stall_timeout * 1000);
	t->drain_timeout = c->drain_timeout;
	t->newline = config_framing(c) == FRAMING_NEWLINE;
	snprintf(t->base.name, sizeof(t->base.name), "%s:%s", kind, c->output_arg);
	t->pool = sender_pool_new(t->cap);
	t->conns = calloc(t->cap, sizeof(*t->conns));
	t->busy = calloc(t->cap, sizeof(*t->busy));
	err = !t->pool || !t->conns || !t->busy ? -ENOMEM : parse_listeners(t, c);
	for (uint32_t i = 0; !err && i < t->cap; i++)
		t->conns[i].fd = -1;
	if (!err && parse_host_port(c->output_arg, &t->addr, &t->addrlen)) {
		pr_warn("--output %s: expected %s:HOST:PORT with a numeric address\n", t->base.name,
			kind);
		err = -EINVAL;
	}
	if (!err && (err = room_for(t->cap)))
		pr_warn("--proxy-connections %u: %u open files needed and the limit "
			"(RLIMIT_NOFILE, systemd's LimitNOFILE=) is below it\n",
			t->cap, t->cap + FD_RESERVE);
	if (!err && c->output == OUTPUT_TLS) {
		sockaddr_addr16((struct sockaddr *)&t->addr, t->addrlen, a16);
		format_addr16(a16, host, sizeof(host));
		t->tls = tls_client_new(c, host);
		if (!t->tls)
			err = -errno;
	}
	if (err) {
		t->finished = true;
		pool_close(&t->base);
		errno = -err;
		return NULL;
	}
	return &t->base;
}

int sink_pool_stats(struct sink *s, struct sink_pool_stats *out)
{
	struct sink_pool *t = (struct sink_pool *)s;

	if (!s || s->ops != &pool_ops)
		return -EINVAL;
	out->version = proxy_version_name(t->version);
	out->cap = t->cap;
	out->open = sink_counted(&t->open);
	out->peak = sink_counted(&t->peak);
	out->opens = sink_counted(&t->opens);
	for (int i = 0; i < POOL_CLOSE_REASONS; i++)
		out->closes[i] = sink_counted(&t->closes[i]);
	return 0;
}
