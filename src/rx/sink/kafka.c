// SPDX-License-Identifier: MIT
/*
 * kafka:BROKERS/TOPIC sink: an async sink over librdkafka (see sink.h and
 * kafka.h). Everything here runs on the output stage's thread: produce,
 * poll and drain, and so the delivery reports (librdkafka serves them from
 * rd_kafka_poll in the caller's thread) and the counters they update. Only
 * log_cb comes from librdkafka's own threads, and it only logs.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <librdkafka/rdkafka.h>
#include "common/signals.h"
#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/net_text.h"
#include "common/redact.h"
#include "common/sockaddr.h"
#include "rx/settings/config.h"
#include "rx/sink/kafka.h"

/* Bounded wait for the topic's metadata at start: an unknown topic or a
 * broker that is down is an error at start, not a silent stall. */
#define METADATA_TIMEOUT_MS 5000
/* Purged messages get their reports quickly; this bounds the wait anyway. */
#define PURGE_WAIT_MS 2000
/* librdkafka's upper bound for queue.buffering.max.messages. */
#define RDK_MAX_QUEUE_MSGS 2147483647ULL

struct kafka_reason {
	rd_kafka_resp_err_t err;
	uint64_t count;
};

struct sink_kafka {
	struct sink base;
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt;
	char brokers[PATH_MAX];
	char topic[CONFIG_KAFKA_TOPIC_MAX + 1];
	double drain_timeout;
	uint64_t stall_ns;    /* --stall-timeout */
	uint64_t progress_ns; /* the last report, or the first produce with none in flight */
	bool purging;	      /* purge reports are "undelivered", not failures */
	rd_kafka_resp_err_t last_error; /* error_cb: log each new error once */
	uint64_t delivered, failed, undelivered, in_flight;
	struct kafka_reason reasons[SINK_KAFKA_MAX_REASONS];
	unsigned int nr_reasons;
	uint64_t other_reasons; /* failures past the reason table */
};

/* The counters are the output thread's; a metrics scrape reads them from
 * another thread: single writer, relaxed atomic stores and loads. */
#define BUMP(field, d) __atomic_store_n(&(field), (field) + (d), __ATOMIC_RELAXED)

/* A permanent failure: counted per reason, the first of each reason logged. */
static void count_failure(struct sink_kafka *k, rd_kafka_resp_err_t err)
{
	unsigned int i;

	BUMP(k->failed, 1);
	for (i = 0; i < k->nr_reasons; i++) {
		if (k->reasons[i].err == err) {
			BUMP(k->reasons[i].count, 1);
			return;
		}
	}
	pr_warn("%s: message not delivered: %s (%s); such messages are counted as failed\n",
		k->base.name, rd_kafka_err2name(err), rd_kafka_err2str(err));
	if (k->nr_reasons == SINK_KAFKA_MAX_REASONS) {
		BUMP(k->other_reasons, 1);
		return;
	}
	k->reasons[k->nr_reasons].err = err;
	k->reasons[k->nr_reasons].count = 1;
	/* the entry is complete before a reader can see it */
	__atomic_store_n(&k->nr_reasons, k->nr_reasons + 1, __ATOMIC_RELEASE);
}

static bool is_purge(rd_kafka_resp_err_t err)
{
	return err == RD_KAFKA_RESP_ERR__PURGE_QUEUE || err == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT;
}

/* Delivery report, served by rd_kafka_poll on the output stage's thread.
 * With message.timeout.ms=0 librdkafka retries transient errors itself, so
 * an error here is permanent (or our own purge at exit). */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct sink_kafka *k = opaque;
	enum sink_result res;

	BUMP(k->in_flight, -1);
	k->progress_ns = mono_ns();
	if (!m->err) {
		BUMP(k->delivered, 1);
		if (sink_is_down(&k->base)) {
			/* up before the line: a USR2 sent on it finds it up */
			sink_set_down(&k->base, false);
			pr_warn("%s: delivering again\n", k->base.name);
			k->last_error = RD_KAFKA_RESP_ERR_NO_ERROR;
		}
		res = SINK_DELIVERED;
	} else if (k->purging && is_purge(m->err)) {
		BUMP(k->undelivered, 1);
		res = SINK_UNDELIVERED;
	} else {
		count_failure(k, m->err);
		res = SINK_FAILED;
	}
	if (k->base.done)
		k->base.done(k->base.done_ctx, m->_private, res);
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	struct sink_kafka *k = opaque;
	char fatal[256], shown[4 * 256];

	if (err == RD_KAFKA_RESP_ERR__FATAL) {
		rd_kafka_fatal_error(rk, fatal, sizeof(fatal));
		net_text_log(shown, sizeof(shown), fatal, strlen(fatal));
		pr_warn("%s: fatal producer error: %s; every message from now on is counted as failed\n",
			k->base.name, shown);
		return;
	}
	/* Transient (broker down, reconnecting): librdkafka retries. Say it once
	 * per new error, not once per reconnect attempt; a broker's refusal is
	 * text from the network: logged escaped. */
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__TRANSPORT)
		sink_set_down(&k->base, true);
	if (err == (int)k->last_error || (err == RD_KAFKA_RESP_ERR__TRANSPORT &&
					  k->last_error == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN))
		return;
	k->last_error = err;
	/* reason may quote a broker: made safe before it is a log line */
	net_text_log(shown, sizeof(shown), reason, strlen(reason));
	pr_warn("%s: %s (%s); retrying, the input window holds what arrives meanwhile\n",
		k->base.name, rd_kafka_err2name(err), shown);
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	char shown[1024];

	net_text_log(shown, sizeof(shown), buf, strlen(buf));
	if (level <= LOG_ERR)
		pr_info("librdkafka: %s: %s\n", fac, shown);
	else
		pr_debug("librdkafka: %s: %s\n", fac, shown);
}

