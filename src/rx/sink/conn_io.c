// SPDX-License-Identifier: MIT
#include <errno.h>
#include <poll.h>
#include <time.h>
#include <sys/socket.h>
#include "common/clock.h"
#include "common/poll_until.h"
#include "rx/sink/conn_io.h"

#define MS_NS 1000000ULL

int conn_send_all(int fd, const char *p, size_t len, int stall_ms, const volatile int *stop)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		int ready;

		if (n >= 0) {
			p += n;
			len -= n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		ready = poll_until_unless(fd, POLLOUT, mono_ns() + stall_ms * MS_NS, stop);
		if (ready < 0)
			return ready;
	}
	return 0;
}

int conn_peer_closed(int fd, struct tls_session *session)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	if (session)
		return tls_session_closed(session);
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}

void conn_backoff(int *backoff_ms, const struct sink *s)
{
	*backoff_ms = *backoff_ms ? *backoff_ms * 2 : BACKOFF_MIN_MS;
	if (*backoff_ms > BACKOFF_MAX_MS)
		*backoff_ms = BACKOFF_MAX_MS;
	for (int left = *backoff_ms; left > 0 && !sink_aborted(s); left -= 50) {
		struct timespec ts = { 0, (left < 50 ? left : 50) * 1000000L };

		nanosleep(&ts, NULL);
	}
}
