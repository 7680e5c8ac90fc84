// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <zlib.h>
#include "common/crc32_fast.h"
#include "rx/path/diskbuf.h"
#include "rx/path/diskbuf_lock.h"
#include "rx/settings/listeners.h"

#define REC_HDR 56
#define REC_V1_HDR 40
#define DESC 56
#define NAME 36
#define SEG_HDR 16

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_diskbuf.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* The --listen list the buffers of these tests run with: make_batch's
 * messages come by these three. */
static const struct listener_spec lis[] = { { .name = "l0" }, { .name = "l1" }, { .name = "l2" } };

static struct diskbuf *open_db(uint64_t max, uint64_t seg, enum diskbuf_mode mode)
{
	struct diskbuf_opts o = { .dir = dir,
				  .max_bytes = max,
				  .segment_bytes = seg,
				  .sync_ms = 1000,
				  .mode = mode,
				  .listeners = lis,
				  .nr_listeners = 3,
				  .listener_names = true };
	struct diskbuf *d = diskbuf_open(&o);

	assert_non_null(d);
	return d;
}

static struct batch *new_batch(uint32_t cap)
{
	struct batch *b = calloc(1, sizeof(*b));

	b->cap = cap;
	b->recs = calloc(cap, sizeof(*b->recs));
	return b;
}

static void free_batch(struct batch *b)
{
	free(b->recs);
	free(b->data);
	free(b);
}

/* Batch k: k % 7 + 1 messages "batch K msg I" of varying length, with a
 * source address and a receive time that say k and i. */
static struct batch *make_batch(unsigned int k)
{
	struct batch *b = new_batch(64);
	unsigned int n = k % 7 + 1;

	for (unsigned int i = 0; i < n; i++) {
		char msg[200];
		int len = snprintf(msg, sizeof(msg), "<13>batch %u msg %u %.*s", k, i,
				   (int)(k % 50),
				   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		struct msg_rec *r = batch_add(b, len);
		struct sockaddr_in *sin = (struct sockaddr_in *)&r->src;

		memcpy(b->data + r->off, msg, len);
		r->sock = k % 4;
		r->listener = (k + i) % 3; /* which --listen: read back as written */
		r->truncated = i == 1;
		r->recv_ns = 1700000000000000000ULL + k * 1000 + i;
		memset(&r->src, 0, sizeof(r->src));
		sin->sin_family = AF_INET;
		sin->sin_port = htons(1000 + i);
		sin->sin_addr.s_addr = htonl(0x7f000001 + k);
		r->src_len = sizeof(*sin);
	}
	return b;
}

static uint64_t record_bytes(unsigned int k)
{
	struct batch *b = make_batch(k);
	uint64_t names = b->count < 3 ? b->count : 3; /* (k + i) % 3: one name each */
	uint64_t n = REC_HDR + (uint64_t)b->count * DESC + names * NAME + b->used;

	free_batch(b);
	return n;
}

/* b is byte for byte what make_batch(k) made. */
static void assert_batch(const struct batch *b, unsigned int k)
{
	struct batch *want = make_batch(k);

	assert_int_equal(b->count, want->count);
	assert_int_equal(b->used, want->used);
	assert_memory_equal(b->data, want->data, want->used);
	for (uint32_t i = 0; i < want->count; i++) {
		assert_int_equal(b->recs[i].off, want->recs[i].off);
		assert_int_equal(b->recs[i].len, want->recs[i].len);
		assert_int_equal(b->recs[i].sock, want->recs[i].sock);
		assert_int_equal(b->recs[i].listener, want->recs[i].listener);
		assert_int_equal(b->recs[i].truncated, want->recs[i].truncated);
		assert_int_equal(b->recs[i].recv_ns, want->recs[i].recv_ns);
		assert_int_equal(b->recs[i].src_len, want->recs[i].src_len);
		assert_memory_equal(&b->recs[i].src, &want->recs[i].src, want->recs[i].src_len);
	}
	free_batch(want);
}

static void append_range(struct diskbuf *d, unsigned int from, unsigned int to)
{
	for (unsigned int k = from; k < to; k++) {
		struct batch *b = make_batch(k);

		assert_int_equal(diskbuf_append(d, b, false), 0);
		free_batch(b);
	}
	diskbuf_flush(d);
}

/* Reads the batches from..to-1 in order, marking each done. */
static void read_range(struct diskbuf *d, unsigned int from, unsigned int to)
{
	struct batch *b = new_batch(1); /* smaller than a record: must grow */

	for (unsigned int k = from; k < to; k++) {
		assert_int_equal(diskbuf_read(d, b), 1);
		assert_batch(b, k);
		diskbuf_done(d, b->disk_seg, b->disk_off, b->count);
	}
	free_batch(b);
}

static int count_segments(void)
{
	DIR *dd = opendir(dir);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(dd)))
		n += strstr(e->d_name, ".seg") != NULL;
	closedir(dd);
	return n;
}

/* The path of the only (or first) segment file. */
static void first_segment(char *path, size_t len)
{
	DIR *dd = opendir(dir);
	struct dirent *e;
	char best[256] = "";

	while ((e = readdir(dd)))
		if (strstr(e->d_name, ".seg") && (!best[0] || strcmp(e->d_name, best) < 0))
			snprintf(best, sizeof(best), "%s", e->d_name);
	closedir(dd);
	assert_true(best[0]);
	snprintf(path, len, "%s/%s", dir, best);
}

