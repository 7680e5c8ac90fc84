// SPDX-License-Identifier: MIT
/*
 * tcp:HOST:PORT sink: forwards to another syslog server over TCP, the
 * messages framed as the output stage formatted them (--framing,
 * syslog/format.h): RFC 6587 octet-counted frames ("LEN SP MSG"), or one
 * message per line (syslog-ng's network(), rsyslog's imtcp).
 *
 * While the server is down, write() retries with backoff and does not return:
 * the output stage stalls, the input window fills, the workers stop reading and
 * the kernel drops (counted by the tracer). Before each write the socket is
 * checked for the server's FIN, so a server that closed cleanly (a restart)
 * makes us reconnect first instead of writing into a dead connection.
 *
 * TCP's acknowledgement only says the server's kernel has the bytes: a server
 * that stops with data unread in its socket buffer loses it, and plain syslog
 * over TCP has no application acknowledgement to tell us. So when a
 * connection ends, what the server may not have read is sent again on the
 * next one (maybe_unread: what its kernel had not acknowledged, what its
 * receive buffer may hold, and the last REPLAY_NS before its last progress):
 * at least once, with possible duplicates (counted resent, logged), rather
 * than a silent loss. The history keeps each buffer sent until it is outside
 * all of these. What TCP cannot confirm is counted uncertain, never taken as
 * delivered: what a connection the server reset carried before the resend
 * (a peer may drop what it read), and at the stop what the server may not
 * have read when it does not answer our FIN with its own, or when the stop
 * came before a resend.
 *
 * Every step has a deadline, so no destination holds the start or the stop:
 * the connection and the TLS handshake together CONNECT_MS (START_CONNECT_MS
 * at start: syslogrx is ready while the destination is "not reachable yet"),
 * the close CLOSE_MS. A connected server that takes nothing of what we hold
 * for --stall-timeout (it stopped reading: its window stays shut) is a
 * stall: said once, shown (syslogrx_output_stalled, /readyz) until a
 * connection takes everything for a whole --stall-timeout, and the
 * connection is given up for a new one, which gets the resend first.
 *
 * tls:HOST:PORT is the same with a TLS session on the connection (RFC 5425:
 * the same frames, over TLS; tls.c). A server whose
 * certificate is refused is an outage like any other once running (the
 * window holds, we retry); at start, when the server answers and is
 * refused, syslogrx does not start: that is a setting to fix, not a wait.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "common/signals.h"
#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/poll_until.h"
#include "rx/settings/config.h"
#include "rx/sink/conn_io.h"
#include "rx/sink/sink.h"
#include "rx/sink/tls.h"
#include "common/sockaddr.h"

#define CONNECT_MS 10000
#define START_CONNECT_MS 2000
#define CLOSE_MS 2000
#define REPLAY_NS 1000000000ULL
#define REPLAY_MERGE_BYTES (256 << 10)
#define MS_NS 1000000ULL
#define SETTLE_MARGIN_NS (100 * MS_NS)
/* The largest receive window of a server counted (twice, see
 * maybe_unread): bounds what a peer advertising a huge one makes us keep. */
#define REPLAY_WINDOW_MAX (16ULL << 20)
/* A TLS server decrypts a whole record before it hands on any of it: one
 * more it may have read from its kernel and not yet handed on. */
#define TLS_RECORD_MAX 16384
/* A receiver's queue passes its buffer by one segment (the kernel checks
 * the buffer before it queues one), and a server that never empties its
 * buffer never advertises half of it: one more segment, the largest GRO
 * or loopback's TSO makes. */
#define SEGMENT_MAX (64 << 10)

/* A buffer of frames already sent on the current connection. */
struct sent_buf {
	char *data;
	size_t len, cap;
	uint64_t msgs;
	uint64_t first_ns, sent_ns; /* when its first and its last bytes were sent */
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
	int stall_ms;		   /* --stall-timeout */
	unsigned int format_flags; /* FORMAT_F_*: the framing of what write() is given */
	uint64_t stalled_ns;	   /* when the stall now shown was last seen; 0: none */
	uint64_t conn_ns;	   /* when the current connection was made */
	size_t max_wnd;		   /* the server's largest receive window on it */
	struct sent_buf cur;	   /* the frames being sent, built from lines */
	struct sent_buf *hist;	   /* sent and maybe not yet read: oldest first */
	size_t nr_hist, hist_cap;
	bool replay;	    /* the last connection ended: resend from hist first */
	uint64_t lost_ns;   /* when it last made progress */
	size_t lost_unread; /* bytes the server may not have read of it (maybe_unread) */
	uint64_t reconnects;
	uint64_t conn_msgs;	    /* messages sent on this connection, resent ones too */
	uint64_t uncertain_said_ns; /* when an aborted connection's count was last said */
};

