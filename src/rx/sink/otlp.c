// SPDX-License-Identifier: MIT
/*
 * otlp:URL sink: OTLP/HTTP logs over libcurl (see otlp.h). Everything runs
 * on the output stage's thread: produce_msg, poll, drain, and so the POSTs
 * and the counters. A metrics scrape reads the counters from another thread.
 *
 * Requests live in OTLP_SLOTS slots, a ring: the oldest is the next to send
 * (or to send again), the newest may still be filling. Each slot keeps the
 * opaque of every record it holds as runs (a batch's records are
 * consecutive), so an answer completes them in order.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include <zlib.h>
#include "common/signals.h"
#include "common/clock.h"
#include "common/escape.h"
#include "common/log.h"
#include "common/net_text.h"
#include "common/redact.h"
#include "rx/settings/config.h"
#include "rx/sink/otlp.h"
#include "rx/sink/tls.h"
#include "syslog/format_time.h"
#include "syslog/msgtime.h"
#include "syslog/otlp_encode.h"

#define OTLP_SLOTS 4
#define OTLP_REQ_BYTES (1u << 20) /* records per request, before the frame */
#define OTLP_LINGER_MS 10	  /* the oldest record waits at most this */
#define SLOT_CAP (OTLP_FRAME_MAX + OTLP_REQ_BYTES + OTLP_RECORD_MAX(65536) + OTLP_FRAME_MAX)
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define RETRY_AFTER_MAX_MS 300000 /* a Retry-After past 5 minutes waits 5 minutes */
#define REQUEST_TIMEOUT_MS 10000
#define CONNECT_TIMEOUT_MS 2000
#define RESP_MAX 4096
#define OTLP_MESSAGE_MAX 256 /* of a partial success's errorMessage, as sent */

struct run {
	void *opaque;
	uint32_t n;
};

struct slot {
	char *buf;   /* OTLP_FRAME_MAX of room for the head, then the records */
	size_t used; /* bytes of records */
	uint32_t nrec;
	bool sealed;
	struct run *runs;
	size_t nruns, runs_cap;
	uint64_t first_ns;   /* when its first record came (linger) */
	uint64_t next_try;   /* mono ns: not before */
	unsigned int tries;  /* sends so far */
	long retry_after_ms; /* the last answer's Retry-After, -1 none */
};

struct reason {
	char name[SINK_OTLP_REASON_LEN];
	uint64_t count;
};

struct sink_otlp {
	struct sink base;
	CURL *curl;
	struct curl_slist *headers;
	char url[PATH_MAX];
	char shown_url[PATH_MAX]; /* for logs, the summary, metrics: userinfo as *** */
	char errbuf[CURL_ERROR_SIZE];
	enum otlp_encoding enc;
	bool gzip;
	bool original; /* --otlp-original */
	double drain_timeout;
	uint64_t drain_deadline; /* mono ns while draining, else 0 */
	uint64_t stall_ns;	 /* --stall-timeout */
	uint64_t request_ns;	 /* when the request in flight was sent, else 0 */
	struct slot slots[OTLP_SLOTS];
	unsigned int head, n; /* ring of slots in use */
	char *zbuf;
	size_t zcap;
	char resp[RESP_MAX];
	size_t resp_len;
	long retry_after_ms; /* from the answer's headers, -1 none */
	long last_error;     /* log each new transient error once: curl code, or -status */
	/* counters: output thread writes, scrapes read (relaxed atomics) */
	uint64_t requests, records, bytes_raw, bytes_sent, retries, failed, in_flight, undelivered;
	long last_status;
	struct reason reasons[SINK_OTLP_MAX_REASONS];
	unsigned int nr_reasons;
	uint64_t other_reasons;
};

#define BUMP(field, d) __atomic_store_n(&(field), (field) + (d), __ATOMIC_RELAXED)

/* Counts n records failed for good under a reason; true the first time the
 * reason is seen (the caller logs it then, not on every request). */
