// SPDX-License-Identifier: MIT
/* sysloggen's datagrams; layout in syslog/msgfmt.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "syslog/msgfmt.h"

#define HDR_MAX (MSGFMT_HOST_MAX + MSGFMT_APP_MAX + MSGFMT_RUN_MAX + 160)

static const char pad_chars[] = "abcdefghijklmnopqrstuvwxyz";

static const char months[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

bool msgfmt_run_valid(const char *run)
{
	size_t n = 0;

	if (!run)
		return false;
	for (; run[n]; n++) {
		char c = run[n];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == ':' || c == '-'))
			return false;
	}
	return n >= 1 && n <= MSGFMT_RUN_MAX;
}

bool msgfmt_token_valid(const char *s, size_t max)
{
	size_t n = 0;

	if (!s)
		return false;
	for (; s[n]; n++)
		if (s[n] <= ' ' || s[n] > '~' || s[n] == '[' || s[n] == ':' || s[n] == ']')
			return false;
	return n >= 1 && n <= max;
}

static unsigned num_width(uint64_t v)
{
	unsigned w = 1;

	while (v >= 10) {
		v /= 10;
		w++;
	}
	return w;
}

/* Digits of v right-aligned in dst[0..w). */
static void put_digits(char *dst, unsigned w, uint64_t v)
{
	while (w--) {
		dst[w] = '0' + v % 10;
		v /= 10;
	}
}

static size_t ts_off(const struct msgfmt_params *p)
{
	return 2 + num_width(p->pri) + (p->format == MSGFMT_RFC5424 ? 2 : 0);
}

static size_t ts_len(const struct msgfmt_params *p)
{
	return p->format == MSGFMT_RFC5424 ? 20 : 15;
}

static void put_ts(const struct msgfmt_params *p, char *dst, int64_t sec)
{
	time_t t = sec;
	struct tm tm;

	gmtime_r(&t, &tm);
	if (p->format == MSGFMT_RFC5424) {
		put_digits(dst, 4, tm.tm_year + 1900);
		dst[4] = '-';
		put_digits(dst + 5, 2, tm.tm_mon + 1);
		dst[7] = '-';
		put_digits(dst + 8, 2, tm.tm_mday);
		dst[10] = 'T';
		put_digits(dst + 11, 2, tm.tm_hour);
		dst[13] = ':';
		put_digits(dst + 14, 2, tm.tm_min);
		dst[16] = ':';
		put_digits(dst + 17, 2, tm.tm_sec);
		dst[19] = 'Z';
	} else {
		memcpy(dst, months[tm.tm_mon], 3);
		dst[3] = ' ';
		dst[4] = tm.tm_mday < 10 ? ' ' : '0' + tm.tm_mday / 10;
		dst[5] = '0' + tm.tm_mday % 10;
		dst[6] = ' ';
		put_digits(dst + 7, 2, tm.tm_hour);
		dst[9] = ':';
		put_digits(dst + 10, 2, tm.tm_min);
		dst[12] = ':';
		put_digits(dst + 13, 2, tm.tm_sec);
	}
}

/* Header and marker into hdr (HDR_MAX bytes); returns its length. A data
 * marker ends with seq=N; an end marker (end != NULL) with end=N copies=K. */
static size_t header_any(const struct msgfmt_params *p, char *hdr, uint64_t seq, int64_t sec,
			 size_t *seq_off, const uint64_t *end)
{
	bool sd = p->format == MSGFMT_RFC5424;
	size_t off = ts_off(p), n;
	int len;

	snprintf(hdr, HDR_MAX, sd ? "<%u>1 " : "<%u>", p->pri);
	put_ts(p, hdr + off, sec);
	off += ts_len(p);
	if (sd)
		len = snprintf(hdr + off, HDR_MAX - off,
			       " %s %s %u - [seq@32473 run=\"%s\" flow=\"%u\" %s=\"", p->host,
			       p->app, p->pid, p->run, p->flow, end ? "end" : "seq");
	else
		len = snprintf(hdr + off, HDR_MAX - off,
			       " %s %s[%u]: seq@32473 run=%s flow=%u %s=", p->host, p->app, p->pid,
			       p->run, p->flow, end ? "end" : "seq");
	off += len;
	*seq_off = off;
	n = num_width(seq);
	put_digits(hdr + off, n, seq);
	off += n;
	if (end)
		off += snprintf(hdr + off, HDR_MAX - off,
				sd ? "\" copies=\"%" PRIu64 : " copies=%" PRIu64, *end);
	if (sd) {
		memcpy(hdr + off, "\"]", 2);
		off += 2;
	} else {
		hdr[off++] = ' ';
	}
	return off;
}

static size_t header(const struct msgfmt_params *p, char *hdr, uint64_t seq, int64_t sec,
		     size_t *seq_off)
{
	return header_any(p, hdr, seq, sec, seq_off, NULL);
}

size_t msgfmt_min_size(const struct msgfmt_params *p, uint64_t max_seq)
{
	char hdr[HDR_MAX];
	size_t seq_off;

	return header(p, hdr, max_seq, 0, &seq_off);
}

size_t msgfmt_end_min_size(const struct msgfmt_params *p, uint64_t sent, uint64_t copies)
{
	char hdr[HDR_MAX];
	size_t seq_off;

	return header_any(p, hdr, sent, 0, &seq_off, &copies);
}

/* The header, then a space (rfc5424) and the pad to exactly p->size bytes. */
static int render_hdr(const struct msgfmt_params *p, char *buf, const char *hdr, size_t n)
{
	size_t i;

	if (n > p->size)
		return -EMSGSIZE;
	memcpy(buf, hdr, n);
	if (n < p->size && p->format == MSGFMT_RFC5424)
		buf[n++] = ' ';
	for (i = 0; n < p->size; n++, i++)
		buf[n] = pad_chars[i % (sizeof(pad_chars) - 1)];
	return 0;
}

int msgfmt_render(const struct msgfmt_params *p, char *buf, uint64_t seq, int64_t sec,
		  size_t *seq_off)
{
	char hdr[HDR_MAX];
	size_t n = header(p, hdr, seq, sec, seq_off);

	return render_hdr(p, buf, hdr, n);
}

int msgfmt_render_end(const struct msgfmt_params *p, char *buf, uint64_t sent, uint64_t copies,
		      int64_t sec)
{
	char hdr[HDR_MAX];
	size_t seq_off, n = header_any(p, hdr, sent, sec, &seq_off, &copies);

	return render_hdr(p, buf, hdr, n);
}

void msgfmt_slot_init(struct msgfmt_slot *s, char *buf)
{
	s->buf = buf;
	s->seq_off = 0;
	s->seq_width = 0;
	s->ts_sec = 0;
}

int msgfmt_slot_fill(const struct msgfmt_params *p, struct msgfmt_slot *s, uint64_t seq,
		     int64_t sec)
{
	unsigned w = num_width(seq);
	int err;

	if (w != s->seq_width) {
		err = msgfmt_render(p, s->buf, seq, sec, &s->seq_off);
		if (err)
			return err;
		s->seq_width = w;
		s->ts_sec = sec;
		return 0;
	}
	if (sec != s->ts_sec) {
		put_ts(p, s->buf + ts_off(p), sec);
		s->ts_sec = sec;
	}
	put_digits(s->buf + s->seq_off, w, seq);
	return 0;
}
