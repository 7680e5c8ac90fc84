// SPDX-License-Identifier: MIT
/*
 * The disk buffer's records (the layout is in diskbuf_format.h): a batch
 * encoded as one, and one read back, checked and decoded. Everything read
 * from DIR is checked before use: header and payload CRCs, every
 * descriptor; what fails is skipped up to the next intact record.
 *
 * CRC: zlib's crc32, not CRC32C: zlib is already in the process (libbpf links
 * it), and the check only has to catch torn writes and flipped bits, not
 * adversaries. Computed by crc32_fast (the same value; carry-less multiplies
 * where the CPU has them): zlib 1.2's took 8% of a reliable run's CPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/array.h"
#include "common/crc32_fast.h"
#include "bpf/balancer.h"
#include "rx/path/diskbuf_int.h"

#define SCAN_CHUNK 65536

uint32_t dbuf_crc(const void *p, size_t len)
{
	return crc32_fast(0, p, len);
}

uint32_t dbuf_hdr_crc(const struct rec_hdr *h)
{
	struct rec_hdr c = *h;

	c.hdr_crc = 0;
	return dbuf_crc(&c, sizeof(c));
}

int dbuf_pread_all(int fd, void *buf, size_t len, uint64_t off)
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

/* ---- reading and checking records ------------------------------------- */

/* The header at off is plausible and intact for a segment of size bytes. */
static bool hdr_ok(const struct rec_hdr *h, uint64_t off, uint64_t size)
{
	return h->magic == REC_MAGIC && h->hdr_crc == dbuf_hdr_crc(h) && h->count &&
	       h->count <= DISKBUF_COUNT_MAX && !h->zero && h->len <= REC_MAX_PAYLOAD &&
	       (uint64_t)h->count * sizeof(struct disk_msg) <= h->len &&
	       off + sizeof(*h) + h->len <= size;
}

/* One message descriptor read back is one the writer could have written:
 * every field is checked before dbuf_unpack copies or the output formats it. */
static bool desc_ok(const struct disk_msg *m)
{
	sa_family_t fam;

	if (m->len > DISKBUF_MSG_MAX || m->sock >= REUSEPORT_MAX_SOCKETS || m->truncated > 1 ||
	    m->listener >= WINDOW_MAX_LISTENERS || m->src_len > sizeof(m->src))
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
	    dbuf_pread_all(s->fd, d->rbuf, h->len, off + sizeof(*h)) ||
	    dbuf_crc(d->rbuf, h->len) != h->crc)
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

		if (dbuf_pread_all(s->fd, buf, want, off))
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
uint64_t dbuf_find_record(struct diskbuf *d, const struct seg *s, uint64_t off, struct rec_hdr *h)
{
	while (off + sizeof(*h) <= s->size) {
		if (!dbuf_pread_all(s->fd, h, sizeof(*h), off) && hdr_ok(h, off, s->size) &&
		    payload_ok(d, s, off, h))
			return off;
		off = next_magic(s, off + 1);
	}
	return s->size;
}

/* ---- encoding and decoding records ----------------------------------------- */

/* The bytes of b's record on disk: header, descriptors, the messages. */
uint64_t dbuf_rec_len(const struct batch *b)
{
	return sizeof(struct rec_hdr) + (uint64_t)b->count * sizeof(struct disk_msg) + b->used;
}

/* b as a record: header (but its seq and header CRC) and descriptors, with
 * a copy of the messages' bytes after them only if copy. b's messages may
 * be back to back (batch_add, a record read back) or in receive slots with
 * gaps (worker.c): on disk they are back to back either way. NULL if out of
 * memory. */
struct qrec *dbuf_encode(const struct batch *b, bool copy)
{
	size_t dlen = (size_t)b->count * sizeof(struct disk_msg);
	size_t head = sizeof(struct rec_hdr) + dlen;
	struct qrec *q = malloc(sizeof(*q) + head + (copy ? b->used : 0));
	struct rec_hdr *h;
	struct disk_msg *m;
	uint64_t off = 0;
	bool back_to_back = true;
	uint32_t pcrc = 0; /* the payload's CRC, in pieces: the same as over it whole */

	if (!q)
		return NULL;
	h = (struct rec_hdr *)q->bytes;
	m = (struct disk_msg *)(q->bytes + sizeof(*h));
	memset(m, 0, dlen);
	for (uint32_t i = 0; i < b->count; i++) {
		const struct msg_rec *r = &b->recs[i];

		back_to_back = back_to_back && r->off == off;
		off += r->len;
		m[i].len = r->len;
		m[i].sock = r->sock;
		m[i].listener = r->listener;
		m[i].truncated = r->truncated;
		m[i].src_len = r->src_len > sizeof(m[i].src) ? sizeof(m[i].src) : r->src_len;
		m[i].recv_ns = r->recv_ns;
		memcpy(m[i].src, &r->src, m[i].src_len);
	}
	/* In as few pieces as there are: crc32_fast hands a piece under 64
	 * bytes, and each piece's tail under 16, to zlib's slower loop. */
	pcrc = crc32_fast(0, m, dlen);
	if (back_to_back) {
		if (copy)
			memcpy(q->bytes + head, b->data, b->used);
		pcrc = crc32_fast(pcrc, b->data, b->used);
	} else if (copy) {
		char *to = q->bytes + head;

		for (uint32_t i = 0; i < b->count; i++)
			to = mempcpy(to, b->data + b->recs[i].off, b->recs[i].len);
		pcrc = crc32_fast(pcrc, q->bytes + head, b->used);
	} else {
		for (uint32_t i = 0; i < b->count; i++)
			pcrc = crc32_fast(pcrc, b->data + b->recs[i].off, b->recs[i].len);
	}
	memset(h, 0, sizeof(*h));
	h->magic = REC_MAGIC;
	h->count = b->count;
	h->len = dlen + b->used;
	h->crc = pcrc;
	h->first_ns = b->recs[0].recv_ns;
	q->next = NULL;
	q->len = dbuf_rec_len(b);
	q->head_len = head;
	q->count = b->count;
	q->first_ns = h->first_ns;
	q->batch = NULL;
	q->pieces = back_to_back ? 1 : b->count;
	q->back_to_back = back_to_back;
	return q;
}

/* d->rbuf (a checked payload) into b. */
int dbuf_unpack(struct diskbuf *d, const struct rec_hdr *h, struct batch *b)
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
		r->listener = m[i].listener;
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
