// SPDX-License-Identifier: MIT
/*
 * The disk buffer's records (the layout is in diskbuf_format.h): a batch
 * encoded as one, and one read back, checked and decoded. Everything read
 * from DIR is checked before use: header and payload CRCs, every
 * descriptor and listener name; what fails is skipped up to the next intact
 * record, and the messages lost with it are counted from the intact records
 * around it (their run and message numbers) where one run wrote both.
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
#include "common/log.h"
#include "bpf/balancer.h"
#include "rx/path/diskbuf_format.h"
#include "rx/path/diskbuf_int.h"
#include "rx/path/window.h"

#define SCAN_CHUNK 65536

uint32_t dbuf_crc(const void *p, size_t len)
{
	return crc32_fast(0, p, len);
}

uint32_t dbuf_hdr_crc(const struct rec_hdr *h)
{
	struct rec_hdr c = *h;

	c.hdr_crc = 0;
	return dbuf_crc(&c, dbuf_hdr_len(h));
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
	uint64_t head = (uint64_t)h->count * sizeof(struct disk_msg);

	if (h->version == REC_VERSION)
		head += (uint64_t)h->names * sizeof(struct disk_name);
	else if (h->version != REC_V1)
		return false;
	return h->magic == REC_MAGIC && h->hdr_crc == dbuf_hdr_crc(h) && h->count &&
	       h->count <= DISKBUF_COUNT_MAX && h->len <= REC_MAX_PAYLOAD &&
	       (h->version == REC_V1 || (h->names && h->names <= h->count)) && head <= h->len &&
	       off + dbuf_hdr_len(h) + h->len <= size;
}

/* One message descriptor read back is one the writer could have written:
 * every field is checked before dbuf_unpack copies or the output formats
 * it; its listener is below names (entries, or positions in version 1). */
static bool desc_ok(const struct disk_msg *m, uint32_t names)
{
	sa_family_t fam;

	if (m->len > DISKBUF_MSG_MAX || m->sock >= REUSEPORT_MAX_SOCKETS || m->truncated > 1 ||
	    m->listener >= names || m->src_len > sizeof(m->src))
		return false;
	if (!m->src_len)
		return true;
	memcpy(&fam, m->src, sizeof(fam));
	return (fam == AF_INET && m->src_len == sizeof(struct sockaddr_in)) ||
	       (fam == AF_INET6 && m->src_len == sizeof(struct sockaddr_in6));
}

/* A name entry read back: none (len 0), or a name --listen takes, its
 * unused bytes 0. */
static bool name_ok(const struct disk_name *n)
{
	char name[LISTENER_NAME_MAX + 1];

	if (n->len > LISTENER_NAME_MAX)
		return false;
	for (size_t i = n->len; i < sizeof(n->name); i++)
		if (n->name[i])
			return false;
	memcpy(name, n->name, n->len);
	name[n->len] = 0;
	return !n->len || listener_name_valid(name);
}

/* Reads the payload of the record at off into d->rbuf; true if its CRC,
 * every descriptor (desc_ok), every name (name_ok) and their lengths agree
 * with the header. */
static bool payload_ok(struct diskbuf *d, const struct seg *s, uint64_t off,
		       const struct rec_hdr *h)
{
	bool v2 = h->version == REC_VERSION;
	const struct disk_msg *m;
	const struct disk_name *nm;
	uint64_t data = 0, head;

	if (array_reserve((void **)&d->rbuf, &d->rbuf_cap, h->len, 1, 4096) ||
	    dbuf_pread_all(s->fd, d->rbuf, h->len, off + dbuf_hdr_len(h)) ||
	    dbuf_crc(d->rbuf, h->len) != h->crc)
		return false;
	m = (const struct disk_msg *)d->rbuf;
	nm = (const struct disk_name *)(m + h->count);
	for (uint32_t i = 0; i < h->count; i++) {
		if (!desc_ok(&m[i], v2 ? h->names : WINDOW_MAX_LISTENERS))
			return false;
		data += m[i].len;
	}
	for (uint32_t i = 0; v2 && i < h->names; i++)
		if (!name_ok(&nm[i]))
			return false;
	head = (uint64_t)h->count * sizeof(*m) + (v2 ? (uint64_t)h->names * sizeof(*nm) : 0);
	return data == h->len - head;
}

