// SPDX-License-Identifier: MIT
#include <errno.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "net/sockinfo.h"

int sockinfo_cookie(int fd, uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);

	return getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len) ? -errno : 0;
}

int sockinfo_inode(int fd, uint64_t *inode)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	*inode = st.st_ino;
	return 0;
}

int sockinfo_rcvbuf(int fd, int *rcvbuf)
{
	socklen_t len = sizeof(*rcvbuf);

	return getsockopt(fd, SOL_SOCKET, SO_RCVBUF, rcvbuf, &len) ? -errno : 0;
}

int sockinfo_meminfo(int fd, uint64_t *drops, uint64_t *rmem_alloc)
{
	__u32 mem[SK_MEMINFO_VARS] = {};
	socklen_t len = sizeof(mem);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len))
		return -errno;
	if (len <= SK_MEMINFO_DROPS * sizeof(mem[0]))
		return -EOPNOTSUPP;
	if (drops)
		*drops = mem[SK_MEMINFO_DROPS];
	if (rmem_alloc)
		*rmem_alloc = mem[SK_MEMINFO_RMEM_ALLOC];
	return 0;
}
