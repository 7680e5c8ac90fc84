/* SPDX-License-Identifier: MIT */
/*
 * A worker thread: owns some sockets of the group, reads them with recvmmsg
 * in batches of at most the window's free room, and pushes each batch into
 * the input window. Sockets are dealt round-robin: worker t owns sockets
 * t, t+M, t+2M, ... One socket: a blocking recvmmsg; several: epoll.
 * For a stream sink it formats each batch's lines too (rx/path/preformat.h).
 */
#ifndef SYSLOGRX_WORKER_H
#define SYSLOGRX_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "net/socket_group.h"
#include "rx/path/preformat.h"
#include "rx/path/recv_slot.h"
#include "rx/path/window.h"

struct diskbuf;
struct sender_table;

/* Per-socket counts, written only by the owning worker, read by anyone. */
struct sock_counters {
	uint64_t received;
	uint64_t bytes;
	uint64_t truncated; /* longer than a receive slot: kept cut, counted */
	uint64_t empty;	    /* zero-length datagrams: kept, counted */
	uint64_t abandoned; /* still queued when the exit drain's time ran out:
				 * read and counted, not written */
};

struct worker_shared {
	const struct socket_group *group;
	struct window *window;
	struct diskbuf *disk; /* --disk-buffer, or NULL */
	/* An output per listener: queue q's own disk buffer (q >= 1; queue 0
	 * has disk), each the same mode as disk. */
	struct diskbuf *route_disk[WINDOW_MAX_QUEUES];
	struct sock_counters *counters; /* one per socket of the group */
	unsigned int nr_workers;
	unsigned int batch;
	const uint64_t *cost_ns; /* lab knob: nr_cost_ns values, 1 = the same for all */
	unsigned int nr_cost_ns;
	bool cost_makeup;	   /* --cost-makeup: preemption time is made up */
	const volatile int *stop;  /* stop reading: drain what is queued, exit */
	const volatile int *force; /* exit now */
	int drain_ms;		   /* bound on the final drain */
	/* A live resize: the sockets to read (indexes into the group) and a flag
	 * that ends the threads WITHOUT the final drain, to be restarted over a
	 * new set. NULL / 0: every socket of the group, no regroup. */
	const unsigned int *order;
	unsigned int nr_order;
	const volatile int *regroup;
	/* Datagrams taken from the kernel, counted as soon as recvmmsg returns:
	 * with what the output wrote, what a killed process lost (supervisor). */
	uint64_t *taken;
	/* The sockets outlive us (systemd's fd store): at stop, what is still
	 * queued stays for the next process instead of being counted abandoned. */
	const bool *queues_outlive;
	/* Received per source address (rx/path/senders.h): worker t counts
	 * into senders[t]; NULL = not counted (--senders 0). */
	struct sender_table *const *senders;
	/* Each batch's lines formatted here before the hand-off (the output
	 * stage's output_stage_preformat), or NULL: the output stage formats. */
	const struct preformat *pre;
};

struct worker {
	unsigned int id;
	pthread_t thread;
	const struct worker_shared *sh;
	unsigned int nsocks;
	unsigned int *socks; /* indexes into the group */
	int epfd;
	struct mmsghdr *msgs;
	struct iovec *iov;     /* two per datagram: its slot in the batch, then overflow */
	char *buf;	       /* batch x WORKER_SLOT_BYTES: the slots' overflow */
	struct batch *spare;   /* taken from the window, not yet read into */
	struct recv_slot slot; /* each datagram's room in the batch */
	struct tz_cache tz;    /* --timezone, for the lines formatted here */
	struct sockaddr_in6 *addrs;
	char *ctrl;		   /* batch x WORKER_CTRL_BYTES of cmsg room: arrival stamps */
	unsigned int pause_us;	   /* the current pause after a small read */
	unsigned int pause_max_us; /* its ceiling, from the sockets' rcvbuf */
	int error;		   /* -errno that ended the thread, 0 if none */
	/* For the sizing advice (rx/settings/advice.c), final once it is joined: when
	 * datagrams came, and the time spent handling what was read (from
	 * recvmmsg's return to the window push: its drain rate when busy). */
	uint64_t first_ns, last_ns; /* CLOCK_REALTIME of its first and last read */
	uint64_t busy_ns;	    /* CLOCK_MONOTONIC, summed over reads */
	uint64_t cost_until_ns;	    /* --cost-makeup: the busy period's work ends here */
	bool cost_backlog;	    /* the last read was full: the period goes on */
	/* CLOCK_MONOTONIC of its loop's last turn, for /healthz: a turn comes
	 * at least every POLL_MS, a full window included (a relaxed store). */
	uint64_t beat_ns;
};

/* The largest UDP payload over IPv6 is 65527; one slot holds any datagram. */
#define WORKER_SLOT_BYTES 65536
/* Room for one SCM_TIMESTAMPNS control message (32 bytes on 64-bit). */
#define WORKER_CTRL_BYTES 64

int worker_start(struct worker *w, unsigned int id, const struct worker_shared *sh);
/* Joins the thread and frees what the worker holds; returns w->error. */
int worker_join(struct worker *w);

#endif