/*
 * What the server may not have read of what fd was given: the bytes its
 * kernel has not acknowledged (SIOCOUTQ) and, before them, what its
 * receive buffer may hold (acknowledged, maybe unread): twice the largest
 * window it advertised, as Linux advertises about half of the buffer
 * (tcp_adv_win_scale), capped, and a segment; over TLS the record its TLS
 * library may be reading.
 */
static size_t maybe_unread(struct sink_tcp *t)
{
	struct tcp_info ti = { 0 };
	socklen_t len = sizeof(ti);
	int n = 0;

	if (!getsockopt(t->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) && ti.tcpi_snd_wnd > t->max_wnd)
		t->max_wnd = ti.tcpi_snd_wnd < REPLAY_WINDOW_MAX ? ti.tcpi_snd_wnd :
								   REPLAY_WINDOW_MAX;
	if (ioctl(t->fd, SIOCOUTQ, &n) || n < 0)
		n = 0;
	return (size_t)n + 2 * t->max_wnd + SEGMENT_MAX + (t->session ? TLS_RECORD_MAX : 0);
}

static void disconnect(struct sink_tcp *t)
{
	tls_session_end(t->session);
	t->session = NULL;
	close(t->fd);
	t->fd = -1;
}

/* A connection, and with tls a verified session on it, by deadline_ns;
 * else -errno (-ETIMEDOUT: no answer in time), and t->why says why. */
static int try_connect(struct sink_tcp *t, uint64_t deadline_ns)
{
	int one = 1, err, ready;
	socklen_t elen = sizeof(err);

	t->fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (t->fd < 0) {
		err = -errno;
		snprintf(t->why, sizeof(t->why), "%s", strerror(-err));
		return err;
	}
	setsockopt(t->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	err = connect(t->fd, (struct sockaddr *)&t->addr, t->addrlen) ? -errno : 0;
	if (err == -EINPROGRESS) {
		/* A destination that drops our SYNs answers nothing: the
		 * deadline ends the wait, as a refusal would. */
		ready = poll_until_unless(t->fd, POLLOUT, deadline_ns, t->base.abort);
		if (ready < 0)
			err = ready;
		else if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &elen))
			err = -errno;
		else
			err = -err;
	}
	if (err) {
		snprintf(t->why, sizeof(t->why), "%s",
			 err == -ETIMEDOUT ? "no answer to the connection in time" :
			 err == -ECANCELED ? "the stop gave up" :
					     strerror(-err));
		disconnect(t);
		return err;
	}
	if (!t->tls)
		return 0;
	err = tls_session_start(t->tls, t->fd, deadline_ns, t->base.abort, &t->session, t->why,
				sizeof(t->why));
	if (err)
		disconnect(t);
	return err;
}

static int conn_send(struct sink_tcp *t, const char *p, size_t len)
{
	return t->session ? tls_session_send(t->session, p, len, t->stall_ms, t->base.abort) :
			    conn_send_all(t->fd, p, len, t->stall_ms, t->base.abort);
}

/* Connects, retrying with exponential backoff until it works or we must stop. */
static int ensure_connected(struct sink_tcp *t)
{
	while (t->fd < 0) {
		int err = try_connect(t, mono_ns() + CONNECT_MS * MS_NS);

		if (!err) {
			/* Up before it is said: whoever reads the line (an
			 * operator's kill -USR2) finds the output up. */
			sink_set_down(&t->base, false);
			if (t->backoff_ms || t->said_down)
				pr_warn("%s: connected again\n", t->base.name);
			t->conn_ns = mono_ns();
			t->max_wnd = 0;
			maybe_unread(t); /* the window of a buffer not yet filling */
			t->said_down = false;
			t->backoff_ms = 0;
			t->reconnects++;
			t->conn_msgs = 0;
			return 0;
		}
		sink_set_down(&t->base, true);
		if (t->base.abort && flag_get(t->base.abort))
			return err;
		if (!t->backoff_ms && !t->said_down)
			pr_warn("%s: %s; retrying with backoff (%d ms doubling to %d ms), the input "
				"window holds what arrives meanwhile\n",
				t->base.name, t->why, BACKOFF_MIN_MS, BACKOFF_MAX_MS);
		conn_backoff(&t->backoff_ms, &t->base);
	}
	return 0;
}

