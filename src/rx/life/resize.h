/* SPDX-License-Identifier: MIT */
/*
 * Live resize of a running receiver: a new number of sockets in selection and
 * of worker threads, without a restart and without losing a datagram.
 *
 * Grow: take spare sockets of the pool bound at start (--max-sockets; with
 * --balance hash, open new ones: that needs no capability for a port >= 1024,
 * but the rcvbuf is then capped by net.core.rmem_max, said at start), put
 * them in the map, start the workers over them, then select them.
 *
 * Shrink, with a balancer: out of selection (the program's live count, slots
 * emptied), an RCU grace period, and the sockets are spares of the pool again:
 * bound, read, with the rcvbuf forced at start, for the next grow to take.
 * With the kernel's hash every socket of the group is selected, so a socket
 * leaves it for good: connect() away (no lookup matches it any more), a grace
 * period, the workers drain it, then close. --shrink-naive (a lab negative
 * control) closes them after the first grace period with what is queued: the
 * kernel frees it, and only the tracer's no-socket count sees it.
 *
 * Classic BPF (random without CAP_BPF) has no map: the program picks an index
 * of the group's join order below its N, so slot k is the socket at index k.
 * A shrink attaches the program for the smaller N (the retiring sockets hold
 * the top indices): they are spares, as with a balancer. A grow takes the
 * socket at the next index (a spare), else binds one (it joins at the end),
 * and attaches the larger program once it is read. A socket that leaves the
 * group (--shrink-naive's close) is replaced in its index by the last one:
 * rx->join_order follows the kernel (net/cbpf_balancer.h).
 */
#ifndef SYSLOGRX_RESIZE_H
#define SYSLOGRX_RESIZE_H

#include <stdbool.h>
#include "rx/life/receiver.h"

/* What SIGHUP's re-read of --config asks for. */
struct resize_request {
	unsigned int sockets;
	unsigned int threads;
	bool naive; /* --shrink-naive */
};

/* 0 or -errno, having logged one line naming the reason; on an error the
 * receiver keeps running with the sockets and threads it had (or, past the
 * point of no return, those it could reach, said in the log). */
int receiver_resize(struct receiver *r, const struct resize_request *req);

#endif
