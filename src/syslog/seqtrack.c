// SPDX-License-Identifier: MIT
/* Per-flow sequence accounting; semantics in syslog/seqtrack.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "syslog/seqtrack.h"

#define DEF_WINDOW_BITS SEQTRACK_DEF_WINDOW_BITS
#define DEF_MEMORY_MAX SEQTRACK_DEF_MEMORY_MAX
#define DEF_FLOWS_MAX SEQTRACK_DEF_FLOWS_MAX
#define MIN_BITS 4096ULL

struct st_flow {
	struct seqtrack_marker key;
	uint64_t hash;
	uint64_t *bits; /* ring of nbits bits, seq s at s & (nbits - 1) */
	uint64_t nbits; /* power of two, or 0 when none could be had */
	uint64_t base;	/* lowest number the window covers */
	uint64_t highest;
	bool seen;
	bool fixed;  /* no more growth: the window slides */
	bool closed; /* an end marker arrived */
	uint64_t received, duplicates, reordered, untracked;
	uint64_t sent, copies; /* from the end marker (the largest seen) */
	uint64_t end_markers;  /* end marker arrivals */
};

struct seqtrack {
	struct seqtrack_opts opts;
	struct st_flow **flows; /* in order of first appearance */
	uint32_t nflows;
	size_t cap;
	uint32_t *slots;      /* open addressing: flow index + 1, 0 = empty */
	uint32_t nslots;      /* power of two */
	struct st_flow *last; /* most messages come in runs of one flow */
	uint64_t bitmap_bytes;
	uint64_t unsequenced, refused_msgs;
	uint64_t implausible; /* markers past the jump bound (part of unsequenced) */
	uint64_t missing;     /* sum over flows, kept as it changes: see seqtrack_missing */
	uint64_t end_markers; /* all end marker arrivals, refused flows' too */
};

/* What seqtrack.h promises a flow costs besides its bitmap. */
_Static_assert(sizeof(struct st_flow) + sizeof(struct st_flow *) <= 256, "flow over 256 bytes");

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v && p < (1ULL << 62))
		p <<= 1;
	return p;
}

struct seqtrack *seqtrack_new_opts(const struct seqtrack_opts *opts)
{
	struct seqtrack *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (opts)
		t->opts = *opts;
	if (!t->opts.window_bits)
		t->opts.window_bits = DEF_WINDOW_BITS;
	/* at least one 64-bit word, so clearing works word-wise */
	t->opts.window_bits = pow2_at_least(t->opts.window_bits < 64 ? 64 : t->opts.window_bits);
	if (!t->opts.memory_max)
		t->opts.memory_max = DEF_MEMORY_MAX;
	if (!t->opts.flows_max)
		t->opts.flows_max = DEF_FLOWS_MAX;
	if (!t->opts.jump_max)
		t->opts.jump_max = SEQTRACK_DEF_JUMP_MAX;
	t->nslots = 64;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

struct seqtrack *seqtrack_new(void)
{
	return seqtrack_new_opts(NULL);
}

void seqtrack_free(struct seqtrack *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nflows; i++) {
		free(t->flows[i]->bits);
		free(t->flows[i]);
	}
	free(t->flows);
	free(t->slots);
	free(t);
}

/* ---- parsing --------------------------------------------------------------- */

static bool run_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == ':' || c == '-';
}

