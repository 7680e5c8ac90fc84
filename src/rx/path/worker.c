// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include "common/signals.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "net/arrival_stamp.h"
#include "rx/path/diskbuf.h"
#include "rx/path/senders.h"
#include "rx/path/worker.h"

_Static_assert(RECV_SLOT_MAX == WORKER_SLOT_BYTES, "a slot and its overflow hold any datagram");
_Static_assert(DISKBUF_MSG_MAX == WORKER_SLOT_BYTES, "a record's message is one receive slot");

#define POLL_MS 100
/* A round that passed over full shares only: how long it waits for room
 * before epoll again (another listener's datagram waits at most this). */
#define SHARE_WAIT_MS 10
#define COALESCE_MIN_US 50
#define COALESCE_MAX_US 2000
/* Bound on datagrams counted as abandoned per socket at exit. */
#define ABANDON_MAX 1000000

/* Stop reading: for good (stop) or to be restarted over other sockets (regroup). */
static bool leaving(const struct worker_shared *sh)
{
	return flag_get(sh->stop) || (sh->regroup && flag_get(sh->regroup));
}

/*
 * The lab's --cost-ns: burn CPU for n messages, one clock read per check.
 * With --cost-makeup, while a backlog waits (the previous read was full) the
 * work runs on from where the last batch's ended, so time the thread lost to
 * preemption is made up: the worker drains exactly 1e9 / cost_ns msgs/s when
 * busy, however loaded the machine is (the lab's SC4S replica relies on it).
 * After a read that emptied a queue the period starts afresh.
 */
static void spend_cpu(struct worker *w, uint64_t cost_ns, unsigned int n, bool full)
{
	uint64_t now, from, until;

	if (!cost_ns)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	from = w->sh->cost_makeup && w->cost_backlog && w->cost_until_ns ? w->cost_until_ns : now;
	until = from + cost_ns * n;
	while (now < until)
		now = clock_ns(CLOCK_MONOTONIC);
	w->cost_until_ns = until;
	w->cost_backlog = full;
}

/* The disk buffer's writer gives a written batch back to the window's pool. */
static void batch_put(void *window, struct batch *b)
{
	window_batch_put(window, b);
}

/* The batch's datagrams per source address into this worker's table; a run
 * of datagrams from one sender is one update. */
static void count_senders(struct worker *w, int n)
{
	struct sender_table *t = w->sh->senders ? w->sh->senders[w->id] : NULL;
	uint8_t run[16], addr[16];
	uint64_t len = 0;

	if (!t)
		return;
	for (int i = 0; i < n; i++) {
		if (sockaddr_addr16((const struct sockaddr *)&w->addrs[i],
				    w->msgs[i].msg_hdr.msg_namelen, addr))
			memset(addr, 0, sizeof(addr)); /* none given: counted as :: */
		if (len && !memcmp(addr, run, sizeof(run))) {
			len++;
			continue;
		}
		if (len)
			sender_table_count(t, run, len);
		memcpy(run, addr, sizeof(run));
		len = 1;
	}
	if (len)
		sender_table_count(t, run, len);
}

/* The disk buffer of the output that takes listener lis's batches. */
static struct diskbuf *disk_of(const struct worker_shared *sh, uint32_t lis)
{
	unsigned int q = lis < WINDOW_MAX_LISTENERS ? sh->window->route[lis] : 0;

	return q ? sh->route_disk[q] : sh->disk;
}

/* A filled batch goes to the window (room was reserved for it), or, with no
 * room reserved, to its output's disk buffer (which counts it if it is
 * full): its writer writes the batch's bytes as they are and recycles it. */
static void deliver(const struct worker_shared *sh, struct batch *b, uint32_t room, uint32_t lis)
{
	if (room) {
		window_push(sh->window, b, room);
		return;
	}
	diskbuf_append_batch(disk_of(sh, lis), b, batch_put, sh->window);
}

/* recvmmsg's iovecs: datagram i into slot i of b, its bytes past the slot
 * into the worker's overflow; b NULL: all into the overflow (read to count). */
