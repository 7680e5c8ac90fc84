/* SPDX-License-Identifier: MIT */
/*
 * The input window: a bounded hand-off of message batches from the worker
 * threads to the output stage (syslog-ng's log-iw-size, done in batches).
 *
 * A worker reserves room for up to `batch` messages before it reads the
 * kernel, so the window never holds more than `max_msgs` messages: when it is
 * full the workers stop reading, the kernel queue fills and the kernel drops
 * (where the tracer counts it). Nothing is dropped in here. The byte bound
 * counts what the window allocates for what it holds, not only message
 * bytes: each batch's header, its record array (batch_cap records) and its
 * data buffer. It is soft: a worker waits while the batches held take
 * max_bytes or more, so it can overshoot by one batch per worker. One lock
 * round trip moves a whole batch.
 *
 * Memory (the bound docs/security.md gives operators): the batches alive
 * at once are those held (< max_bytes + one batch per worker; the one the
 * output stage writes is held until released), one being filled per worker,
 * one read back from a disk buffer, and the pool of recycled ones. A batch
 * goes back to the pool only while everything the window has allocated
 * stays under max_bytes, else it is freed, and a pool batch no taker needed
 * for pool_idle_ns (WINDOW_POOL_IDLE_NS) is freed. So
 *   allocated <= max_bytes + (2 * workers + 1) * WINDOW_BATCH_MAX(batch_cap)
 * where WINDOW_BATCH_MAX is one batch at its largest (every datagram 64 KiB,
 * and its lines formatted by its worker).
 * A batch a worker received into is counted at its data area's size, cut to
 * what it holds after a short read (batch_trim).
 * A reliable disk buffer's hand-off (diskbuf.h) holds written batches for
 * the output in the window's place, within the same max_msgs and max_bytes
 * (the window itself holds none then): the bound is the same.
 */
#ifndef SYSLOGRX_WINDOW_H
#define SYSLOGRX_WINDOW_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* One received datagram inside a batch. */
struct msg_rec {
	uint32_t off; /* into batch->data */
	uint32_t len;
	uint32_t sock;		 /* index of the socket in the group */
	uint32_t truncated;	 /* MSG_TRUNC: bigger than our receive slot */
	uint64_t recv_ns;	 /* CLOCK_REALTIME, per recvmmsg call */
	struct sockaddr_in6 src; /* sender; an IPv4 sender as sockaddr_in */
	socklen_t src_len;
	uint32_t listener; /* which --listen (< WINDOW_MAX_LISTENERS) */
};

/* Listeners a record can name (config's CONFIG_MAX_LISTENERS). */
#define WINDOW_MAX_LISTENERS 64
/* Takers of the window (an output per listener): one queue each. */
#define WINDOW_MAX_QUEUES 16

/* The batches queued for one taker, oldest first. With several queues
 * each holds at most its share of the bounds (max_msgs and max_bytes over
 * nr_queues): a taker that stops fills its share, not the window. */
struct window_queue {
	struct batch *head, *tail;
	uint64_t msgs, reserved, held_mem; /* with several queues: its share's use */
};

struct batch {
	struct batch *next;
	uint32_t count; /* messages in recs */
	uint32_t cap;	/* room in recs */
	struct msg_rec *recs;
	char *data;
	size_t used; /* message bytes in data (the sum of recs' len) */
	size_t data_cap;
	uint64_t disk_seg; /* 0: from the window; else read back from this
					 * disk buffer segment (rx/path/diskbuf.h), */
	uint64_t disk_off; /* at this offset */
	size_t counted;	   /* its bytes in window.alloc_bytes (batch_mem when counted) */
	/* Its lines, formatted by the worker (rx/path/preformat.h) when
	 * formatted: out_used bytes, out_bad of the messages malformed,
	 * out_sd_dropped SD elements dropped (syslog/sd.h), out_breaks_escaped
	 * of the messages with line breaks escaped (syslog/format.h). */
	char *out;
	size_t out_used, out_cap;
	uint32_t out_bad;
	uint32_t out_sd_dropped;
	uint32_t out_breaks_escaped;
	bool formatted;
	/* The output stage's: messages of it already written (or discarded)
	 * by a flush in the middle of taking it (output_sync.c), so a stop
	 * that gives up on the rest does not count them twice. */
	uint32_t settled;
};

/* What a batch takes: header, records, data buffer. */
#define BATCH_MEM(b)                                                                        \
	(sizeof(struct batch) + (size_t)(b)->cap * sizeof(struct msg_rec) + (b)->data_cap + \
	 (b)->out_cap)
/* One batch at its largest: batch_cap datagrams of 64 KiB (batch_add's data
 * buffer grows by doubling from 16 KiB, so up to twice that; a received
 * batch has batch_cap slots of at most 64 KiB plus, past them, a copy of
 * each datagram longer than its slot: also under twice), and its formatted
 * lines (PREFORMAT_MAX_BYTES, 4 MiB: a batch needing more is not formatted
 * by its worker). */
#define WINDOW_BATCH_MAX(batch_cap)                                                          \
	(sizeof(struct batch) + (size_t)(batch_cap) * (sizeof(struct msg_rec) + 2 * 65536) + \
	 (4u << 20))

/* A pooled batch no taker needed for this long is freed. */
#define WINDOW_POOL_IDLE_NS (10ULL * 1000000000ULL)