static void test_round_trip(void **state)
{
	struct diskbuf *d = open_db(64 << 20, 0, DISKBUF_SPILL);
	struct diskbuf_stats st;
	uint64_t msgs = 0, bytes = SEG_HDR;
	struct batch *b = new_batch(4);

	for (unsigned int k = 0; k < 100; k++) {
		msgs += k % 7 + 1;
		bytes += record_bytes(k);
	}
	assert_false(diskbuf_spilling(d));
	assert_int_equal(diskbuf_read(d, b), 0);
	append_range(d, 0, 100);
	assert_true(diskbuf_spilling(d));
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.written_batches, 100);
	assert_int_equal(st.written_msgs, msgs);
	assert_int_equal(st.msgs, msgs);
	assert_int_equal(st.bytes, bytes);
	assert_true(st.oldest_age_seconds > 0);
	read_range(d, 0, 100);
	assert_int_equal(diskbuf_read(d, b), 0);
	assert_false(diskbuf_spilling(d)); /* spill: back to the window */
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.replayed_msgs, msgs);
	assert_int_equal(st.msgs, 0);
	assert_int_equal(st.corrupt_records, 0);
	assert_int_equal(st.dropped_msgs, 0);
	free_batch(b);
	diskbuf_close(d);
	assert_int_equal(count_segments(), 0); /* all done: DIR is left empty */
}

static unsigned int puts_seen;

static void put_counted(void *ctx, struct batch *b)
{
	assert_ptr_equal(ctx, &puts_seen);
	puts_seen++;
	free_batch(b);
}

/* diskbuf_append_batch: the batch's own bytes are written (runs of records
 * in one pwritev, across segment boundaries), each batch comes back once
 * written, and what is read back is what a copying append writes. */
static void test_append_batch(void **state)
{
	struct diskbuf *d = open_db(64 << 20, 64 << 10, DISKBUF_RELIABLE);
	struct diskbuf_stats st;
	uint64_t msgs = 0, bytes = 0;
	struct batch *empty = new_batch(4);

	puts_seen = 0;
	assert_int_equal(diskbuf_append_batch(d, empty, put_counted, &puts_seen), 0);
	assert_int_equal(puts_seen, 1); /* nothing to write: back at once */
	for (unsigned int k = 0; k < 600; k++) {
		msgs += k % 7 + 1;
		bytes += record_bytes(k);
		assert_int_equal(diskbuf_append_batch(d, make_batch(k), put_counted, &puts_seen),
				 0);
	}
	diskbuf_flush(d);
	assert_int_equal(puts_seen, 601);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.written_batches, 600);
	assert_int_equal(st.written_msgs, msgs);
	assert_int_equal(st.written_bytes, bytes);
	assert_true(st.segments > 1);
	assert_int_equal(st.dropped_batches, 0);
	read_range(d, 0, 600);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.corrupt_records, 0);
	assert_int_equal(st.msgs, 0);
	diskbuf_close(d);
}

/* What make_batch(k) made, laid out as a worker receives it: message i in
 * slot i of `slot` bytes, one longer than its slot copied past the slots,
 * and the gaps filled with 'G', which must never reach the disk. */
static struct batch *make_slotted(const struct batch *src, size_t slot)
{
	struct batch *b = new_batch(src->count);
	size_t end = (size_t)src->count * slot;

	assert_int_equal(batch_slots(b, src->count, slot), 0);
	memset(b->data, 'G', b->data_cap);
	for (uint32_t i = 0; i < src->count; i++) {
		struct msg_rec *r = &b->recs[i];

		*r = src->recs[i];
		r->off = i * slot;
		if (r->len > slot) {
			assert_int_equal(batch_grow(b, end + r->len), 0);
			r->off = end;
			end += r->len;
		}
		memcpy(b->data + r->off, src->data + src->recs[i].off, r->len);
		b->used += r->len;
	}
	b->count = src->count;
	return b;
}

/* A batch of n one-to-three-byte messages, more than IOV_MAX when slotted. */
static struct batch *make_wide(unsigned int n)
{
	struct batch *b = new_batch(n);

	for (unsigned int i = 0; i < n; i++) {
		struct msg_rec *r = batch_add(b, 1 + i % 3);

		memset(b->data + r->off, 'a' + i % 26, r->len);
		r->recv_ns = 1700000000000000000ULL + i;
	}
	return b;
}

