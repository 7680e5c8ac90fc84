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
 * CRC: zlib's crc32, not CRC32C: zlib is already in the process (libbpf links
 * it), and the check only has to catch torn writes and flipped bits, not
 * adversaries. Computed by crc32_fast (the same value; carry-less multiplies
 * where the CPU has them): zlib 1.2's took 8% of a reliable run's CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "common/array.h"
#include "common/clock.h"
#include "common/crc32_fast.h"
#include "common/log.h"
#include "common/no_follow.h"
#include "bpf/balancer.h"
#include "rx/path/diskbuf.h"
#include "rx/path/worker.h"
#include "rx/settings/config.h"

_Static_assert(DISKBUF_MSG_MAX == WORKER_SLOT_BYTES, "a record's message is one receive slot");
_Static_assert(DISKBUF_COUNT_MAX == CONFIG_MAX_BATCH, "a record is one batch");

#define SEG_MAGIC "SRXDBUF1"
#define SEG_VERSION 1
#define SEG_HDR 16
#define REC_MAGIC 0x52585253u	    /* "SRXR" in little-endian byte order */
#define REC_MAX_PAYLOAD (64u << 20) /* sanity bound on a header's length */
#define SEG_MIN (64ULL << 10)
#define SEG_MAX (64ULL << 20)
#define SCAN_CHUNK 65536
/* Encoded records waiting for the writer: a slow disk's seconds at 100k/s. */
#define QUEUE_MAX_BYTES (64ULL << 20)
/* The writer, woken from idle, lets batches gather this long (at most this
 * much added latency before the output can read them) unless this many
 * bytes already wait. */
#define GATHER_US 5000
#define GATHER_BYTES (256u << 10)

struct rec_hdr {
	uint32_t magic;
	uint32_t hdr_crc; /* crc32 of this header with hdr_crc = 0 */
	uint32_t len;	  /* payload bytes */
	uint32_t count;	  /* messages */
	uint32_t crc;	  /* crc32 of the payload */
	uint32_t zero;
	uint64_t seq;	   /* record number, increasing across segments */
	uint64_t first_ns; /* receive time of the first message */
};
_Static_assert(sizeof(struct rec_hdr) == 40, "record header is 40 bytes on disk");

struct disk_msg {
	uint32_t len, sock, truncated, src_len;
	uint64_t recv_ns;
	uint8_t src[28]; /* sockaddr_in6, or sockaddr_in in its first 16 */
	uint32_t zero;
};
_Static_assert(sizeof(struct disk_msg) == 56, "message descriptor is 56 bytes on disk");
_Static_assert(sizeof(struct sockaddr_in6) == 28, "sockaddr_in6 fits the descriptor");

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
	bool writable; /* the segment appends go to */
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
	uint64_t seg_bytes;
	struct seg *head, *tail; /* oldest first; tail may be writable */
	struct seg *dead;	 /* off the list, to delete (unlock_and_reap) */
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
};

const char *diskbuf_mode_name(enum diskbuf_mode m)
{
	return m == DISKBUF_RELIABLE ? "reliable" : "spill";
}

static uint32_t crc(const void *p, size_t len)
{
	return crc32_fast(0, p, len);
}

