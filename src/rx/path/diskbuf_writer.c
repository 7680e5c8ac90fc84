// SPDX-License-Identifier: MIT
/*
 * The disk buffer's writer: the workers queue encoded records (dbuf_enqueue), a
 * thread of the buffer's own writes them, the records that go to one
 * segment with one pwritev, gives the batches back and syncs, outside the
 * lock; workers never wait for the disk. In reliable mode it keeps a batch
 * it wrote for the reader when its record is the next unread one (the
 * hand-off, in diskbuf.h).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include "common/clock.h"
#include "common/iov_advance.h"
#include "common/log.h"
#include "rx/path/diskbuf_format.h"
#include "rx/path/diskbuf_int.h"
#include "rx/path/window.h"

/* Encoded records waiting for the writer: a slow disk's seconds at 100k/s. */
#define QUEUE_MAX_BYTES (64ULL << 20)

/* The writer, woken from idle, lets batches gather this long (at most this
 * much added latency before the output can read them) unless this many
 * bytes already wait. */
#define GATHER_US 5000
#define GATHER_BYTES (256u << 10)

/* ---- the writer ------------------------------------------------------------ */

static void sync_fd(int fd)
{
	if (fd < 0)
		return;
	if (fdatasync(fd))
		pr_warn("disk buffer: fdatasync: %s\n", strerror(errno));
	close(fd);
}

static void count_drop(struct diskbuf *d, uint32_t msgs)
{
	d->st.dropped_msgs += msgs;
	TALLY(d, dropped, msgs);
	d->st.dropped_batches++;
}