/* The whole of DIR's one segment file. */
static char *read_segment(size_t *len)
{
	char path[256];
	struct stat st;
	char *buf;
	int fd;

	first_segment(path, sizeof(path));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

/* Writes batches 0..n-1 and two wide ones, slotted (slot 0: back to back),
 * half copied (diskbuf_append), half in place (diskbuf_append_batch); returns
 * the segment file's bytes. */
static char *write_batches(unsigned int n, size_t slot, size_t *len)
{
	struct diskbuf *d = open_db(64 << 20, 64 << 20, DISKBUF_RELIABLE);
	char *file;

	puts_seen = 0;
	for (unsigned int k = 0; k < n + 2; k++) {
		struct batch *src = k < n ? make_batch(k) : make_wide(DISKBUF_COUNT_MAX);
		struct batch *b = slot ? make_slotted(src, slot) : src;

		if (k % 2) {
			assert_int_equal(diskbuf_append(d, b, false), 0);
			free_batch(b);
		} else {
			assert_int_equal(diskbuf_append_batch(d, b, put_counted, &puts_seen), 0);
		}
		if (b != src)
			free_batch(src);
	}
	diskbuf_flush(d);
	assert_int_equal(puts_seen, (n + 2) / 2);
	file = read_segment(len);
	diskbuf_close(d);
	return file;
}

/* Each record of a segment file's bytes without what tells its run: the
 * run's number, and the header CRC over it. */
static void strip_runs(char *file, size_t len)
{
	for (size_t off = SEG_HDR; off + REC_HDR <= len;) {
		uint32_t plen;

		memcpy(&plen, file + off + 8, sizeof(plen));
		memset(file + off + 4, 0, 4);
		memset(file + off + 48, 0, 4);
		off += REC_HDR + plen;
	}
}

/* Batches received into slots (gaps, long messages past the slots, more
 * messages than IOV_MAX) are written as the same records, byte for byte, as
 * the same batches back to back: the on-disk format does not depend on the
 * batch's layout. They read back as written. */
static void test_slotted_batches(void **state)
{
	size_t plain_len, slot_len;
	char *plain = write_batches(200, 0, &plain_len);
	char *slotted;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -f %s/*", dir);
	assert_int_equal(system(cmd), 0);
	slotted = write_batches(200, 64, &slot_len);
	assert_int_equal(slot_len, plain_len);
	strip_runs(plain, plain_len);
	strip_runs(slotted, slot_len);
	assert_memory_equal(slotted, plain, plain_len);
	free(plain);
	free(slotted);
	/* Left on disk by the slotted run: read back in order. */
	{
		struct diskbuf *d = open_db(64 << 20, 64 << 20, DISKBUF_RELIABLE);

		read_range(d, 0, 200);
		diskbuf_close(d);
	}
}

/* Takes the next record: the hand-off's batch (counted in *handed) or one
 * read back into r; checks it is batch k and marks it done. */
static void take_one(struct diskbuf *d, struct batch *r, unsigned int k, unsigned int *handed)
{
	struct batch *b = diskbuf_take(d);

	if (b) {
		(*handed)++;
	} else {
		assert_int_equal(diskbuf_read(d, r), 1);
		b = r;
	}
	assert_batch(b, k);
	diskbuf_done(d, b->disk_seg, b->disk_off, b->count);
	if (b != r)
		free_batch(b); /* the test's put: the batch was given to us */
}

/*
 * The hand-off (reliable): a batch written while the reader is caught up is
 * given to it as it is, not read back; past the bound, the rest is read
 * back until the reader has caught up; close gives back what is still
 * held. Counts and the records on disk are the same either way.
 */
static void test_handoff(void **state)
{
	struct diskbuf_opts o = { .dir = dir,
				  .max_bytes = 64 << 20,
				  .segment_bytes = 64 << 10,
				  .sync_ms = 1000,
				  .mode = DISKBUF_RELIABLE,
				  .handoff_msgs = 40,
				  .handoff_bytes = 64 << 20,
				  .listeners = lis,
				  .nr_listeners = 3,
				  .listener_names = true };
	struct diskbuf *d = diskbuf_open(&o);
	struct batch *r = new_batch(1);
	unsigned int handed = 0, kept = 0, k;
	uint64_t msgs = 0, held = 0, read_back = 0;
	struct diskbuf_stats st;

	assert_non_null(d);
	puts_seen = 0;
	/* Caught up: every one handed over, across segments. */
	for (k = 0; k < 300; k++) {
		msgs += k % 7 + 1;
		assert_int_equal(diskbuf_append_batch(d, make_batch(k), put_counted, &puts_seen),
				 0);
		diskbuf_flush(d);
		take_one(d, r, k, &handed);
	}
	assert_int_equal(handed, 300);
	assert_int_equal(puts_seen, 0);
	diskbuf_get_stats(d, &st);
	assert_true(st.written_bytes > 2 * (64 << 10)); /* segments sealed, done, deleted */
	assert_int_equal(st.read_back_msgs, 0);
	assert_int_equal(st.replayed_msgs, msgs);
	assert_int_equal(st.msgs, 0);
	/* Behind: the first batches up to 40 messages are kept, the rest read back. */
	for (k = 300; k < 400; k++) {
		if (kept == k - 300 && held + k % 7 + 1 <= 40) {
			held += k % 7 + 1;
			kept++;
		} else {
			read_back += k % 7 + 1;
		}
		msgs += k % 7 + 1;
		assert_int_equal(diskbuf_append_batch(d, make_batch(k), put_counted, &puts_seen),
				 0);
	}
	diskbuf_flush(d);
	assert_int_equal(puts_seen, 100 - kept);
	handed = 0;
	for (k = 300; k < 400; k++)
		take_one(d, r, k, &handed);
	assert_int_equal(handed, kept);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.read_back_msgs, read_back);
	assert_int_equal(st.replayed_msgs, msgs);
	assert_int_equal(st.written_msgs, msgs);
	assert_int_equal(st.msgs, 0);
	assert_int_equal(st.corrupt_records, 0);
	/* Caught up again: handed over again. */
	assert_int_equal(diskbuf_append_batch(d, make_batch(400), put_counted, &puts_seen), 0);
	diskbuf_flush(d);
	take_one(d, r, 400, &handed);
	assert_int_equal(handed, kept + 1);
	/* Written after a take found nothing: diskbuf_read does not read it
	 * back, it says the hand-off has it. */
	puts_seen = 0;
	assert_null(diskbuf_take(d));
	assert_int_equal(diskbuf_append_batch(d, make_batch(401), put_counted, &puts_seen), 0);
	diskbuf_flush(d);
	assert_int_equal(diskbuf_read(d, r), 2);
	take_one(d, r, 401, &handed);
	assert_int_equal(handed, kept + 2);
	assert_int_equal(puts_seen, 0);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.read_back_msgs, read_back);
	/* Held at close: given back, and on disk for the next run. */
	assert_int_equal(diskbuf_append_batch(d, make_batch(402), put_counted, &puts_seen), 0);
	diskbuf_close(d);
	assert_int_equal(puts_seen, 1);
	d = open_db(64 << 20, 64 << 10, DISKBUF_RELIABLE);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.recovered_msgs, 402 % 7 + 1);
	assert_null(diskbuf_take(d)); /* no hand-off: read back */
	read_range(d, 402, 403);
	diskbuf_close(d);
	free_batch(r);
}

static void test_only_if_spilling(void **state)
{
	struct diskbuf *d = open_db(1 << 20, 0, DISKBUF_SPILL);
	struct batch *b = make_batch(3), *r = new_batch(8);

	assert_int_equal(diskbuf_append(d, b, true), 1); /* not spilling: not taken */
	assert_int_equal(diskbuf_unread(d), 0);
	assert_int_equal(diskbuf_append(d, b, false), 0);
	assert_int_equal(diskbuf_append(d, b, true), 0); /* spilling now */
	assert_int_equal(diskbuf_unread(d), 2);
	diskbuf_flush(d);
	assert_int_equal(diskbuf_read(d, r), 1);
	diskbuf_done(d, r->disk_seg, r->disk_off, r->count);
	assert_int_equal(diskbuf_read(d, r), 1);
	diskbuf_done(d, r->disk_seg, r->disk_off, r->count);
	assert_int_equal(diskbuf_read(d, r), 0);
	assert_int_equal(diskbuf_append(d, b, true), 1);
	diskbuf_close(d);

	/* reliable: always spilling */
	d = open_db(1 << 20, 0, DISKBUF_RELIABLE);
	assert_true(diskbuf_spilling(d));
	assert_int_equal(diskbuf_read(d, r), 0);
	assert_true(diskbuf_spilling(d));
	assert_int_equal(diskbuf_append(d, b, true), 0);
	diskbuf_close(d);
	free_batch(b);
	free_batch(r);
}

