// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "common/clock.h"
#include "net/arrival_stamp.h"

uint64_t arrival_stamp(struct msghdr *h)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
		}
	}
	return 0;
}

/* One probe: a byte to ourselves over loopback (delivered inside sendto, so
 * an arrival stamp is older than the clock read after it), then read back.
 * 1 when it was stamped on arrival, 0 when on reading, or -errno. */
static int stamped_on_arrival(int fd, const struct sockaddr_in *self)
{
	char byte = 0, ctl[CMSG_SPACE(sizeof(struct timespec))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr h = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};
	uint64_t sent, stamp;

	if (sendto(fd, &byte, 1, 0, (const struct sockaddr *)self, sizeof(*self)) != 1)
		return -errno;
	sent = clock_ns(CLOCK_REALTIME);
	if (recvmsg(fd, &h, 0) < 0)
		return errno == EAGAIN ? 0 : -errno;
	stamp = arrival_stamp(&h);
	return stamp && stamp <= sent;
}

int arrival_stamps_wait(unsigned int timeout_ms)
{
	struct sockaddr_in self = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval rcvtimeo = { .tv_usec = 100000 };
	const struct timespec pause = { .tv_nsec = 1000000 };
	uint64_t deadline = mono_ns() + timeout_ms * 1000000ULL;
	socklen_t len = sizeof(self);
	int fd, on = 1, err;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcvtimeo, sizeof(rcvtimeo)) ||
	    bind(fd, (struct sockaddr *)&self, sizeof(self)) ||
	    getsockname(fd, (struct sockaddr *)&self, &len)) {
		err = -errno;
		goto out;
	}
	while (!(err = stamped_on_arrival(fd, &self))) {
		if (mono_ns() >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		nanosleep(&pause, NULL);
	}
	if (err > 0)
		err = 0;
out:
	close(fd);
	return err;
}
