// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include "common/clock.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "net/http_server.h"

/* A turn of the loop takes at most this many events and accepts; the rest
 * wait for the next turn (the listener is level-triggered). */
#define TURN_EVENTS 64
/* Out of descriptors or memory at accept: the listener rests this long
 * instead of waking the loop at once again. */
#define ACCEPT_REST_NS (100 * 1000 * 1000ULL)

enum conn_state { CONN_FREE, CONN_READING, CONN_WRITING, CONN_LINGER };

struct conn {
	int fd;
	enum conn_state state;
	uint64_t deadline_ns; /* accept + HTTP_SERVER_DEADLINE_S: also the age order */
	uint8_t addr[16];     /* the client's address, for the per-address limit */
	size_t len;	      /* request bytes read */
	struct iovec iov[2];  /* head and body still to send */
	char *owned;	      /* the handler's body, freed when sent or given up */
	char head[256];
	char req[HTTP_SERVER_REQUEST_MAX + 1];
	char scratch[HTTP_SERVER_SCRATCH];
};

struct http_server {
	int listen_fd; /* -1 once quiesced */
	int epfd, wakefd;
	pthread_t thread;
	/* Held by the loop while it handles a turn's events, so that quiesce
	 * never closes the listener under an accept. */
	pthread_mutex_t lock;
	bool stopping;
	bool accept_warned;
	uint64_t accept_rest_until; /* 0: accepting */
	http_handler_fn fn;
	void *ctx;
	char name[16];
	/* The table, mapped and populated at start: what clients do never
	 * changes the server's memory, only which slots are in use. */
	struct conn *conns;
	size_t conns_size;
};

static const char *reason(unsigned int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 431:
		return "Request Header Fields Too Large";
	case 503:
		return "Service Unavailable";
	default:
		return "Internal Server Error";
	}
}

static void conn_close(struct conn *c)
{
	close(c->fd); /* ours alone: this takes it out of the epoll set too */
	free(c->owned);
	c->owned = NULL;
	c->fd = -1;
	c->state = CONN_FREE;
}

static int conn_watch(struct http_server *s, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	return epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Answered: whatever the client still sends is read and dropped until it
 * closes (closing on unread bytes would reset the answer away). */
static void conn_linger(struct conn *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->req, HTTP_SERVER_REQUEST_MAX, 0);

		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		conn_close(c);
		return;
	}
}

static void conn_write(struct http_server *s, struct conn *c)
{
	while (c->iov[0].iov_len + c->iov[1].iov_len) {
		struct msghdr m = { .msg_iov = c->iov, .msg_iovlen = 2 };
		ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL);
		size_t done;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* EPOLLOUT brings us back */
		if (n < 0) {
			conn_close(c);
			return;
		}
		for (int i = 0; i < 2; i++) {
			done = (size_t)n < c->iov[i].iov_len ? (size_t)n : c->iov[i].iov_len;
			c->iov[i].iov_base = (char *)c->iov[i].iov_base + done;
			c->iov[i].iov_len -= done;
			n -= done;
		}
	}
	free(c->owned);
	c->owned = NULL;
	shutdown(c->fd, SHUT_WR);
	c->state = CONN_LINGER;
	if (conn_watch(s, c, EPOLLIN)) {
		conn_close(c);
		return;
	}
	conn_linger(c);
}

static void conn_reply(struct http_server *s, struct conn *c, const struct http_reply *r,
		       bool head_only)
{
	int n = snprintf(c->head, sizeof(c->head),
			 "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "%sConnection: close\r\n\r\n",
			 r->status, reason(r->status), r->type, r->len,
			 r->status == 405 ? "Allow: GET, HEAD\r\n" : "");

	c->owned = r->owned;
	c->iov[0] = (struct iovec){ c->head, n > 0 && n < (int)sizeof(c->head) ? (size_t)n : 0 };
	c->iov[1] = (struct iovec){ (void *)r->body, head_only ? 0 : r->len };
	c->state = CONN_WRITING;
	if (!c->iov[0].iov_len || conn_watch(s, c, EPOLLOUT)) {
		conn_close(c);
		return;
	}
	conn_write(s, c);
}

static void conn_fixed(struct http_server *s, struct conn *c, unsigned int status, const char *text)
{
	struct http_reply r = {
		.status = status, .type = "text/plain", .body = text, .len = strlen(text)
	};

	conn_reply(s, c, &r, false);
}

/* The request line of a complete request (headers are not needed):
 * METHOD SP PATH[?QUERY] SP HTTP/1.x */