static int kafka_write(struct sink *s, const char *buf, size_t len)
{
	return -EOPNOTSUPP; /* async only: the output stage uses produce */
}

static int kafka_reopen(struct sink *s)
{
	return 0;
}

/* The record's "source" header: the sender as json's "source" has it
 * ("1.2.3.4:514", "[::1]:514"), for a consumer whatever --format is. */
#define SOURCE_HEADER "source"

static int kafka_produce(struct sink *s, const char *msg, size_t len, const char *key,
			 size_t keylen, const struct msg_meta *meta, void *opaque)
{
	struct sink_kafka *k = (struct sink_kafka *)s;
	char src[SOCKADDR_STRLEN];
	size_t srclen =
		meta && meta->src ? sockaddr_format(src, sizeof(src), meta->src, meta->src_len) : 0;
	rd_kafka_resp_err_t err;

	/* F_COPY: librdkafka puts the payload in the same allocation as its own
	 * per-message header, so copying costs no extra malloc, and the batch
	 * buffer is free to be reused at once. The headers are copied too: the
	 * sender ("source") and, with named listeners, the "listener" a consumer
	 * can route on. librdkafka owns them once producev succeeds. */
	rd_kafka_headers_t *hdrs = NULL;

	if (srclen || s->listener_now) {
		hdrs = rd_kafka_headers_new(2);
		if (srclen)
			rd_kafka_header_add(hdrs, SOURCE_HEADER, -1, src, (ssize_t)srclen);
		if (s->listener_now)
			rd_kafka_header_add(hdrs, "listener", -1, s->listener_now, -1);
	}
	err = rd_kafka_producev(
		k->rk, RD_KAFKA_V_RKT(k->rkt), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
		RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE((void *)msg, len),
		RD_KAFKA_V_KEY(keylen ? key : NULL, keylen), RD_KAFKA_V_HEADERS(hdrs),
		RD_KAFKA_V_OPAQUE(opaque),
		/* The record's time is the kernel's receive time, not when a
		 * window or disk buffer let it out (0: librdkafka's now). */
		RD_KAFKA_V_TIMESTAMP(meta ? (int64_t)(meta->recv_realtime_ns / 1000000) : 0),
		RD_KAFKA_V_END);
	if (!err) {
		if (!k->in_flight)
			k->progress_ns = mono_ns(); /* the wait for a report starts */
		BUMP(k->in_flight, 1);
		return 0;
	}
	if (hdrs)
		rd_kafka_headers_destroy(hdrs);
	if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
		return -EAGAIN;
	count_failure(k, err);
	return err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ? -EMSGSIZE : -EIO;
}

/* A broker that acknowledges nothing of what is in flight for
 * --stall-timeout shows the output down while librdkafka waits on it (its
 * own request timeout, socket.timeout.ms, is 60 s): a broker behind a
 * firewall that drops, or one that hangs, is not taken for a slow one. The
 * next report that delivers says "delivering again". */
static void check_stall(struct sink_kafka *k)
{
	uint64_t now = mono_ns();

	if (!k->in_flight || now - k->progress_ns <= k->stall_ns || sink_is_down(&k->base))
		return;
	sink_set_down(&k->base, true);
	pr_warn("%s: %llu message(s) in flight and none acknowledged for --stall-timeout %llu ms; "
		"shown down (syslogrx_output_up 0) while librdkafka waits and retries\n",
		k->base.name, (unsigned long long)k->in_flight,
		(unsigned long long)(k->stall_ns / 1000000));
}

static int kafka_poll(struct sink *s, int timeout_ms)
{
	struct sink_kafka *k = (struct sink_kafka *)s;
	int served = rd_kafka_poll(k->rk, timeout_ms);

	check_stall(k);
	return served;
}