/* The messages to send, as the output formatted them for the framing
 * (lines, or frames: syslog/format.h), into t->cur, where the history
 * keeps them. Returns their length. */
static size_t take_messages(struct sink_tcp *t, const char *buf, size_t len)
{
	struct sent_buf *f = &t->cur;

	if (array_reserve((void **)&f->data, &f->cap, len, 1, 4096))
		return (size_t)-1;
	memcpy(f->data, buf, len);
	f->msgs = format_count_messages(buf, len, t->format_flags);
	f->len = len;
	return len;
}

/* Frees hist[0..n) (no longer needed), keeping one buffer for cur. */
static void forget_oldest(struct sink_tcp *t, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (!t->cur.data) {
			t->cur = t->hist[k];
			t->cur.len = 0;
			continue;
		}
		free(t->hist[k].data);
	}
	memmove(t->hist, t->hist + n, (t->nr_hist - n) * sizeof(*t->hist));
	t->nr_hist -= n;
}

/*
 * How many of the newest slots hold the last `bytes` sent or were sent at
 * or after since_ns: what a connection that ended may not have handed on.
 * Newer bytes than a slot's count from `newer` on.
 */
static size_t slots_needed(const struct sink_tcp *t, size_t newer, size_t bytes, uint64_t since_ns)
{
	size_t n = 0;

	while (n < t->nr_hist) {
		const struct sent_buf *h = &t->hist[t->nr_hist - 1 - n];

		if (newer >= bytes && h->sent_ns < since_ns)
			break;
		newer += h->len;
		n++;
	}
	return n;
}

/*
 * Keeps what was just sent until the server has read it for all we can
 * tell (maybe_unread) and it is REPLAY_NS old. Buffers sent one after
 * another share a slot up to REPLAY_MERGE_BYTES, so the slots stay few at
 * any rate; what they hold is bounded by the socket's send buffer, twice
 * REPLAY_WINDOW_MAX and a second of output.
 */
static void remember_sent(struct sink_tcp *t)
{
	struct sent_buf *last = t->nr_hist ? &t->hist[t->nr_hist - 1] : NULL;
	uint64_t now = mono_ns();
	size_t keep;

	if (last && last->len + t->cur.len <= REPLAY_MERGE_BYTES &&
	    !array_reserve((void **)&last->data, &last->cap, last->len + t->cur.len, 1, 4096)) {
		memcpy(last->data + last->len, t->cur.data, t->cur.len);
		last->len += t->cur.len;
		last->msgs += t->cur.msgs;
		last->sent_ns = now;
		t->cur.len = 0;
	} else if (!ARRAY_PUSH_ROOM(t->hist, t->hist_cap, t->nr_hist, 16)) {
		t->hist[t->nr_hist] = t->cur;
		t->hist[t->nr_hist].first_ns = now;
		t->hist[t->nr_hist++].sent_ns = now;
		memset(&t->cur, 0, sizeof(t->cur));
	}
	keep = slots_needed(t, 0, maybe_unread(t), now - REPLAY_NS);
	forget_oldest(t, t->nr_hist - keep);
	/* A disk buffer keeps a record as long as we could send it again (the
	 * output stage releases it settle_ns after the write that sent it;
	 * SETTLE_MARGIN_NS over, for the time between that write and ours). */
	if (t->nr_hist && now - t->hist[0].first_ns + SETTLE_MARGIN_NS > REPLAY_NS)
		t->base.settle_ns = now - t->hist[0].first_ns + SETTLE_MARGIN_NS;
	else
		t->base.settle_ns = REPLAY_NS;
	t->base.resends = true;
}

/* After a connection ended: the first slot of what the server may not
 * have read of it (maybe_unread when it ended), and of what it took in its
 * last second of progress. */
static size_t replay_from(const struct sink_tcp *t)
{
	return t->nr_hist - slots_needed(t, 0, t->lost_unread, t->lost_ns - REPLAY_NS);
}

static int replay_recent(struct sink_tcp *t)
{
	uint64_t msgs = 0;

	for (size_t k = replay_from(t); k < t->nr_hist; k++) {
		int err = conn_send(t, t->hist[k].data, t->hist[k].len);

		if (err) {
			/* counted as it went: said too, or output_resent moves
			 * with no line that says so */
			if (msgs)
				pr_warn("%s: sent again the %llu message(s) the server had not "
					"acknowledged or had in its last second, before this "
					"connection failed too (duplicates possible)\n",
					t->base.name, (unsigned long long)msgs);
			return err;
		}
		msgs += t->hist[k].msgs;
		/* as it goes: a resend cut short has sent some again too */
		sink_count(&t->base.resent, t->hist[k].msgs);
	}
	t->conn_msgs += msgs;
	if (msgs)
		pr_warn("%s: sent again the %llu message(s) the server had not acknowledged or had "
			"in its last second (it may have had them unread: duplicates possible)\n",
			t->base.name, (unsigned long long)msgs);
	return 0;
}