/* Small segments: several files; each goes once read and done, not before. */
static void test_segments_deleted_when_done(void **state)
{
	struct diskbuf *d = open_db(16 << 20, 64 << 10, DISKBUF_RELIABLE);
	struct batch *b = new_batch(8), *held = new_batch(8);
	struct diskbuf_stats st;
	int segs;

	append_range(d, 0, 2000);
	segs = count_segments();
	assert_true(segs >= 3);
	/* The first record stays outstanding: its segment must stay. */
	assert_int_equal(diskbuf_read(d, held), 1);
	assert_batch(held, 0);
	read_range(d, 1, 2000);
	assert_int_equal(diskbuf_read(d, b), 0);
	assert_int_equal(count_segments(), 2); /* the held one's, and the one written to */
	diskbuf_done(d, held->disk_seg, held->disk_off, held->count);
	assert_int_equal(count_segments(), 1);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.msgs, 0);
	assert_int_equal(st.segments, 1);
	diskbuf_close(d);
	assert_int_equal(count_segments(), 0);
	free_batch(b);
	free_batch(held);
}

/* A crash: the process goes away with records unread (and one read but not
 * done); a new one finds them all, in order, before what it appends. */
static void test_reopen_after_crash(void **state)
{
	struct diskbuf *d = open_db(16 << 20, 64 << 10, DISKBUF_RELIABLE);
	struct batch *b = new_batch(8);
	struct diskbuf_stats st;
	uint64_t msgs = 0;

	append_range(d, 0, 500);
	assert_int_equal(diskbuf_read(d, b), 1); /* read, never done: must come back */
	diskbuf_close(d);
	for (unsigned int k = 0; k < 500; k++)
		msgs += k % 7 + 1;

	d = open_db(16 << 20, 64 << 10, DISKBUF_SPILL);
	assert_true(diskbuf_spilling(d)); /* what is left goes first */
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.recovered_msgs, msgs);
	assert_int_equal(st.msgs, msgs);
	append_range(d, 500, 600);
	read_range(d, 0, 600);
	assert_int_equal(diskbuf_read(d, b), 0);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.corrupt_records, 0);
	diskbuf_close(d);
	assert_int_equal(count_segments(), 0);
	free_batch(b);
}

/* The cursor: what was done before a restart is not sent again, what was
 * in flight (done out of order behind it) is; a damaged cursor means
 * everything again, never less. */
static void test_cursor(void **state)
{
	struct diskbuf *d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	struct batch *b1 = new_batch(8), *b2 = new_batch(8);
	struct diskbuf_stats st;
	uint64_t msgs = 0, all = 0, off;
	char path[300];
	int fd;

	append_range(d, 0, 50);
	read_range(d, 0, 20);
	assert_int_equal(diskbuf_read(d, b1), 1); /* 20: in flight */
	assert_int_equal(diskbuf_read(d, b2), 1); /* 21: done before 20 */
	diskbuf_done(d, b2->disk_seg, b2->disk_off, b2->count);
	diskbuf_close(d);
	for (unsigned int k = 0; k < 50; k++) {
		all += k % 7 + 1;
		if (k >= 20)
			msgs += k % 7 + 1;
	}
	d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.recovered_msgs, msgs);
	read_range(d, 20, 30);
	diskbuf_close(d);

	/* A damaged cursor: from the start. Damaged where it still looks like
	 * an offset inside the segment (one byte lower), so only its CRC can
	 * tell. */
	snprintf(path, sizeof(path), "%s/cursor", dir);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &off, sizeof(off), 8), sizeof(off));
	off--;
	assert_int_equal(pwrite(fd, &off, sizeof(off), 8), sizeof(off));
	close(fd);
	d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.recovered_msgs, all);
	read_range(d, 0, 50);
	diskbuf_close(d);
	free_batch(b1);
	free_batch(b2);
}

/* The last record cut in the middle (a write torn by a crash). */
static void test_torn_tail(void **state)
{
	struct diskbuf *d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	struct batch *b = new_batch(8);
	struct diskbuf_stats st;
	char path[128];
	struct stat sb;
	uint64_t cut = record_bytes(9) / 2;

	append_range(d, 0, 10);
	diskbuf_close(d);
	first_segment(path, sizeof(path));
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(truncate(path, sb.st_size - cut), 0);

	d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	read_range(d, 0, 9);
	assert_int_equal(diskbuf_read(d, b), 0);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.corrupt_records, 1);
	assert_int_equal(st.corrupt_bytes, record_bytes(9) - cut);
	assert_int_equal(st.replayed_msgs, st.recovered_msgs);
	/* New appends after the torn tail are whole and read. */
	append_range(d, 100, 103);
	read_range(d, 100, 103);
	diskbuf_close(d);
	free_batch(b);
}

/* One flipped byte inside record 4's data, one inside record 7's header's
 * length, one in record 2's receive time (that only the header CRC covers). */