/* Decimal digits at *p (at least one), below end; false on overflow of max. */
static bool take_num(const char **p, const char *end, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return false;
	while (s < end && *s >= '0' && *s <= '9') {
		unsigned d = *s - '0';

		if (v > (max - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
	}
	*p = s;
	*out = v;
	return true;
}

static bool take_lit(const char **p, const char *end, const char *lit, size_t n)
{
	if ((size_t)(end - *p) < n || memcmp(*p, lit, n))
		return false;
	*p += n;
	return true;
}

#define TAKE_LIT(p, end, lit) take_lit(p, end, lit, sizeof(lit) - 1)

/* p points just past SEQTRACK_TOKEN. */
static bool parse_sysloggen(const char *p, const char *end, struct seqtrack_marker *m)
{
	bool quoted = p < end && *p == '"';
	const char *run;
	uint64_t v;

	if (quoted)
		p++;
	run = p;
	while (p < end && run_char(*p))
		p++;
	if (p == run || p - run > SEQTRACK_RUN_MAX)
		return false;
	m->run_len = p - run;
	memcpy(m->run, run, m->run_len);
	m->run[m->run_len] = '\0';
	if (quoted && !TAKE_LIT(&p, end, "\""))
		return false;
	if (!TAKE_LIT(&p, end, " flow=") || (quoted && !TAKE_LIT(&p, end, "\"")))
		return false;
	if (!take_num(&p, end, UINT32_MAX, &v))
		return false;
	m->flow = v;
	if (quoted && !TAKE_LIT(&p, end, "\""))
		return false;
	if (TAKE_LIT(&p, end, " seq=")) {
		m->end = false;
	} else if (TAKE_LIT(&p, end, " end=")) {
		m->end = true;
	} else {
		return false;
	}
	if (quoted && !TAKE_LIT(&p, end, "\""))
		return false;
	if (!take_num(&p, end, UINT64_MAX, &m->seq))
		return false;
	if (m->end) {
		if (quoted && !TAKE_LIT(&p, end, "\""))
			return false;
		if (!TAKE_LIT(&p, end, " copies=") || (quoted && !TAKE_LIT(&p, end, "\"")))
			return false;
		if (!take_num(&p, end, UINT64_MAX, &m->copies))
			return false;
	}
	/* The terminator proves the number was not cut off by the datagram's end. */
	if (quoted)
		return TAKE_LIT(&p, end, "\"]");
	return TAKE_LIT(&p, end, " ");
}

/* p points just past SEQTRACK_LOGGEN_TOKEN: "N, thread: F, runid: RUN," */
static bool parse_loggen(const char *p, const char *end, struct seqtrack_marker *m)
{
	const char *run;
	uint64_t v;

	if (!take_num(&p, end, UINT64_MAX, &m->seq) || !TAKE_LIT(&p, end, ", thread: "))
		return false;
	if (!take_num(&p, end, UINT32_MAX, &v) || !TAKE_LIT(&p, end, ", runid: "))
		return false;
	m->flow = v;
	m->end = false;
	run = p;
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	if (p == run || p - run > SEQTRACK_RUN_MAX || !TAKE_LIT(&p, end, ","))
		return false;
	m->run_len = p - 1 - run;
	memcpy(m->run, run, m->run_len);
	m->run[m->run_len] = '\0';
	return true;
}

static bool scan(const char *msg, size_t len, const char *tok, size_t toklen,
		 bool (*parse)(const char *, const char *, struct seqtrack_marker *),
		 struct seqtrack_marker *m)
{
	const char *end = msg + len, *p = msg;

	while ((p = memmem(p, end - p, tok, toklen))) {
		if (parse(p + toklen, end, m))
			return true;
		p++;
	}
	return false;
}

bool seqtrack_parse(const char *msg, size_t len, struct seqtrack_marker *m)
{
	if (!msg)
		return false;
	m->copies = 0;
	m->kind = SEQTRACK_SYSLOGGEN;
	if (scan(msg, len, SEQTRACK_TOKEN, sizeof(SEQTRACK_TOKEN) - 1, parse_sysloggen, m))
		return true;
	m->kind = SEQTRACK_LOGGEN;
	return scan(msg, len, SEQTRACK_LOGGEN_TOKEN, sizeof(SEQTRACK_LOGGEN_TOKEN) - 1,
		    parse_loggen, m);
}

/* ---- flow table ------------------------------------------------------------ */

static uint64_t key_hash(const struct seqtrack_marker *m)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (unsigned i = 0; i < m->run_len; i++)
		h = (h ^ (unsigned char)m->run[i]) * 1099511628211ULL;
	h = (h ^ m->flow) * 1099511628211ULL;
	h = (h ^ m->kind) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static bool key_eq(const struct seqtrack_marker *a, const struct seqtrack_marker *b)
{
	return a->flow == b->flow && a->kind == b->kind && a->run_len == b->run_len &&
	       !memcmp(a->run, b->run, a->run_len);
}

static int rehash(struct seqtrack *t, uint32_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nflows; i++) {
		uint32_t s = t->flows[i]->hash & (nslots - 1);

		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

static struct st_flow *add_flow(struct seqtrack *t, const struct seqtrack_marker *m, uint64_t h)
{
	struct st_flow *f;
	uint32_t s;

	if (t->nflows >= t->opts.flows_max)
		return NULL;
	if ((uint64_t)(t->nflows + 1) * 2 > t->nslots && rehash(t, t->nslots * 2))
		return NULL;
	if (ARRAY_PUSH_ROOM(t->flows, t->cap, t->nflows, 16))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->key = *m;
	f->hash = h;
	t->flows[t->nflows++] = f;
	s = h & (t->nslots - 1);
	while (t->slots[s])
		s = (s + 1) & (t->nslots - 1);
	t->slots[s] = t->nflows;
	return f;
}

/* The flow m names, or NULL (its hash in *h for add_flow). */
static struct st_flow *lookup_flow(struct seqtrack *t, const struct seqtrack_marker *m, uint64_t *h)
{
	uint32_t s;

	*h = key_hash(m);
	if (t->last && key_eq(&t->last->key, m))
		return t->last;
	for (s = *h & (t->nslots - 1); t->slots[s]; s = (s + 1) & (t->nslots - 1)) {
		struct st_flow *f = t->flows[t->slots[s] - 1];

		if (f->hash == *h && key_eq(&f->key, m))
			return t->last = f;
	}
	return NULL;
}

/* ---- bitmap window --------------------------------------------------------- */

static bool bit_test(const struct st_flow *f, uint64_t seq)
{
	uint64_t i = seq & (f->nbits - 1);

	return f->bits[i >> 6] & (1ULL << (i & 63));
}

static void bit_set(struct st_flow *f, uint64_t seq)
{
	uint64_t i = seq & (f->nbits - 1);

	f->bits[i >> 6] |= 1ULL << (i & 63);
}

/* Grows the bitmap (while base is still 0) so that it covers seq, within the
 * per-flow and total caps; once it cannot grow the window is fixed. */
static void grow(struct seqtrack *t, struct st_flow *f, uint64_t seq)
{
	uint64_t want = pow2_at_least(seq + 1 < MIN_BITS ? MIN_BITS : seq + 1);
	uint64_t old_bytes = f->nbits / 8, new_bytes;
	uint64_t *bits;

	if (want > t->opts.window_bits)
		want = t->opts.window_bits;
	while (want > f->nbits && t->bitmap_bytes - old_bytes + want / 8 > t->opts.memory_max)
		want >>= 1; /* what the total budget still allows */
	if (want < 64 || want <= f->nbits) {
		f->fixed = true;
		return;
	}
	new_bytes = want / 8;
	bits = realloc(f->bits, new_bytes);
	if (!bits) {
		f->fixed = true;
		return;
	}
	/* base is 0 here, so ring position == seq and old bits stay in place */
	memset((char *)bits + old_bytes, 0, new_bytes - old_bytes);
	f->bits = bits;
	f->nbits = want;
	t->bitmap_bytes += new_bytes - old_bytes;
	if (want == t->opts.window_bits)
		f->fixed = true;
}

/* Moves the window up to [new_base, new_base + nbits): forgets old numbers. */
static void slide(struct st_flow *f, uint64_t new_base)
{
	uint64_t s;

	if (new_base - f->base >= f->nbits) {
		memset(f->bits, 0, f->nbits / 8);
	} else {
		for (s = f->base; s < new_base && (s & 63); s++)
			f->bits[(s & (f->nbits - 1)) >> 6] &= ~(1ULL << (s & 63));
		for (; s + 64 <= new_base; s += 64)
			f->bits[(s & (f->nbits - 1)) >> 6] = 0;
		for (; s < new_base; s++)
			f->bits[(s & (f->nbits - 1)) >> 6] &= ~(1ULL << (s & 63));
	}
	f->base = new_base;
}

/* A number above everything seen (or the first): make room and record it. */
static void take_new_high(struct seqtrack *t, struct st_flow *f, uint64_t seq)
{
	if (!f->fixed && seq >= f->base + f->nbits)
		grow(t, f, seq);
	if (f->nbits) {
		if (seq - f->base >= f->nbits)
			slide(f, seq - f->nbits + 1);
		bit_set(f, seq);
	} else {
		f->base = seq + 1; /* no bitmap at all: only the front is known */
	}
	f->highest = seq;
	f->seen = true;
	f->received++;
}

/* A flow's missing: sent - received once its end marker arrived (the tail
 * counted), else highest + 1 - received (written so seq = UINT64_MAX cannot
 * wrap). */
static uint64_t flow_missing(const struct st_flow *f)
{
	if (f->closed)
		return f->sent > f->received ? f->sent - f->received : 0;
	return f->seen ? f->highest - (f->received - 1) : 0;
}

/* The running sum follows each flow's change. Stored atomically: another
 * thread may read it while this one observes (modulo 2^64 like the totals). */
static void add_missing(struct seqtrack *t, uint64_t delta)
{
	__atomic_store_n(&t->missing, t->missing + delta, __ATOMIC_RELAXED);
}

static void account(struct seqtrack *t, struct st_flow *f, uint64_t seq)
{
	if (!f->seen || seq > f->highest) {
		take_new_high(t, f, seq);
	} else if (seq < f->base) {
		f->untracked++;
	} else if (bit_test(f, seq)) {
		f->duplicates++;
	} else {
		bit_set(f, seq);
		f->received++;
		f->reordered++;
	}
}

/* Not a message of the flow's sequence: it closes the flow's books. Copies
 * normally agree; if not, the largest count wins (a loss is never hidden). */
static void end_marker(struct st_flow *f, const struct seqtrack_marker *m)
{
	f->end_markers++;
	if (!f->closed || m->seq > f->sent)
		f->sent = m->seq;
	if (!f->closed || m->copies > f->copies)
		f->copies = m->copies;
	f->closed = true;
}

/* A marker whose number jumps more than jump_max past its flow's highest (a
 * new flow's past jump_max - 1: numbers start at 0), or whose end marker
 * announces more copies than a sender sends, is not believed: a gap of
 * billions from one forged datagram is not a loss. */
static bool plausible(const struct seqtrack *t, const struct st_flow *f,
		      const struct seqtrack_marker *m)
{
	uint64_t n = m->seq;

	if (m->end) {
		if (m->copies > SEQTRACK_COPIES_MAX)
			return false;
		if (!n)
			return true; /* nothing sent */
		n--;		     /* end=N: the count sent, the last number N - 1 */
	}
	if (f && f->seen)
		return n <= f->highest || n - f->highest <= t->opts.jump_max;
	return n < t->opts.jump_max; /* as if the highest were -1 */
}

bool seqtrack_observe(struct seqtrack *t, const char *msg, size_t len)
{
	struct seqtrack_marker m;
	struct st_flow *f;
	uint64_t before, h;

	if (!seqtrack_parse(msg, len, &m)) {
		t->unsequenced++;
		return false;
	}
	f = lookup_flow(t, &m, &h);
	if (!plausible(t, f, &m)) {
		t->implausible++;
		t->unsequenced++;
		return false;
	}
	if (m.end)
		t->end_markers++;
	if (!f)
		f = t->last = add_flow(t, &m, h);
	if (!f) {
		if (!m.end)
			t->refused_msgs++; /* table full (or no memory): untracked */
		return true;
	}
	before = flow_missing(f);
	if (m.end)
		end_marker(f, &m);
	else
		account(t, f, m.seq);
	add_missing(t, flow_missing(f) - before);
	return true;
}

/* ---- reports --------------------------------------------------------------- */

static void flow_stats(const struct st_flow *f, struct seqtrack_flow_stats *s)
{
	s->kind = f->key.kind;
	s->run = f->key.run;
	s->flow = f->key.flow;
	s->received = f->received;
	s->closed = f->closed;
	s->sent = f->sent;
	s->end_markers = f->end_markers;
	s->end_markers_lost = f->copies > f->end_markers ? f->copies - f->end_markers : 0;
	s->missing = flow_missing(f);
	s->duplicates = f->duplicates;
	s->reordered = f->reordered;
	s->untracked = f->untracked;
	s->max_seq = f->highest;
	s->window_bits = f->nbits;
}

void seqtrack_totals(const struct seqtrack *t, struct seqtrack_totals *out)
{
	struct seqtrack_flow_stats s;

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < t->nflows; i++) {
		flow_stats(t->flows[i], &s);
		out->received += s.received;
		out->missing += s.missing;
		out->duplicates += s.duplicates;
		out->reordered += s.reordered;
		out->untracked += s.untracked;
		out->end_markers_lost += s.end_markers_lost;
		if (s.closed) {
			out->flows_closed++;
			out->sent += s.sent;
		}
	}
	out->end_markers = t->end_markers;
	out->untracked += t->refused_msgs;
	out->sequenced = out->received + out->duplicates + out->untracked;
	out->unsequenced = t->unsequenced;
	out->implausible = t->implausible;
	out->flows = t->nflows;
	out->refused = t->refused_msgs;
}

uint64_t seqtrack_missing(const struct seqtrack *t)
{
	return __atomic_load_n(&t->missing, __ATOMIC_RELAXED);
}

int seqtrack_for_each_flow(const struct seqtrack *t,
			   int (*fn)(const struct seqtrack_flow_stats *f, void *ctx), void *ctx)
{
	struct seqtrack_flow_stats s;
	int err;

	for (uint32_t i = 0; i < t->nflows; i++) {
		flow_stats(t->flows[i], &s);
		err = fn(&s, ctx);
		if (err)
			return err;
	}
	return 0;
}