static bool count_failure(struct sink_otlp *k, const char *name, uint64_t n)
{
	unsigned int i;

	BUMP(k->failed, n);
	for (i = 0; i < k->nr_reasons; i++) {
		if (!strcmp(k->reasons[i].name, name)) {
			BUMP(k->reasons[i].count, n);
			return false;
		}
	}
	if (k->nr_reasons == SINK_OTLP_MAX_REASONS) {
		BUMP(k->other_reasons, n);
		return false;
	}
	snprintf(k->reasons[k->nr_reasons].name, SINK_OTLP_REASON_LEN, "%s", name);
	k->reasons[k->nr_reasons].count = n;
	__atomic_store_n(&k->nr_reasons, k->nr_reasons + 1, __ATOMIC_RELEASE);
	return true;
}

/* ---- slots ------------------------------------------------------------------------ */

static struct slot *slot_at(struct sink_otlp *k, unsigned int i)
{
	return &k->slots[(k->head + i) % OTLP_SLOTS];
}

static struct slot *filling(struct sink_otlp *k)
{
	struct slot *s = k->n ? slot_at(k, k->n - 1) : NULL;

	return s && !s->sealed ? s : NULL;
}

/* A new slot to fill, or NULL when all are outstanding. */
static struct slot *slot_new(struct sink_otlp *k)
{
	struct slot *s;

	if (k->n == OTLP_SLOTS)
		return NULL;
	s = slot_at(k, k->n++);
	s->used = 0;
	s->nrec = 0;
	s->sealed = false;
	s->nruns = 0;
	s->tries = 0;
	s->next_try = 0;
	s->retry_after_ms = -1;
	return s;
}

static int slot_add_opaque(struct slot *s, void *opaque)
{
	if (s->nruns && s->runs[s->nruns - 1].opaque == opaque) {
		s->runs[s->nruns - 1].n++;
		return 0;
	}
	if (s->nruns == s->runs_cap) {
		size_t cap = s->runs_cap ? 2 * s->runs_cap : 64;
		struct run *r = realloc(s->runs, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		s->runs = r;
		s->runs_cap = cap;
	}
	s->runs[s->nruns++] = (struct run){ opaque, 1 };
	return 0;
}

/* Completes a slot's records: the first `ok` delivered, the rest as res. */
static void slot_complete(struct sink_otlp *k, struct slot *s, uint32_t ok, enum sink_result res)
{
	uint32_t i = 0;

	BUMP(k->in_flight, -(uint64_t)s->nrec);
	for (size_t r = 0; r < s->nruns; r++)
		for (uint32_t j = 0; j < s->runs[r].n; j++, i++)
			if (k->base.done)
				k->base.done(k->base.done_ctx, s->runs[r].opaque,
					     i < ok ? SINK_DELIVERED : res);
	/* the oldest slot leaves the ring */
	k->head = (k->head + 1) % OTLP_SLOTS;
	k->n--;
}

/* ---- HTTP --------------------------------------------------------------------------- */

static size_t on_body(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct sink_otlp *k = ctx;
	size_t n = size * nmemb, room = RESP_MAX - 1 - k->resp_len;

	memcpy(k->resp + k->resp_len, p, n < room ? n : room);
	k->resp_len += n < room ? n : room;
	k->resp[k->resp_len] = '\0';
	return n;
}

/* Retry-After: delay-seconds (an HTTP-date is not used: backoff instead). */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct sink_otlp *k = ctx;
	size_t n = size * nmemb;

	if (n > 12 && !strncasecmp(p, "Retry-After:", 12)) {
		const char *v = p + 12;
		long secs = 0;
		bool digits = false;

		while (v < p + n && (*v == ' ' || *v == '\t'))
			v++;
		for (; v < p + n && isdigit((unsigned char)*v) && secs < 86400; v++, digits = true)
			secs = secs * 10 + (*v - '0');
		if (digits)
			k->retry_after_ms = secs * 1000;
	}
	return n;
}

/* gzip of [src, src+len) into k->zbuf; its length, 0 on failure. */
static size_t gzip_body(struct sink_otlp *k, const char *src, size_t len)
{
	z_stream z = { 0 };
	size_t out;

	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (Bytef *)src;
	z.avail_in = len;
	z.next_out = (Bytef *)k->zbuf;
	z.avail_out = k->zcap;
	out = deflate(&z, Z_FINISH) == Z_STREAM_END ? z.total_out : 0;
	deflateEnd(&z);
	return out;
}