static void test_flipped_bytes(void **state)
{
	struct diskbuf *d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	struct batch *b = new_batch(8);
	struct diskbuf_stats st;
	uint64_t off2 = SEG_HDR, off4 = SEG_HDR, off7 = SEG_HDR;
	char path[128], c;
	int fd;

	for (unsigned int k = 0; k < 2; k++)
		off2 += record_bytes(k);
	for (unsigned int k = 0; k < 4; k++)
		off4 += record_bytes(k);
	for (unsigned int k = 0; k < 7; k++)
		off7 += record_bytes(k);
	append_range(d, 0, 10);
	diskbuf_close(d);
	first_segment(path, sizeof(path));
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	off4 += record_bytes(4) - 3; /* in the message bytes */
	off7 += 8;		     /* the payload length */
	off2 += 32;		     /* first_ns */
	assert_int_equal(pread(fd, &c, 1, off4), 1);
	c ^= 0x20;
	assert_int_equal(pwrite(fd, &c, 1, off4), 1);
	assert_int_equal(pread(fd, &c, 1, off7), 1);
	c ^= 0x01;
	assert_int_equal(pwrite(fd, &c, 1, off7), 1);
	assert_int_equal(pread(fd, &c, 1, off2), 1);
	c ^= 0x01;
	assert_int_equal(pwrite(fd, &c, 1, off2), 1);
	close(fd);

	d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	read_range(d, 0, 2);
	read_range(d, 3, 4);
	read_range(d, 5, 7);
	read_range(d, 8, 10);
	assert_int_equal(diskbuf_read(d, b), 0);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.corrupt_records, 3);
	assert_int_equal(st.corrupt_bytes, record_bytes(2) + record_bytes(4) + record_bytes(7));
	diskbuf_close(d);
	free_batch(b);
}

/* The cap: what does not fit is dropped and counted, exactly; what fits is
 * all read back; the files never exceed the cap. */
static void test_size_cap(void **state)
{
	uint64_t cap = 256 << 10;
	struct diskbuf *d = open_db(cap, 64 << 10, DISKBUF_SPILL);
	struct batch *b = new_batch(8);
	struct diskbuf_stats st;
	uint64_t kept_msgs = 0, dropped_msgs = 0, dropped = 0;
	unsigned int kept[4000], nkept = 0;

	for (unsigned int k = 0; k < 4000; k++) {
		struct batch *x = make_batch(k);
		int err = diskbuf_append(d, x, false);

		assert_true(err == 0 || err == -ENOSPC);
		if (err) {
			dropped++;
			dropped_msgs += x->count;
		} else {
			kept[nkept++] = k;
			kept_msgs += x->count;
		}
		free_batch(x);
		diskbuf_get_stats(d, &st);
		assert_true(st.bytes <= cap);
	}
	assert_true(dropped > 0 && nkept > 0);
	diskbuf_flush(d);
	diskbuf_get_stats(d, &st);
	assert_true(st.bytes <= cap);
	assert_int_equal(st.dropped_batches, dropped);
	assert_int_equal(st.dropped_msgs, dropped_msgs);
	assert_int_equal(st.written_msgs, kept_msgs);
	for (unsigned int i = 0; i < nkept; i++) {
		assert_int_equal(diskbuf_read(d, b), 1);
		assert_batch(b, kept[i]);
		diskbuf_done(d, b->disk_seg, b->disk_off, b->count);
	}
	assert_int_equal(diskbuf_read(d, b), 0);
	/* Room again once read and done. */
	append_range(d, 0, 10);
	diskbuf_close(d);
	free_batch(b);
}

/* ---- what a record keeps, and what a damaged DIR costs -------------------- */

/* Reads every record there is, each checked against the batch it says it
 * is (make_batch(k)) and done; marks seen[k]; returns the messages read. */
static uint64_t read_all(struct diskbuf *d, bool *seen, unsigned int n)
{
	struct batch *b = new_batch(1);
	uint64_t msgs = 0;
	unsigned int k;

	while (diskbuf_read(d, b) == 1) {
		assert_int_equal(sscanf(b->data, "<13>batch %u ", &k), 1);
		assert_true(k < n && !seen[k]);
		assert_batch(b, k);
		seen[k] = true;
		msgs += b->count;
		diskbuf_done(d, b->disk_seg, b->disk_off, b->count);
	}
	free_batch(b);
	return msgs;
}

/* Messages of the batches in [0, n) not seen. */
static uint64_t unseen_msgs(const bool *seen, unsigned int n)
{
	uint64_t msgs = 0;

	for (unsigned int k = 0; k < n; k++)
		msgs += seen[k] ? 0 : k % 7 + 1;
	return msgs;
}

/* The path of segment id. */
static void segment_path(char *path, size_t len, unsigned int id)
{
	snprintf(path, len, "%s/%016x.seg", dir, id);
}

/* Zeroes [from, to) of a file. */
static void zero_range(const char *path, uint64_t from, uint64_t to)
{
	int fd = open(path, O_RDWR);
	char *z = calloc(1, to - from);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, z, to - from, from), (ssize_t)(to - from));
	close(fd);
	free(z);
}

static uint64_t file_size(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return sb.st_size;
}

/* A record keeps its messages' listeners by name: read back by a run with
 * another --listen list, a name it has is its listener (whatever its
 * position), a name it lacks is delivered as recorded (never as another
 * listener's), and a run that showed no name gives none. */
static void test_listener_names(void **state)
{
	static const struct listener_spec other[] = { { .name = "l2" }, { .name = "x" } };
	struct diskbuf_opts o = { .dir = dir,
				  .max_bytes = 16 << 20,
				  .sync_ms = 1000,
				  .mode = DISKBUF_RELIABLE,
				  .listeners = other,
				  .nr_listeners = 2,
				  .listener_names = true };
	struct diskbuf *d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	struct batch *b = new_batch(1);
	struct diskbuf_stats st;

	append_range(d, 0, 9);
	diskbuf_close(d);
	d = diskbuf_open(&o);
	assert_non_null(d);
	for (unsigned int k = 0; k < 9; k++) {
		assert_int_equal(diskbuf_read(d, b), 1);
		for (uint32_t i = 0; i < b->count; i++) {
			uint32_t was = (k + i) % 3, l = b->recs[i].listener;
			const char *name = diskbuf_listener_name(d, l);

			if (was == 2) {
				assert_int_equal(l, 0); /* l2: this run's first */
				assert_null(name);
			} else {
				assert_true(l >= WINDOW_MAX_LISTENERS);
				assert_non_null(name);
				assert_string_equal(name, lis[was].name);
			}
		}
		diskbuf_done(d, b->disk_seg, b->disk_off, b->count);
	}
	/* Written again by this run (a stop spills what it holds): the
	 * recorded names go with them. */
	diskbuf_append(d, b, false);
	diskbuf_close(d);
	o.listener_names = false; /* one unnamed listener: shows no name */
	d = diskbuf_open(&o);
	assert_int_equal(diskbuf_read(d, b), 1);
	for (uint32_t i = 0; i < b->count; i++) {
		const char *name = diskbuf_listener_name(d, b->recs[i].listener);

		assert_non_null(name);
		assert_string_equal(name, lis[(8 + i) % 3].name);
	}
	diskbuf_done(d, b->disk_seg, b->disk_off, b->count);
	append_range(d, 0, 1);
	diskbuf_close(d);
	d = diskbuf_open(&o);
	assert_int_equal(diskbuf_read(d, b), 1);
	assert_int_equal(b->recs[0].listener, DISKBUF_LISTENER_NONE);
	assert_null(diskbuf_listener_name(d, b->recs[0].listener));
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.corrupt_records, 0);
	diskbuf_done(d, b->disk_seg, b->disk_off, b->count);
	diskbuf_close(d);
	free_batch(b);
}