/* pwritev until every byte of iov[0, cnt) is written (no empty iovec). */
static int pwritev_all(int fd, struct iovec *iov, int cnt, uint64_t off)
{
	while (cnt) {
		ssize_t n = pwritev(fd, iov, cnt < IOV_MAX ? cnt : IOV_MAX, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += n;
		iov_advance(&iov, &cnt, n);
	}
	return 0;
}

/*
 * Under the lock: the segment q goes to, sealing a full one (its descriptor
 * to sync in *sealed) and creating a new one (with the lock released) as
 * needed. NULL if none can be created.
 */
static struct seg *writer_segment(struct diskbuf *d, const struct qrec *q, int *sealed)
{
	struct seg *s = d->tail && d->tail->writable ? d->tail : NULL;
	uint64_t id;

	if (s && s->size > SEG_HDR && s->size + q->len > d->seg_bytes) {
		*sealed = dbuf_seg_seal(d);
		s = NULL;
	}
	if (s)
		return s;
	id = d->next_id++;
	dbuf_unlock_and_reap(d);
	s = dbuf_seg_create(d, id);
	pthread_mutex_lock(&d->lock);
	if (s) {
		/* The file's name must survive a power loss too. */
		d->dir_dirty = true;
		d->total_bytes += SEG_HDR;
		dbuf_seg_append_list(d, s);
	}
	return s;
}

/* Under the lock: numbers run[0, n)'s records as the next ones this run
 * writes; the numbers are taken only if the write succeeds (write_run), so
 * that what one run wrote has no gap a reader would count as lost. */
static void number_run(struct diskbuf *d, struct qrec **run, size_t n)
{
	uint64_t msgs = d->next_msg;

	for (size_t i = 0; i < n; i++) {
		struct rec_hdr *h = (struct rec_hdr *)run[i]->bytes;

		h->seq = d->next_seq + i;
		h->msg_seq = msgs;
		h->run = d->run;
		h->hdr_crc = dbuf_hdr_crc(h);
		msgs += run[i]->count;
	}
}

/* Records per pwritev. */
#define RUN_MAX 64

/* The iovecs of q's record into iov: its header and descriptors, then the
 * messages' bytes (in place in the batch, or after the descriptors). */
static int rec_iovecs(const struct qrec *q, struct iovec *iov)
{
	const struct batch *b = q->batch;
	int n = 0;

	iov[n++] = (struct iovec){ (void *)q->bytes, b ? q->head_len : q->len };
	if (!b || !b->used)
		return n;
	if (q->back_to_back) {
		iov[n++] = (struct iovec){ b->data, b->used };
		return n;
	}
	for (uint32_t i = 0; i < b->count; i++)
		if (b->recs[i].len)
			iov[n++] = (struct iovec){ b->data + b->recs[i].off, b->recs[i].len };
	return n;
}

/* Gives the batches of run[0, n) back to their owners (outside the lock),
 * but those kept for the hand-off if they were written (!err). */
static void put_batches(struct qrec **run, size_t n, int err)
{
	for (size_t i = 0; i < n; i++) {
		if (run[i]->batch && (err || !run[i]->keep)) {
			run[i]->put(run[i]->put_ctx, run[i]->batch);
			run[i]->batch = NULL;
		}
	}
}

/* ---- the hand-off ---------------------------------------------------------- */

/*
 * Under the lock, before run[0, n) is written: marks the records whose
 * batches the hand-off keeps, the first ones while the bounds have room,
 * and only if every unread record is in the hand-off already (then these
 * come next after them; the reader only takes from them meanwhile, which
 * keeps that true). Outside the lock during the write, then, no batch is
 * given back that the hand-off will want.
 */
static void handoff_plan(struct diskbuf *d, struct qrec **run, size_t n)
{
	uint64_t msgs = d->ho_msgs, bytes = d->ho_bytes;
	bool ok = d->ho_n == d->unread;

	for (size_t i = 0; i < n; i++) {
		struct qrec *q = run[i];

		ok = ok && q->batch &&
		     (!d->ho_put || (q->put == d->ho_put && q->put_ctx == d->ho_ctx));
		if (ok) {
			msgs += q->batch->count;
			bytes += BATCH_MEM(q->batch);
			ok = msgs <= d->o.handoff_msgs && bytes <= d->o.handoff_bytes;
		}
		if (ok && !d->ho_put) {
			d->ho_put = q->put;
			d->ho_ctx = q->put_ctx;
		}
		q->keep = ok;
	}
}

/* Under the lock: q's batch, kept and written at off of s, is the
 * hand-off's (NULL in q). */
static void handoff_add(struct diskbuf *d, const struct seg *s, uint64_t off, struct qrec *q)
{
	struct batch *b = q->batch;

	b->disk_seg = s->id;
	b->disk_off = off;
	b->next = NULL;
	if (d->ho_tail)
		d->ho_tail->next = b;
	else
		d->ho_head = b;
	d->ho_tail = b;
	d->ho_n++;
	d->ho_msgs += b->count;
	d->ho_bytes += BATCH_MEM(b);
	q->batch = NULL;
}

/* Under the lock: the hand-off's first batch, off it. */
struct batch *dbuf_handoff_pop(struct diskbuf *d)
{
	struct batch *b = d->ho_head;

	d->ho_head = b->next;
	if (!d->ho_head)
		d->ho_tail = NULL;
	d->ho_n--;
	d->ho_msgs -= b->count;
	d->ho_bytes -= BATCH_MEM(b);
	b->next = NULL;
	return b;
}

/* Under the lock: takes the hand-off's batches of records before off of
 * segment seg (the reader is past them: read back instead) off it, onto
 * *gone. */
void dbuf_handoff_pass(struct diskbuf *d, uint64_t seg, uint64_t off, struct batch **gone)
{
	while (d->ho_head && (d->ho_head->disk_seg < seg ||
			      (d->ho_head->disk_seg == seg && d->ho_head->disk_off < off))) {
		struct batch *b = dbuf_handoff_pop(d);

		b->next = *gone;
		*gone = b;
	}
}

/* Under the lock: the hand-off holds the record the reader of s reads next. */
bool dbuf_handoff_is_next(const struct diskbuf *d, const struct seg *s)
{
	return d->ho_head && d->ho_head->disk_seg == s->id && d->ho_head->disk_off == s->read_off;
}

/* Gives batches dbuf_handoff_pass took back to their owner (outside the lock). */
void dbuf_handoff_put(struct diskbuf *d, struct batch *gone)
{
	while (gone) {
		struct batch *next = gone->next;

		gone->next = NULL;
		d->ho_put(d->ho_ctx, gone);
		gone = next;
	}
}

/* ---- the writer (continued) ------------------------------------------------ */

/*
 * Writes the records at the head of the queue that go to one segment (up to
 * RUN_MAX) with one pwritev, then accounts and frees them; under load one
 * syscall carries many batches. The lock is held on entry and on return.
 */
static void write_run(struct diskbuf *d, int *sealed)
{
	struct qrec *run[RUN_MAX], *q = d->q_head;
	struct iovec *iov = d->wiov;
	struct seg *s = writer_segment(d, q, sealed);
	size_t n = 0, bytes = 0;
	int niov = 0, err = s ? 0 : -EIO;

	/* Only this thread takes from the head: q is still there. */
	do {
		q = d->q_head;
		if (n && s->size + bytes + q->len > d->seg_bytes)
			break;
		if (n && niov + 1 + (q->batch ? q->pieces : 0) > WRITE_IOV)
			break;
		d->q_head = q->next;
		run[n++] = q;
		bytes += q->len;
		niov += rec_iovecs(q, iov + niov);
	} while (s && n < RUN_MAX && d->q_head);
	if (!d->q_head)
		d->q_tail = NULL;
	number_run(d, run, n);
	handoff_plan(d, run, n);
	/* Only this thread appends, and nobody else moves a writable segment's
	 * size: the write needs no lock. */
	pthread_mutex_unlock(&d->lock);
	if (s) {
		err = pwritev_all(s->fd, iov, niov, s->size);
		if (err && ftruncate(s->fd, s->size)) /* no half record behind us */
			pr_warn("disk buffer: truncating a failed write: %s\n", strerror(errno));
	}
	put_batches(run, n, err);
	pthread_mutex_lock(&d->lock);
	if (!err) {
		d->next_seq += n;
		for (size_t i = 0; i < n; i++)
			d->next_msg += run[i]->count;
	}
	for (size_t i = 0; i < n; i++) {
		q = run[i];
		d->q_bytes -= q->len;
		d->q_recs--;
		if (err) {
			if (!d->st.dropped_batches)
				pr_warn("--disk-buffer %s: write: %s (batches counted as dropped)\n",
					d->dir, strerror(-err));
			count_drop(d, q->count);
		} else {
			if (!s->first_ns)
				s->first_ns = q->first_ns;
			if (!d->unread)
				d->next_ns = q->first_ns;
			if (q->batch)
				handoff_add(d, s, s->size, q);
			s->size += q->len;
			d->total_bytes += q->len;
			d->unread++;
			d->msgs += q->count;
			d->batches++;
			d->st.written_msgs += q->count;
			TALLY(d, written, q->count);
			d->st.written_batches++;
			d->st.written_bytes += q->len;
			d->dirty = true;
		}
		free(q);
	}
}

/* Under the lock: whether an fdatasync is due now. */
static bool sync_due(struct diskbuf *d, uint64_t now)
{
	return (d->dirty || d->dir_dirty) &&
	       now - d->last_sync_ns >= (uint64_t)d->o.sync_ms * 1000000ULL;
}

/* Syncs the segment written to and the directory, outside the lock. */
static void sync_now(struct diskbuf *d)
{
	int fd = d->dirty && d->tail && d->tail->writable ? dup(d->tail->fd) : -1;
	int dirfd = d->dir_dirty ? dup(d->dirfd) : -1;

	d->dirty = false;
	d->dir_dirty = false;
	d->last_sync_ns = mono_ns();
	d->st.syncs++;
	pthread_mutex_unlock(&d->lock);
	sync_fd(fd);
	if (dirfd >= 0) {
		/* A new segment's name must survive a power loss too. */
		fsync(dirfd);
		close(dirfd);
	}
	pthread_mutex_lock(&d->lock);
}

void *dbuf_writer_main(void *arg)
{
	struct diskbuf *d = arg;

	pthread_setname_np(pthread_self(), "diskbuf");
	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct qrec *q = d->q_head;
		int sealed = -1;

		if (!q) {
			struct timespec ts;

			if (d->closing)
				break;
			if (sync_due(d, mono_ns())) {
				sync_now(d);
				continue;
			}
			/* At least once a second: the cursor moves while idle too. */
			ts = ns_to_timespec(mono_ns() + (d->o.sync_ms && d->o.sync_ms < 1000 ?
								 d->o.sync_ms :
								 1000) *
								1000000ULL);
			pthread_cond_timedwait(&d->wake, &d->lock, &ts);
			dbuf_cursor_save(d, false);
			if (d->q_head && !d->closing && d->q_bytes < GATHER_BYTES) {
				/* Woken by the first batch after a pause: let the
				 * next ones gather so that one pwritev takes them
				 * (a wake-up and a write per batch cost more than
				 * the batch at 50,000/s). */
				struct timespec g = { 0, GATHER_US * 1000L };

				pthread_mutex_unlock(&d->lock);
				nanosleep(&g, NULL);
				pthread_mutex_lock(&d->lock);
			}
			continue;
		}
		write_run(d, &sealed);
		if (sealed >= 0 || d->dead) {
			dbuf_unlock_and_reap(d);
			sync_fd(sealed);
			pthread_mutex_lock(&d->lock);
		}
		if (sync_due(d, mono_ns()))
			sync_now(d);
		pthread_cond_broadcast(&d->written);
		dbuf_cursor_save(d, false);
	}
	if (d->dirty || d->dir_dirty)
		sync_now(d);
	pthread_cond_broadcast(&d->written);
	dbuf_unlock_and_reap(d);
	return NULL;
}

