// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include "common/array.h"
#include "common/log.h"
#include "common/parse_num.h"
#include "common/sockaddr.h"
#include "net/proc_net.h"
#include "net/sockinfo.h"
#include "net/socket_group.h"

uint16_t socket_group_port(const struct socket_group *g)
{
	return sockaddr_port(&g->addr);
}

static int set_rcvbuf(int fd, uint64_t want, unsigned int idx, int *effective)
{
	int v = want > INT32_MAX / 2 ? INT32_MAX / 2 : (int)want;
	static int warned;

	/* The kernel doubles what it is given (bookkeeping overhead) and reports
	 * the doubled value; ask for half so the effective size is what was asked. */
	v = v / 2 ? v / 2 : 1;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v))) {
		if (errno != EPERM)
			return -errno;
		/* Without CAP_NET_ADMIN: capped by net.core.rmem_max. */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)))
			return -errno;
		if (sockinfo_rcvbuf(fd, effective))
			return -errno;
		if ((uint64_t)*effective < want && !warned++)
			pr_warn("--rcvbuf %llu: SO_RCVBUFFORCE needs CAP_NET_ADMIN; "
				"SO_RCVBUF gave %d bytes (net.core.rmem_max caps it)\n",
				(unsigned long long)want, *effective);
		return 0;
	}
	(void)idx;
	return sockinfo_rcvbuf(fd, effective);
}

/* Where one listener's sockets bind: the group's own address (listener 0),
 * or another listener's. */
struct bind_to {
	struct sockaddr_storage *addr;
	socklen_t *addrlen;
	char *text; /* normalised, updated when port 0 gets its port */
	size_t textlen;
	bool first; /* the listener's first socket: port 0 picks the port */
};

static int open_one_at(struct socket_group *g, unsigned int idx, uint64_t rcvbuf,
		       struct bind_to *to)
{
	struct group_socket *s = &g->socks[idx];
	int one = 1, err;

