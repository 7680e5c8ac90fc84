/* SPDX-License-Identifier: MIT */
/*
 * The disk buffer's insides, shared by its files (diskbuf_format.c reads
 * and writes records, diskbuf_dir.c keeps DIR and its segments, diskbuf_writer.c
 * the queue, the writer thread and the hand-off, diskbuf_cursor.c the cursor,
 * diskbuf.c the interface of diskbuf.h). Nothing outside them includes this.
 */
#ifndef SYSLOGRX_DISKBUF_INT_H
#define SYSLOGRX_DISKBUF_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include "rx/path/diskbuf_opts.h"

/* The writer's iovecs per run: a record's descriptors, then its batch's
 * bytes in one piece, or one per message when the batch was received into
 * slots (worker.c); pwritev_all hands the kernel IOV_MAX at a time. */
#define WRITE_IOV (2 * (DISKBUF_COUNT_MAX + 1))
_Static_assert(WRITE_IOV >= 1 + DISKBUF_COUNT_MAX, "any one record fits a run");

/* A record encoded by a worker, waiting for the writer: its header and
 * message descriptors, and the messages' bytes either still in the worker's
 * batch (taken, not copied: handed to put once written) or after the
 * descriptors (diskbuf_append's copy). */
struct qrec {
	struct qrec *next;
	size_t len;	 /* header + payload */
	size_t head_len; /* header + descriptors, in bytes[] */
	uint32_t count;
	uint64_t first_ns;
	struct batch *batch; /* NULL: the bytes follow the descriptors */
	uint32_t pieces;     /* iovecs of batch's bytes: 1 back to back, else count */
	bool back_to_back;   /* batch's messages are, from data[0] */
	bool keep;	     /* batch goes to the hand-off once written */
	void (*put)(void *ctx, struct batch *b);
	void *put_ctx;
	char bytes[]; /* struct rec_hdr, descriptors[, the messages' bytes] */
};

struct seg {
	struct seg *next;
	uint64_t id;
	int fd;
	uint64_t size;	      /* bytes committed (whole records only) */
	uint64_t read_off;    /* the reader's cursor */
	uint64_t outstanding; /* records read, not yet done */
	struct pend {	      /* records read, in read order: [pend_head, pend_end) */
		uint64_t start;
		bool done;
	} * pend;
	size_t pend_head, pend_end, pend_cap;
	uint64_t done_off; /* every record before it is done (the cursor) */
	uint64_t first_ns;
	bool writable;	/* the segment appends go to */
	bool recovered; /* an earlier run's: its corrupt stretches were counted at open */
};

#define TALLY(d, field, n)                                                               \
	do {                                                                             \
		if ((d)->o.tally)                                                        \
			__atomic_fetch_add(&(d)->o.tally->field, (n), __ATOMIC_RELAXED); \
	} while (0)

struct diskbuf {
	pthread_mutex_t lock;
	struct diskbuf_opts o;
	char dir[PATH_MAX];
	int dirfd;
	struct iovec wiov[WRITE_IOV]; /* the writer thread's */
	uint64_t seg_bytes;
	struct seg *head, *tail; /* oldest first; tail may be writable */
	struct seg *dead;	 /* off the list, to delete (dbuf_unlock_and_reap) */
	int cursor_fd;		 /* DIR/cursor */
	struct cursor {		 /* where the oldest segment's undone records start */
		uint64_t seg, off;
		uint32_t crc, zero;
	} cursor; /* as last written */
	uint64_t cursor_ns;
	uint64_t next_id, next_seq;
	uint64_t total_bytes;
	uint64_t unread;	/* records appended (or found) and not read */
	uint64_t msgs, batches; /* not yet done */
	uint64_t next_ns;	/* receive time of the last record read */
	bool spilling;
	bool dirty;	/* written since the last fdatasync */
	bool dir_dirty; /* a segment created since the last dir fsync */
	uint64_t last_sync_ns;
	struct qrec *q_head, *q_tail; /* for the writer, oldest first */
	uint64_t q_bytes, q_recs;     /* queued or being written */
	pthread_t writer;
	pthread_cond_t wake;	/* the writer waits here */
	pthread_cond_t written; /* diskbuf_flush waits here */
	bool writer_started, closing;
	/* The hand-off: batches written, the next unread records in order
	 * (linked by next; disk_seg and disk_off say where each is), and what
	 * gives them back (the first batch kept sets it: one for all). */
	struct batch *ho_head, *ho_tail;
	uint64_t ho_n, ho_msgs, ho_bytes;
	void (*ho_put)(void *ctx, struct batch *b);
	void *ho_ctx;
	char *rbuf; /* a record's payload, read and checked */
	size_t rbuf_cap;
	struct diskbuf_stats st;
	uint32_t run;	   /* this run's number, in its records */
	uint64_t next_msg; /* the writer's: messages this run has written */
	/* Names read back that are not a listener of this run: a message of
	 * name k gets listener WINDOW_MAX_LISTENERS + k. Append-only under the
	 * lock, nr published last (the output stage reads it unlocked). */
	char recorded[DISKBUF_RECORDED_MAX][LISTENER_NAME_MAX + 1];
	unsigned int nr_recorded;
	bool recorded_full_said;
	unsigned int stretches_said; /* corrupt stretches logged at open */
};