static uint32_t hdr_crc(const struct rec_hdr *h)
{
	struct rec_hdr c = *h;

	c.hdr_crc = 0;
	return crc(&c, sizeof(c));
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

static void seg_path(const struct diskbuf *d, uint64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%016llx.seg", (unsigned long long)id);
}

/* ---- reading and checking records ------------------------------------- */

/* The header at off is plausible and intact for a segment of size bytes. */
static bool hdr_ok(const struct rec_hdr *h, uint64_t off, uint64_t size)
{
	return h->magic == REC_MAGIC && h->hdr_crc == hdr_crc(h) && h->count &&
	       h->count <= DISKBUF_COUNT_MAX && !h->zero && h->len <= REC_MAX_PAYLOAD &&
	       (uint64_t)h->count * sizeof(struct disk_msg) <= h->len &&
	       off + sizeof(*h) + h->len <= size;
}

/* One message descriptor read back is one the writer could have written:
 * every field is checked before unpack copies or the output formats it. */
static bool desc_ok(const struct disk_msg *m)
{
	sa_family_t fam;

	if (m->len > DISKBUF_MSG_MAX || m->sock >= REUSEPORT_MAX_SOCKETS || m->truncated > 1 ||
	    m->zero || m->src_len > sizeof(m->src))
		return false;
	if (!m->src_len)
		return true;
	memcpy(&fam, m->src, sizeof(fam));
	return (fam == AF_INET && m->src_len == sizeof(struct sockaddr_in)) ||
	       (fam == AF_INET6 && m->src_len == sizeof(struct sockaddr_in6));
}

/* Reads the payload of the record at off into d->rbuf; true if its CRC,
 * every descriptor (desc_ok) and their lengths agree with the header. */
static bool payload_ok(struct diskbuf *d, const struct seg *s, uint64_t off,
		       const struct rec_hdr *h)
{
	const struct disk_msg *m;
	uint64_t data = 0;

	if (array_reserve((void **)&d->rbuf, &d->rbuf_cap, h->len, 1, 4096) ||
	    pread_all(s->fd, d->rbuf, h->len, off + sizeof(*h)) || crc(d->rbuf, h->len) != h->crc)
		return false;
	m = (const struct disk_msg *)d->rbuf;
	for (uint32_t i = 0; i < h->count; i++) {
		if (!desc_ok(&m[i]))
			return false;
		data += m[i].len;
	}
	return data == h->len - (uint64_t)h->count * sizeof(*m);
}

/* The next offset after off where the record magic appears, or s->size. */
static uint64_t next_magic(const struct seg *s, uint64_t off)
{
	static const uint32_t magic = REC_MAGIC;
	char buf[SCAN_CHUNK];

	while (off + sizeof(struct rec_hdr) <= s->size) {
		size_t want = s->size - off < sizeof(buf) ? s->size - off : sizeof(buf);
		const char *hit;

		if (pread_all(s->fd, buf, want, off))
			return s->size;
		hit = memmem(buf, want, &magic, sizeof(magic));
		if (hit)
			return off + (hit - buf);
		/* The magic may straddle the chunk boundary. */
		off += want > sizeof(magic) ? want - (sizeof(magic) - 1) : want;
	}
	return s->size;
}

/*
 * The first intact record at or after off (its payload left in d->rbuf), or
 * s->size if there is none. Anything skipped on the way is corrupt.
 */
static uint64_t find_record(struct diskbuf *d, const struct seg *s, uint64_t off, struct rec_hdr *h)
{
	while (off + sizeof(*h) <= s->size) {
		if (!pread_all(s->fd, h, sizeof(*h), off) && hdr_ok(h, off, s->size) &&
		    payload_ok(d, s, off, h))
			return off;
		off = next_magic(s, off + 1);
	}
	return s->size;
}

/* ---- segments ------------------------------------------------------------ */

static void seg_free(struct seg *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->pend);
	free(s);
}

static void seg_append_list(struct diskbuf *d, struct seg *s)
{
	s->next = NULL;
	if (d->tail)
		d->tail->next = s;
	else
		d->head = s;
	d->tail = s;
}

/* A segment that is read to its end, done with and no longer written to
 * goes: off the list now, its file deleted by reap() once the lock is
 * released (unlinking a large file can take the file system a while, and
 * the workers want the lock meanwhile). */
