// SPDX-License-Identifier: MIT
/*
 * The disk buffer's directory: DIR checked to be its owner's alone, its
 * files opened without following links, the segment files created, sealed,
 * deleted once done, and those an earlier run left found and counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common/array.h"
#include "common/log.h"
#include "rx/path/diskbuf_format.h"
#include "rx/path/diskbuf_int.h"
#include "rx/path/window.h"

static void seg_path(const struct diskbuf *d, uint64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%016llx.seg", (unsigned long long)id);
}

/* ---- segments ------------------------------------------------------------ */

void dbuf_seg_free(struct seg *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->pend);
	free(s);
}

void dbuf_seg_append_list(struct diskbuf *d, struct seg *s)
{
	s->next = NULL;
	if (d->tail)
		d->tail->next = s;
	else
		d->head = s;
	d->tail = s;
}

/* A segment that is read to its end, done with and no longer written to
 * goes: off the list now, its file deleted by dbuf_unlock_and_reap() once the lock is
 * released (unlinking a large file can take the file system a while, and
 * the workers want the lock meanwhile). */
void dbuf_maybe_remove(struct diskbuf *d, struct seg *s)
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

/* Releases the lock, then deletes the segments dbuf_maybe_remove() took off. */
void dbuf_unlock_and_reap(struct diskbuf *d)
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
		dbuf_seg_free(s);
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
int dbuf_dir_check(struct diskbuf *d, bool created)
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
int dbuf_open_own_file(struct diskbuf *d, const char *name, int flags)
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
struct seg *dbuf_seg_create(struct diskbuf *d, uint64_t id)
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
		dbuf_seg_free(s);
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
int dbuf_seg_seal(struct diskbuf *d)
{
	struct seg *s = d->tail;
	int fd = -1;

	if (!s || !s->writable)
		return -1;
	if (d->dirty)
		fd = dup(s->fd);
	d->dirty = false;
	s->writable = false;
	dbuf_maybe_remove(d, s);
	return fd;
}

/* A segment file's header, field by field: its version (1 or SEG_VERSION,
 * or a newer one), or 0 if it is no header (its bytes are resynchronised
 * over like any corrupt ones). */
static uint32_t seg_version(int fd, uint64_t size)
{
	char hdr[SEG_HDR];
	uint32_t version, zero;

	if (size < SEG_HDR || dbuf_pread_all(fd, hdr, SEG_HDR, 0) || memcmp(hdr, SEG_MAGIC, 8))
		return 0;
	memcpy(&version, hdr + 8, sizeof(version));
	memcpy(&zero, hdr + 12, sizeof(zero));
	return zero ? 0 : version;
}

/*
 * Whether a segment an earlier run left is one to read: a file no bigger
 * than the largest syslogrx writes (SEG_FILE_MAX) nor than --disk-buffer-size
 * (whose cap every file written under it fits), of a version this build
 * reads. Else it is left in DIR as it is, never read (a 20 GB sparse file
 * would be scanned for record headers for minutes), and said.
 */
static bool seg_usable(struct diskbuf *d, const char *name, uint64_t size, uint32_t version)
{
	if (size > SEG_FILE_MAX || size > d->o.max_bytes) {
		bool ours = size <= SEG_FILE_MAX;

		pr_warn("--disk-buffer %s: %s is %llu bytes, more than %s (%llu): not read, left "
			"in place (%s)\n",
			d->dir, name, (unsigned long long)size,
			ours ? "--disk-buffer-size" : "any segment syslogrx writes",
			(unsigned long long)(ours ? d->o.max_bytes : SEG_FILE_MAX),
			ours ? "a larger --disk-buffer-size reads it" : "move it away");
		return false;
	}
	if (!version || version == 1 || version == SEG_VERSION)
		return true;
	pr_warn("--disk-buffer %s: %s is of format version %u, newer than this syslogrx reads "
		"(%u): not read, left in place for the syslogrx that wrote it\n",
		d->dir, name, (unsigned int)version, (unsigned int)SEG_VERSION);
	return false;
}

/* Queues a segment an earlier run left: counts its intact records, and
 * (sc, the walk over every segment) the corrupt stretches between them. */
static int seg_recover(struct diskbuf *d, uint64_t id, const char *name, struct dbuf_scan *sc)
{
	struct seg *s = calloc(1, sizeof(*s));
	struct stat stb;
	struct rec_hdr h;
	uint64_t off, from;
	uint32_t version;

	if (!s)
		return -ENOMEM;
	s->id = id;
	s->recovered = true;
	if (id >= d->next_id)
		d->next_id = id + 1;
	s->fd = dbuf_open_own_file(d, name, 0);
	if (s->fd < 0 || fstat(s->fd, &stb)) {
		int err = s->fd < 0 ? s->fd : -errno;

		dbuf_seg_free(s);
		return err;
	}
	/* Too big to have been ours: not even its header is read. */
	version = (uint64_t)stb.st_size <= SEG_FILE_MAX ? seg_version(s->fd, stb.st_size) : 0;
	if (!seg_usable(d, name, stb.st_size, version)) {
		d->st.segments_refused++;
		dbuf_seg_free(s);
		return 0;
	}
	s->size = stb.st_size;
	/* A bad file header is resynchronised over like any corrupt bytes. */
	s->read_off = version ? SEG_HDR : 0;
	/* What the cursor says was done before is not sent again. */
	if (s->read_off && id == d->cursor.seg && d->cursor.off >= SEG_HDR &&
	    d->cursor.off <= s->size)
		s->read_off = d->cursor.off;
	s->done_off = s->read_off;
	/* A stretch is counted across segments only from a run's records in
	 * segments that follow each other: one deleted between (all its
	 * records done) is no loss. Nor from before the cursor. */
	if (id != sc->seg + 1 || s->read_off > SEG_HDR) {
		dbuf_scan_gap_end(d, sc, NULL);
		sc->have_last = false;
	}
	sc->seg = id;
	for (from = off = s->read_off; (off = dbuf_find_record(d, s, off, &h)) < s->size;
	     from = off = off + dbuf_hdr_len(&h) + h.len) {
		if (off > from && !sc->gap_bytes) {
			sc->gap_seg = id;
			sc->gap_off = from;
		}
		sc->gap_bytes += off - from;
		dbuf_scan_gap_end(d, sc, &h);
		sc->have_last = h.version == REC_VERSION;
		sc->last_run = h.run;
		sc->last_seq = h.seq;
		sc->last_msg_end = h.msg_seq + h.count;
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
	if (s->size > from && !sc->gap_bytes) {
		sc->gap_seg = id;
		sc->gap_off = from;
	}
	sc->gap_bytes += s->size - from;
	d->total_bytes += s->size;
	dbuf_seg_append_list(d, s);
	return 0;
}

/* DIR's NNNNNNNNNNNNNNNN.seg files, oldest first. */
int dbuf_recover(struct diskbuf *d)
{
	DIR *dir = fdopendir(dup(d->dirfd));
	struct dbuf_scan sc = { 0 };
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
		err = seg_recover(d, ids[i], name, &sc);
	}
	/* A stretch at the very end (a torn tail): nothing after it to count by. */
	dbuf_scan_gap_end(d, &sc, NULL);
	free(ids);
	return err;
}
