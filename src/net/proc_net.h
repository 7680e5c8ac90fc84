/* SPDX-License-Identifier: MIT */
/*
 * UDP sockets as /proc shows them: the /proc/net/udp{,6} rows, the process
 * that owns a socket inode, and that socket's cookie (SO_COOKIE) borrowed
 * from the owner with pidfd_getfd.
 */
#ifndef SYSLOGRX_PROC_NET_H
#define SYSLOGRX_PROC_NET_H

#include <stddef.h>
#include <stdint.h>

struct udp_sock_row {
	int family;	   /* AF_INET or AF_INET6 */
	char local[64];	   /* "127.0.0.1:5514" or "[::1]:5514" */
	uint16_t port;	   /* local port */
	uint64_t inode;	   /* 0 for a socket with no file (kernel socket) */
	uint64_t rx_queue; /* bytes queued (sk_rmem_alloc) */
	uint64_t drops;	   /* since the socket was created */
	uint32_t uid;
};

/* One data line of /proc/net/udp (AF_INET) or /proc/net/udp6 (AF_INET6).
 * Pure. Returns 0, or -EINVAL for a line that is not such a row. */
int proc_net_udp_parse_line(const char *line, int family, struct udp_sock_row *out);

/* Every row of both tables of this network namespace. A non-zero return of
 * fn stops the walk and is returned; else 0 or -errno. */
int proc_net_udp_for_each(int (*fn)(const struct udp_sock_row *r, void *ctx), void *ctx);

/* The fd number in /proc/PID/fd whose link is socket:[INODE], or -ENOENT
 * (or another -errno, e.g. -ESRCH / -EACCES). */
int proc_pid_socket_fd(int pid, uint64_t inode);

/* First process (lowest pid) holding the socket, by a scan of /proc/[pid]/fd.
 * comm may be NULL. Returns 0 or -ENOENT. */
int proc_socket_owner(uint64_t inode, int *pid, char *comm, size_t comm_len);

/* The comm of pid, without its newline. 0 or -errno. */
int proc_pid_comm(int pid, char *comm, size_t comm_len);

/* A copy, in this process, of pid's fd for the socket (pidfd_getfd; needs
 * CAP_SYS_PTRACE over pid). The caller closes it soon: it keeps the socket
 * alive. Returns the fd or -errno. */
int proc_socket_borrow(int pid, uint64_t inode);

/* The same, when the fd number in pid is known (a cached one): -ENOENT if
 * that fd is no longer the socket. */
int proc_pid_fd_borrow(int pid, int fd, uint64_t inode);

/* The socket's cookie (SO_COOKIE) through a borrowed fd. 0 or -errno. */
int proc_socket_cookie(int pid, uint64_t inode, uint64_t *cookie);

#endif