/* ---- diskbuf_format.c: records ------------------------------------------ */

/* The first intact record at or after off (its payload left in d->rbuf),
 * or s->size; the reader and the recovery both resynchronise with it. */
uint64_t dbuf_find_record(struct diskbuf *d, const struct seg *s, uint64_t off, struct rec_hdr *h);
/* b as a record for the writer's queue (the workers dbuf_encode unlocked);
 * its seq, msg_seq, run and header CRC are the writer's to set. */
struct qrec *dbuf_encode(const struct diskbuf *d, const struct batch *b, bool copy);
/* The bytes of b's record on disk: header, descriptors, names, messages. */
uint64_t dbuf_rec_len(const struct batch *b);
/* Under the lock: d->rbuf (a payload dbuf_find_record checked) into b, its
 * listener names mapped to this run's listeners or recorded names. */
int dbuf_unpack(struct diskbuf *d, const struct rec_hdr *h, struct batch *b);

/* The recovery's walk over every segment, oldest first: the last intact
 * record's numbers, and the corrupt bytes since it, not yet counted. */
struct dbuf_scan {
	bool have_last; /* last_* hold an intact version-2 record's */
	uint32_t last_run;
	uint64_t last_seq, last_msg_end, seg;
	uint64_t gap_bytes, gap_seg, gap_off;
};
/* A corrupt stretch ends at h (NULL: at the end of what there is): counted
 * from the record numbers around it when one run wrote both sides. */
void dbuf_scan_gap_end(struct diskbuf *d, struct dbuf_scan *sc, const struct rec_hdr *h);

/* ---- diskbuf_dir.c: DIR and its segments ---------------------------------- */

/* A segment's memory and descriptor (its file stays). */
void dbuf_seg_free(struct seg *s);
/* s at the end of d's list (the newest). */
void dbuf_seg_append_list(struct diskbuf *d, struct seg *s);
/* Under the lock: s off the list, to delete, if it is done with. */
void dbuf_maybe_remove(struct diskbuf *d, struct seg *s);
/* Releases the lock, then deletes what dbuf_maybe_remove took off. */
void dbuf_unlock_and_reap(struct diskbuf *d);
/* At open: DIR is its owner's alone (-EPERM, said, if not). */
int dbuf_dir_check(struct diskbuf *d, bool created);
/* DIR/name, never through a link, a regular file of DIR's owner. */
int dbuf_open_own_file(struct diskbuf *d, const char *name, int flags);
/* The writer thread's: a new segment file, and sealing the tail. */
struct seg *dbuf_seg_create(struct diskbuf *d, uint64_t id);
int dbuf_seg_seal(struct diskbuf *d);
/* At open: the segments an earlier run left, oldest first. */
int dbuf_recover(struct diskbuf *d);

/* ---- diskbuf_writer.c: the queue, the writer thread, the hand-off --------- */

/* Queues q, the record of b, for the writer (diskbuf_append's returns). */
int dbuf_enqueue(struct diskbuf *d, const struct batch *b, struct qrec *q, bool only_if_spilling);
/* The writer thread (pthread_create's start routine). */
void *dbuf_writer_main(void *arg);
/* Under the lock, for the reader: the hand-off's batches. */
struct batch *dbuf_handoff_pop(struct diskbuf *d);
void dbuf_handoff_pass(struct diskbuf *d, uint64_t seg, uint64_t off, struct batch **gone);
bool dbuf_handoff_is_next(const struct diskbuf *d, const struct seg *s);
/* Outside the lock: what dbuf_handoff_pass took, back to its owner. */
void dbuf_handoff_put(struct diskbuf *d, struct batch *gone);

/* ---- diskbuf_cursor.c ------------------------------------------------------- */

/* Under the lock: rewrites DIR/cursor if it moved (the writer does it
 * at most every CURSOR_NS, now or not at close). */
void dbuf_cursor_save(struct diskbuf *d, bool now);
/* At open: DIR/cursor read (a damaged one is ignored: "from the start");
 * -EPERM for a planted one, else 0. */
int dbuf_cursor_load(struct diskbuf *d);

#endif
