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

#define REC_HDR 40
#define DESC 56
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

static struct diskbuf *open_db(uint64_t max, uint64_t seg, enum diskbuf_mode mode)
{
	struct diskbuf_opts o = {
		.dir = dir, .max_bytes = max, .segment_bytes = seg, .sync_ms = 1000, .mode = mode
	};
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
	uint64_t n = REC_HDR + (uint64_t)b->count * DESC + b->used;

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
				  .handoff_bytes = 64 << 20 };
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

/* ---- forged records: right CRCs, wrong fields ----------------------------- */

struct fhdr {
	uint32_t magic, hdr_crc, len, count, crc, zero;
	uint64_t seq, first_ns;
};

struct fdesc {
	uint32_t len, sock, truncated, src_len;
	uint64_t recv_ns;
	uint8_t src[28];
	uint32_t zero;
};

_Static_assert(sizeof(struct fhdr) == REC_HDR && sizeof(struct fdesc) == DESC, "on-disk sizes");

enum forgery { F_SRC_LEN, F_FAMILY_LEN, F_MSG_LEN, F_COUNT, F_SOCK, F_NR };

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
		cmocka_unit_test(test_crc32_fast),
		cmocka_unit_test_setup_teardown(test_segments_deleted_when_done, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopen_after_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cursor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flipped_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_files_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_created_0700, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_link_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
