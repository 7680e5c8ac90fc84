// SPDX-License-Identifier: MIT
/*
 * The disk buffer: segment files of checksummed batch records (the format is
 * in diskbuf.h). One mutex guards the bookkeeping. A worker encodes its
 * batch's record header and message descriptors and queues them with the
 * batch itself (its bytes are not copied); a writer thread of the buffer's
 * own writes the queue, the records that go to one segment with one
 * pwritev, gives the batches back and syncs, outside the lock. Workers never wait for the disk: a write or an fdatasync can
 * take hundreds of milliseconds when the kernel throttles dirty pages, and
 * a worker stalled that long lets the kernel drop. The queue is bounded
 * (QUEUE_MAX_BYTES); the size cap counts it with the files. The output
 * stage reads records back once written, and says when each is done; in
 * reliable mode the writer keeps a batch it wrote for the reader when its
 * record is the next unread one (the hand-off, in diskbuf.h).
 *
 * The files: diskbuf_format.c (records), diskbuf_dir.c (DIR and its
 * segments), diskbuf_writer.c (the queue, the writer thread, the hand-off);
 * this one keeps the cursor and the interface. diskbuf_int.h is what they
 * share.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/no_follow.h"
#include "rx/path/diskbuf.h"
#include "rx/path/diskbuf_format.h"
#include "rx/path/diskbuf_int.h"
#include "rx/path/window.h"
#include "rx/settings/config.h"

_Static_assert(DISKBUF_COUNT_MAX == CONFIG_MAX_BATCH, "a record is one batch");

/* The bounds of a segment file's size (diskbuf_open clamps to them). */
#define SEG_MIN (64ULL << 10)
#define SEG_MAX (64ULL << 20)
_Static_assert(SEG_MAX <= SEG_FILE_MAX, "a segment the writer fills is one the reader takes");

const char *diskbuf_mode_name(enum diskbuf_mode m)
{
	return m == DISKBUF_RELIABLE ? "reliable" : "spill";
}

/* Under the lock: a record read at start is in flight. */
static int pend_push(struct seg *s, uint64_t start)
{
	if (s->pend_end == s->pend_cap) {
		if (s->pend_head) {
			memmove(s->pend, s->pend + s->pend_head,
				(s->pend_end - s->pend_head) * sizeof(*s->pend));
			s->pend_end -= s->pend_head;
			s->pend_head = 0;
		} else {
			if (ARRAY_PUSH_ROOM(s->pend, s->pend_cap, s->pend_end, 64))
				return -ENOMEM;
		}
	}
	s->pend[s->pend_end++] = (struct pend){ .start = start };
	return 0;
}

/* Under the lock: the record at start is done; the cursor moves past every
 * done record at the front. */
static void pend_done(struct seg *s, uint64_t start)
{
	for (size_t i = s->pend_head; i < s->pend_end; i++) {
		if (s->pend[i].start == start) {
			s->pend[i].done = true;
			break;
		}
	}
	while (s->pend_head < s->pend_end && s->pend[s->pend_head].done)
		s->pend_head++;
	s->done_off = s->pend_head < s->pend_end ? s->pend[s->pend_head].start : s->read_off;
}

/* ---- the interface ------------------------------------------------------- */

struct diskbuf *diskbuf_open(const struct diskbuf_opts *opts)
{
	struct diskbuf *d = calloc(1, sizeof(*d));
	bool created;
	int err;

	if (!d)
		return NULL;
	d->o = *opts;
	d->dirfd = -1;
	d->cursor_fd = -1;
	snprintf(d->dir, sizeof(d->dir), "%s", opts->dir);
	d->o.dir = d->dir;
	d->seg_bytes = opts->segment_bytes ? opts->segment_bytes : opts->max_bytes / 8;
	if (d->seg_bytes < SEG_MIN)
		d->seg_bytes = SEG_MIN;
	if (d->seg_bytes > SEG_MAX)
		d->seg_bytes = SEG_MAX;
	d->next_id = 1;
	d->st.max_bytes = opts->max_bytes;
	/* This run's records are told from an earlier run's by it: their
	 * numbers are only compared within one run. */
	if (getrandom(&d->run, sizeof(d->run), 0) != sizeof(d->run))
		d->run = (uint32_t)(clock_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 16));
	pthread_mutex_init(&d->lock, NULL);
	cond_init_monotonic(&d->wake);
	cond_init_monotonic(&d->written);
	created = !mkdir(d->dir, 0700);
	if (!created && errno != EEXIST) {
		err = -errno;
		pr_warn("--disk-buffer %s: %s\n", d->dir, strerror(errno));
		goto fail;
	}
	/* DIR itself is never followed: a link would lead the checks below to
	 * its target, and our files into it. */
	d->dirfd = open_dir_no_follow(d->dir);
	if (d->dirfd < 0) {
		err = d->dirfd;
		pr_warn("--disk-buffer %s: %s\n", d->dir, no_follow_strerror(-err));
		goto fail;
	}
	err = dbuf_dir_check(d, created);
	if (!err)
		err = dbuf_cursor_load(d);
	if (err)
		goto fail;
	err = dbuf_recover(d);
	if (err) {
		pr_warn("--disk-buffer %s: reading what is there: %s\n", d->dir, strerror(-err));
		goto fail;
	}
	if (d->unread) {
		pr_info("disk buffer %s: %llu message(s) left by an earlier run: sent first\n",
			d->dir, (unsigned long long)d->msgs);
		d->next_ns = d->head ? d->head->first_ns : 0;
	}
	d->spilling = d->unread || opts->mode == DISKBUF_RELIABLE;
	d->last_sync_ns = mono_ns();
	err = -pthread_create(&d->writer, NULL, dbuf_writer_main, d);
	if (err) {
		pr_warn("--disk-buffer %s: writer thread: %s\n", d->dir, strerror(-err));
		goto fail;
	}
	d->writer_started = true;
	return d;
