// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "common/clock.h"
#include "common/sd_notify.h"

bool sd_notify_enabled(void)
{
	const char *path = getenv("NOTIFY_SOCKET");

	return path && *path;
}

int sd_notify_fd(const char *state, int fd)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl = {};
	struct iovec iov = { .iov_base = (void *)state, .iov_len = strlen(state) };
	struct msghdr msg = { .msg_name = &sa, .msg_iov = &iov, .msg_iovlen = 1 };
	size_t len;
	int s, err = 0;

	if (!path || !*path)
		return -ENOENT;
	len = strlen(path);
	if (len >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	msg.msg_namelen = offsetof(struct sockaddr_un, sun_path) + len;
	if (fd >= 0) {
		struct cmsghdr *c;

		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (sendmsg(s, &msg, MSG_NOSIGNAL) < 0)
		err = -errno;
	close(s);
	return err;
}

int sd_notify_barrier(int timeout_ms)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	int p[2], err;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	err = sd_notify_fd("BARRIER=1", p[1]);
	close(p[1]); /* systemd's copy is the last write end now */
	while (!err) {
		struct pollfd pfd = { .fd = p[0], .events = 0 };
		uint64_t now = mono_ns();
		int n;

		if (now >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		n = poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000));
		if (n > 0 && (pfd.revents & POLLHUP))
			break;
		if (n < 0 && errno != EINTR)
			err = -errno;
	}
	close(p[0]);
	return err;
}