/* The connection ended with `held` bytes maybe unread; progress_ns: when it
 * last took anything. What it may not have read is sent again first. */
static void replay_next(struct sink_tcp *t, uint64_t progress_ns, size_t held)
{
	if (!t->replay) {
		t->lost_ns = progress_ns;
		t->lost_unread = 0;
	}
	if (held > t->lost_unread)
		t->lost_unread = held;
	t->replay = true;
}

/* Messages from hist[from] on. */
static uint64_t hist_msgs(const struct sink_tcp *t, size_t from)
{
	uint64_t msgs = 0;

	for (size_t k = from; k < t->nr_hist; k++)
		msgs += t->hist[k].msgs;
	return msgs;
}

/*
 * A connection the server reset without closing it first: its server may
 * have dropped anything sent on it, read or not (a proxy that read it, a
 * server that crashed with it queued). A reset that answers what we sent
 * after its FIN is not one: what it read before its FIN it had read. What the resend covers is sent
 * again; the rest of what the connection carried is counted uncertain,
 * not taken as delivered, and said at most every 10 s.
 */
static void count_aborted(struct sink_tcp *t)
{
	uint64_t again = hist_msgs(t, replay_from(t)), n, now;

	if (t->conn_msgs <= again)
		return;
	n = t->conn_msgs - again;
	sink_count(&t->base.uncertain, n);
	now = mono_ns();
	if (t->uncertain_said_ns && now - t->uncertain_said_ns < 10000 * MS_NS)
		return;
	t->uncertain_said_ns = now;
	pr_warn("%s: the connection was reset: %llu message(s) written on it before what is "
		"sent again may not have been read (counted: output_uncertain, "
		"syslogrx_output_uncertain_total)\n",
		t->base.name, (unsigned long long)n);
}

/* The connection is given up; progress_ns: when it last took anything;
 * aborted: the server reset it (ECONNRESET, in SO_ERROR too; Linux says
 * EPIPE for a reset after the server's FIN). */
static void connection_lost(struct sink_tcp *t, uint64_t progress_ns, bool aborted)
{
	size_t held = maybe_unread(t);
	socklen_t elen = sizeof(int);
	int err = 0;

	if (!getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &elen) && err == ECONNRESET)
		aborted = true;
	disconnect(t);
	replay_next(t, progress_ns, held);
	if (aborted)
		count_aborted(t);
	t->conn_msgs = 0;
}

/* A send that failed: a stall is said once and shown until it is over;
 * either way the connection is given up for a new one. */
static void send_failed(struct sink_tcp *t, int err)
{
	uint64_t now = mono_ns();

	if (err == -ECANCELED) { /* the stop gave up: what is held is saved or counted */
		connection_lost(t, now, false);
		return;
	}
	if (err != -ETIMEDOUT) {
		pr_warn("%s: %s; reconnecting and sending the buffer again\n", t->base.name,
			strerror(-err));
		connection_lost(t, now, err == -ECONNRESET);
		return;
	}
	if (!t->stalled_ns)
		pr_warn("%s: stalled: the server took nothing for --stall-timeout %d ms; "
			"reconnecting and sending again what it may not have read "
			"(syslogrx_output_stalled 1)\n",
			t->base.name, t->stall_ms);
	t->stalled_ns = now;
	sink_set_stalled(&t->base, true);
	connection_lost(t, now - t->stall_ms * MS_NS, false);
}

/* A write went through: a stall is over once a connection has taken what
 * it was given for a whole --stall-timeout. */
static void stall_over(struct sink_tcp *t)
{
	uint64_t now = mono_ns();

	if (!t->stalled_ns || now - t->conn_ns < t->stall_ms * MS_NS)
		return;
	pr_warn("%s: the server takes messages again (syslogrx_output_stalled 0)\n", t->base.name);
	t->stalled_ns = 0;
	sink_set_stalled(&t->base, false);
}

