/* SPDX-License-Identifier: MIT */
/*
 * A worker thread: owns some sockets of the group, reads them with recvmmsg
 * in batches of at most the window's free room, and pushes each batch into
 * the input window. Sockets are dealt round-robin: worker t owns sockets
 * t, t+M, t+2M, ... One socket: a blocking recvmmsg; several: epoll.
 */
#ifndef SYSLOGRX_WORKER_H
#define SYSLOGRX_WORKER_H

#include <pthread.h>
#include <stdint.h>
#include "net/socket_group.h"
#include "rx/window.h"

struct diskbuf;

/* Per-socket counts, written only by the owning worker, read by anyone. */
struct sock_counters {
	uint64_t received;
	uint64_t bytes;
	uint64_t truncated;	/* longer than a receive slot: kept cut, counted */
	uint64_t empty;		/* zero-length datagrams: kept, counted */
	uint64_t abandoned;	/* still queued when the exit drain's time ran out:
				 * read and counted, not written */
};

struct worker_shared {
	struct socket_group *group;
	struct window *window;
	struct diskbuf *disk;		/* --disk-buffer, or NULL */
	struct sock_counters *counters;	/* one per socket of the group */
	unsigned int nr_workers;
	unsigned int batch;
	uint64_t cost_ns;
	const volatile int *stop;	/* stop reading: drain what is queued, exit */
	const volatile int *force;	/* exit now */
	int drain_ms;			/* bound on the final drain */
};

struct worker {
	unsigned int id;
	pthread_t thread;
	const struct worker_shared *sh;
	unsigned int nsocks;
	unsigned int *socks;		/* indexes into the group */
	int epfd;
	struct mmsghdr *msgs;
	struct iovec *iov;
	char *buf;			/* batch x WORKER_SLOT_BYTES */
	struct sockaddr_in6 *addrs;
	unsigned int pause_us;		/* the current pause after a small read */
	unsigned int pause_max_us;	/* its ceiling, from the sockets' rcvbuf */
	int error;			/* -errno that ended the thread, 0 if none */
};

/* The largest UDP payload over IPv6 is 65527; one slot holds any datagram. */
#define WORKER_SLOT_BYTES 65536

int worker_start(struct worker *w, unsigned int id, const struct worker_shared *sh);
/* Joins the thread and frees what the worker holds; returns w->error. */
int worker_join(struct worker *w);

#endif