/* A listener name read back is one --listen takes: a name with a byte
 * outside [a-z0-9_.-], or bytes after its length, is a corrupt record
 * (CRCs right), and exactly that one. */
static void test_forged_listener_names(void **state)
{
	for (int f = 0; f < 2; f++) {
		struct diskbuf *d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
		uint64_t off = SEG_HDR + record_bytes(0), len = record_bytes(1);
		char path[128], *rec = malloc(len);
		uint32_t plen, count, crc, names;
		struct diskbuf_stats st;
		char *name;
		int fd;

		append_range(d, 0, 3);
		diskbuf_close(d);
		first_segment(path, sizeof(path));
		fd = open(path, O_RDWR);
		assert_int_equal(pread(fd, rec, len, off), (ssize_t)len);
		memcpy(&plen, rec + 8, 4);
		memcpy(&count, rec + 12, 4);
		memcpy(&names, rec + 52, 4);
		assert_int_equal(names, 2);
		name = rec + REC_HDR + count * DESC + 4; /* the first entry's name */
		if (f == 0)
			name[1] = 'L'; /* "lL": upper case is not a listener name */
		else
			name[30] = 'x'; /* past its length */
		crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)rec + REC_HDR, plen);
		memcpy(rec + 16, &crc, 4);
		memset(rec + 4, 0, 4);
		crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)rec, REC_HDR);
		memcpy(rec + 4, &crc, 4);
		assert_int_equal(pwrite(fd, rec, len, off), (ssize_t)len);
		close(fd);
		d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
		read_range(d, 0, 1);
		read_range(d, 2, 3);
		diskbuf_get_stats(d, &st);
		assert_int_equal(st.corrupt_records, 1);
		assert_int_equal(st.corrupt_msgs, 2);
		assert_int_equal(st.corrupt_bytes, len);
		diskbuf_close(d);
		free(rec);
		teardown(state);
		setup(state);
	}
}

/* A segment file larger than any syslogrx writes, or than the buffer's
 * size, or of a newer format, is not read (a sparse one would be scanned
 * for minutes) and stays; the others are read. */
static void test_oversize_segments_refused(void **state)
{
	struct diskbuf *d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	char big[128], over[128], newer[128], path[128], *rec;
	bool seen[4] = { 0 };
	struct diskbuf_stats st;
	int fd;

	append_range(d, 0, 4);
	diskbuf_close(d);
	segment_path(big, sizeof(big), 0x100);
	segment_path(over, sizeof(over), 0x101);
	fd = open(big, O_RDWR | O_CREAT, 0600);
	assert_int_equal(write(fd, "SRXDBUF1\2\0\0\0\0\0\0\0", SEG_HDR), SEG_HDR);
	assert_int_equal(ftruncate(fd, 20ULL << 30), 0); /* sparse: no disk used */
	close(fd);
	fd = open(over, O_RDWR | O_CREAT, 0600);
	assert_int_equal(ftruncate(fd, (16 << 20) + 1), 0); /* past the size below */
	close(fd);
	/* A newer format's segment: its header says so; left for its syslogrx
	 * (batch 0's record in it, that must not be read again). */
	first_segment(path, sizeof(path));
	segment_path(newer, sizeof(newer), 0x102);
	rec = malloc(record_bytes(0));
	fd = open(path, O_RDONLY);
	assert_int_equal(pread(fd, rec, record_bytes(0), SEG_HDR), (ssize_t)record_bytes(0));
	close(fd);
	fd = open(newer, O_RDWR | O_CREAT, 0600);
	assert_int_equal(write(fd, "SRXDBUF1\3\0\0\0\0\0\0\0", SEG_HDR), SEG_HDR);
	assert_int_equal(write(fd, rec, record_bytes(0)), (ssize_t)record_bytes(0));
	close(fd);
	free(rec);
	d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
	assert_int_equal(read_all(d, seen, 4), 1 + 2 + 3 + 4);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.segments_refused, 3);
	assert_int_equal(st.corrupt_records, 0);
	diskbuf_close(d);
	assert_int_equal(file_size(big), 20ULL << 30);
	assert_int_equal(file_size(over), (16 << 20) + 1);
}

/* The id of the newest segment file. */
static unsigned int last_segment(void)
{
	char path[128];
	unsigned int id = 1;

	for (;; id++) {
		segment_path(path, sizeof(path), id + 1);
		if (access(path, F_OK))
			return id;
	}
}

/* A zeroed stretch inside a segment, one across two segments one run
 * wrote, and a torn tail: the first two cost exactly the messages and
 * records they touch (counted from the intact records around them), the
 * tail one record, its messages not counted (said so). */