struct window_stats {
	uint64_t size, size_bytes; /* the bounds */
	uint64_t msgs, bytes;	   /* held now */
	uint64_t held_mem;	   /* what the held batches take (the byte bound's) */
	uint64_t alloc_bytes;	   /* every batch the window has allocated and not freed */
	uint64_t pool;		   /* batches in the pool now */
	uint64_t hwm;		   /* most messages held at once */
	double full_seconds;	   /* time some worker waited for room */
};

struct window {
	pthread_mutex_t lock;
	pthread_cond_t room;  /* workers wait here */
	pthread_cond_t ready; /* the output stages wait here */
	/* Full batches by taker: a batch (one socket's read: one listener)
	 * joins queue route[its listener]; one queue unless routed. The room
	 * and the bounds are the window's, whatever the queue. */
	struct window_queue q[WINDOW_MAX_QUEUES];
	uint8_t route[WINDOW_MAX_LISTENERS];
	unsigned int nr_queues;
	struct batch *free; /* recycled batches: no malloc per batch */
	uint64_t max_msgs, max_bytes;
	uint64_t msgs, bytes; /* pushed, not yet released */
	uint64_t held_mem;    /* BATCH_MEM of those: what has_room bounds */
	uint64_t alloc_bytes; /* counted of every batch allocated and not freed */
	uint64_t pool_n;      /* batches in free */
	uint64_t pool_low;    /* fewest in free since pool_since_ns */
	uint64_t pool_since_ns;
	uint64_t pool_idle_ns; /* WINDOW_POOL_IDLE_NS; a test sets its own */
	uint64_t reserved;     /* promised to workers, not yet pushed */
	uint64_t hwm;
	unsigned int waiting; /* workers waiting for room now */
	uint64_t full_since_ns;
	uint64_t full_ns;
	uint32_t full_seq; /* odd while full_* and waiting change: lets
					 * window_peek_stats read them without the lock */
	uint32_t batch_cap;
	bool closed;
};

int window_init(struct window *w, uint64_t max_msgs, uint64_t max_bytes, uint32_t batch_cap);
void window_destroy(struct window *w);

/*
 * Waits until the window has room, then reserves up to `want` messages and
 * returns how many (>= 1). Returns 0 if *stop became true or timeout_ms passed
 * while waiting (the caller checks its stop flag and calls again).
 */
uint32_t window_reserve(struct window *w, uint32_t want, const volatile int *stop, int timeout_ms);
/* Gives back reserved room that was not used (the socket had less to read). */
void window_unreserve(struct window *w, uint32_t n);
/* The same for a batch of listener's (its queue's share bounds it too). */
uint32_t window_reserve_for(struct window *w, uint32_t listener, uint32_t want,
			    const volatile int *stop, int timeout_ms);
void window_unreserve_for(struct window *w, uint32_t listener, uint32_t n);
/* Waits up to timeout_ms for room to be given back (a release, an
 * unreserve): a worker whose every ready socket's share is full. */
void window_wait_room(struct window *w, int timeout_ms);

/* An empty batch to fill (recycled if one is free). NULL on ENOMEM. */
struct batch *window_batch_get(struct window *w);
/* Recycles a batch that never entered the window (spilled to the disk
 * buffer, or read back from it): no room to give back. */
void window_batch_put(struct window *w, struct batch *b);
/* Reserves room in b for one more message of len bytes; returns its record. */
struct msg_rec *batch_add(struct batch *b, size_t len);

/*
 * A worker receives straight into a batch (recvmmsg's iovecs point into
 * b->data): n slots of slot bytes, message i at i * slot, so the data area
 * has gaps and b->used counts message bytes, not the area's extent (never
 * batch_add to such a batch). batch_slots makes room for n slots (what b
 * held is not kept: it is fresh from the pool); batch_grow makes the area
 * hold need bytes, keeping them (a datagram longer than its slot goes to
 * the tail); batch_trim gives back what a short read left unused, so the
 * byte bound (BATCH_MEM) counts what the batch holds. 0 or -ENOMEM.
 */
int batch_slots(struct batch *b, uint32_t n, size_t slot);
int batch_grow(struct batch *b, size_t need);
void batch_trim(struct batch *b, size_t end);

/* Hands a filled batch to the output stage; `reserved` is what the worker
 * reserved for it (b->count <= reserved; the rest is given back). */
void window_push(struct window *w, struct batch *b, uint32_t reserved);

/*
 * The oldest batch, waiting up to timeout_ms. NULL on timeout, or when the
 * window is closed and empty (window_done() tells which).
 */
struct batch *window_pop(struct window *w, int timeout_ms);
/* Several takers: listener's batches join queue q (< WINDOW_MAX_QUEUES),
 * before any push. */
void window_route(struct window *w, uint32_t listener, unsigned int q);
/* window_pop and window_done for queue q's taker (they are queue 0's). */
struct batch *window_pop_from(struct window *w, unsigned int q, int timeout_ms);
bool window_done_for(struct window *w, unsigned int q);
/* The output stage is done with b (written or handed on): its room is free. */
void window_release(struct window *w, struct batch *b);

/* No more pushes: window_pop() returns what is left, then NULL. */
void window_close(struct window *w);
bool window_done(struct window *w);

void window_get_stats(struct window *w, struct window_stats *out);
/* The same without taking the lock, for another thread while the workers run
 * (a metrics scrape never makes a worker wait): each number is consistent on
 * its own, not with the others; full_seconds never goes backwards. */
void window_peek_stats(struct window *w, struct window_stats *out);
/* Whether a worker waits for room now (the window is full), without the
 * lock. */
bool window_peek_full(struct window *w);

#endif
