/* SPDX-License-Identifier: MIT */
/*
 * src/net/: the user sides of the BPF programs (balancer, tracer) and the
 * sockets they act on (socket_group, proc_net, sockinfo), shared by syslogrx
 * and the tools. Uses common only.
 *
 * This file: N UDP sockets bound to one address with SO_REUSEPORT, one
 * reuseport group.
 */
#ifndef SYSLOGRX_SOCKET_GROUP_H
#define SYSLOGRX_SOCKET_GROUP_H

#include <stdint.h>
#include <sys/socket.h>
#include "common/sockaddr.h"

struct group_socket {
	int fd;
	uint64_t cookie; /* SO_COOKIE: matches bpf_get_socket_cookie() */
	uint64_t inode;	 /* as in /proc/net/udp and /proc/PID/fd */
	int rcvbuf;	 /* effective, as the kernel reports it */
	/* Closed by a live shrink (fd is then -1): SO_MEMINFO's drop count read
	 * just before the close, for the summary. */
	uint64_t drops_at_close;
	int away; /* connected away: out of the group for good */
};

struct socket_group {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char listen[80]; /* normalised "127.0.0.1:5514" / "[::1]:5514" */
	unsigned int n;	 /* sockets ever opened, closed ones included */
	size_t cap;	 /* allocated entries of socks */
	struct group_socket *socks;
};

/*
 * Opens n sockets on `listen`. rcvbuf > 0 asks for that receive buffer:
 * SO_RCVBUFFORCE, else SO_RCVBUF with a warning giving the effective size.
 * Returns 0 or -errno (-EADDRINUSE: the port is taken by a socket outside
 * our group), having logged one line that names the problem.
 */
int socket_group_open(struct socket_group *g, const char *listen, unsigned int n, uint64_t rcvbuf);
/* The group from sockets handed over by another process (already checked by
 * cookie), in the order given; they become close-on-exec. 0 or -errno. */
int socket_group_adopt(struct socket_group *g, const int *fds, unsigned int n);
void socket_group_close(struct socket_group *g);

/*
 * A live resize (the order is the one that loses nothing; see docs/operating.md):
 *
 * socket_group_add() opens one more socket joining the group, at index g->n.
 * It may move g->socks: nobody may hold a pointer into it meanwhile. Without
 * CAP_NET_ADMIN the rcvbuf is capped by net.core.rmem_max (warned); without
 * CAP_NET_BIND_SERVICE a port below 1024 fails with -EACCES. Returns the
 * index or -errno.
 *
 * socket_group_connect_away() connects socket idx to the group's own address
 * and port (loopback for a wildcard bind), a peer that only our own sockets
 * could be: the socket leaves the reuseport group and no lookup matches it
 * any more, while it keeps what is queued. A plain close() instead detaches
 * it from the group before unhashing it, and a lookup in between can still
 * queue a datagram that the close then frees uncounted.
 *
 * socket_group_queued() is 1 while a datagram is queued on socket idx, 0 when
 * its queue is empty, or -errno.
 *
 * socket_group_rcu_grace_period() returns once every lookup (and BPF program
 * run) that started before has finished: membarrier(MEMBARRIER_CMD_GLOBAL),
 * which is synchronize_rcu(); needs no privilege.
 */
int socket_group_add(struct socket_group *g, uint64_t rcvbuf);
int socket_group_connect_away(struct socket_group *g, unsigned int idx);
int socket_group_queued(const struct socket_group *g, unsigned int idx);
int socket_group_rcu_grace_period(void);
/* Closes socket idx (fd -1); its entry stays for the summary. */
void socket_group_close_one(struct socket_group *g, unsigned int idx);

/* Local port of the group, host order. */
uint16_t socket_group_port(const struct socket_group *g);

/*
 * Counts the UDP sockets bound to the group's port in this network namespace
 * that are not ours (from /proc/net/udp and udp6). Another process of the
 * same user could join our reuseport group and receive part of the traffic.
 */
int socket_group_foreign(const struct socket_group *g);

#endif