	s->fd = socket(to->addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	/* Each datagram's arrival time (net/arrival_stamp.h), on every socket
	 * a group holds, bound here or handed over (adopt_socket). */
	if (setsockopt(s->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    setsockopt(s->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)))
		return -errno;
	if (rcvbuf) {
		err = set_rcvbuf(s->fd, rcvbuf, idx, &s->rcvbuf);
		if (err)
			return err;
	}
	if (bind(s->fd, (struct sockaddr *)to->addr, *to->addrlen))
		return -errno;
	if (to->first && sockaddr_port(to->addr) == 0) {
		/* Port 0: the first bind picks one; the rest of the group joins it. */
		*to->addrlen = sizeof(*to->addr);
		if (getsockname(s->fd, (struct sockaddr *)to->addr, to->addrlen))
			return -errno;
		format_host_port((struct sockaddr *)to->addr, to->text, to->textlen);
	}
	return sockinfo_rcvbuf(s->fd, &s->rcvbuf)	  ?:
		       sockinfo_cookie(s->fd, &s->cookie) ?:
							    sockinfo_inode(s->fd, &s->inode);
}

static int open_one(struct socket_group *g, unsigned int idx, uint64_t rcvbuf)
{
	struct bind_to to = { &g->addr, &g->addrlen, g->listen, sizeof(g->listen), idx == 0 };

	return open_one_at(g, idx, rcvbuf, &to);
}

/* One line naming what stopped a bind. */
static void say_open_error(const char *listen, unsigned int i, int err)
{
	if (err == -EADDRINUSE)
		pr_warn("--listen %s: address in use by a socket outside this group\n", listen);
	else if (err == -EADDRNOTAVAIL)
		pr_warn("--listen %s: no such local address\n", listen);
	else if (err == -EACCES)
		pr_warn("--listen %s: ports below 1024 need CAP_NET_BIND_SERVICE\n", listen);
	else
		pr_warn("--listen %s: socket %u: %s\n", listen, i, strerror(-err));
}

int socket_group_open(struct socket_group *g, const char *listen, unsigned int n, uint64_t rcvbuf)
{
	int err;

	memset(g, 0, sizeof(*g));
	if (parse_host_port(listen, &g->addr, &g->addrlen)) {
		pr_warn("--listen %s: not an ADDR:PORT (127.0.0.1:5514, [::1]:5514, 0.0.0.0:514)\n",
			listen);
		return -EINVAL;
	}
	format_host_port((struct sockaddr *)&g->addr, g->listen, sizeof(g->listen));
	g->socks = calloc(n, sizeof(*g->socks));
	if (!g->socks)
		return -ENOMEM;
	g->n = n;
	g->cap = n;
	for (unsigned int i = 0; i < n; i++)
		g->socks[i].fd = -1;
	for (unsigned int i = 0; i < n; i++) {
		err = open_one(g, i, rcvbuf);
		if (err) {
			say_open_error(g->listen, i, err);
			socket_group_close(g);
			return err;
		}
	}
	return 0;
}

/* Room for n more entries at g->n, closed (fd -1), marked with listener. */
static int grow_for(struct socket_group *g, unsigned int n, unsigned int listener)
{
	struct group_socket *socks = realloc(g->socks, (g->n + n) * sizeof(*socks));

	if (!socks)
		return -ENOMEM;
	g->socks = socks;
	g->cap = g->n + n;
	memset(g->socks + g->n, 0, n * sizeof(*socks));
	for (unsigned int i = 0; i < n; i++) {
		g->socks[g->n + i].fd = -1;
		g->socks[g->n + i].listener = listener;
	}
	return 0;
}

int socket_group_append(struct socket_group *g, const char *listen, unsigned int n, uint64_t rcvbuf,
			unsigned int listener, char *bound, size_t boundlen)
{
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct bind_to to = { &addr, &addrlen, bound, boundlen, true };
	unsigned int first = g->n;
	int err;

	if (parse_host_port(listen, &addr, &addrlen)) {
		pr_warn("--listen %s: not an ADDR:PORT (127.0.0.1:5514, [::1]:5514, 0.0.0.0:514)\n",
			listen);
		return -EINVAL;
	}
	format_host_port((struct sockaddr *)&addr, bound, boundlen);
	err = grow_for(g, n, listener);
	if (err)
		return err;
	/* Counted as they open: a close on error closes what is open. */
	for (unsigned int i = 0; i < n; i++) {
		err = open_one_at(g, first + i, rcvbuf, &to);
		g->n++;
		to.first = false;
		if (err) {
			say_open_error(bound, i, err);
			return err;
		}
	}
	return (int)first;
}

void socket_group_close(struct socket_group *g)
{
	if (!g->socks)
		return;
	for (unsigned int i = 0; i < g->n; i++)
		if (g->socks[i].fd >= 0)
			close(g->socks[i].fd);
	free(g->socks);
	g->socks = NULL;
	g->n = 0;
	g->cap = 0;
}

/* One handed-over socket: ours, close-on-exec, its identity read back. */
static int adopt_socket(struct group_socket *s, int fd)
{
	socklen_t sl = sizeof(s->rcvbuf);
	struct stat st;
	int one = 1;

	s->fd = fd;
	/* Ours from now on, and no child of ours inherits it by accident; its
	 * arrival stamps asked again (a predecessor may not have). */
	if (fcntl(s->fd, F_SETFD, FD_CLOEXEC) ||
	    setsockopt(s->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
	    getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &s->rcvbuf, &sl))
		return -errno;
	sl = sizeof(s->cookie);
	if (getsockopt(s->fd, SOL_SOCKET, SO_COOKIE, &s->cookie, &sl) || fstat(s->fd, &st))
		return -errno;
	s->inode = st.st_ino;
	return 0;
}

int socket_group_adopt_more(struct socket_group *g, const int *fds, unsigned int n,
			    unsigned int listener)
{
	unsigned int first = g->n;
	int err = grow_for(g, n, listener);

	if (err)
		return err;
	for (unsigned int i = 0; i < n; i++) {
		err = adopt_socket(&g->socks[first + i], fds[i]);
		g->n++;
		if (err)
			return err;
	}
	return (int)first;
}

int socket_group_adopt(struct socket_group *g, const int *fds, unsigned int n)
{
	memset(g, 0, sizeof(*g));
	if (!n)
		return -EINVAL;
	g->socks = calloc(n, sizeof(*g->socks));
	if (!g->socks)
		return -ENOMEM;
	g->cap = n;
	g->addrlen = sizeof(g->addr);
	if (getsockname(fds[0], (struct sockaddr *)&g->addr, &g->addrlen))
		return -errno;
	format_host_port((struct sockaddr *)&g->addr, g->listen, sizeof(g->listen));
	for (unsigned int i = 0; i < n; i++) {
		int err = adopt_socket(&g->socks[i], fds[i]);

		g->n++;
		if (err)
			return err;
	}
	return 0;
}

/* The kernel keeps a reuseport group to the uid that bound it: a socket
 * bound now by another (--user, after the start) cannot join. Said if so. */
static bool say_other_owner(const struct socket_group *g)
{
	struct stat st;

	for (unsigned int i = 0; i < g->n; i++) {
		if (g->socks[i].fd < 0 || fstat(g->socks[i].fd, &st))
			continue;
		if (st.st_uid == geteuid())
			return false;
		pr_warn("--listen %s: a socket bound now, as uid %u, cannot join the group uid %u "
			"bound (the kernel keeps a reuseport group to one user): with --user, a "
			"resize grows into the spares of --max-sockets bound at start\n",
			g->listen, (unsigned int)geteuid(), (unsigned int)st.st_uid);
		return true;
	}
	return false;
}

int socket_group_add(struct socket_group *g, uint64_t rcvbuf)
{
	unsigned int idx = g->n;
	int err;

	if (g->n == g->cap) {
		size_t old = g->cap;

		if (ARRAY_PUSH_ROOM(g->socks, g->cap, g->n, 4))
			return -ENOMEM;
		memset(g->socks + old, 0, (g->cap - old) * sizeof(*g->socks));
	}
	g->socks[idx].fd = -1;
	err = open_one(g, idx, rcvbuf);
	if (err) {
		if (g->socks[idx].fd >= 0)
			close(g->socks[idx].fd);
		memset(&g->socks[idx], 0, sizeof(g->socks[idx]));
		g->socks[idx].fd = -1;
		if (err == -EACCES)
			pr_warn("--listen %s: a new socket on a port below 1024 needs "
				"CAP_NET_BIND_SERVICE, dropped at start (raise --max-sockets)\n",
				g->listen);
		else if (err == -EADDRINUSE && !say_other_owner(g))
			pr_warn("--listen %s: new socket: %s\n", g->listen, strerror(-err));
		return err;
	}
	g->n++;
	return idx;
}

int socket_group_connect_away(struct socket_group *g, unsigned int idx)
{
	struct sockaddr_storage peer = g->addr;

	/* A wildcard bind has no address of its own to name: loopback. */
	if (peer.ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&peer;

		if (sin->sin_addr.s_addr == htonl(INADDR_ANY))
			sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&peer;

		if (IN6_IS_ADDR_UNSPECIFIED(&sin6->sin6_addr))
			sin6->sin6_addr = in6addr_loopback;
	}
	if (connect(g->socks[idx].fd, (struct sockaddr *)&peer, g->addrlen))
		return -errno;
	g->socks[idx].away = 1;
	return 0;
}

int socket_group_queued(const struct socket_group *g, unsigned int idx)
{
	char c;

	/* A zero-length datagram peeks as 0: only EAGAIN means empty. */
	if (recv(g->socks[idx].fd, &c, sizeof(c), MSG_PEEK | MSG_DONTWAIT) >= 0)
		return 1;
	return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
}

int socket_group_rcu_grace_period(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		return -errno;
	return 0;
}

void socket_group_close_one(struct socket_group *g, unsigned int idx)
{
	if (g->socks[idx].fd >= 0)
		close(g->socks[idx].fd);
	g->socks[idx].fd = -1;
}

struct foreign_ctx {
	const struct socket_group *g;
	uint16_t port;
	int foreign;
};

static int count_foreign(const struct udp_sock_row *r, void *ctx)
{
	struct foreign_ctx *fc = ctx;

	if (r->port != fc->port)
		return 0;
	for (unsigned int i = 0; i < fc->g->n; i++)
		if (fc->g->socks[i].inode == r->inode)
			return 0;
	fc->foreign++;
	return 0;
}

int socket_group_foreign(const struct socket_group *g)
{
	return socket_group_foreign_port(g, socket_group_port(g));
}

int socket_group_foreign_port(const struct socket_group *g, uint16_t port)
{
	struct foreign_ctx fc = { .g = g, .port = port };
	int err = proc_net_udp_for_each(count_foreign, &fc);

	return err < 0 ? err : fc.foreign;
}