static int tcp_write(struct sink *s, const char *buf, size_t len)
{
	struct sink_tcp *t = (struct sink_tcp *)s;
	size_t flen = take_messages(t, buf, len);
	bool again = false; /* a send of it failed: some may have gone */
	int err;

	if (flen == (size_t)-1)
		return -ENOMEM;
	for (;;) {
		err = ensure_connected(t);
		if (err)
			return err;
		int closed = conn_peer_closed(t->fd, t->session);

		if (closed) {
			connection_lost(t, mono_ns(), closed < 0);
			continue;
		}
		if (t->replay) {
			err = replay_recent(t);
			if (err) {
				send_failed(t, err);
				continue;
			}
			t->replay = false;
		}
		err = conn_send(t, t->cur.data, flen);
		if (!err) {
			t->conn_msgs += t->cur.msgs;
			if (again)
				sink_count(&t->base.resent, t->cur.msgs);
			remember_sent(t);
			stall_over(t);
			return 0;
		}
		send_failed(t, err);
		again = true;
		if (s->abort && flag_get(s->abort))
			return err;
	}
}

static int tcp_reopen(struct sink *s)
{
	return 0; /* a connection has nothing to rotate */
}

/*
 * Our half closed (with TLS, its close_notify first), then a bounded wait
 * for the server's, not past a stop that gave up. Its FIN, with no error
 * and nothing of ours unacknowledged, says it read all we sent (1); a
 * server that closes with bytes unread resets the connection instead (-1);
 * no answer in time, 0. A server that keeps sending after our FIN does not
 * hold us past CLOSE_MS.
 */
static int closed_cleanly(struct sink_tcp *t)
{
	uint64_t deadline = mono_ns() + CLOSE_MS * MS_NS;
	socklen_t elen = sizeof(int);
	int err = 0, outq = 0;
	char buf[256];

	tls_session_end(t->session);
	t->session = NULL;
	shutdown(t->fd, SHUT_WR);
	while (poll_until_unless(t->fd, POLLIN, deadline, t->base.abort) > 0) {
		ssize_t n = read(t->fd, buf, sizeof(buf));

		if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
			continue;
		if (n < 0 || getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &err, &elen) || err)
			return -1;
		return !ioctl(t->fd, SIOCOUTQ, &outq) && !outq;
	}
	return 0;
}

/*
 * The stream's end, at the stop: closed cleanly, the server read all of
 * it. Otherwise, and when a connection ended and the stop came before the
 * resend, what the server may not have read (as a new connection would
 * have sent again) is counted uncertain and said: TCP cannot tell whether
 * it was read. Idempotent.
 */
static void tcp_finish(struct sink *s)
{
	struct sink_tcp *t = (struct sink_tcp *)s;
	uint64_t msgs = 0;

	if (t->fd >= 0) {
		size_t held = maybe_unread(t);
		int clean = closed_cleanly(t);

		if (clean < 1)
			replay_next(t, mono_ns(), held);
		if (clean < 0)
			count_aborted(t);
		close(t->fd);
		t->fd = -1;
	}
	if (t->replay) {
		msgs = hist_msgs(t, replay_from(t));
		t->replay = false;
	}
	if (!msgs)
		return;
	sink_count(&s->uncertain, msgs);
	pr_warn("stop: %s: %llu message(s) written may not have been read: the connection "
		"ended without the server's close (counted: output_uncertain, "
		"syslogrx_output_uncertain_total)\n",
		s->name, (unsigned long long)msgs);
}

static void tcp_close(struct sink *s)
{
	struct sink_tcp *t = (struct sink_tcp *)s;

	tcp_finish(s);
	tls_client_free(t->tls);
	free(t->cur.data);
	for (size_t k = 0; k < t->nr_hist; k++)
		free(t->hist[k].data);
	free(t->hist);
	free(t);
}

static const struct sink_ops tcp_ops = {
	.write = tcp_write,
	.reopen = tcp_reopen,
	.finish = tcp_finish,
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
	t->base.resends = true;
	t->stall_ms = (int)(c->stall_timeout * 1000);
	t->format_flags = config_format_flags(c);
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
	 * yet, or does not answer within START_CONNECT_MS, is not an error: we
	 * retry as for any outage. A TLS server that answers and is not trusted
	 * is: no wait mends the setting. */
	err = try_connect(t, mono_ns() + START_CONNECT_MS * MS_NS);
	if (err == -EPROTO) {
		pr_warn("--output %s: %s (see --tls-ca, --tls-name)\n", t->base.name, t->why);
		tcp_close(&t->base);
		errno = EPROTO;
		return NULL;
	}
	if (!err)
		maybe_unread(t);
	if (err) {
		sink_set_down(&t->base, true);
		pr_warn("%s: not reachable yet; will retry (%s)\n", t->base.name, t->why);
		t->said_down = true; /* once: the retries do not say it again */
	}
	return &t->base;
}
