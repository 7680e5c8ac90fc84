/* SPDX-License-Identifier: MIT */
/*
 * What the kernel says of one socket fd: its cookie (SO_COOKIE, the key the
 * BPF programs use), inode (/proc/net/udp, /proc/PID/fd), effective receive
 * buffer, and SO_MEMINFO's drop count and bytes queued. The one place these
 * getsockopt calls are made.
 */
#ifndef SYSLOGRX_SOCKINFO_H
#define SYSLOGRX_SOCKINFO_H

#include <stdint.h>

/* Each returns 0 or -errno. */
int sockinfo_cookie(int fd, uint64_t *cookie);
int sockinfo_inode(int fd, uint64_t *inode);
int sockinfo_rcvbuf(int fd, int *rcvbuf);
/* The kernel's own drop counter and bytes queued now; either may be NULL. */
int sockinfo_meminfo(int fd, uint64_t *drops, uint64_t *rmem_alloc);

#endif