static uint64_t kafka_drain(struct sink *s)
{
	struct sink_kafka *k = (struct sink_kafka *)s;
	uint64_t deadline = (mono_ns() / 1000000) + (uint64_t)(k->drain_timeout * 1000);
	uint64_t left;

	while (k->in_flight && (mono_ns() / 1000000) < deadline && !sink_aborted(s))
		rd_kafka_poll(k->rk, 50);
	if (!k->in_flight)
		return 0;
	left = k->in_flight;
	sink_say_unacknowledged(s, left, "message(s)", k->drain_timeout);
	/* Purged messages come back through on_delivery as undelivered, which
	 * completes their batches in the output stage. */
	k->purging = true;
	rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
	deadline = (mono_ns() / 1000000) + PURGE_WAIT_MS;
	while (k->in_flight && (mono_ns() / 1000000) < deadline)
		rd_kafka_poll(k->rk, 20);
	/* Anything still without a report is given up all the same; it stays
	 * visible as in_flight too. */
	BUMP(k->undelivered, k->in_flight);
	return k->in_flight;
}

static void kafka_close(struct sink *s)
{
	struct sink_kafka *k = (struct sink_kafka *)s;

	if (k->rk) {
		/* Never drained (an error at start): nothing to wait for. */
		if (k->in_flight)
			rd_kafka_purge(k->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		if (k->rkt)
			rd_kafka_topic_destroy(k->rkt);
		rd_kafka_destroy(k->rk);
	}
	free(k);
}

static const struct sink_ops kafka_ops = {
	.write = kafka_write,
	.reopen = kafka_reopen,
	.close = kafka_close,
	.produce = kafka_produce,
	.poll = kafka_poll,
	.drain = kafka_drain,
};

static int conf_set(rd_kafka_conf_t *conf, const char *key, const char *val, const char *flag)
{
	char errstr[512];

	if (rd_kafka_conf_set(conf, key, val, errstr, sizeof(errstr)) == RD_KAFKA_CONF_OK)
		return 0;
	/* sasl.password, ssl.key.password, *.client.secret ...: never shown */
	if (strstr(key, "password") || strstr(key, "secret") || strstr(key, "key") ||
	    strstr(key, "token"))
		val = REDACTED;
	if (flag)
		pr_warn("%s %s=%s: %s\n", flag, key, val, errstr);
	else
		pr_warn("kafka: default %s=%s: %s\n", key, val, errstr);
	return -EINVAL;
}

/* Our defaults, then every --kafka-opt in order (they win). */
static int build_conf(rd_kafka_conf_t *conf, const struct config *c)
{
	uint64_t qmsgs = c->window + c->batch;
	char num[32];
	int err;

	/* The window bounds what is outstanding: a producer queue as large
	 * never reports QUEUE_FULL in a steady state. */
	if (qmsgs > RDK_MAX_QUEUE_MSGS)
		qmsgs = RDK_MAX_QUEUE_MSGS;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)qmsgs);
	const char *defaults[][2] = {
		{ "bootstrap.servers", c->kafka.brokers },
		{ "client.id", "syslogrx" },
		{ "acks", "all" },
		{ "enable.idempotence", "true" },
		{ "linger.ms", "5" },
		{ "message.timeout.ms", "0" }, /* transient errors: retry for ever */
		{ "queue.buffering.max.messages", num },
		{ "reconnect.backoff.max.ms", "1000" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(defaults); i++) {
		err = conf_set(conf, defaults[i][0], defaults[i][1], NULL);
		if (err)
			return err;
	}
	for (unsigned int i = 0; i < c->kafka.nr_opts; i++) {
		char kv[CONFIG_KAFKA_OPT_LEN], *eq;

		snprintf(kv, sizeof(kv), "%s", c->kafka.opts[i]);
		eq = strchr(kv, '='); /* output_kafka.c checked there is one */
		if (!eq)
			return -EINVAL;
		*eq = '\0';
		err = conf_set(conf, kv, eq + 1, "--kafka-opt");
		if (err)
			return err;
	}
	return 0;
}

/*
 * The topic must exist (or be auto-created) where a broker answers. No
 * broker answering is not an error: librdkafka keeps trying, produce()
 * queues up to the window meanwhile (-EAGAIN past it), and the first
 * delivery says "delivering again". -EAGAIN for that, 0, or a refusal.
 */