static void aim_iovecs(struct worker *w, struct batch *b, uint32_t want)
{
	size_t slot = b ? w->slot.size : 0;

	for (uint32_t i = 0; i < want; i++) {
		w->iov[2 * i] = (struct iovec){ b ? b->data + i * slot : NULL, slot };
		w->iov[2 * i + 1] = (struct iovec){ w->buf + (size_t)i * WORKER_SLOT_BYTES,
						    WORKER_SLOT_BYTES - slot };
		w->msgs[i].msg_hdr.msg_namelen = sizeof(w->addrs[i]);
		w->msgs[i].msg_hdr.msg_flags = 0;
		w->msgs[i].msg_hdr.msg_controllen = WORKER_CTRL_BYTES;
	}
}

/*
 * The records of the n datagrams received into b's slots: each stays where
 * the kernel wrote it, but one longer than its slot, whose bytes are split
 * between the slot and the overflow: it is copied whole to the batch's tail.
 * Returns the bytes of b->data in use, or -ENOMEM (b is left empty).
 */
static ssize_t place(struct worker *w, struct batch *b, int n)
{
	size_t slot = w->slot.size, end = (size_t)n * slot, tail = 0, longest = 0, fit = 0;
	unsigned int over = 0;

	for (int i = 0; i < n; i++) {
		size_t len = w->msgs[i].msg_len;

		if (len > WORKER_SLOT_BYTES)
			len = WORKER_SLOT_BYTES;
		if (len > slot) {
			tail += len;
			over++;
		} else if (len > fit) {
			fit = len;
		}
		if (len > longest)
			longest = len;
	}
	if (tail && batch_grow(b, end + tail)) {
		b->count = 0;
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		struct msg_rec *r = &b->recs[i];
		size_t len = w->msgs[i].msg_len;

		if (len > WORKER_SLOT_BYTES)
			len = WORKER_SLOT_BYTES;
		r->off = (size_t)i * slot;
		r->len = len;
		if (len > slot) {
			memcpy(b->data + end, b->data + r->off, slot);
			memcpy(b->data + end + slot, w->buf + (size_t)i * WORKER_SLOT_BYTES,
			       len - slot);
			r->off = end;
			end += len;
		}
		b->used += len;
	}
	b->count = n;
	recv_slot_update(&w->slot, n, over, longest, fit);
	return end;
}

/*
 * A batch bound for the disk buffer gets its datagrams back to back: its
 * record's CRC is then one pass and the writer's pwritev one piece, where
 * the slots' gaps made them a piece per datagram (each CRC piece's tail and
 * each iovec cost more than moving the bytes). Done in place, downwards in
 * slot order, so no datagram is overwritten before it moves; not when one
 * went past its slot (its copy is at the tail). Returns the new end.
 */
static size_t pack(struct batch *b, size_t end, size_t slot)
{
	size_t to = 0;

	if (end != (size_t)b->count * slot)
		return end;
	for (uint32_t i = 0; i < b->count; i++) {
		struct msg_rec *r = &b->recs[i];

		if (r->off != to)
			memmove(b->data + to, b->data + r->off, r->len);
		r->off = to;
		to += r->len;
	}
	return to;
}

/*
 * One recvmmsg of at most `want` datagrams from socket idx straight into a
 * batch pushed to the window, where `room` is reserved for it; room 0: the
 * batch goes to the disk buffer. Returns datagrams read, 0 if none (EAGAIN
 * or timeout), or -errno.
 */