/* The next offset after off where the record magic appears, or s->size. */
static uint64_t next_magic(const struct seg *s, uint64_t off)
{
	static const uint32_t magic = REC_MAGIC;
	char buf[SCAN_CHUNK];

	while (off + REC_V1_HDR <= s->size) {
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

/* The header at off, either version (a version-1 one without the fields
 * that came after): 0, or -EIO. */
static int read_hdr(const struct seg *s, uint64_t off, struct rec_hdr *h)
{
	size_t want = off + sizeof(*h) <= s->size ? sizeof(*h) : REC_V1_HDR;

	if (off + want > s->size || dbuf_pread_all(s->fd, h, want, off))
		return -EIO;
	if (h->version == REC_V1) {
		h->msg_seq = 0;
		h->run = 0;
		h->names = 0;
	} else if (want < sizeof(*h)) {
		return -EIO;
	}
	return 0;
}

/*
 * The first intact record at or after off (its payload left in d->rbuf), or
 * s->size if there is none. Anything skipped on the way is corrupt.
 */
uint64_t dbuf_find_record(struct diskbuf *d, const struct seg *s, uint64_t off, struct rec_hdr *h)
{
	while (off + REC_V1_HDR <= s->size) {
		if (!read_hdr(s, off, h) && hdr_ok(h, off, s->size) && payload_ok(d, s, off, h))
			return off;
		off = next_magic(s, off + 1);
	}
	return s->size;
}

/* ---- counting what a corrupt stretch cost --------------------------------- */

/* Stretches logged one by one at open; past this many, only counted. */
#define STRETCHES_SAID 8

/*
 * A stretch of sc->gap_bytes corrupt bytes ends at h (NULL: nothing intact
 * follows). One run numbers its records and messages without a gap across
 * its segments (the writer numbers a record only once it is written), so
 * when the intact records on both sides are one run's, in segments whose
 * ids follow each other (none deleted between), the numbers say exactly
 * what is lost. Otherwise the stretch is one record at least and its
 * messages are not known: counted in corrupt_uncounted.
 */
void dbuf_scan_gap_end(struct diskbuf *d, struct dbuf_scan *sc, const struct rec_hdr *h)
{
	bool exact = h && sc->have_last && h->version == REC_VERSION && h->run == sc->last_run &&
		     h->seq > sc->last_seq && h->msg_seq >= sc->last_msg_end;
	uint64_t recs = exact ? h->seq - sc->last_seq - 1 : 1;
	uint64_t msgs = exact ? h->msg_seq - sc->last_msg_end : 0;

	if (!sc->gap_bytes)
		return;
	d->st.corrupt_records += recs;
	d->st.corrupt_bytes += sc->gap_bytes;
	d->st.corrupt_msgs += msgs;
	d->st.corrupt_uncounted += !exact;
	if (d->stretches_said++ < STRETCHES_SAID)
		pr_warn("--disk-buffer %s: segment %016llx: %llu corrupt byte(s) from offset %llu "
			"skipped: %s%llu message(s) in %llu record(s) lost%s\n",
			d->dir, (unsigned long long)sc->gap_seg, (unsigned long long)sc->gap_bytes,
			(unsigned long long)sc->gap_off, exact ? "" : "at least ",
			(unsigned long long)msgs, (unsigned long long)recs,
			exact ? "" : " (no intact record of the same run after them to count by)");
	sc->gap_bytes = 0;
}

/* ---- encoding and decoding records ----------------------------------------- */

/* The keys a message's listener is filed under in a record's name table:
 * this run's listeners, the recorded names, and one for none. */
#define NAME_KEYS (WINDOW_MAX_LISTENERS + DISKBUF_RECORDED_MAX + 1)

static unsigned int name_key(uint32_t listener)
{
	return listener < NAME_KEYS - 1 ? listener : NAME_KEYS - 1;
}

/* Fills slot[] (NAME_KEYS entries) with each key's entry in b's record's
 * name table, 0xff for keys b does not use; returns the entries. */
static uint32_t name_slots(const struct batch *b, uint8_t *slot)
{
	uint32_t n = 0;

	memset(slot, 0xff, NAME_KEYS);
	for (uint32_t i = 0; i < b->count; i++) {
		unsigned int k = name_key(b->recs[i].listener);

		if (slot[k] == 0xff)
			slot[k] = n++;
	}
	return n;
}

/* The bytes of b's record on disk: header, descriptors, names, the messages. */
uint64_t dbuf_rec_len(const struct batch *b)
{
	uint8_t slot[NAME_KEYS];
	uint64_t names = name_slots(b, slot);

	return sizeof(struct rec_hdr) + (uint64_t)b->count * sizeof(struct disk_msg) +
	       names * sizeof(struct disk_name) + b->used;
}

/* Key k's name as this run shows it ("" for none). */
static const char *key_name(const struct diskbuf *d, unsigned int k)
{
	const char *n = NULL;

	if (k < d->o.nr_listeners && d->o.listener_names)
		n = d->o.listeners[k].name;
	else if (k >= WINDOW_MAX_LISTENERS)
		n = diskbuf_listener_name(d, k);
	return n ? n : "";
}

/* b as a record: header (but what the writer numbers: seq, msg_seq, run
 * and the header CRC), descriptors and name table, with a copy of the
 * messages' bytes after them only if copy. b's messages may be back to
 * back (batch_add, a record read back) or in receive slots with gaps
 * (worker.c): on disk they are back to back either way. NULL if out of
 * memory. */
struct qrec *dbuf_encode(const struct diskbuf *d, const struct batch *b, bool copy)
{
	uint8_t slot[NAME_KEYS];
	uint32_t names = name_slots(b, slot);
	size_t dlen = (size_t)b->count * sizeof(struct disk_msg) + names * sizeof(struct disk_name);
	size_t head = sizeof(struct rec_hdr) + dlen;
	struct qrec *q = malloc(sizeof(*q) + head + (copy ? b->used : 0));
	struct rec_hdr *h;
	struct disk_msg *m;
	struct disk_name *nm;
	uint64_t off = 0;
	bool back_to_back = true;
	uint32_t pcrc = 0; /* the payload's CRC, in pieces: the same as over it whole */

	if (!q)
		return NULL;
	h = (struct rec_hdr *)q->bytes;
	m = (struct disk_msg *)(q->bytes + sizeof(*h));
	nm = (struct disk_name *)(m + b->count);
	memset(m, 0, dlen);
	for (unsigned int k = 0; k < NAME_KEYS; k++) {
		if (slot[k] != 0xff) {
			const char *n = key_name(d, k);
			size_t len = strnlen(n, LISTENER_NAME_MAX);

			nm[slot[k]].len = len;
			memcpy(nm[slot[k]].name, n, len);
		}
	}
	for (uint32_t i = 0; i < b->count; i++) {
		const struct msg_rec *r = &b->recs[i];

		back_to_back = back_to_back && r->off == off;
		off += r->len;
		m[i].len = r->len;
		m[i].sock = r->sock;
		m[i].listener = slot[name_key(r->listener)];
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
	h->version = REC_VERSION;
	h->count = b->count;
	h->names = names;
	h->len = dlen + b->used;
	h->crc = pcrc;
	h->first_ns = b->recs[0].recv_ns;
	q->next = NULL;
	q->len = head + b->used;
	q->head_len = head;
	q->count = b->count;
	q->first_ns = h->first_ns;
	q->batch = NULL;
	q->pieces = back_to_back ? 1 : b->count;
	q->back_to_back = back_to_back;
	return q;
}

/* Under the lock: the listener a name read back stands for (see
 * DISKBUF_LISTENER_NONE): this run's of that name (when this run shows
 * names), else a recorded name's, added on first sight. */
static uint32_t name_listener(struct diskbuf *d, const struct disk_name *n)
{
	char name[LISTENER_NAME_MAX + 1];
	unsigned int k;

	if (!n->len)
		return DISKBUF_LISTENER_NONE;
	memcpy(name, n->name, n->len);
	name[n->len] = 0;
	for (k = 0; d->o.listener_names && k < d->o.nr_listeners; k++)
		if (!strcmp(d->o.listeners[k].name, name))
			return k;
	for (k = 0; k < d->nr_recorded; k++)
		if (!strcmp(d->recorded[k], name))
			return WINDOW_MAX_LISTENERS + k;
	if (k == DISKBUF_RECORDED_MAX) {
		if (!d->recorded_full_said)
			pr_warn("--disk-buffer %s: records name more than %d listeners this run "
				"does not have: those past them are sent without a listener name\n",
				d->dir, DISKBUF_RECORDED_MAX);
		d->recorded_full_said = true;
		return DISKBUF_LISTENER_NONE;
	}
	memcpy(d->recorded[k], name, n->len + 1);
	/* The name is whole before a reader can see it. */
	__atomic_store_n(&d->nr_recorded, k + 1, __ATOMIC_RELEASE);
	return WINDOW_MAX_LISTENERS + k;
}

const char *diskbuf_listener_name(const void *dv, uint32_t listener)
{
	const struct diskbuf *d = dv;
	uint32_t k = listener - WINDOW_MAX_LISTENERS;

	if (listener < WINDOW_MAX_LISTENERS ||
	    k >= __atomic_load_n(&d->nr_recorded, __ATOMIC_ACQUIRE))
		return NULL;
	return d->recorded[k];
}

/* d->rbuf (a checked payload) into b. */
int dbuf_unpack(struct diskbuf *d, const struct rec_hdr *h, struct batch *b)
{
	bool v2 = h->version == REC_VERSION;
	const struct disk_msg *m = (const struct disk_msg *)d->rbuf;
	const struct disk_name *nm = (const struct disk_name *)(m + h->count);
	size_t head = (size_t)h->count * sizeof(*m) + (v2 ? (size_t)h->names * sizeof(*nm) : 0);
	size_t dlen = h->len - head;
	uint32_t lis[DISKBUF_COUNT_MAX];
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
	for (uint32_t i = 0; v2 && i < h->names; i++)
		lis[i] = name_listener(d, &nm[i]);
	memcpy(b->data, d->rbuf + head, dlen);
	for (uint32_t i = 0; i < h->count; i++) {
		struct msg_rec *r = &b->recs[i];

		memset(r, 0, sizeof(*r));
		r->off = off;
		r->len = m[i].len;
		r->sock = m[i].sock;
		/* Version 1: the position, as that run had it. */
		r->listener = v2 ? lis[m[i].listener] : m[i].listener;
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