static void conn_answer(struct http_server *s, struct conn *c)
{
	struct http_reply r = { .status = 500,
				.type = "text/plain",
				.scratch = c->scratch,
				.scratch_len = sizeof(c->scratch) };
	char *method = c->req, *path, *version, *eol;

	eol = memchr(c->req, '\n', c->len);
	*eol = '\0';
	if (eol > c->req && eol[-1] == '\r')
		eol[-1] = '\0';
	path = strchr(method, ' ');
	version = path ? strchr(path + 1, ' ') : NULL;
	if (!version || strncmp(version + 1, "HTTP/1.", 7) || path[1] != '/') {
		conn_fixed(s, c, 400, "bad request: expected GET /PATH HTTP/1.1\n");
		return;
	}
	*path++ = '\0';
	*version = '\0';
	path[strcspn(path, "?")] = '\0';
	s->fn(s->ctx, method, path, &r);
	conn_reply(s, c, &r, !strcmp(method, "HEAD"));
}

static bool request_complete(const struct conn *c, size_t from)
{
	return memmem(c->req + from, c->len - from, "\r\n\r\n", 4) ||
	       memmem(c->req + from, c->len - from, "\n\n", 2);
}

static void conn_read(struct http_server *s, struct conn *c)
{
	for (;;) {
		ssize_t n = recv(c->fd, c->req + c->len, HTTP_SERVER_REQUEST_MAX - c->len, 0);
		size_t from = c->len > 3 ? c->len - 3 : 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->len += n;
		c->req[c->len] = '\0';
		if (request_complete(c, from)) {
			conn_answer(s, c);
			return;
		}
		if (c->len == HTTP_SERVER_REQUEST_MAX) {
			conn_fixed(s, c, 431, "request too large\n");
			return;
		}
	}
}

static void conn_event(struct http_server *s, struct conn *c)
{
	/* The event may be stale (its connection closed earlier in this turn,
	 * the slot taken since): every handler only tries what would not
	 * block, so a stale event costs a failed try and nothing else. */
	switch (c->state) {
	case CONN_READING:
		conn_read(s, c);
		break;
	case CONN_WRITING:
		conn_write(s, c);
		break;
	case CONN_LINGER:
		conn_linger(c);
		break;
	case CONN_FREE:
		break;
	}
}

static bool older(const struct conn *c, const struct conn *than)
{
	return !than || c->deadline_ns < than->deadline_ns;
}

/* A slot for a new connection from addr, or NULL when it must be refused:
 * its address holds HTTP_SERVER_MAX_PER_ADDRESS already, none of them
 * answered (such a one gives its place up: a client asking again and
 * again is not held off by its own answered connections, whose close the
 * loop has not read yet), or every slot is sending an answer. A full
 * table gives up, in this order, the oldest answered connection waiting
 * for its client's close, then the oldest one whose request is not
 * complete. */
static struct conn *conn_slot(struct http_server *s, const uint8_t addr[16])
{
	struct conn *free_slot = NULL, *lingering = NULL, *reading = NULL, *mine = NULL, *c;
	unsigned int same = 0;

	for (c = s->conns; c < s->conns + HTTP_SERVER_MAX_CONNECTIONS; c++) {
		if (c->state == CONN_FREE) {
			free_slot = free_slot ? free_slot : c;
			continue;
		}
		if (!memcmp(c->addr, addr, 16)) {
			same++;
			if (c->state == CONN_LINGER && older(c, mine))
				mine = c;
		}
		if (c->state == CONN_LINGER && older(c, lingering))
			lingering = c;
		if (c->state == CONN_READING && older(c, reading))
			reading = c;
	}
	if (same >= HTTP_SERVER_MAX_PER_ADDRESS) {
		if (mine)
			conn_close(mine);
		return mine;
	}
	if (free_slot)
		return free_slot;
	c = lingering ? lingering : reading;
	if (c)
		conn_close(c);
	return c;
}

static void accept_rest(struct http_server *s, uint64_t now, int err)
{
	struct epoll_event ev = { .events = 0, .data.ptr = &s->listen_fd };

	if (!s->accept_warned)
		pr_warn("%s: accept: %s; new connections wait\n", s->name, strerror(err));
	s->accept_warned = true;
	s->accept_rest_until = now + ACCEPT_REST_NS;
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->listen_fd, &ev);
}

static void accept_some(struct http_server *s, uint64_t now)
{
	for (int i = 0; i < TURN_EVENTS; i++) {
		struct sockaddr_storage sa;
		socklen_t len = sizeof(sa);
		struct epoll_event ev;
		uint8_t addr[16] = { 0 };
		struct conn *c;
		int fd;

		fd = accept4(s->listen_fd, (struct sockaddr *)&sa, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == ECONNABORTED || errno == EINTR || errno == EPROTO)
				continue;
			accept_rest(s, now, errno); /* EMFILE, ENFILE, ENOBUFS, ENOMEM */
			return;
		}
		sockaddr_addr16((struct sockaddr *)&sa, len, addr);
		c = conn_slot(s, addr);
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->state = CONN_READING;
		c->deadline_ns = now + HTTP_SERVER_DEADLINE_S * NSEC_PER_SEC;
		memcpy(c->addr, addr, sizeof(c->addr));
		c->len = 0;
		ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			conn_close(c);
			continue;
		}
		conn_read(s, c); /* a request sent with the connect is answered now */
	}
}