static int read_socket(struct worker *w, unsigned int idx, uint32_t want, uint32_t room, int flags)
{
	const struct worker_shared *sh = w->sh;
	struct sock_counters *sc = &sh->counters[idx];
	struct batch *b = w->spare;
	uint64_t now, busy, bytes = 0, trunc = 0, empty = 0;
	ssize_t end;
	int n;

	/* The batch is taken before the read (and kept for the next one if
	 * nothing came): the kernel writes into it. */
	if (!b)
		b = w->spare = window_batch_get(sh->window);
	if (!b || batch_slots(b, want, w->slot.size))
		return -ENOMEM;
	aim_iovecs(w, b, want);
	n = recvmmsg(sh->group->socks[idx].fd, w->msgs, want, flags, NULL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return -errno;
	}
	if (n == 0)
		return 0;
	if (sh->taken)
		__atomic_fetch_add(sh->taken, n, __ATOMIC_RELAXED);

	busy = mono_ns();
	end = place(w, b, n);
	if (end < 0)
		return -ENOMEM;
	if (!room)
		end = pack(b, end, w->slot.size);
	w->spare = NULL;
	now = clock_ns(CLOCK_REALTIME);
	if (!w->first_ns)
		w->first_ns = now;
	w->last_ns = now;
	for (int i = 0; i < n; i++) {
		const struct mmsghdr *m = &w->msgs[i];
		struct msg_rec *r = &b->recs[i];

		r->sock = idx;
		r->listener = sh->group->socks[idx].listener;
		r->truncated = !!(m->msg_hdr.msg_flags & MSG_TRUNC);
		/* the kernel's arrival stamp; none (stamping not yet on): the read */
		r->recv_ns = arrival_stamp(&w->msgs[i].msg_hdr) ?: now;
		memcpy(&r->src, &w->addrs[i], sizeof(r->src));
		r->src_len = m->msg_hdr.msg_namelen;
		trunc += r->truncated;
		empty += r->len == 0;
	}
	bytes = b->used;
	batch_trim(b, end);
	count_senders(w, n);
	if (sh->pre)
		batch_preformat(sh->pre, &w->tz, b);
	spend_cpu(w, sh->cost_ns[sh->nr_cost_ns > 1 ? w->id : 0], n, (uint32_t)n == room);
	deliver(sh, b, room, sh->group->socks[idx].listener);
	w->busy_ns += mono_ns() - busy;
	/* Relaxed: a stats reader wants a recent value, not an ordering. */
	__atomic_fetch_add(&sc->received, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sc->bytes, bytes, __ATOMIC_RELAXED);
	if (trunc)
		__atomic_fetch_add(&sc->truncated, trunc, __ATOMIC_RELAXED);
	if (empty)
		__atomic_fetch_add(&sc->empty, empty, __ATOMIC_RELAXED);
	return n;
}

/* Reads and counts, without keeping, what is still queued on socket idx;
 * bounded by the queue's length at the start (a live sender keeps adding). */
static void count_abandoned(struct worker *w, unsigned int idx)
{
	struct sock_counters *sc = &w->sh->counters[idx];
	uint64_t left = ABANDON_MAX;
	int n;

	aim_iovecs(w, NULL, w->sh->batch); /* the batch read into last is not ours now */
	while (left && (n = recvmmsg(w->sh->group->socks[idx].fd, w->msgs, w->sh->batch,
				     MSG_DONTWAIT, NULL)) > 0) {
		__atomic_fetch_add(&sc->abandoned, n, __ATOMIC_RELAXED);
		left = left > (uint64_t)n ? left - n : 0;
	}
}

/* Reserves window room (in the share of the socket's listener's queue)
 * then reads; gives back what the socket did not fill. 0 when the socket
 * had nothing, or (*no_room set, if asked) when the window had no room
 * within wait_ms. */
static int reserve_and_read(struct worker *w, unsigned int idx, int flags, const volatile int *stop,
			    bool *no_room, int wait_ms)
{
	const struct worker_shared *sh = w->sh;
	uint32_t lis = sh->group->socks[idx].listener;
	uint32_t room;
	int n;

	if (sh->disk) {
		/* Never wait for window room: while the disk buffer spills (it
		 * holds unread batches, or the mode is reliable), or when the
		 * window is full, the batch goes to disk. */
		room = diskbuf_spilling(disk_of(sh, lis)) ?
			       0 :
			       window_reserve_for(sh->window, lis, sh->batch, stop, 0);
		if (!room)
			return read_socket(w, idx, sh->batch, 0, flags);
	} else {
		room = window_reserve_for(sh->window, lis, sh->batch, stop, wait_ms);
		if (!room) {
			if (no_room)
				*no_room = true;
			return 0;
		}
	}
	n = read_socket(w, idx, room, room, flags);
	if (n <= 0)
		window_unreserve_for(sh->window, lis, room);
	return n;
}

/*
 * After a small read, give the kernel queue a moment to gather a batch: a
 * blocking read per datagram costs a wake-up and a syscall per message, more
 * than everything else syslogrx does with it. The pause adapts: it doubles
 * while reads stay small (the rate is low, the queue fills slowly) and halves
 * when a read comes back half full or more (load: read again at once).
 *
 * Its ceiling is set by the smallest receive buffer of the worker's sockets:
 * half the time that buffer takes to fill with 1000-byte datagrams (about
 * 2 KiB of kernel memory each) at 250,000/s, the loopback ceiling, so a burst
 * that starts mid-pause still fits. 212,992 bytes (the kernel's default) gives
 * about 200 us; 32 MiB gives the 2 ms cap.
 */