static void maybe_remove(struct diskbuf *d, struct seg *s)
{
	struct seg **pp;

	if (s->writable || s->read_off < s->size || s->outstanding)
		return;
	for (pp = &d->head; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (!*pp)
		return;
	*pp = s->next;
	if (d->tail == s) {
		d->tail = d->head;
		while (d->tail && d->tail->next)
			d->tail = d->tail->next;
	}
	d->total_bytes -= s->size;
	s->next = d->dead;
	d->dead = s;
}

/* Releases the lock, then deletes the segments maybe_remove() took off. */
static void unlock_and_reap(struct diskbuf *d)
{
	struct seg *s = d->dead;

	d->dead = NULL;
	pthread_mutex_unlock(&d->lock);
	while (s) {
		struct seg *next = s->next;
		char name[32];

		seg_path(d, s->id, name, sizeof(name));
		close(s->fd);
		s->fd = -1;
		if (unlinkat(d->dirfd, name, 0))
			pr_warn("--disk-buffer %s: deleting %s: %s\n", d->dir, name,
				strerror(errno));
		seg_free(s);
		s = next;
	}
}

/* ---- trusting DIR --------------------------------------------------------- */

/* The user DIR and its files must belong to. */
static uid_t dir_owner(const struct diskbuf *d)
{
	return d->o.owner_set ? d->o.owner : geteuid();
}

/* DIR is its owner's alone: that owner, no group or world write. A DIR just
 * created is given to the user syslogrx will run as. -EPERM, said, if not. */
static int dir_check(struct diskbuf *d, bool created)
{
	uid_t owner = dir_owner(d);
	struct stat st;

	if (fstat(d->dirfd, &st))
		return -errno;
	if (created && st.st_uid != owner && !fchown(d->dirfd, owner, (gid_t)-1))
		st.st_uid = owner;
	if (st.st_uid != owner) {
		pr_warn("--disk-buffer %s: owned by uid %u, not uid %u that syslogrx runs as: "
			"refused (another user could plant records or links in it)\n",
			d->dir, (unsigned int)st.st_uid, (unsigned int)owner);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		pr_warn("--disk-buffer %s: writable by group or others (mode %04o): refused "
			"(chmod 0700 it)\n",
			d->dir, (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* Opens DIR/name for reading and writing without following a link: a
 * regular file of DIR's owner, or -EPERM (said); other errors as -errno. */
static int open_own_file(struct diskbuf *d, const char *name, int flags)
{
	int fd = openat(d->dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | flags, 0600);
	const char *why = NULL;
	struct stat st;

	if (fd < 0 && errno == ELOOP)
		why = "a symbolic link";
	else if (fd < 0)
		return -errno;
	else if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != dir_owner(d) && st.st_uid != geteuid())
		why = "owned by another user"; /* (made by this process, as root) */
	if (!why)
		return fd;
	pr_warn("--disk-buffer %s: %s is %s: refused (never followed or read)\n", d->dir, name,
		why);
	if (fd >= 0)
		close(fd);
	return -EPERM;
}

/* A new segment file with its header, created without the lock (only the
 * writer thread creates segments; next_id is its own after open). */
static struct seg *seg_create(struct diskbuf *d, uint64_t id)
{
	char name[32], hdr[SEG_HDR] = SEG_MAGIC;
	uint32_t version = SEG_VERSION;
	struct seg *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = id;
	seg_path(d, s->id, name, sizeof(name));
	memcpy(hdr + 8, &version, sizeof(version));
	s->fd = openat(d->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->fd < 0 || pwrite(s->fd, hdr, SEG_HDR, 0) != SEG_HDR) {
		pr_warn("--disk-buffer %s: creating %s: %s\n", d->dir, name, strerror(errno));
		if (s->fd >= 0)
			unlinkat(d->dirfd, name, 0);
		s->fd = -1;
		seg_free(s);
		return NULL;
	}
	s->size = SEG_HDR;
	s->read_off = SEG_HDR;
	s->done_off = SEG_HDR;
	s->writable = true;
	return s;
}

/* No more appends to the tail segment (deleted if all done). Returns a
 * descriptor to fdatasync outside the lock when it has unsynced writes. */
static int seg_seal(struct diskbuf *d)
{
	struct seg *s = d->tail;
	int fd = -1;

	if (!s || !s->writable)
		return -1;
	if (d->dirty)
		fd = dup(s->fd);
	d->dirty = false;
	s->writable = false;
	maybe_remove(d, s);
	return fd;
}

/* Queues a segment an earlier run left: counts its intact records. */
static int seg_recover(struct diskbuf *d, uint64_t id, const char *name)
{
	struct seg *s = calloc(1, sizeof(*s));
	char hdr[SEG_HDR];
	struct stat stb;
	struct rec_hdr h;
	uint64_t off;

	if (!s)
		return -ENOMEM;
	s->id = id;
	s->fd = open_own_file(d, name, 0);
	if (s->fd < 0 || fstat(s->fd, &stb)) {
		int err = s->fd < 0 ? s->fd : -errno;

		seg_free(s);
		return err;
	}
	s->size = stb.st_size;
	/* A bad file header is resynchronised over like any corrupt bytes. */
	s->read_off = s->size >= SEG_HDR && !pread_all(s->fd, hdr, SEG_HDR, 0) &&
				      !memcmp(hdr, SEG_MAGIC, 8) ?
			      SEG_HDR :
			      0;
	/* What the cursor says was done before is not sent again. */
	if (s->read_off && id == d->cursor.seg && d->cursor.off >= SEG_HDR &&
	    d->cursor.off <= s->size)
		s->read_off = d->cursor.off;
	s->done_off = s->read_off;
	for (off = s->read_off; (off = find_record(d, s, off, &h)) < s->size;
	     off += sizeof(h) + h.len) {
		if (!s->first_ns)
			s->first_ns = h.first_ns;
		d->unread++;
		d->msgs += h.count;
		d->batches++;
		d->st.recovered_msgs += h.count;
		TALLY(d, recovered, h.count);
		if (h.seq >= d->next_seq)
			d->next_seq = h.seq + 1;
	}
	d->total_bytes += s->size;
	seg_append_list(d, s);
	if (id >= d->next_id)
		d->next_id = id + 1;
	return 0;
}

/* DIR's NNNNNNNNNNNNNNNN.seg files, oldest first. */
static int recover(struct diskbuf *d)
{
	DIR *dir = fdopendir(dup(d->dirfd));
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int err = 0;

	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		unsigned long long id;
		char tail[8];

		if (strlen(e->d_name) != 20 || sscanf(e->d_name, "%16llx%7s", &id, tail) != 2 ||
		    strcmp(tail, ".seg") || !id)
			continue;
		if (ARRAY_PUSH_ROOM(ids, cap, n, 16)) {
			err = -ENOMEM;
			break;
		}
		ids[n++] = id;
	}
	closedir(dir);
	array_sort(ids, n, sizeof(*ids), cmp_u64);
	for (size_t i = 0; i < n && !err; i++) {
		char name[32];

		seg_path(d, ids[i], name, sizeof(name));
		err = seg_recover(d, ids[i], name);
	}
	free(ids);
	return err;
}

/* ---- the cursor -------------------------------------------------------------
 * DIR/cursor: 24 bytes, the oldest segment's id and the offset before which
 * every record of it is done, with a CRC. Rewritten in place by the writer
 * thread (at most every CURSOR_NS) so that a restart after a crash does not
 * send again what was delivered: only what was in flight, and what was done
 * since the last rewrite. A missing or damaged cursor means "from the start":
 * duplicates, never a loss.
 */
#define CURSOR_NS (100 * 1000000ULL)

static uint32_t cursor_crc(const struct cursor *c)
{
	return crc(c, offsetof(struct cursor, crc));
}

/* A planted cursor (a link, not a regular file, another owner's) refuses
 * the open; one that cannot be made only costs duplicates after a restart. */
static int cursor_load(struct diskbuf *d)
{
	struct cursor c;

	d->cursor_fd = open_own_file(d, "cursor", O_CREAT);
	if (d->cursor_fd == -EPERM)
		return -EPERM;
	if (d->cursor_fd < 0) {
		pr_warn("--disk-buffer %s: cursor: %s (a restart sends whole segments again)\n",
			d->dir, strerror(-d->cursor_fd));
		d->cursor_fd = -1;
		return 0;
	}
	if (!pread_all(d->cursor_fd, &c, sizeof(c), 0) && c.crc == cursor_crc(&c))
		d->cursor = c;
	return 0;
}

/* Under the lock: the cursor as it is now. */
static struct cursor cursor_now(const struct diskbuf *d)
{
	struct cursor c = { 0 };

	if (d->head) {
		c.seg = d->head->id;
		c.off = d->head->done_off;
	}
	c.crc = cursor_crc(&c);
	return c;
}

/* Under the lock: rewrites the cursor if it moved (the lock is released
 * around the write). */
static void cursor_save(struct diskbuf *d, bool now)
{
	struct cursor c = cursor_now(d);
	uint64_t t = mono_ns();

	if (d->cursor_fd < 0 || !memcmp(&c, &d->cursor, sizeof(c)) ||
	    (!now && t - d->cursor_ns < CURSOR_NS))
		return;
	d->cursor = c;
	d->cursor_ns = t;
	pthread_mutex_unlock(&d->lock);
	if (pwrite(d->cursor_fd, &c, sizeof(c), 0) != sizeof(c))
		pr_warn("--disk-buffer %s: writing the cursor: %s\n", d->dir, strerror(errno));
	pthread_mutex_lock(&d->lock);
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
		ssize_t n = pwritev(fd, iov, cnt, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += n;
		while (cnt && (size_t)n >= iov->iov_len) {
			n -= iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= n;
		}
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
		*sealed = seg_seal(d);
		s = NULL;
	}
	if (s)
		return s;
	id = d->next_id++;
	unlock_and_reap(d);
	s = seg_create(d, id);
	pthread_mutex_lock(&d->lock);
	if (s) {
		/* The file's name must survive a power loss too. */
		d->dir_dirty = true;
		d->total_bytes += SEG_HDR;
		seg_append_list(d, s);
	}
	return s;
}

/* Records per pwritev: two iovecs each (descriptors, bytes), far below IOV_MAX. */
#define RUN_MAX 64

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
static struct batch *handoff_pop(struct diskbuf *d)
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
static void handoff_pass(struct diskbuf *d, uint64_t seg, uint64_t off, struct batch **gone)
{
	while (d->ho_head && (d->ho_head->disk_seg < seg ||
			      (d->ho_head->disk_seg == seg && d->ho_head->disk_off < off))) {
		struct batch *b = handoff_pop(d);

		b->next = *gone;
		*gone = b;
	}
}

/* Under the lock: the hand-off holds the record the reader of s reads next. */
static bool handoff_is_next(const struct diskbuf *d, const struct seg *s)
{
	return d->ho_head && d->ho_head->disk_seg == s->id && d->ho_head->disk_off == s->read_off;
}

/* Gives batches handoff_pass took back to their owner (outside the lock). */
static void handoff_put(struct diskbuf *d, struct batch *gone)
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
	struct iovec iov[2 * RUN_MAX];
	struct seg *s = writer_segment(d, q, sealed);
	size_t n = 0, bytes = 0;
	int niov = 0, err = s ? 0 : -EIO;

	/* Only this thread takes from the head: q is still there. */
	do {
		q = d->q_head;
		if (n && s->size + bytes + q->len > d->seg_bytes)
			break;
		d->q_head = q->next;
		run[n++] = q;
		bytes += q->len;
		iov[niov++] = (struct iovec){ q->bytes, q->batch ? q->head_len : q->len };
		if (q->batch && q->batch->used)
			iov[niov++] = (struct iovec){ q->batch->data, q->batch->used };
	} while (s && n < RUN_MAX && d->q_head);
	if (!d->q_head)
		d->q_tail = NULL;
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

static void *writer_main(void *arg)
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
			cursor_save(d, false);
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
			unlock_and_reap(d);
			sync_fd(sealed);
			pthread_mutex_lock(&d->lock);
		}
		if (sync_due(d, mono_ns()))
			sync_now(d);
		pthread_cond_broadcast(&d->written);
		cursor_save(d, false);
	}
	if (d->dirty || d->dir_dirty)
		sync_now(d);
	pthread_cond_broadcast(&d->written);
	unlock_and_reap(d);
	return NULL;
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
	err = dir_check(d, created);
	if (!err)
		err = cursor_load(d);
	if (err)
		goto fail;
	err = recover(d);
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
	err = -pthread_create(&d->writer, NULL, writer_main, d);
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
	handoff_pass(d, UINT64_MAX, UINT64_MAX, &gone);
	pthread_mutex_unlock(&d->lock);
	handoff_put(d, gone);
	pthread_mutex_lock(&d->lock);
	if (d->tail && d->tail->writable) {
		/* Everything sent and done: leave DIR empty. */
		d->tail->writable = false;
		maybe_remove(d, d->tail);
	}
	cursor_save(d, true);
	unlock_and_reap(d);
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
		seg_free(s);
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

/* The bytes of b's record on disk: header, descriptors, the messages. */
static uint64_t rec_len(const struct batch *b)
{
	return sizeof(struct rec_hdr) + (uint64_t)b->count * sizeof(struct disk_msg) + b->used;
}

/* b as a record: header (but its seq and header CRC) and descriptors, with
 * a copy of the messages' bytes after them only if copy. NULL if b is not
 * laid out back to back (batch_add does that) or out of memory. */
static struct qrec *encode(const struct batch *b, bool copy)
{
	size_t dlen = (size_t)b->count * sizeof(struct disk_msg);
	size_t head = sizeof(struct rec_hdr) + dlen;
	struct qrec *q = malloc(sizeof(*q) + head + (copy ? b->used : 0));
	struct rec_hdr *h;
	struct disk_msg *m;
	uint64_t off = 0;

	if (!q)
		return NULL;
	h = (struct rec_hdr *)q->bytes;
	m = (struct disk_msg *)(q->bytes + sizeof(*h));
	for (uint32_t i = 0; i < b->count; i++) {
		const struct msg_rec *r = &b->recs[i];

		if (r->off != off) {
			free(q);
			return NULL;
		}
		off += r->len;
		memset(&m[i], 0, sizeof(m[i]));
		m[i].len = r->len;
		m[i].sock = r->sock;
		m[i].truncated = r->truncated;
		m[i].src_len = r->src_len > sizeof(m[i].src) ? sizeof(m[i].src) : r->src_len;
		m[i].recv_ns = r->recv_ns;
		memcpy(m[i].src, &r->src, m[i].src_len);
	}
	if (off != b->used) {
		free(q);
		return NULL;
	}
	if (copy)
		memcpy(q->bytes + head, b->data, b->used);
	memset(h, 0, sizeof(*h));
	h->magic = REC_MAGIC;
	h->count = b->count;
	h->len = dlen + b->used;
	/* The payload's CRC, in two pieces: the same as over it whole. */
	h->crc = crc32_fast(crc(m, dlen), b->data, b->used);
	h->first_ns = b->recs[0].recv_ns;
	q->next = NULL;
	q->len = rec_len(b);
	q->head_len = head;
	q->count = b->count;
	q->first_ns = h->first_ns;
	q->batch = NULL;
	return q;
}

/* Queues q, the record of b (NULL: out of memory), for the writer; see
 * diskbuf_append for what it returns. Not 0: q is the caller's to free. */
static int enqueue(struct diskbuf *d, const struct batch *b, struct qrec *q, bool only_if_spilling)
{
	struct rec_hdr *h;
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
	h = (struct rec_hdr *)q->bytes;
	h->seq = d->next_seq++;
	h->hdr_crc = hdr_crc(h);
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

int diskbuf_append(struct diskbuf *d, const struct batch *b, bool only_if_spilling)
{
	struct qrec *q;
	int ret;

	if (!b->count)
		return 0;
	if (only_if_spilling && !diskbuf_spilling(d))
		return 1;
	/* Encoding and its CRC run unlocked: the workers in parallel. */
	q = encode(b, true);
	ret = enqueue(d, b, q, only_if_spilling);
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
		q = encode(b, false);
		if (q) {
			q->batch = b;
			q->put = put;
			q->put_ctx = ctx;
		}
		ret = enqueue(d, b, q, false);
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

/* d->rbuf (a checked payload) into b. */
static int unpack(struct diskbuf *d, const struct rec_hdr *h, struct batch *b)
{
	const struct disk_msg *m = (const struct disk_msg *)d->rbuf;
	size_t dlen = h->len - (size_t)h->count * sizeof(*m);
	uint32_t off = 0;

	if (h->count > b->cap) {
		struct msg_rec *r = realloc(b->recs, h->count * sizeof(*r));

		if (!r)
			return -ENOMEM;
		b->recs = r;
		b->cap = h->count;
	}
	if (array_reserve((void **)&b->data, &b->data_cap, dlen, 1, 4096))
		return -ENOMEM;
	memcpy(b->data, d->rbuf + (size_t)h->count * sizeof(*m), dlen);
	for (uint32_t i = 0; i < h->count; i++) {
		struct msg_rec *r = &b->recs[i];

		memset(r, 0, sizeof(*r));
		r->off = off;
		r->len = m[i].len;
		r->sock = m[i].sock;
		r->truncated = m[i].truncated;
		r->recv_ns = m[i].recv_ns;
		r->src_len = m[i].src_len;
		memcpy(&r->src, m[i].src, m[i].src_len);
		off += m[i].len;
	}
	b->count = h->count;
	b->used = dlen;
	return 0;
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
	if (s && handoff_is_next(d, s) && !pend_push(s, s->read_off)) {
		b = handoff_pop(d);
		rec_out(d, s, b->disk_off, rec_len(b), b->count, b->recs[0].recv_ns);
	} else if (d->ho_head) {
		handoff_pass(d, s ? s->id : UINT64_MAX, s ? s->read_off : UINT64_MAX, &gone);
	}
	pthread_mutex_unlock(&d->lock);
	handoff_put(d, gone);
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
		if (handoff_is_next(d, s)) {
			ret = 2; /* written and handed over since the caller's diskbuf_take */
			break;
		}
		off = find_record(d, s, s->read_off, &h);
		if (off > s->read_off) {
			if (!d->st.corrupt_records)
				pr_warn("--disk-buffer %s: segment %016llx: %llu corrupt byte(s) at "
					"offset %llu skipped (torn write or damage; counted)\n",
					d->dir, (unsigned long long)s->id,
					(unsigned long long)(off - s->read_off),
					(unsigned long long)s->read_off);
			d->st.corrupt_records++;
			d->st.corrupt_bytes += off - s->read_off;
			s->read_off = off;
		}
		if (off >= s->size) {
			maybe_remove(d, s);
			continue;
		}
		if (unpack(d, &h, b) || pend_push(s, off))
			break; /* out of memory: try again later */
		rec_out(d, s, off, sizeof(h) + h.len, h.count, h.first_ns);
		b->disk_seg = s->id;
		b->disk_off = off;
		d->st.read_back_msgs += h.count;
		/* Read back: the hand-off's batch of it (if any) is not needed. */
		handoff_pass(d, s->id, s->read_off, &gone);
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
				maybe_remove(d, d->tail);
			}
		}
	}
	unlock_and_reap(d);
	handoff_put(d, gone);
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
		maybe_remove(d, s);
		break;
	}
	unlock_and_reap(d);
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