enum send_result { SEND_DONE, SEND_RETRY };

static bool transient_status(long st)
{
	return st == 429 || st == 502 || st == 503 || st == 504;
}

/* The error message of a non-2xx answer, for the log: the body as the
 * collector sent it, made safe to show (common/net_text.h). */
static const char *answer_text(struct sink_otlp *k)
{
	static char text[160];

	net_text_log(text, sizeof(text), k->resp, k->resp_len);
	return text;
}

static long timeout_ms(struct sink_otlp *k)
{
	if (k->drain_deadline) {
		uint64_t now = mono_ns();
		long left = now < k->drain_deadline ? (k->drain_deadline - now) / 1000000 : 1;

		return left < REQUEST_TIMEOUT_MS ? (left ?: 1) : REQUEST_TIMEOUT_MS;
	}
	return REQUEST_TIMEOUT_MS;
}

/* Why a request will be sent again, for the log (curl's error, which may
 * hold the server's words, printable bytes only). */
static const char *transient_text(struct sink_otlp *k, CURLcode rc, long status)
{
	static char why[4 * CURL_ERROR_SIZE];
	const char *said = k->errbuf[0] ? k->errbuf : curl_easy_strerror(rc);

	if (rc == CURLE_OK)
		snprintf(why, sizeof(why), "HTTP %ld", status);
	else /* curl's words may quote the peer (its certificate's names) */
		net_text_log(why, sizeof(why), said, strlen(said));
	return why;
}

/* POSTs the oldest slot once. */
static enum send_result send_slot(struct sink_otlp *k, struct slot *s)
{
	char *rec = s->buf + OTLP_FRAME_MAX;
	char head[OTLP_FRAME_MAX];
	size_t hl = otlp_head(head, k->enc, s->used), raw, len;
	const char *body;
	CURLcode rc;
	long status = 0;