static void coalesce(struct worker *w, int n)
{
	const struct worker_shared *sh = w->sh;
	struct timespec ts;

	if (n <= 0 || flag_get(sh->stop))
		return;
	if ((unsigned int)n >= sh->batch / 2) {
		w->pause_us = w->pause_us / 2 > COALESCE_MIN_US ? w->pause_us / 2 : COALESCE_MIN_US;
		return;
	}
	if ((unsigned int)n >= sh->batch / 4)
		return;
	ts.tv_sec = 0;
	ts.tv_nsec = w->pause_us * 1000L;
	nanosleep(&ts, NULL);
	w->pause_us = w->pause_us * 2 < w->pause_max_us ? w->pause_us * 2 : w->pause_max_us;
}

static unsigned int pause_ceiling_us(const struct worker *w)
{
	const struct socket_group *g = w->sh->group;
	uint64_t smallest = UINT64_MAX, us;

	for (unsigned int i = 0; i < w->nsocks; i++)
		if ((uint64_t)g->socks[w->socks[i]].rcvbuf < smallest)
			smallest = g->socks[w->socks[i]].rcvbuf;
	/* datagrams it holds / 250 per ms, halved, in us */
	us = smallest / 2048 * 1000 / 250 / 2;
	return us < COALESCE_MIN_US ? COALESCE_MIN_US : us > COALESCE_MAX_US ? COALESCE_MAX_US : us;
}

/*
 * At stop: what the kernel has already queued on our sockets is ours. Under a
 * sender that never stops, "until empty" would never end: past drain_ms what
 * is still queued is read and counted as abandoned (closing the socket would
 * free it uncounted: the kernel reports no drop for it).
 */
static void final_drain(struct worker *w)
{
	const struct worker_shared *sh = w->sh;
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + sh->drain_ms * 1000000ULL;

	for (unsigned int i = 0; i < w->nsocks && !flag_get(sh->force); i++) {
		int n;

		do {
			bool no_room = false;

			n = reserve_and_read(w, w->socks[i], MSG_DONTWAIT, sh->force, &no_room,
					     POLL_MS);
			if (n < 0)
				w->error = n;
			/* A full window is the output still writing (a slow Kafka
			 * broker): the queue is not empty, wait for room. */
			if (no_room)
				n = 1;
		} while (n > 0 && !flag_get(sh->force) && clock_ns(CLOCK_MONOTONIC) < deadline);
	}
	/* Another process reads them after us (a successor, or the next child
	 * of a supervisor, which may change its mind at a final stop). */
	if (sh->queues_outlive && __atomic_load_n(sh->queues_outlive, __ATOMIC_ACQUIRE))
		return;
	for (unsigned int i = 0; i < w->nsocks; i++)
		count_abandoned(w, w->socks[i]);
}

static void loop_one_socket(struct worker *w)
{
	const struct worker_shared *sh = w->sh;
	int n;

	while (!leaving(sh)) {
		__atomic_store_n(&w->beat_ns, mono_ns(), __ATOMIC_RELAXED);
		/* Blocks until one datagram (or SO_RCVTIMEO), then takes what is queued. */
		n = reserve_and_read(w, w->socks[0], MSG_WAITFORONE, sh->stop, NULL, POLL_MS);
		if (n < 0) {
			w->error = n;
			return;
		}
		coalesce(w, n);
	}
}