fail:
	diskbuf_close(d);
	errno = -err;
	return NULL;
}

void diskbuf_close(struct diskbuf *d)
{
	struct batch *gone = NULL;

	if (!d)
		return;
	if (d->writer_started) {
		/* The writer writes what is queued, syncs, and stops. */
		pthread_mutex_lock(&d->lock);
		d->closing = true;
		pthread_cond_signal(&d->wake);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->writer, NULL);
	}
	pthread_mutex_lock(&d->lock);
	dbuf_handoff_pass(d, UINT64_MAX, UINT64_MAX, &gone);
	pthread_mutex_unlock(&d->lock);
	dbuf_handoff_put(d, gone);
	pthread_mutex_lock(&d->lock);
	if (d->tail && d->tail->writable) {
		/* Everything sent and done: leave DIR empty. */
		d->tail->writable = false;
		dbuf_maybe_remove(d, d->tail);
	}
	dbuf_cursor_save(d, true);
	dbuf_unlock_and_reap(d);
	if (d->cursor_fd >= 0) {
		if (!d->head)
			unlinkat(d->dirfd, "cursor", 0);
		else
			fdatasync(d->cursor_fd);
		close(d->cursor_fd);
	}
	while (d->head) {
		struct seg *s = d->head;

		d->head = s->next;
		dbuf_seg_free(s);
	}
	if (d->dirfd >= 0)
		close(d->dirfd);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->wake);
	pthread_cond_destroy(&d->written);
	free(d->rbuf);
	free(d);
}

bool diskbuf_spilling(struct diskbuf *d)
{
	return __atomic_load_n(&d->spilling, __ATOMIC_RELAXED);
}

int diskbuf_append(struct diskbuf *d, const struct batch *b, bool only_if_spilling)
{
	struct qrec *q;
	int ret;

	if (!b->count)
		return 0;
	if (only_if_spilling && !diskbuf_spilling(d))
		return 1;
	/* Encoding and its CRC run unlocked: the workers in parallel. */
	q = dbuf_encode(d, b, true);
	ret = dbuf_enqueue(d, b, q, only_if_spilling);
	if (ret)
		free(q);
	return ret;
}

int diskbuf_append_batch(struct diskbuf *d, struct batch *b,
			 void (*put)(void *ctx, struct batch *b), void *ctx)
{
	struct qrec *q = NULL;
	int ret = 0;

	if (b->count) {
		q = dbuf_encode(d, b, false);
		if (q) {
			q->batch = b;
			q->put = put;
			q->put_ctx = ctx;
		}
		ret = dbuf_enqueue(d, b, q, false);
	}
	if (!q || ret) {
		free(q);
		put(ctx, b);
	}
	return ret;
}

void diskbuf_flush(struct diskbuf *d)
{
	pthread_mutex_lock(&d->lock);
	while (d->q_recs && d->writer_started)
		pthread_cond_wait(&d->written, &d->lock);
	pthread_mutex_unlock(&d->lock);
}

/* Under the lock: the record at off of s (len bytes of count messages,
 * pend_push'ed) goes to the output. */
static void rec_out(struct diskbuf *d, struct seg *s, uint64_t off, uint64_t len, uint32_t count,
		    uint64_t first_ns)
{
	s->read_off = off + len;
	if (s->pend_head == s->pend_end - 1)
		s->done_off = off;
	s->outstanding++;
	d->unread -= d->unread ? 1 : 0;
	d->next_ns = first_ns;
	d->st.replayed_msgs += count;
	TALLY(d, replayed, count);
}

struct batch *diskbuf_take(struct diskbuf *d)
{
	struct batch *b = NULL, *gone = NULL;
	struct seg *s;