static int check_metadata(struct sink_kafka *k, const struct config *c)
{
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_resp_err_t err;
	int ret = 0;

	err = rd_kafka_metadata(k->rk, 0, k->rkt, &md, METADATA_TIMEOUT_MS);
	if (err) {
		sink_set_down(&k->base, true);
		/* on_error says the same thing again otherwise */
		k->last_error = RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
		pr_warn("--output kafka:%s/%s: no broker of %s answered within %d s (%s); starting "
			"anyway: librdkafka retries with backoff (up to 1 s), %s what arrives "
			"meanwhile\n",
			k->brokers, k->topic, k->brokers, METADATA_TIMEOUT_MS / 1000,
			rd_kafka_err2str(err),
			c->disk_buffer[0] ? "the input window and the disk buffer hold" :
					    "the input window holds");
		return -EAGAIN;
	}
	if (md->topic_cnt < 1) {
		ret = -ENOENT;
	} else {
		err = md->topics[0].err;
		/* LEADER_NOT_AVAILABLE: being auto-created; librdkafka waits. */
		if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
			ret = -ENOENT;
		else if (err && err != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
			ret = -EIO;
	}
	if (ret == -ENOENT)
		pr_warn("--output kafka:%s/%s: topic '%s' does not exist on broker(s) %s "
			"(and is not created automatically there)\n",
			k->brokers, k->topic, k->topic, k->brokers);
	else if (ret)
		pr_warn("--output kafka:%s/%s: topic '%s' on broker(s) %s: %s\n", k->brokers,
			k->topic, k->topic, k->brokers, rd_kafka_err2str(err));
	rd_kafka_metadata_destroy(md);
	return ret;
}

struct sink *sink_kafka_open(const struct config *c)
{
	struct sink_kafka *k = calloc(1, sizeof(*k));
	rd_kafka_conf_t *conf = NULL;
	char errstr[512];
	int err;

	if (!k)
		return NULL;
	k->base.ops = &kafka_ops;
	snprintf(k->brokers, sizeof(k->brokers), "%s", c->kafka.brokers);
	snprintf(k->topic, sizeof(k->topic), "%s", c->kafka.topic);
	snprintf(k->base.name, sizeof(k->base.name), "kafka:%s", c->output_arg);
	k->drain_timeout = c->drain_timeout;
	k->stall_ns = (uint64_t)(c->stall_timeout * 1e9);
	k->base.key = c->kafka.key;

	conf = rd_kafka_conf_new();
	if (!conf) {
		err = -ENOMEM;
		goto fail;
	}
	err = build_conf(conf, c);
	if (err)
		goto fail;
	rd_kafka_conf_set_opaque(conf, k);
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_error_cb(conf, on_error);
	rd_kafka_conf_set_log_cb(conf, on_log);
	k->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (!k->rk) {
		/* Usually a --kafka-opt combination librdkafka rejects. */
		pr_warn("--output kafka:%s: %s\n", c->output_arg, errstr);
		err = -EINVAL;
		goto fail;
	}
	conf = NULL; /* owned by k->rk now */
	k->rkt = rd_kafka_topic_new(k->rk, k->topic, NULL);
	if (!k->rkt) {
		err = -EINVAL;
		pr_warn("--output kafka:%s: topic: %s\n", c->output_arg,
			rd_kafka_err2str(rd_kafka_last_error()));
		goto fail;
	}
	err = check_metadata(k, c);
	if (err && err != -EAGAIN)
		goto fail;
	pr_info("kafka: producing to topic %s on %s\n", k->topic, k->brokers);
	return &k->base;
fail:
	if (conf)
		rd_kafka_conf_destroy(conf);
	kafka_close(&k->base);
	errno = -err;
	return NULL;
}

int sink_kafka_stats(struct sink *s, struct sink_kafka_stats *out)
{
	struct sink_kafka *k = (struct sink_kafka *)s;
	uint64_t other;

	if (!s || s->ops != &kafka_ops)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->brokers = k->brokers;
	out->topic = k->topic;
	out->delivered = __atomic_load_n(&k->delivered, __ATOMIC_RELAXED);
	out->failed = __atomic_load_n(&k->failed, __ATOMIC_RELAXED);
	out->in_flight = __atomic_load_n(&k->in_flight, __ATOMIC_RELAXED);
	out->undelivered = __atomic_load_n(&k->undelivered, __ATOMIC_RELAXED);
	out->nr_reasons = __atomic_load_n(&k->nr_reasons, __ATOMIC_ACQUIRE);
	for (unsigned int i = 0; i < out->nr_reasons; i++) {
		out->reasons[i].name = rd_kafka_err2name(k->reasons[i].err);
		out->reasons[i].count = __atomic_load_n(&k->reasons[i].count, __ATOMIC_RELAXED);
	}
	other = __atomic_load_n(&k->other_reasons, __ATOMIC_RELAXED);
	if (other) {
		out->reasons[out->nr_reasons].name = "OTHER";
		out->reasons[out->nr_reasons++].count = other;
	}
	return 0;
}