static void loop_epoll(struct worker *w)
{
	const struct worker_shared *sh = w->sh;
	bool shares = sh->window->nr_queues > 1; /* set before the workers start */
	struct epoll_event ev[64];

	while (!leaving(sh)) {
		int nev;

		__atomic_store_n(&w->beat_ns, mono_ns(), __ATOMIC_RELAXED);
		nev = epoll_wait(w->epfd, ev, 64, POLL_MS);

		if (nev < 0) {
			if (errno == EINTR)
				continue;
			w->error = -errno;
			return;
		}
		/* Level-triggered: one batch per ready socket per round keeps the
		 * sockets of a worker fair to each other. With a queue per output
		 * a socket whose output's share is full is passed over (its
		 * kernel queue holds, then drops, counted for its listener), so
		 * the worker's other sockets go on; a round that read nothing
		 * for that reason waits for room. */
		int most = 0;
		bool full = false;

		for (int i = 0; i < nev && !leaving(sh); i++) {
			int n = reserve_and_read(w, ev[i].data.u32, MSG_DONTWAIT, sh->stop, &full,
						 shares ? 0 : POLL_MS);

			if (n < 0) {
				w->error = n;
				return;
			}
			if (n > most)
				most = n;
		}
		if (full && !most)
			window_wait_room(sh->window, SHARE_WAIT_MS);
		coalesce(w, most);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16]; /* 15 characters and a NUL: what top -H and ps -L show */

	snprintf(name, sizeof(name), "worker %u", w->id);
	pthread_setname_np(pthread_self(), name);
	if (w->nsocks == 1)
		loop_one_socket(w);
	else
		loop_epoll(w);
	/* A regroup leaves the queues to the next set of threads. */
	if (!w->error && flag_get(w->sh->stop))
		final_drain(w);
	if (w->spare)
		window_batch_put(w->sh->window, w->spare);
	w->spare = NULL;
	return NULL;
}

static int worker_setup(struct worker *w)
{
	const struct worker_shared *sh = w->sh;
	struct timeval tv = { .tv_sec = 0, .tv_usec = POLL_MS * 1000 };

	w->msgs = calloc(sh->batch, sizeof(*w->msgs));
	w->iov = calloc(2 * (size_t)sh->batch, sizeof(*w->iov));
	w->addrs = calloc(sh->batch, sizeof(*w->addrs));
	w->buf = malloc((size_t)sh->batch * WORKER_SLOT_BYTES);
	unsigned int nr = sh->order ? sh->nr_order : sh->group->n;

	w->socks = calloc(nr ? nr : 1, sizeof(*w->socks));
	/* room for each datagram's arrival stamp (SO_TIMESTAMPNS) */
	w->ctrl = calloc(sh->batch, WORKER_CTRL_BYTES);
	if (!w->msgs || !w->iov || !w->addrs || !w->buf || !w->socks || !w->ctrl)
		return -ENOMEM;
	for (unsigned int i = 0; i < sh->batch; i++) {
		w->msgs[i].msg_hdr.msg_control = w->ctrl + (size_t)i * WORKER_CTRL_BYTES;
		w->msgs[i].msg_hdr.msg_iov = &w->iov[2 * i];
		w->msgs[i].msg_hdr.msg_iovlen = 2;
		w->msgs[i].msg_hdr.msg_name = &w->addrs[i];
	}
	for (unsigned int s = w->id; s < nr; s += sh->nr_workers)
		w->socks[w->nsocks++] = sh->order ? sh->order[s] : s;
	w->pause_max_us = pause_ceiling_us(w);
	w->pause_us = COALESCE_MIN_US;
	recv_slot_init(&w->slot);
	w->tz.minute = -1;

	w->epfd = -1;
	if (w->nsocks == 1) {
		if (setsockopt(sh->group->socks[w->socks[0]].fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
			       sizeof(tv)))
			return -errno;
		return 0;
	}
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		return -errno;
	for (unsigned int i = 0; i < w->nsocks; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = w->socks[i] };

		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, sh->group->socks[w->socks[i]].fd, &ev))
			return -errno;
	}
	return 0;
}

static void worker_free(struct worker *w)
{
	if (w->epfd >= 0)
		close(w->epfd);
	w->epfd = -1;
	free(w->msgs);
	free(w->iov);
	free(w->addrs);
	free(w->buf);
	free(w->socks);
	free(w->ctrl);
	w->ctrl = NULL;
	w->msgs = NULL;
	w->iov = NULL;
	w->addrs = NULL;
	w->buf = NULL;
	w->socks = NULL;
}

int worker_start(struct worker *w, unsigned int id, const struct worker_shared *sh)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->id = id;
	w->sh = sh;
	w->epfd = -1;
	w->beat_ns = mono_ns();
	err = worker_setup(w);
	if (!err)
		err = -pthread_create(&w->thread, NULL, worker_main, w);
	if (err)
		worker_free(w);
	return err;
}

int worker_join(struct worker *w)
{
	pthread_join(w->thread, NULL);
	worker_free(w);
	return w->error;
}
