/* SPDX-License-Identifier: MIT */
/*
 * Live resize of a running receiver: a new number of sockets in selection and
 * of worker threads, without a restart and without losing a datagram.
 *
 * Grow: take spare sockets of the pool bound at start (--max-sockets; with
 * --balance hash, or past the pool, open new ones: that needs no capability
 * for a port >= 1024, but the rcvbuf is then capped by net.core.rmem_max),
 * put them in the map, start the workers over them, then select them.
 *
 * Shrink: out of selection (the program's live count, slots emptied), an RCU
 * grace period, connect() away (no lookup matches them any more), a second
 * grace period, the workers drain them, then close. --shrink-naive (a lab
 * negative control) closes them after the first grace period with what is
 * queued: the kernel frees it, and only the tracer's no-socket count sees it.
 *
 * Classic BPF (random without CAP_BPF) has no map: the program picks an index
 * of the group's join order below its N. Slot k is the socket at index k; a
 * shrink attaches the program for the smaller N first (the retiring sockets
 * hold the top indices), then goes on as above; each leaving socket is
 * replaced in its index by the group's last one (rx->join_order follows); a
 * grow takes the socket at the next index (a spare), else binds one (it
 * joins at the end), and attaches the larger program once it is read.
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