	if (!d->o.handoff_msgs)
		return NULL;
	pthread_mutex_lock(&d->lock);
	for (s = d->head; s && s->read_off >= s->size; s = s->next)
		;
	/* Only the very record the reader would read next; one the reader is
	 * past (read back meanwhile) goes back to its owner. */
	if (s && dbuf_handoff_is_next(d, s) && !pend_push(s, s->read_off)) {
		b = dbuf_handoff_pop(d);
		rec_out(d, s, b->disk_off, dbuf_rec_len(b), b->count, b->recs[0].recv_ns);
	} else if (d->ho_head) {
		dbuf_handoff_pass(d, s ? s->id : UINT64_MAX, s ? s->read_off : UINT64_MAX, &gone);
	}
	pthread_mutex_unlock(&d->lock);
	dbuf_handoff_put(d, gone);
	return b;
}

int diskbuf_read(struct diskbuf *d, struct batch *b)
{
	struct batch *gone = NULL;
	struct rec_hdr h;
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	for (struct seg *s = d->head, *next; s; s = next) {
		uint64_t off;

		next = s->next;
		if (s->read_off >= s->size)
			continue;
		if (dbuf_handoff_is_next(d, s)) {
			ret = 2; /* written and handed over since the caller's diskbuf_take */
			break;
		}
		off = dbuf_find_record(d, s, s->read_off, &h);
		if (off > s->read_off) {
			/* An earlier run's segment was counted at open, from
			 * the records around the stretch; one of this run's
			 * damaged under it costs at least a record. */
			if (!s->recovered) {
				struct dbuf_scan sc = { .gap_bytes = off - s->read_off,
							.gap_seg = s->id,
							.gap_off = s->read_off };

				dbuf_scan_gap_end(d, &sc, NULL);
			}
			s->read_off = off;
		}
		if (off >= s->size) {
			dbuf_maybe_remove(d, s);
			continue;
		}
		if (dbuf_unpack(d, &h, b) || pend_push(s, off))
			break; /* out of memory: try again later */
		rec_out(d, s, off, dbuf_hdr_len(&h) + h.len, h.count, h.first_ns);
		b->disk_seg = s->id;
		b->disk_off = off;
		d->st.read_back_msgs += h.count;
		/* Read back: the hand-off's batch of it (if any) is not needed. */
		dbuf_handoff_pass(d, s->id, s->read_off, &gone);
		ret = 1;
		break;
	}
	if (!ret && !d->q_recs) {
		/* Everything written is read: spill mode goes back to the window. */
		d->unread = 0;
		if (d->o.mode == DISKBUF_SPILL) {
			__atomic_store_n(&d->spilling, false, __ATOMIC_RELAXED);
			/* The outage is over: its last segment goes once done,
			 * not at the next one. (Reliable mode catches up all the
			 * time: it keeps writing the same segment.) The writer
			 * has nothing queued, so it is not using it. */
			if (d->tail && d->tail->writable) {
				d->tail->writable = false;
				d->dirty = false;
				dbuf_maybe_remove(d, d->tail);
			}
		}
	}
	dbuf_unlock_and_reap(d);
	dbuf_handoff_put(d, gone);
	return ret;
}

uint64_t diskbuf_unread(struct diskbuf *d)
{
	uint64_t n = 0;

	pthread_mutex_lock(&d->lock);
	for (struct seg *s = d->head; s && !n; s = s->next)
		n += s->read_off < s->size;
	if (n)
		n = d->unread ? d->unread : 1;
	n += d->q_recs;
	pthread_mutex_unlock(&d->lock);
	return n;
}

void diskbuf_done(struct diskbuf *d, uint64_t seg, uint64_t off, uint32_t count)
{
	pthread_mutex_lock(&d->lock);
	for (struct seg *s = d->head; s; s = s->next) {
		if (s->id != seg)
			continue;
		if (s->outstanding)
			s->outstanding--;
		pend_done(s, off);
		d->msgs -= d->msgs >= count ? count : d->msgs;
		d->batches -= d->batches ? 1 : 0;
		dbuf_maybe_remove(d, s);
		break;
	}
	dbuf_unlock_and_reap(d);
}

void diskbuf_get_stats(struct diskbuf *d, struct diskbuf_stats *out)
{
	uint64_t now = clock_ns(CLOCK_REALTIME);

	pthread_mutex_lock(&d->lock);
	*out = d->st;
	out->bytes = d->total_bytes;
	out->msgs = d->msgs;
	out->batches = d->batches;
	for (struct seg *s = d->head; s; s = s->next)
		out->segments++;
	out->queued_msgs = 0;
	for (struct qrec *q = d->q_head; q; q = q->next)
		out->queued_msgs += q->count;
	out->oldest_age_seconds = (d->unread || d->q_recs) && d->next_ns && now > d->next_ns ?
					  (now - d->next_ns) / 1e9 :
					  0;
	pthread_mutex_unlock(&d->lock);
}
