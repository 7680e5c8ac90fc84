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
	uint64_t cookie;	/* SO_COOKIE: matches bpf_get_socket_cookie() */
	uint64_t inode;		/* as in /proc/net/udp and /proc/PID/fd */
	int rcvbuf;		/* effective, as the kernel reports it */
};

struct socket_group {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char listen[80];	/* normalised "127.0.0.1:5514" / "[::1]:5514" */
	unsigned int n;
	struct group_socket *socks;
};

/*
 * Opens n sockets on `listen`. rcvbuf > 0 asks for that receive buffer:
 * SO_RCVBUFFORCE, else SO_RCVBUF with a warning giving the effective size.
 * Returns 0 or -errno (-EADDRINUSE: the port is taken by a socket outside
 * our group), having logged one line that names the problem.
 */
int socket_group_open(struct socket_group *g, const char *listen, unsigned int n, uint64_t rcvbuf);
void socket_group_close(struct socket_group *g);

/* Local port of the group, host order. */
uint16_t socket_group_port(const struct socket_group *g);

/*
 * Counts the UDP sockets bound to the group's port in this network namespace
 * that are not ours (from /proc/net/udp and udp6). Another process of the
 * same user could join our reuseport group and receive part of the traffic.
 */
int socket_group_foreign(const struct socket_group *g);

#endif