static void test_lost_messages_counted(void **state)
{
	enum { N = 1200 };
	struct diskbuf *d = open_db(16 << 20, 64 << 10, DISKBUF_RELIABLE);
	char p1[128], p2[128], pn[128];
	bool seen[N] = { 0 };
	struct diskbuf_stats st;
	uint64_t read, s1, unseen = 0;

	append_range(d, 0, N);
	diskbuf_close(d);
	segment_path(p1, sizeof(p1), 1);
	segment_path(p2, sizeof(p2), 2);
	segment_path(pn, sizeof(pn), last_segment());
	assert_true(last_segment() > 3);
	s1 = file_size(p1);
	zero_range(p1, 1000, 5000);			       /* inside segment 1 */
	zero_range(p1, s1 - 3000, s1);			       /* segment 1's tail... */
	zero_range(p2, 0, 2000);			       /* ...and segment 2's head */
	assert_int_equal(truncate(pn, file_size(pn) - 10), 0); /* a torn tail */
	d = open_db(16 << 20, 64 << 10, DISKBUF_RELIABLE);
	read = read_all(d, seen, N);
	diskbuf_get_stats(d, &st);
	for (unsigned int k = 0; k < N; k++)
		unseen += !seen[k];
	assert_false(seen[N - 1]);
	assert_true(unseen > 10);
	assert_int_equal(st.recovered_msgs, read);
	assert_int_equal(st.corrupt_uncounted, 1);
	assert_int_equal(st.corrupt_records, unseen); /* a record is a batch */
	assert_int_equal(st.corrupt_msgs, unseen_msgs(seen, N) - ((N - 1) % 7 + 1));
	diskbuf_close(d);
}

/* Reads DIR back: one corrupt stretch, one record whose messages are not
 * counted. */
static void read_one_uncounted(bool *seen, unsigned int n)
{
	struct diskbuf *d = open_db(16 << 20, 64 << 10, DISKBUF_RELIABLE);
	struct diskbuf_stats st;

	read_all(d, seen, n);
	diskbuf_get_stats(d, &st);
	assert_int_equal(st.corrupt_uncounted, 1);
	assert_int_equal(st.corrupt_records, 1);
	assert_int_equal(st.corrupt_msgs, 0);
	diskbuf_close(d);
}

/* Counting across segments only where nothing between was deleted and one
 * run wrote both sides: a stretch before a gap in the ids (a segment done
 * and deleted), or between two runs' records, is not counted (its
 * messages are unknown): never as the deleted segment's messages, nor as
 * the other run's numbers. */
static void test_lost_not_counted_across_runs_or_gaps(void **state)
{
	enum { N = 600 };
	char p1[128], p2[128];
	bool seen[N] = { 0 };
	struct diskbuf *d;

	/* A gap: segment 2 gone, segment 1's tail zeroed. */
	d = open_db(16 << 20, 64 << 10, DISKBUF_RELIABLE);
	append_range(d, 0, N);
	diskbuf_close(d);
	segment_path(p1, sizeof(p1), 1);
	segment_path(p2, sizeof(p2), 2);
	assert_true(last_segment() > 2);
	assert_int_equal(unlink(p2), 0);
	zero_range(p1, file_size(p1) - 2000, file_size(p1));
	read_one_uncounted(seen, N);
	teardown(state);
	setup(state);

	/* Two runs: 20 batches in segment 1, then a run that writes more
	 * messages than those before its first intact record. */
	d = open_db(16 << 20, 64 << 10, DISKBUF_RELIABLE);
	append_range(d, 0, 20);
	diskbuf_close(d);
	d = open_db(16 << 20, 64 << 10, DISKBUF_RELIABLE);
	append_range(d, 20, N);
	diskbuf_close(d);
	segment_path(p1, sizeof(p1), 1);
	segment_path(p2, sizeof(p2), 2);
	zero_range(p1, file_size(p1) - 300, file_size(p1));
	zero_range(p2, 0, 30000);
	memset(seen, 0, sizeof(seen));
	read_one_uncounted(seen, N);
}

/* ---- forged records: right CRCs, wrong fields ----------------------------- */

struct fhdr {
	uint32_t magic, hdr_crc, len, count, crc, zero;
	uint64_t seq, first_ns;
};

struct fdesc {
	uint32_t len, sock, truncated, src_len;
	uint64_t recv_ns;
	uint8_t src[28];
	uint32_t listener;
};

_Static_assert(sizeof(struct fhdr) == REC_V1_HDR && sizeof(struct fdesc) == DESC, "on-disk sizes");

enum forgery { F_SRC_LEN, F_FAMILY_LEN, F_MSG_LEN, F_COUNT, F_SOCK, F_LISTENER, F_NR };

/* A record a forger writes: CRCs computed as the writer does, one field a
 * writer never writes. n messages of 1 byte unless the forgery says. */
static size_t forge(enum forgery f, char **out)
{
	uint32_t n = f == F_COUNT ? DISKBUF_COUNT_MAX + 1 : 2;
	size_t dlen = f == F_MSG_LEN ? DISKBUF_MSG_MAX + 1 + 1 : n;
	size_t len = sizeof(struct fhdr) + n * sizeof(struct fdesc) + dlen;
	char *buf = calloc(1, len);
	struct fhdr *h = (struct fhdr *)buf;
	struct fdesc *m = (struct fdesc *)(h + 1);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };

	for (uint32_t i = 0; i < n; i++) {
		m[i].len = 1;
		m[i].src_len = sizeof(sin);
		memcpy(m[i].src, &sin, sizeof(sin));
	}
	memset((char *)(m + n), 'x', dlen);
	switch (f) {
	case F_SRC_LEN: /* copied into a 28-byte field */
		m[0].src_len = 200;
		break;
	case F_FAMILY_LEN: /* an AF_INET6 address in 16 bytes */
		memcpy(m[1].src, &sin6, sizeof(sin6));
		break;
	case F_MSG_LEN: /* past one datagram: the sum still matches */
		m[0].len = DISKBUF_MSG_MAX + 1;
		break;
	case F_COUNT:
		break;
	case F_SOCK:
		m[1].sock = 1u << 30;
		break;
	case F_LISTENER: /* past the listeners a record can name */
		m[1].listener = WINDOW_MAX_LISTENERS;
		break;
	default:
		break;
	}
	h->magic = 0x52585253u;
	h->len = len - sizeof(*h);
	h->count = n;
	h->seq = 1000;
	h->crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)(h + 1), h->len);
	h->hdr_crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)h, sizeof(*h));
	*out = buf;
	return len;
}