/* ---- the queue ------------------------------------------------------------ */

/* Queues q, the record of b (NULL: out of memory), for the writer; see
 * diskbuf_append for what it returns. Not 0: q is the caller's to free. */
int dbuf_enqueue(struct diskbuf *d, const struct batch *b, struct qrec *q, bool only_if_spilling)
{
	int err;

	pthread_mutex_lock(&d->lock);
	if (only_if_spilling && !d->spilling) {
		pthread_mutex_unlock(&d->lock);
		return 1;
	}
	if (!q) {
		err = -ENOMEM;
		goto drop;
	}
	/* The cap counts whole files, what is queued, and a new segment's
	 * header for each queued record (any of them may start one): the
	 * writer never has to drop. The queue has its own bound: a disk slower
	 * than the input. */
	if (d->total_bytes + d->q_bytes + q->len + (d->q_recs + 1) * SEG_HDR > d->o.max_bytes) {
		err = -ENOSPC;
		if (!d->st.dropped_batches)
			pr_warn("--disk-buffer %s: full (%llu bytes): new batches are dropped and "
				"counted\n",
				d->dir, (unsigned long long)d->o.max_bytes);
		goto drop;
	}
	if (d->q_bytes + q->len > QUEUE_MAX_BYTES) {
		err = -ENOBUFS;
		if (!d->st.dropped_batches)
			pr_warn("--disk-buffer %s: the disk is slower than the input: %llu bytes wait "
				"to be written; new batches are dropped and counted\n",
				d->dir, (unsigned long long)d->q_bytes);
		goto drop;
	}
	if (d->q_tail)
		d->q_tail->next = q;
	else
		d->q_head = q;
	d->q_tail = q;
	d->q_bytes += q->len;
	/* The writer waits only with nothing queued: the first record wakes it. */
	if (!d->q_recs++)
		pthread_cond_signal(&d->wake);
	__atomic_store_n(&d->spilling, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
	return 0;
drop:
	count_drop(d, b->count);
	pthread_mutex_unlock(&d->lock);
	return err;
}