/* Closes what is past its deadline; the milliseconds until the next one
 * (or the listener's rest) ends, -1 if none. */
static int expire(struct http_server *s, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	struct conn *c;

	if (s->accept_rest_until && now >= s->accept_rest_until && s->listen_fd >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &s->listen_fd };

		epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->listen_fd, &ev);
		s->accept_rest_until = 0;
	}
	if (s->accept_rest_until)
		next = s->accept_rest_until;
	for (c = s->conns; c < s->conns + HTTP_SERVER_MAX_CONNECTIONS; c++) {
		if (c->state == CONN_FREE)
			continue;
		if (c->deadline_ns <= now)
			conn_close(c);
		else if (c->deadline_ns < next)
			next = c->deadline_ns;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)((next - now + 999999) / 1000000);
}

static void *serve(void *arg)
{
	struct http_server *s = arg;
	struct epoll_event ev[TURN_EVENTS];
	int timeout = -1, n;
	uint64_t one;

	pthread_setname_np(pthread_self(), s->name);
	for (;;) {
		n = epoll_wait(s->epfd, ev, TURN_EVENTS, timeout);
		if (n < 0 && errno != EINTR) {
			pr_warn("%s: epoll_wait: %s\n", s->name, strerror(errno));
			return NULL;
		}
		pthread_mutex_lock(&s->lock);
		if (s->stopping) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].data.ptr == &s->wakefd) {
				if (read(s->wakefd, &one, sizeof(one)) < 0) { /* drained */
				}
			} else if (ev[i].data.ptr == &s->listen_fd) {
				if (s->listen_fd >= 0 && !s->accept_rest_until)
					accept_some(s, mono_ns());
			} else {
				conn_event(s, ev[i].data.ptr);
			}
		}
		timeout = expire(s, mono_ns());
		pthread_mutex_unlock(&s->lock);
	}
}

static int watch_fd(int epfd, int fd, void *ptr)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ptr };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

struct http_server *http_server_start(int listen_fd, const char *name, http_handler_fn fn,
				      void *ctx)
{
	struct http_server *s = calloc(1, sizeof(*s));
	sigset_t all, old;
	int err;

	if (!s)
		return NULL;
	s->listen_fd = listen_fd;
	s->epfd = s->wakefd = -1;
	s->fn = fn;
	s->ctx = ctx;
	snprintf(s->name, sizeof(s->name), "%s", name);
	pthread_mutex_init(&s->lock, NULL);
	s->conns_size = HTTP_SERVER_MAX_CONNECTIONS * sizeof(struct conn);
	s->conns = mmap(NULL, s->conns_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->conns == MAP_FAILED) {
		s->conns = NULL;
		goto fail;
	}
	for (int i = 0; i < HTTP_SERVER_MAX_CONNECTIONS; i++)
		s->conns[i].fd = -1;
	/* Non-blocking: after a hand-over another process accepts from the
	 * same socket, and may take the connection this loop was woken for. */
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epfd < 0 || s->wakefd < 0 ||
	    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK) ||
	    watch_fd(s->epfd, listen_fd, &s->listen_fd) || watch_fd(s->epfd, s->wakefd, &s->wakefd))
		goto fail;
	/* The thread starts with every signal blocked, so SIGTERM, SIGINT and
	 * SIGHUP reach the program's own threads, never this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->thread, NULL, serve, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		goto fail;
	}
	return s;
fail:
	err = errno;
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->wakefd >= 0)
		close(s->wakefd);
	if (s->conns)
		munmap(s->conns, s->conns_size);
	pthread_mutex_destroy(&s->lock);
	free(s);
	errno = err;
	return NULL;
}

void http_server_quiesce(struct http_server *s)
{
	pthread_mutex_lock(&s->lock);
	if (s->listen_fd >= 0) {
		/* Out of the set first: the socket lives on in the other
		 * process, so closing ours would not remove it. */
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->listen_fd, NULL);
		close(s->listen_fd);
		s->listen_fd = -1;
	}
	pthread_mutex_unlock(&s->lock);
}

void http_server_stop(struct http_server *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_mutex_unlock(&s->lock);
	if (write(s->wakefd, &one, sizeof(one)) < 0) { /* a counter: it cannot fill */
	}
	pthread_join(s->thread, NULL);
	for (int i = 0; i < HTTP_SERVER_MAX_CONNECTIONS; i++)
		if (s->conns[i].state != CONN_FREE)
			conn_close(&s->conns[i]);
	http_server_quiesce(s);
	close(s->epfd);
	close(s->wakefd);
	munmap(s->conns, s->conns_size);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