/* Batches 0-2, a forged record, batch 0's record again: the forged one is
 * skipped and counted, exactly one record; the rest is read intact. */
static void test_forged_records(void **state)
{
	for (enum forgery f = 0; f < F_NR; f++) {
		struct diskbuf *d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
		struct batch *b = new_batch(8);
		struct diskbuf_stats st;
		size_t flen, glen = record_bytes(0);
		char path[128], *forged, *good = malloc(glen);
		struct stat sb;
		int fd;

		append_range(d, 0, 3);
		diskbuf_close(d);
		first_segment(path, sizeof(path));
		fd = open(path, O_RDWR);
		assert_true(fd >= 0 && !fstat(fd, &sb));
		assert_int_equal(pread(fd, good, glen, SEG_HDR), (ssize_t)glen);
		flen = forge(f, &forged);
		assert_int_equal(pwrite(fd, forged, flen, sb.st_size), (ssize_t)flen);
		assert_int_equal(pwrite(fd, good, glen, sb.st_size + flen), (ssize_t)glen);
		close(fd);

		d = open_db(16 << 20, 0, DISKBUF_RELIABLE);
		read_range(d, 0, 3);
		read_range(d, 0, 1); /* the copy after the forged record */
		assert_int_equal(diskbuf_read(d, b), 0);
		diskbuf_get_stats(d, &st);
		if (st.corrupt_records != 1)
			fail_msg("forgery %d: %llu corrupt records", f,
				 (unsigned long long)st.corrupt_records);
		assert_int_equal(st.corrupt_bytes, flen);
		diskbuf_close(d);
		free_batch(b);
		free(forged);
		free(good);
		teardown(state);
		setup(state);
	}
}

/* A planted cursor link is refused, never followed: its target unchanged;
 * a DIR writable by others, or another user's, is refused. */
static void test_planted_files_refused(void **state)
{
	struct diskbuf_opts o = { .dir = dir, .max_bytes = 16 << 20, .sync_ms = 1000 };
	char target[128], link[128], seg[128];
	struct stat sb;
	int fd;

	snprintf(target, sizeof(target), "%s.target", dir);
	fd = open(target, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	snprintf(link, sizeof(link), "%s/cursor", dir);
	assert_int_equal(symlink(target, link), 0);
	errno = 0;
	assert_null(diskbuf_open(&o));
	assert_int_equal(errno, EPERM);
	assert_int_equal(stat(target, &sb), 0);
	assert_int_equal(sb.st_size, 4);
	unlink(link);

	/* a segment link too */
	snprintf(seg, sizeof(seg), "%s/0000000000000001.seg", dir);
	assert_int_equal(symlink(target, seg), 0);
	assert_null(diskbuf_open(&o));
	assert_int_equal(errno, EPERM);
	unlink(seg);
	unlink(target);

	/* group- or world-writable DIR */
	assert_int_equal(chmod(dir, 0770), 0);
	assert_null(diskbuf_open(&o));
	assert_int_equal(errno, EPERM);
	assert_int_equal(chmod(dir, 0700), 0);
	/* another owner's DIR */
	o.owner_set = true;
	o.owner = geteuid() + 1;
	assert_null(diskbuf_open(&o));
	assert_int_equal(errno, EPERM);
	o.owner_set = false;
	struct diskbuf *d = diskbuf_open(&o);

	assert_non_null(d);
	diskbuf_close(d);
}

/* A DIR it creates is 0700. */
static void test_dir_created_0700(void **state)
{
	char sub[128];
	struct diskbuf_opts o = { .dir = sub, .max_bytes = 16 << 20, .sync_ms = 1000 };
	struct diskbuf *d;
	struct stat sb;

	snprintf(sub, sizeof(sub), "%s/new", dir);
	d = diskbuf_open(&o);
	assert_non_null(d);
	assert_int_equal(stat(sub, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);
	diskbuf_close(d);
}

/* DIR that is a symbolic link, to a folder that passes the owner and mode
 * checks: refused by the buffer and by its lock, nothing made in the target. */
static void test_dir_link_refused(void **state)
{
	char target[128], link[128];
	struct diskbuf_opts o = { .dir = link, .max_bytes = 16 << 20, .sync_ms = 1000 };
	DIR *dd;
	struct dirent *e;
	int n = 0;

	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(mkdir(target, 0700), 0);
	assert_int_equal(symlink(target, link), 0);
	errno = 0;
	assert_null(diskbuf_open(&o));
	assert_int_equal(errno, ELOOP);
	assert_int_equal(diskbuf_lock_take(link, NULL, NULL, 0), -ELOOP);
	dd = opendir(target);
	assert_non_null(dd);
	while ((e = readdir(dd)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dd);
	assert_int_equal(n, 0);
}

/* crc32_fast is zlib's crc32, at every length, offset and starting value. */
static void test_crc32_fast(void **state)
{
	unsigned char *buf = malloc(1 << 17);

	srand(1);
	for (size_t i = 0; i < 1 << 17; i++)
		buf[i] = rand();
	for (unsigned int t = 0; t < 20000; t++) {
		size_t off = rand() % 64, len = t < 2000 ? t % 300 : (size_t)rand() % 70000;
		uint32_t seed = t & 1 ? rand() : 0;

		assert_int_equal(crc32_fast(seed, buf + off, len), crc32(seed, buf + off, len));
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_if_spilling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_append_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slotted_batches, setup, teardown),
		cmocka_unit_test(test_crc32_fast),
		cmocka_unit_test_setup_teardown(test_segments_deleted_when_done, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_after_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cursor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flipped_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listener_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_listener_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversize_segments_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_messages_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_not_counted_across_runs_or_gaps, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_planted_files_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_created_0700, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_link_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