	memcpy(rec - hl, head, hl);
	raw = hl + s->used + otlp_tail(rec + s->used, k->enc);
	body = rec - hl;
	len = raw;
	if (k->gzip) {
		len = gzip_body(k, body, raw);
		if (!len) {
			count_failure(k, "gzip", s->nrec);
			slot_complete(k, s, 0, SINK_FAILED);
			return SEND_DONE;
		}
		body = k->zbuf;
	}
	if (s->tries++)
		BUMP(k->retries, 1);
	k->resp_len = 0;
	k->resp[0] = '\0';
	k->retry_after_ms = -1;
	k->errbuf[0] = '\0';
	curl_easy_setopt(k->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(k->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(k->curl, CURLOPT_TIMEOUT_MS, timeout_ms(k));
	k->request_ns = mono_ns();
	rc = curl_easy_perform(k->curl);
	k->request_ns = 0;
	if (rc == CURLE_OK)
		curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, &status);
	__atomic_store_n(&k->last_status, status, __ATOMIC_RELAXED);
	if (rc == CURLE_OK && status >= 200 && status < 300) {
		uint64_t rejected = 0;
		char msg[OTLP_MESSAGE_MAX], name[SINK_OTLP_REASON_LEN];

		/* Up before the line: whoever reads it (an operator's USR2)
		 * finds the output up. */
		sink_set_down(&k->base, false);
		if (k->last_error)
			pr_warn("%s: delivering again\n", k->base.name);
		k->last_error = 0;
		if (otlp_parse_response(k->resp, k->resp_len, k->enc, &rejected, msg, sizeof(msg)))
			rejected = 0; /* not a response: the status says it was taken */
		if (rejected > s->nrec)
			rejected = s->nrec;
		BUMP(k->requests, 1);
		BUMP(k->records, s->nrec - rejected);
		BUMP(k->bytes_raw, raw);
		BUMP(k->bytes_sent, len);
		if (rejected) {
			/* The collector's words, made safe once (common/net_text.h):
			 * the label is cut on a character boundary, the log line has
			 * no control byte. */
			char shown[ESCAPE_LINE_MAX(OTLP_MESSAGE_MAX)];
			size_t pre = strlen("rejected: ");

			memcpy(name, "rejected: ", pre);
			if (!net_text_label(name + pre, sizeof(name) - pre, msg, strlen(msg)))
				snprintf(name + pre, sizeof(name) - pre, "(no message)");
			net_text_log(shown, sizeof(shown), msg, strlen(msg));
			if (count_failure(k, name, rejected))
				pr_warn("%s: the collector rejected %llu of %u records: %s; such "
					"records are counted as failed\n",
					k->base.name, (unsigned long long)rejected, s->nrec, shown);
		}
		slot_complete(k, s, s->nrec - rejected, SINK_FAILED);
		return SEND_DONE;
	}
	if (rc == CURLE_OK && !transient_status(status)) {
		char name[32];

		snprintf(name, sizeof(name), "http_%ld", status);
		if (count_failure(k, name, s->nrec))
			pr_warn("%s: HTTP %ld: %u records not delivered, not retried (%s); such "
				"records are counted as failed\n",
				k->base.name, status, s->nrec, answer_text(k));
		slot_complete(k, s, 0, SINK_FAILED);
		return SEND_DONE;
	}
	/* The stop gave up (on_progress): the slot stays, saved or counted. */
	if (rc == CURLE_ABORTED_BY_CALLBACK)
		return SEND_RETRY;
	/* Transient: the same request again later. */
	{
		unsigned int shift = s->tries < 7 ? s->tries - 1 : 6;
		long backoff = BACKOFF_MIN_MS << shift;

		if (backoff > BACKOFF_MAX_MS)
			backoff = BACKOFF_MAX_MS;
		if (rc == CURLE_OK && k->retry_after_ms >= 0)
			backoff = k->retry_after_ms < RETRY_AFTER_MAX_MS ? k->retry_after_ms :
									   RETRY_AFTER_MAX_MS;
		s->next_try = mono_ns() + (uint64_t)backoff * 1000000;
		sink_set_down(&k->base, true);
		/* Keyed by the error, not its text: curl's says "after N ms". */
		if (rc == CURLE_OK ? k->last_error != -status : k->last_error != (long)rc) {
			k->last_error = rc == CURLE_OK ? -status : (long)rc;
			pr_warn("%s: %s; retrying with backoff (%d ms doubling to %d ms), the input "
				"window holds what arrives meanwhile\n",
				k->base.name, transient_text(k, rc, status), BACKOFF_MIN_MS,
				BACKOFF_MAX_MS);
		}
	}
	return SEND_RETRY;
}

/* ---- the sink interface -------------------------------------------------------------- */

static int otlp_write(struct sink *s, const char *buf, size_t len)
{
	return -EOPNOTSUPP; /* async only */
}

static int otlp_reopen(struct sink *s)
{
	return 0;
}

static int otlp_produce_msg(struct sink *sk, const char *data, size_t len,
			    const struct syslog_msg *m, enum syslog_parse_result r,
			    const struct msg_meta *meta, void *opaque)
{
	struct sink_otlp *k = (struct sink_otlp *)sk;
	struct slot *s = filling(k);
	struct otlp_rec rec = {
		.data = data,
		.len = len,
		.m = m,
		.r = r,
		.observed_ns = meta->recv_realtime_ns,
		.src = meta->src,
		.src_len = meta->src_len,
		.original = k->original,
		.listener = meta->listener,
		.sd_dropped = meta->sd_dropped,
	};
	char *d;

	if (s && s->used + 1 + OTLP_RECORD_MAX(len) > SLOT_CAP - 2 * OTLP_FRAME_MAX)
		s->sealed = true;
	if (!s || s->sealed) {
		s = slot_new(k);
		if (!s)
			return -EAGAIN;
		s->first_ns = mono_ns();
	}
	if (slot_add_opaque(s, opaque)) {
		if (!s->nrec)
			k->n--; /* no empty slot is left in the ring */
		return -EAGAIN;
	}
	rec.time_ns = meta_time_ns(m, r, meta);
	d = s->buf + OTLP_FRAME_MAX + s->used;
	if (k->enc == OTLP_JSON) {
		if (s->nrec)
			*d++ = ',';
		d += otlp_json_record(d, &rec);
	} else {
		d += otlp_pb_record(d, &rec);
	}
	s->used = d - (s->buf + OTLP_FRAME_MAX);
	s->nrec++;
	BUMP(k->in_flight, 1);
	if (s->used >= OTLP_REQ_BYTES)
		s->sealed = true;
	return 0;
}

static bool aborted(struct sink_otlp *k)
{
	return sink_aborted(&k->base);
}

/* curl calls it at least once a second while a request waits: a stop that
 * gave up ends the request in flight (CURLE_ABORTED_BY_CALLBACK), and its
 * records are saved or counted with their batch, not waited for. A request
 * unanswered for --stall-timeout shows the output down while it waits
 * (the request's own deadline, REQUEST_TIMEOUT_MS, may be longer): a
 * collector behind a firewall that drops is not taken for a slow one. */
static int on_progress(void *p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct sink_otlp *k = p;
	uint64_t sent = k->request_ns;

	if (sent && mono_ns() - sent > k->stall_ns && !sink_is_down(&k->base))
		sink_set_down(&k->base, true);
	return aborted(k);
}

static int otlp_poll(struct sink *sk, int timeout_ms)
{
	struct sink_otlp *k = (struct sink_otlp *)sk;
	uint64_t until = mono_ns() + (uint64_t)timeout_ms * 1000000;
	struct slot *f = filling(k);
	int served = 0;

	if (f && f->nrec &&
	    (k->drain_deadline || mono_ns() - f->first_ns >= OTLP_LINGER_MS * 1000000ULL))
		f->sealed = true;
	while (k->n && slot_at(k, 0)->sealed && !aborted(k)) {
		struct slot *s = slot_at(k, 0);
		uint64_t now = mono_ns();

		if (now < s->next_try) {
			uint64_t wake = s->next_try < until ? s->next_try : until;
			struct timespec ts;

			if (now >= until)
				break;
			/* in slices, so a second signal is seen soon */
			if (wake - now > 100000000ULL)
				wake = now + 100000000ULL;
			ts = ns_to_timespec(wake - now);
			nanosleep(&ts, NULL);
			continue;
		}
		uint32_t nrec = s->nrec;

		if (send_slot(k, s) == SEND_DONE)
			served += nrec;
		else if (mono_ns() >= until)
			break;
	}
	return served;
}

static uint64_t otlp_drain(struct sink *sk)
{
	struct sink_otlp *k = (struct sink_otlp *)sk;
	uint64_t left = 0;

	k->drain_deadline = mono_ns() + (uint64_t)(k->drain_timeout * 1e9);
	while (k->n && mono_ns() < k->drain_deadline && !aborted(k))
		otlp_poll(sk, 50);
	for (unsigned int i = 0; i < k->n; i++)
		left += slot_at(k, i)->nrec;
	if (!left)
		return 0;
	sink_say_unacknowledged(sk, left, "record(s)", k->drain_timeout);
	BUMP(k->undelivered, left);
	while (k->n)
		slot_complete(k, slot_at(k, 0), 0, SINK_UNDELIVERED);
	return 0;
}

static void otlp_close(struct sink *sk)
{
	struct sink_otlp *k = (struct sink_otlp *)sk;

	if (k->curl)
		curl_easy_cleanup(k->curl);
	curl_slist_free_all(k->headers);
	for (unsigned int i = 0; i < OTLP_SLOTS; i++) {
		free(k->slots[i].buf);
		free(k->slots[i].runs);
	}
	free(k->zbuf);
	free(k);
}

static const struct sink_ops otlp_ops = {
	.write = otlp_write,
	.reopen = otlp_reopen,
	.close = otlp_close,
	.produce_msg = otlp_produce_msg,
	.poll = otlp_poll,
	.drain = otlp_drain,
};

/* ---- start ------------------------------------------------------------------------ */

static int add_header(struct sink_otlp *k, const char *h)
{
	struct curl_slist *l = curl_slist_append(k->headers, h);

	if (!l)
		return -ENOMEM;
	k->headers = l;
	return 0;
}

static int setup_curl(struct sink_otlp *k, const struct config *c)
{
	char h[CONFIG_OTLP_HEADER_LEN + 2];
	int err = 0;

	k->curl = curl_easy_init();
	if (!k->curl)
		return -ENOMEM;
	err |= add_header(k, k->enc == OTLP_JSON ? "Content-Type: application/json" :
						   "Content-Type: application/x-protobuf");
	if (k->gzip)
		err |= add_header(k, "Content-Encoding: gzip");
	err |= add_header(k, "Expect:"); /* no 100-continue round trip */
	for (unsigned int i = 0; i < c->otlp.nr_headers; i++) {
		const char *eq = strchr(c->otlp.headers[i], '=');

		snprintf(h, sizeof(h), "%.*s: %s", (int)(eq - c->otlp.headers[i]),
			 c->otlp.headers[i], eq + 1);
		err |= add_header(k, h);
	}
	if (err)
		return -ENOMEM;
	curl_easy_setopt(k->curl, CURLOPT_URL, k->url);
	curl_easy_setopt(k->curl, CURLOPT_HTTPHEADER, k->headers);
	curl_easy_setopt(k->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(k->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(k->curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(k->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
	curl_easy_setopt(k->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(k->curl, CURLOPT_XFERINFODATA, k);
	curl_easy_setopt(k->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(k->curl, CURLOPT_ERRORBUFFER, k->errbuf);
	curl_easy_setopt(k->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(k->curl, CURLOPT_WRITEDATA, k);
	curl_easy_setopt(k->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(k->curl, CURLOPT_HEADERDATA, k);
	curl_easy_setopt(k->curl, CURLOPT_USERAGENT, "syslogrx");
	curl_easy_setopt(k->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->otlp.ca[0])
		curl_easy_setopt(k->curl, CURLOPT_CAINFO, c->otlp.ca);
	if (c->otlp.cert[0]) {
		curl_easy_setopt(k->curl, CURLOPT_SSLCERT, c->otlp.cert);
		curl_easy_setopt(k->curl, CURLOPT_SSLKEY, c->otlp.key);
	}
	return 0;
}

/* What no wait can mend: the URL, the CA file, the client's own certificate. */
static bool fatal_at_start(CURLcode rc)
{
	switch (rc) {
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

/*
 * An empty export request: reachable, TLS verified, the path answers OTLP.
 * 0: it does. -EAGAIN: the collector is down or not ready (no answer, or
 * 429/502/503/504): we start anyway and retry as for any outage. Another
 * -errno: a mistake waiting cannot mend (logged): we do not start.
 */
static int probe(struct sink_otlp *k, const struct config *c)
{
	static const char empty_json[] = "{}";
	const char *body = k->enc == OTLP_JSON ? empty_json : "";
	size_t len = k->enc == OTLP_JSON ? sizeof(empty_json) - 1 : 0;
	CURLcode rc;
	long status = 0;

	if (k->gzip) {
		len = gzip_body(k, body, len);
		body = k->zbuf;
	}
	k->errbuf[0] = '\0';
	curl_easy_setopt(k->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(k->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(k->curl, CURLOPT_TIMEOUT_MS, (long)REQUEST_TIMEOUT_MS);
	rc = curl_easy_perform(k->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(k->curl, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_OK && status >= 200 && status < 300)
		return 0;
	if (rc == CURLE_OK ? transient_status(status) : !fatal_at_start(rc)) {
		k->last_error = rc == CURLE_OK ? -status : (long)rc;
		sink_set_down(&k->base, true);
		pr_warn("--output otlp:%s: the collector is not reachable yet (%s); starting "
			"anyway: retrying with backoff (%d ms doubling to %d ms), %s what arrives "
			"meanwhile\n",
			k->shown_url, transient_text(k, rc, status), BACKOFF_MIN_MS, BACKOFF_MAX_MS,
			c->disk_buffer[0] ? "the input window and the disk buffer hold" :
					    "the input window holds");
		return -EAGAIN;
	}
	if (rc != CURLE_OK) {
		bool tls = rc != CURLE_URL_MALFORMAT && rc != CURLE_UNSUPPORTED_PROTOCOL;
		const char *said = k->errbuf[0] ? k->errbuf : curl_easy_strerror(rc);
		char why[4 * CURL_ERROR_SIZE];

		net_text_log(why, sizeof(why), said, strlen(said)); /* may quote the peer */
		pr_warn("--output otlp:%s: cannot reach the collector: %s%s%s%s\n", k->shown_url,
			why, tls && c->otlp.ca[0] ? " (TLS: check --otlp-ca " : "",
			tls && c->otlp.ca[0] ? c->otlp.ca : "", tls && c->otlp.ca[0] ? ")" : "");
		if (tls && c->otlp.ca[0])
			pr_warn("--output otlp:%s: the server's certificate is not signed by a CA "
				"in --otlp-ca %s\n",
				k->shown_url, c->otlp.ca);
		return tls ? -EPROTO : -EINVAL;
	}
	pr_warn("--output otlp:%s: the collector answered an empty export with HTTP %ld "
		"(is %s its OTLP/HTTP logs path?)\n",
		k->shown_url, status, k->shown_url);
	return -EPROTO;
}

struct sink *sink_otlp_open(const struct config *c)
{
	struct sink_otlp *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return NULL;
	k->base.ops = &otlp_ops;
	snprintf(k->url, sizeof(k->url), "%s", c->output_arg);
	redact_url(k->shown_url, sizeof(k->shown_url), k->url);
	config_output_name(c, k->base.name, sizeof(k->base.name)); /* userinfo as *** */
	k->enc = c->otlp.json ? OTLP_JSON : OTLP_PROTOBUF;
	k->gzip = c->otlp.gzip;
	k->original = c->otlp.original;
	k->drain_timeout = c->drain_timeout;
	k->stall_ns = (uint64_t)(c->stall_timeout * 1e9);
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		err = -ENOMEM;
		goto fail;
	}
	k->zcap = compressBound(SLOT_CAP);
	k->zbuf = malloc(k->zcap);
	err = -ENOMEM;
	if (!k->zbuf)
		goto fail;
	for (unsigned int i = 0; i < OTLP_SLOTS; i++) {
		k->slots[i].buf = malloc(SLOT_CAP);
		if (!k->slots[i].buf)
			goto fail;
	}
	err = setup_curl(k, c);
	if (err)
		goto fail;
	if (c->otlp.ca[0] || c->otlp.cert[0]) {
		err = tls_files_check(&(struct tls_files){
			.ca = c->otlp.ca[0] ? c->otlp.ca : "",
			.cert = c->otlp.cert,
			.key = c->otlp.key,
			.ca_flag = "--otlp-ca",
			.cert_flag = "--otlp-cert",
			.key_flag = "--otlp-key",
		});
		if (err)
			goto fail;
	}
	err = probe(k, c);
	if (err && err != -EAGAIN)
		goto fail;
	pr_info("otlp: exporting logs to %s (%s, %s)\n", k->shown_url,
		k->enc == OTLP_JSON ? "json" : "protobuf", k->gzip ? "gzip" : "uncompressed");
	return &k->base;
fail:
	otlp_close(&k->base);
	errno = -err;
	return NULL;
}

int sink_otlp_stats(struct sink *s, struct sink_otlp_stats *out)
{
	struct sink_otlp *k = (struct sink_otlp *)s;
	uint64_t other;

	if (!s || s->ops != &otlp_ops)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->url = k->shown_url;
	out->encoding = k->enc == OTLP_JSON ? "json" : "protobuf";
	out->compression = k->gzip ? "gzip" : "none";
	out->original = k->original;
#define LOAD(f) out->f = __atomic_load_n(&k->f, __ATOMIC_RELAXED)
	LOAD(requests);
	LOAD(records);
	LOAD(bytes_raw);
	LOAD(bytes_sent);
	LOAD(retries);
	LOAD(failed);
	LOAD(in_flight);
	LOAD(undelivered);
	LOAD(last_status);
#undef LOAD
	out->nr_reasons = __atomic_load_n(&k->nr_reasons, __ATOMIC_ACQUIRE);
	for (unsigned int i = 0; i < out->nr_reasons; i++) {
		out->reasons[i].name = k->reasons[i].name;
		out->reasons[i].count = __atomic_load_n(&k->reasons[i].count, __ATOMIC_RELAXED);
	}
	other = __atomic_load_n(&k->other_reasons, __ATOMIC_RELAXED);
	if (other) {
		out->reasons[out->nr_reasons].name = "other";
		out->reasons[out->nr_reasons++].count = other;
	}
	return 0;
}
