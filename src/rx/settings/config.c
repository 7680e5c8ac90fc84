// SPDX-License-Identifier: MIT
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/array.h"
#include "common/redact.h"
#include "net/balancer.h"
#include "rx/settings/config.h"
#include "rx/settings/config_file.h"
#include "rx/settings/header_file.h"
#include "common/parse_num.h"
#include "net/http_metrics.h"

const char *argp_program_version = "syslogrx 0.1";
const char *argp_program_bug_address = "the project's issue tracker";

static const char doc[] =
	"syslogrx: a UDP syslog receiver that does not lose messages silently.\n"
	"\n"
	"N SO_REUSEPORT sockets on one port, an SK_REUSEPORT eBPF program spreading\n"
	"datagrams across them, worker threads draining them with recvmmsg, and a\n"
	"tracer counting every kernel drop per socket and per reason.\n"
	"With no privilege: random by classic BPF, drops per socket from SO_MEMINFO.\n"
	"\n"
	"EXAMPLES:\n"
	"    syslogrx --listen 127.0.0.1:5514 --sockets 8 --threads 2 --balance random\n"
	"    syslogrx --listen [::1]:5514 --rcvbuf 32M --output file:/var/log/rx.log \\\n"
	"             --summary /tmp/summary.json --duration 60\n"
	"    syslogrx --listen 0.0.0.0:514 --balance hash   # no BPF: the kernel's hash\n"
	"    syslogrx --output kafka:10.0.0.5:9092,10.0.0.6:9092/syslog --format json \\\n"
	"             --kafka-key source --kafka-opt compression.type=lz4";

enum {
	OPT_LISTEN = 'l',
	OPT_SOCKETS = 'n',
	OPT_THREADS = 't',
	OPT_BALANCE = 'b',
	OPT_OUTPUT = 'o',
	OPT_DURATION = 'd',
	OPT_VERBOSE = 'v',
	OPT_RCVBUF = 256,
	OPT_BATCH,
	OPT_FORMAT,
	OPT_SUMMARY,
	OPT_COST,
	OPT_COST_MAKEUP,
	OPT_WINDOW,
	OPT_WINDOW_BYTES,
	OPT_OUTPUT_RATE,
	OPT_NO_TRACE,
	OPT_STATS_INTERVAL,
	OPT_KAFKA_KEY,
	OPT_KAFKA_OPT,
	OPT_DRAIN_TIMEOUT,
	OPT_MAX_SOCKETS,
	OPT_SHRINK_NAIVE,
	OPT_SUPERVISE,
	OPT_METRICS, /* the Prometheus endpoint */
	OPT_USER = 400,
	OPT_ORDERED = 600, /* ordering by arrival stamp */
	OPT_DISK_BUFFER = 700,
	OPT_DISK_BUFFER_SIZE,
	OPT_DISK_BUFFER_MODE,
	OPT_DISK_BUFFER_SYNC,
	OPT_SENDERS = 800, /* per-sender accounting */
	OPT_SENDERS_TOP,
	OPT_SEQUENCES = 850, /* input: sequence accounting, control bytes */
	OPT_SEQUENCE_FLOWS,
	OPT_SEQUENCE_JUMP,
	OPT_NO_ESCAPE_CONTROL,
	OPT_JSON_RAW,
	OPT_OTLP_COMPRESSION = 900, /* the OTLP output, then --timezone */
	OPT_OTLP_ENCODING,
	OPT_OTLP_CA,
	OPT_OTLP_CERT,
	OPT_OTLP_KEY,
	OPT_OTLP_HEADER,
	OPT_OTLP_HEADER_FILE,
	OPT_TIMEZONE,
	OPT_OTLP_ORIGINAL = 950, /* the datagram as it came, in OTLP */
	OPT_TLS_CA = 960,	 /* the tls output */
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_TLS_NAME,
	OPT_HEALTH = 980, /* the health endpoints */
};

/* Files of settings (--config, --env-file); their own range, so flags added above never collide. */
enum { OPT_CONFIG = 1024, OPT_ENV_FILE, OPT_KEY_MAX };

static const struct argp_option options[] = {
	{ "listen", OPT_LISTEN, "[NAME=]ADDR:PORT", 0,
	  "Address to receive on (default 127.0.0.1:5514); repeat it for several listeners, each its own group of --sockets; NAME (default: the PORT) is in every record" },
	{ "sockets", OPT_SOCKETS, "N", 0, "SO_REUSEPORT sockets in the group (default 4)" },
	{ "threads", OPT_THREADS, "M", 0,
	  "Worker threads, M <= N; each owns N/M sockets (default 2, or N if less)" },
	{ "max-sockets", OPT_MAX_SOCKETS, "N", 0,
	  "Sockets bound at start for a live resize to grow into (default --sockets)" },
	{ "shrink-naive", OPT_SHRINK_NAIVE, NULL, 0,
	  "Lab knob: a live shrink closes sockets with what is queued, losing datagrams on purpose (the negative control)" },
	{ "supervise", OPT_SUPERVISE, NULL, 0,
	  "Hold the sockets in a supervisor that replaces a receiver that dies" },
	{ "balance", OPT_BALANCE, "POLICY", 0,
	  "random | roundrobin | leastloaded | hash (default random; without CAP_BPF random is classic BPF)" },
	{ "rcvbuf", OPT_RCVBUF, "BYTES", 0,
	  "Kernel receive buffer per socket, K/M/G suffixes (default: kernel's)" },
	{ "batch", OPT_BATCH, "N", 0, "recvmmsg batch, the fetch limit (default 64)" },
	{ "output", OPT_OUTPUT, "DEST", 0,
	  "null | stdout | file:PATH | tcp:HOST:PORT | tls:HOST:PORT | kafka:HOST:PORT[,HOST:PORT...]/TOPIC | otlp:http[s]://HOST:PORT[/PATH] (default stdout)" },
	{ "format", OPT_FORMAT, "FMT", 0, "raw | json | rfc5424 (default raw)" },
	{ "summary", OPT_SUMMARY, "PATH", 0, "Write the JSON summary here at exit" },
	{ "duration", OPT_DURATION, "SECONDS", 0, "Exit by itself after this long" },
	{ "cost-ns", OPT_COST, "N[,N...]", 0,
	  "Lab knob: CPU nanoseconds each worker spends per message; one value for all threads or one per thread" },
	{ "cost-makeup", OPT_COST_MAKEUP, NULL, 0,
	  "Lab knob: with --cost-ns, time a worker lost to preemption while a backlog waited is made up (1e9/N msgs/s when busy)" },
	{ "window", OPT_WINDOW, "N", 0, "Input window in messages (default 10000)" },
	{ "window-bytes", OPT_WINDOW_BYTES, "BYTES", 0,
	  "Input window in bytes, K/M/G (default 64M)" },
	{ "output-rate", OPT_OUTPUT_RATE, "N", 0, "Lab knob: cap the output at N msgs/s" },
	{ "no-trace", OPT_NO_TRACE, NULL, 0, "Do not count kernel drops" },
	{ "stats-interval", OPT_STATS_INTERVAL, "SECONDS", 0,
	  "Print per-socket stats every S seconds" },
	{ "kafka-key", OPT_KAFKA_KEY, "KEY", 0,
	  "Kafka record key (picks the partition): none | source | hostname | app (default none)" },
	{ "kafka-opt", OPT_KAFKA_OPT, "KEY=VALUE", 0,
	  "librdkafka producer property, repeatable (e.g. acks=1, compression.type=lz4)" },
	{ "drain-timeout", OPT_DRAIN_TIMEOUT, "SECONDS", 0,
	  "At exit, wait this long for outstanding Kafka or OTLP deliveries (default 10)" },
	{ "otlp-compression", OPT_OTLP_COMPRESSION, "ALGO", 0,
	  "otlp output: gzip | none (default gzip)" },
	{ "otlp-encoding", OPT_OTLP_ENCODING, "ENC", 0,
	  "otlp output: protobuf | json (default protobuf)" },
	{ "otlp-ca", OPT_OTLP_CA, "FILE", 0,
	  "otlp output: CA certificates (PEM) to verify the collector" },
	{ "otlp-cert", OPT_OTLP_CERT, "FILE", 0,
	  "otlp output: client certificate (PEM), with --otlp-key" },
	{ "otlp-key", OPT_OTLP_KEY, "FILE", 0,
	  "otlp output: client private key (PEM), with --otlp-cert" },
	{ "tls-ca", OPT_TLS_CA, "FILE", 0,
	  "tls output: CA certificates (PEM) to verify the server (default: the system's)" },
	{ "tls-cert", OPT_TLS_CERT, "FILE", 0,
	  "tls output: client certificate (PEM), with --tls-key" },
	{ "tls-key", OPT_TLS_KEY, "FILE", 0,
	  "tls output: client private key (PEM), with --tls-cert" },
	{ "tls-name", OPT_TLS_NAME, "NAME", 0,
	  "tls output: the name the server's certificate must hold (default: HOST of tls:HOST:PORT)" },
	{ "otlp-header", OPT_OTLP_HEADER, "KEY=VALUE", 0,
	  "otlp output: an HTTP header on every request, repeatable (e.g. Content-Language=en; a secret: --otlp-header-file)" },
	{ "otlp-header-file", OPT_OTLP_HEADER_FILE, "FILE", 0,
	  "otlp output: HTTP headers from FILE, one KEY=VALUE a line; FILE not a symlink, not group/world writable" },
	{ "otlp-original", OPT_OTLP_ORIGINAL, NULL, 0,
	  "otlp output: the body is the datagram as it came (what Splunk's HEC exporter makes _raw), not MSG" },
	{ "timezone", OPT_TIMEZONE, "ZONE", 0,
	  "Zone of RFC 3164 stamps without one, for the normalised time: UTC | +HH:MM | -HH:MM | an IANA name (default UTC)" },
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0,
	  "Serve Prometheus metrics at http://ADDR:PORT/metrics (a port alone: 127.0.0.1); /healthz and /readyz too" },
	{ "health", OPT_HEALTH, "ADDR:PORT", 0,
	  "Serve only /healthz and /readyz at http://ADDR:PORT (a port alone: 127.0.0.1), e.g. without --metrics" },
	{ "ordered", OPT_ORDERED, "MS", OPTION_ARG_OPTIONAL,
	  "Write each flow in the order the kernel received it, holding a message at most MS ms for late batches (default 5)" },
	{ "disk-buffer", OPT_DISK_BUFFER, "DIR", 0,
	  "tcp/kafka output: buffer batches in segment files in DIR (see --disk-buffer-mode)" },
	{ "disk-buffer-size", OPT_DISK_BUFFER_SIZE, "BYTES", 0,
	  "Cap on DIR's segment files, K/M/G (default 1G); past it new batches are dropped and counted" },
	{ "disk-buffer-mode", OPT_DISK_BUFFER_MODE, "MODE", 0,
	  "spill: what does not fit the window; reliable: every batch before the output (default spill)" },
	{ "disk-buffer-sync", OPT_DISK_BUFFER_SYNC, "MS", 0,
	  "fdatasync the disk buffer at most every MS ms; 0 = after every batch (default 1000)" },
	{ "senders", OPT_SENDERS, "N", 0,
	  "Count received and dropped per source address in tables of N senders (LRU in the kernel, one per worker); 0 = off (default 4096)" },
	{ "senders-top", OPT_SENDERS_TOP, "N", 0,
	  "Senders by drops shown in the summary and /metrics; the rest are one total (default 20)" },
	{ "no-escape-control", OPT_NO_ESCAPE_CONTROL, NULL, 0,
	  "raw/rfc5424: write control bytes (ESC, tab, DEL...) as received, not as rsyslog's #033" },
	{ "json-raw", OPT_JSON_RAW, NULL, 0,
	  "json: write the whole datagram as \"raw\" for every message (default: only when malformed; msg has the text)" },
	{ "sequences", OPT_SEQUENCES, NULL, 0,
	  "Lab knob: count sysloggen/loggen sequence markers into the summary's loss section (off: no marker is read)" },
	{ "sequence-flows", OPT_SEQUENCE_FLOWS, "N", 0,
	  "With --sequences: most flows tracked (default 1024); later flows' messages are counted as untracked" },
	{ "sequence-jump", OPT_SEQUENCE_JUMP, "N", 0,
	  "With --sequences: a marker more than N past its flow's highest number is not believed (default 1048576)" },
	{ "verbose", OPT_VERBOSE, NULL, 0, "Verbose output, with libbpf's debug log" },
	{ "user", OPT_USER, "USER", 0,
	  "Once the sockets are bound and BPF loaded, run as USER with no capabilities" },
	{ "config", OPT_CONFIG, "PATH", 0,
	  "Settings file: `name = value` per line, long flag names; flags given here win" },
	{ "env-file", OPT_ENV_FILE, "PATH", 0,
	  "SC4S's env_file: its UDP settings mapped onto these flags (below --config)" },
	{},
};

/* Where a setting came from, in precedence order. */
enum layer { LAYER_DEFAULT, LAYER_ENV, LAYER_CONFIG, LAYER_CMDLINE };

struct parse_state {
	struct config *c;
	char *err;
	size_t errlen;
	enum layer layer;		   /* being applied */
	bool final;			   /* the last pass: check the whole */
	unsigned char set_by[OPT_KEY_MAX]; /* enum layer that last set each key */
};

static void config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen, sizeof(c->listen), "127.0.0.1:5514");
	snprintf(c->listeners[0].addr, sizeof(c->listeners[0].addr), "%s", c->listen);
	c->nr_listeners = 1;
	c->sockets = 4;
	c->threads = 0; /* not given: 2, or --sockets if fewer (ARGP_KEY_END) */
	c->balance = BALANCE_RANDOM;
	c->batch = 64;
	c->output = OUTPUT_STDOUT; /* someone who starts it and sends a message sees it */
	c->format = FORMAT_RAW;
	c->window = 10000;
	c->window_bytes = 64ULL << 20;
	c->trace = true;
	c->kafka_key = KAFKA_KEY_NONE;
	c->drain_timeout = 10.0;
	c->otlp_gzip = true;
	snprintf(c->timezone, sizeof(c->timezone), "UTC");
	c->nr_cost_ns = 1;
	c->disk_buffer_size = 1ULL << 30;
	c->disk_buffer_sync_ms = 1000;
	c->senders = CONFIG_SENDERS_DEFAULT;
	c->senders_top = CONFIG_SENDERS_TOP_DEFAULT;
	c->escape_control = true;
	c->sequence_flows = SEQTRACK_DEF_FLOWS_MAX;
	c->sequence_jump = SEQTRACK_DEF_JUMP_MAX;
}

static int parse_output(struct config *c, const char *arg)
{
	static const struct {
		const char *prefix;
		enum output_kind kind;
		bool has_arg;
	} kinds[] = {
		{ "null", OUTPUT_NULL, false },	  { "stdout", OUTPUT_STDOUT, false },
		{ "file:", OUTPUT_FILE, true },	  { "tcp:", OUTPUT_TCP, true },
		{ "kafka:", OUTPUT_KAFKA, true }, { "otlp:", OUTPUT_OTLP, true },
		{ "tls:", OUTPUT_TLS, true },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(kinds); i++) {
		size_t pl = strlen(kinds[i].prefix);

		if (kinds[i].has_arg ? strncmp(arg, kinds[i].prefix, pl) :
				       strcmp(arg, kinds[i].prefix))
			continue;
		if (kinds[i].has_arg && (!arg[pl] || strlen(arg + pl) >= sizeof(c->output_arg)))
			return -EINVAL;
		c->output = kinds[i].kind;
		snprintf(c->output_arg, sizeof(c->output_arg), "%s",
			 kinds[i].has_arg ? arg + pl : "");
		return 0;
	}
	return -EINVAL;
}

/* otlp:http[s]://HOST:PORT[/PATH]; without a path, OTLP/HTTP's /v1/logs. */
static int parse_otlp_url(struct config *c)
{
	const char *u = c->output_arg, *host, *slash;
	size_t hl;

	if (!strncmp(u, "http://", 7))
		host = u + 7;
	else if (!strncmp(u, "https://", 8))
		host = u + 8;
	else
		return -EINVAL;
	slash = strchr(host, '/');
	hl = slash ? (size_t)(slash - host) : strlen(host);
	if (!hl || !memchr(host, ':', hl))
		return -EINVAL;
	if ((!slash || !slash[1]) && strlen(u) + sizeof("/v1/logs") > sizeof(c->output_arg))
		return -EINVAL;
	if (!slash)
		strcat(c->output_arg, "/v1/logs");
	else if (!slash[1])
		strcat(c->output_arg, "v1/logs");
	return 0;
}

/* --timezone: UTC, +HH:MM / -HH:MM, or a zone in the system's tz database. */
static int parse_timezone(struct config *c, const char *arg)
{
	char path[PATH_MAX];
	unsigned int hh, mm;
	char sign, end;

	if (strlen(arg) >= sizeof(c->timezone))
		return -EINVAL;
	snprintf(c->timezone, sizeof(c->timezone), "%s", arg);
	if (!strcmp(arg, "UTC") || !strcmp(arg, "Z")) {
		c->tz_kind = TZ_UTC;
		return 0;
	}
	if (sscanf(arg, "%c%2u:%2u%c", &sign, &hh, &mm, &end) == 3 &&
	    (sign == '+' || sign == '-') && hh <= 14 && mm < 60 && strlen(arg) == 6) {
		c->tz_kind = TZ_FIXED;
		c->tz_offset = (sign == '-' ? -1 : 1) * (long)(hh * 3600 + mm * 60);
		return 0;
	}
	if (arg[0] == '/' || strstr(arg, ".."))
		return -EINVAL;
	snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", arg);
	if (access(path, R_OK))
		return -ENOENT;
	c->tz_kind = TZ_NAMED;
	return 0;
}

/* One HOST:PORT of a broker list: a host (or [v6]) and a port 1..65535. */
static bool valid_broker(const char *b, size_t len)
{
	const char *colon = memrchr(b, ':', len);
	char port[8];
	uint64_t v;
	size_t pl;

	if (!colon || colon == b)
		return false;
	pl = b + len - colon - 1;
	if (!pl || pl >= sizeof(port))
		return false;
	memcpy(port, colon + 1, pl);
	port[pl] = '\0';
	return !parse_u64(port, 1, 65535, &v);
}

/* Kafka's topic rule: 1..249 of [a-zA-Z0-9._-], not "." or "..". */
static bool valid_topic(const char *t)
{
	size_t len = strlen(t);

	if (!len || len > CONFIG_KAFKA_TOPIC_MAX || !strcmp(t, ".") || !strcmp(t, ".."))
		return false;
	for (const char *p = t; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
			return false;
	return true;
}

/* output_arg "BROKERS/TOPIC" -> kafka_brokers, kafka_topic. The last '/'
 * splits them: topics cannot contain one. */
static int parse_kafka_dest(struct config *c)
{
	const char *slash = strrchr(c->output_arg, '/');
	const char *b, *end;

	if (!slash || slash == c->output_arg || !valid_topic(slash + 1))
		return -EINVAL;
	for (b = c->output_arg; b < slash; b = end + 1) {
		end = memchr(b, ',', slash - b);
		if (!end)
			end = slash;
		if (!valid_broker(b, end - b))
			return -EINVAL;
	}
	snprintf(c->kafka_brokers, sizeof(c->kafka_brokers), "%.*s", (int)(slash - c->output_arg),
		 c->output_arg);
	snprintf(c->kafka_topic, sizeof(c->kafka_topic), "%s", slash + 1);
	return 0;
}

static int parse_kafka_key(const char *arg, enum kafka_key *out)
{
	static const char *const names[] = {
		[KAFKA_KEY_NONE] = "none",
		[KAFKA_KEY_SOURCE] = "source",
		[KAFKA_KEY_HOSTNAME] = "hostname",
		[KAFKA_KEY_APP] = "app",
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* "N" or "N,N,...": at most CONFIG_MAX_COST_NS values; the count is checked
 * against --threads once every flag is read. */
static int parse_cost_ns(struct config *c, const char *arg)
{
	char buf[32];
	unsigned int n = 0;

	for (const char *p = arg, *end;; p = end + 1) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (n == CONFIG_MAX_COST_NS || end - p >= (ptrdiff_t)sizeof(buf))
			return -EINVAL;
		memcpy(buf, p, end - p);
		buf[end - p] = '\0';
		if (parse_u64(buf, 0, 1000000000ULL, &c->cost_ns[n]))
			return -EINVAL;
		n++;
		if (!*end)
			break;
	}
	c->nr_cost_ns = n;
	return 0;
}

/* One KEY=VALUE header, from a flag or a --otlp-header-file line (where
 * names it). An error never shows the value: it is a secret as often as
 * not (Authorization=Bearer ...). */
static int add_otlp_header(struct config *c, const char *kv, const char *where, char *err,
			   size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char shown[64];

	if (c->otlp_nr_headers >= CONFIG_MAX_OTLP_HEADERS) {
		snprintf(err, errlen, "%s: at most %d headers", where, CONFIG_MAX_OTLP_HEADERS);
		return -EINVAL;
	}
	if (!eq || eq == kv || strlen(kv) >= CONFIG_OTLP_HEADER_LEN || memchr(kv, ':', eq - kv) ||
	    memchr(kv, ' ', eq - kv)) {
		snprintf(err, errlen,
			 "%s %s: expected KEY=VALUE (shorter than %d bytes, no ':' in KEY)", where,
			 eq && eq - kv < 48 ? redact_header(shown, sizeof(shown), kv) : REDACTED,
			 CONFIG_OTLP_HEADER_LEN);
		return -EINVAL;
	}
	if (strpbrk(kv, "\r\n")) {
		snprintf(err, errlen, "%s: a header cannot hold a line break", where);
		return -EINVAL;
	}
	snprintf(c->otlp_headers[c->otlp_nr_headers++], CONFIG_OTLP_HEADER_LEN, "%s", kv);
	return 0;
}

static int add_header_line(const char *kv, const char *where, void *ctx, char *err, size_t errlen)
{
	return add_otlp_header(ctx, kv, where, err, errlen);
}

#define FAIL(...)                                           \
	do {                                                \
		snprintf(ps->err, ps->errlen, __VA_ARGS__); \
		return EINVAL;                              \
	} while (0)

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct parse_state *ps = state->input;
	struct config *c = ps->c;
	char shown[sizeof(c->output_arg)];
	uint64_t v;

	switch (key) {
	case OPT_LISTEN: {
		struct listener_spec spec;
		char why[160];

		if (listener_spec_parse(arg, &spec, why, sizeof(why)))
			FAIL("--listen %s: %s", arg, why);
		/* A layer's listeners replace a lower layer's (or the default)
		 * as a whole; within one layer they add up. */
		if (ps->set_by[OPT_LISTEN] != ps->layer)
			c->nr_listeners = 0;
		if (c->nr_listeners == CONFIG_MAX_LISTENERS)
			FAIL("--listen %s: at most %d listeners", arg, CONFIG_MAX_LISTENERS);
		c->listeners[c->nr_listeners++] = spec;
		snprintf(c->listen, sizeof(c->listen), "%s", c->listeners[0].addr);
		break;
	}
	case OPT_SOCKETS:
		if (parse_u64(arg, 1, CONFIG_MAX_SOCKETS, &v))
			FAIL("--sockets %s: expected a number from 1 to %d", arg,
			     CONFIG_MAX_SOCKETS);
		c->sockets = v;
		break;
	case OPT_THREADS:
		if (parse_u64(arg, 1, CONFIG_MAX_SOCKETS, &v))
			FAIL("--threads %s: expected a number from 1 to %d", arg,
			     CONFIG_MAX_SOCKETS);
		c->threads = v;
		break;
	case OPT_MAX_SOCKETS:
		if (parse_u64(arg, 1, CONFIG_MAX_SOCKETS, &v))
			FAIL("--max-sockets %s: expected a number from 1 to %d", arg,
			     CONFIG_MAX_SOCKETS);
		c->max_sockets = v;
		break;
	case OPT_SHRINK_NAIVE:
		c->shrink_naive = true;
		break;
	case OPT_SUPERVISE:
		c->supervise = true;
		break;
	case OPT_BALANCE:
		if (balance_policy_from_name(arg, &c->balance))
			FAIL("--balance %s: expected random, roundrobin, leastloaded or hash", arg);
		break;
	case OPT_RCVBUF:
		if (parse_size(arg, 1, 1ULL << 30, &c->rcvbuf))
			FAIL("--rcvbuf %s: expected bytes from 1 to 1G, with an optional K/M/G suffix",
			     arg);
		break;
	case OPT_BATCH:
		if (parse_u64(arg, 1, CONFIG_MAX_BATCH, &v))
			FAIL("--batch %s: expected a number from 1 to %d", arg, CONFIG_MAX_BATCH);
		c->batch = v;
		break;
	case OPT_OUTPUT:
		if (parse_output(c, arg))
			FAIL("--output %s: expected null, stdout, file:PATH, tcp:HOST:PORT, "
			     "kafka:HOST:PORT[,HOST:PORT...]/TOPIC or otlp:http[s]://HOST:PORT[/PATH]",
			     redact_url(shown, sizeof(shown), arg));
		if (c->output == OUTPUT_OTLP && parse_otlp_url(c))
			FAIL("--output %s: expected otlp:http://HOST:PORT[/PATH] or "
			     "otlp:https://HOST:PORT[/PATH]",
			     redact_url(shown, sizeof(shown), arg));
		if (c->output == OUTPUT_KAFKA && parse_kafka_dest(c))
			FAIL("--output %s: expected kafka:HOST:PORT[,HOST:PORT...]/TOPIC "
			     "(topic: 1-249 of a-z A-Z 0-9 . _ -)",
			     arg);
		break;
	case OPT_KAFKA_KEY:
		if (parse_kafka_key(arg, &c->kafka_key))
			FAIL("--kafka-key %s: expected none, source, hostname or app", arg);
		break;
	case OPT_KAFKA_OPT:
		if (c->kafka_nr_opts >= CONFIG_MAX_KAFKA_OPTS)
			FAIL("--kafka-opt %s: at most %d --kafka-opt flags",
			     redact_header(shown, sizeof(shown), arg), CONFIG_MAX_KAFKA_OPTS);
		if (!strchr(arg, '=') || arg[0] == '=' || strlen(arg) >= CONFIG_KAFKA_OPT_LEN)
			FAIL("--kafka-opt %s: expected KEY=VALUE (shorter than %d bytes)",
			     strlen(arg) < 64 ? redact_header(shown, sizeof(shown), arg) : REDACTED,
			     CONFIG_KAFKA_OPT_LEN);
		snprintf(c->kafka_opts[c->kafka_nr_opts++], CONFIG_KAFKA_OPT_LEN, "%s", arg);
		break;
	case OPT_DRAIN_TIMEOUT:
		if (parse_seconds(arg, 0, 3600.0, &c->drain_timeout))
			FAIL("--drain-timeout %s: expected seconds from 0 to 3600", arg);
		break;
	case OPT_OTLP_COMPRESSION:
		if (strcmp(arg, "gzip") && strcmp(arg, "none"))
			FAIL("--otlp-compression %s: expected gzip or none", arg);
		c->otlp_gzip = !strcmp(arg, "gzip");
		break;
	case OPT_OTLP_ENCODING:
		if (strcmp(arg, "protobuf") && strcmp(arg, "json"))
			FAIL("--otlp-encoding %s: expected protobuf or json", arg);
		c->otlp_json = !strcmp(arg, "json");
		break;
	case OPT_OTLP_CA:
	case OPT_OTLP_CERT:
	case OPT_OTLP_KEY:
	case OPT_TLS_CA:
	case OPT_TLS_CERT:
	case OPT_TLS_KEY: {
		char *dst = key == OPT_OTLP_CA	 ? c->otlp_ca :
			    key == OPT_OTLP_CERT ? c->otlp_cert :
			    key == OPT_OTLP_KEY	 ? c->otlp_key :
			    key == OPT_TLS_CA	 ? c->tls_ca :
			    key == OPT_TLS_CERT	 ? c->tls_cert :
						   c->tls_key;
		const char *flag = key == OPT_OTLP_CA	? "--otlp-ca" :
				   key == OPT_OTLP_CERT ? "--otlp-cert" :
				   key == OPT_OTLP_KEY	? "--otlp-key" :
				   key == OPT_TLS_CA	? "--tls-ca" :
				   key == OPT_TLS_CERT	? "--tls-cert" :
							  "--tls-key";

		if (strlen(arg) >= PATH_MAX || access(arg, R_OK))
			FAIL("%s %s: cannot read it: %s", flag, arg,
			     strerror(errno ?: ENAMETOOLONG));
		snprintf(dst, PATH_MAX, "%s", arg);
		break;
	}
	case OPT_TLS_NAME: {
		bool ok = *arg && strlen(arg) < sizeof(c->tls_name);

		for (const char *p = arg; ok && *p; p++)
			ok = isalnum((unsigned char)*p) || strchr(".-_:*", *p);
		if (!ok)
			FAIL("--tls-name %s: expected a DNS name or an IP address (letters, digits, "
			     "'.', '-', '_', ':', '*'; under %zu bytes)",
			     arg, sizeof(c->tls_name));
		snprintf(c->tls_name, sizeof(c->tls_name), "%s", arg);
		break;
	}
	case OPT_OTLP_HEADER:
		if (add_otlp_header(c, arg, "--otlp-header", ps->err, ps->errlen))
			return EINVAL;
		break;
	case OPT_OTLP_HEADER_FILE:
		if (header_file_read(arg, add_header_line, c, ps->err, ps->errlen))
			return EINVAL;
		break;
	case OPT_OTLP_ORIGINAL:
		c->otlp_original = true;
		break;
	case OPT_TIMEZONE:
		if (parse_timezone(c, arg))
			FAIL("--timezone %s: expected UTC, +HH:MM, -HH:MM or a zone of "
			     "/usr/share/zoneinfo (e.g. Europe/Paris)",
			     arg);
		break;
	case OPT_FORMAT:
		if (format_from_name(arg, &c->format))
			FAIL("--format %s: expected raw, json or rfc5424", arg);
		break;
	case OPT_SUMMARY:
		if (!*arg || strlen(arg) >= sizeof(c->summary))
			FAIL("--summary %s: expected a file path", arg);
		snprintf(c->summary, sizeof(c->summary), "%s", arg);
		break;
	case OPT_DURATION:
		if (parse_seconds(arg, 0.001, 86400.0 * 365, &c->duration))
			FAIL("--duration %s: expected seconds, e.g. 10 or 0.5", arg);
		break;
	case OPT_COST:
		if (parse_cost_ns(c, arg))
			FAIL("--cost-ns %s: expected nanoseconds from 0 to 1000000000, one value or "
			     "up to %d separated by commas (one per thread)",
			     arg, CONFIG_MAX_COST_NS);
		break;
	case OPT_COST_MAKEUP:
		c->cost_makeup = true;
		break;
	case OPT_WINDOW:
		if (parse_u64(arg, 1, 100000000ULL, &c->window))
			FAIL("--window %s: expected messages from 1 to 100000000", arg);
		break;
	case OPT_WINDOW_BYTES:
		if (parse_size(arg, 65536, 64ULL << 30, &c->window_bytes))
			FAIL("--window-bytes %s: expected bytes from 64K to 64G, with an optional K/M/G suffix",
			     arg);
		break;
	case OPT_OUTPUT_RATE:
		if (parse_u64(arg, 0, 100000000ULL, &c->output_rate))
			FAIL("--output-rate %s: expected msgs/s from 0 (no cap) to 100000000", arg);
		break;
	case OPT_NO_TRACE:
		c->trace = false;
		break;
	case OPT_STATS_INTERVAL:
		if (parse_seconds(arg, 0.01, 86400.0, &c->stats_interval))
			FAIL("--stats-interval %s: expected seconds, e.g. 1 or 0.5", arg);
		break;
	case OPT_METRICS:
	case OPT_HEALTH: {
		struct sockaddr_storage addr;
		socklen_t len;
		bool m = key == OPT_METRICS;
		char *dst = m ? c->metrics : c->health;

		_Static_assert(sizeof(c->metrics) == sizeof(c->health), "one size for both");
		if (strlen(arg) >= sizeof(c->metrics) || http_metrics_parse(arg, &addr, &len))
			FAIL("--%s %s: expected PORT or ADDR:PORT, e.g. %s or 127.0.0.1:%s",
			     m ? "metrics" : "health", arg, m ? "9464" : "9465",
			     m ? "9464" : "9465");
		snprintf(dst, sizeof(c->metrics), "%s", arg);
		break;
	}
	case OPT_SENDERS:
		if (parse_u64(arg, 0, CONFIG_SENDERS_MAX, &v) || (v && v < 16))
			FAIL("--senders %s: expected 0 (off) or a number of senders from 16 to %u",
			     arg, CONFIG_SENDERS_MAX);
		c->senders = v;
		break;
	case OPT_SENDERS_TOP:
		if (parse_u64(arg, 1, CONFIG_SENDERS_TOP_MAX, &v))
			FAIL("--senders-top %s: expected a number from 1 to %d", arg,
			     CONFIG_SENDERS_TOP_MAX);
		c->senders_top = v;
		break;
	case OPT_VERBOSE:
		c->verbose = true;
		break;
	case OPT_USER:
		if (!*arg || strlen(arg) >= sizeof(c->user))
			FAIL("--user %s: expected a user name or number", arg);
		snprintf(c->user, sizeof(c->user), "%s", arg);
		break;
	case OPT_CONFIG:
		if (ps->layer != LAYER_CMDLINE)
			FAIL("--config %s: only on the command line", arg);
		if (!*arg || strlen(arg) >= sizeof(c->config_file))
			FAIL("--config %s: expected a file path", arg);
		snprintf(c->config_file, sizeof(c->config_file), "%s", arg);
		break;
	case OPT_ENV_FILE:
		if (ps->layer == LAYER_ENV)
			FAIL("--env-file %s: not inside an env file", arg);
		if (!*arg || strlen(arg) >= sizeof(c->env_file))
			FAIL("--env-file %s: expected a file path", arg);
		snprintf(c->env_file, sizeof(c->env_file), "%s", arg);
		break;
	case OPT_ORDERED:
		c->ordered = true;
		c->ordered_hold_ms = CONFIG_ORDERED_HOLD_MS;
		if (arg && parse_u64(arg, 1, 10000, &c->ordered_hold_ms))
			FAIL("--ordered=%s: expected a hold in milliseconds from 1 to 10000", arg);
		break;
	case OPT_DISK_BUFFER:
		if (!*arg || strlen(arg) >= sizeof(c->disk_buffer))
			FAIL("--disk-buffer %s: expected a directory path", arg);
		snprintf(c->disk_buffer, sizeof(c->disk_buffer), "%s", arg);
		break;
	case OPT_DISK_BUFFER_SIZE:
		if (parse_size(arg, 1ULL << 20, 1ULL << 50, &c->disk_buffer_size))
			FAIL("--disk-buffer-size %s: expected bytes from 1M, with an optional K/M/G suffix",
			     arg);
		break;
	case OPT_DISK_BUFFER_MODE:
		if (strcmp(arg, "spill") && strcmp(arg, "reliable"))
			FAIL("--disk-buffer-mode %s: expected spill or reliable", arg);
		c->disk_buffer_mode = !strcmp(arg, "reliable");
		break;
	case OPT_DISK_BUFFER_SYNC:
		if (parse_u64(arg, 0, 3600000, &v))
			FAIL("--disk-buffer-sync %s: expected milliseconds from 0 to 3600000", arg);
		c->disk_buffer_sync_ms = v;
		break;
	case OPT_SEQUENCES:
		c->sequences = true;
		break;
	case OPT_NO_ESCAPE_CONTROL:
		c->escape_control = false;
		break;
	case OPT_JSON_RAW:
		c->json_raw = true;
		break;
	case OPT_SEQUENCE_FLOWS:
		if (parse_u64(arg, 1, 1000000, &v))
			FAIL("--sequence-flows %s: expected flows from 1 to 1000000", arg);
		c->sequence_flows = v;
		break;
	case OPT_SEQUENCE_JUMP:
		if (parse_u64(arg, 1, 1ULL << 40, &v))
			FAIL("--sequence-jump %s: expected a number from 1 to 2^40", arg);
		c->sequence_jump = v;
		break;
	case ARGP_KEY_ARG:
		FAIL("unexpected argument '%s' (every setting is a --flag)", arg);
	case ARGP_KEY_END:
		/* Settings still to come from other layers may make it whole. */
		if (!ps->final)
			break;
		if (listener_specs_check(c->listeners, c->nr_listeners, ps->err, ps->errlen))
			return EINVAL;
		c->listener_names = listener_names_shown(c->listeners, c->nr_listeners);
		/* Each listener binds its own pool (--max-sockets) at start. */
		if (c->nr_listeners * (c->max_sockets > c->sockets ? c->max_sockets : c->sockets) >
		    CONFIG_MAX_SOCKETS)
			FAIL("--sockets %u (--max-sockets %u) for %u listeners: at most %d sockets "
			     "in all",
			     c->sockets, c->max_sockets, c->nr_listeners, CONFIG_MAX_SOCKETS);
		if (!c->threads)
			c->threads = c->sockets < 2 ? c->sockets : 2;
		if (c->threads > c->sockets)
			FAIL("--threads %u is more than --sockets %u: each thread owns at least one socket",
			     c->threads, c->sockets);
		if (c->nr_cost_ns > 1 && c->nr_cost_ns != c->threads)
			FAIL("--cost-ns: %u values for %u threads (give one value, or one per thread)",
			     c->nr_cost_ns, c->threads);
		/* The supervisor binds and holds the sockets; a child cannot
		 * add to or close them behind its back (the next child would
		 * get the supervisor's set). */
		if (c->supervise && c->max_sockets > c->sockets)
			FAIL("--supervise and --max-sockets cannot be used together: a supervised "
			     "receiver does not resize (its supervisor holds the sockets); change "
			     "--sockets and --threads with a restart");
		if (c->max_sockets && c->max_sockets < c->sockets)
			FAIL("--max-sockets %u is less than --sockets %u", c->max_sockets,
			     c->sockets);
		/* Kafka flags with another output would be silently ignored. */
		if (c->output != OUTPUT_KAFKA &&
		    (c->kafka_key != KAFKA_KEY_NONE || c->kafka_nr_opts))
			FAIL("--kafka-key and --kafka-opt need --output kafka:BROKERS/TOPIC");
		if (c->output != OUTPUT_OTLP &&
		    (!c->otlp_gzip || c->otlp_json || c->otlp_ca[0] || c->otlp_cert[0] ||
		     c->otlp_key[0] || c->otlp_nr_headers))
			FAIL("--otlp-compression, -encoding, -ca, -cert, -key and -header need "
			     "--output otlp:URL");
		if (c->json_raw && c->format != FORMAT_JSON)
			FAIL("--json-raw needs --format json");
		if (c->output != OUTPUT_TLS &&
		    (c->tls_ca[0] || c->tls_cert[0] || c->tls_key[0] || c->tls_name[0]))
			FAIL("--tls-ca, --tls-cert, --tls-key and --tls-name need --output "
			     "tls:HOST:PORT");
		if (!c->tls_cert[0] != !c->tls_key[0])
			FAIL("--tls-cert and --tls-key go together");
		if (c->output != OUTPUT_OTLP && c->otlp_original)
			FAIL("--otlp-original needs --output otlp:URL (the other outputs carry the "
			     "datagram already: --format raw, and json's \"raw\" with --json-raw)");
		if (c->output == OUTPUT_OTLP && c->format != FORMAT_RAW)
			FAIL("--format %s does not apply to --output otlp: each message is one OTLP "
			     "log record (see --otlp-encoding)",
			     format_name(c->format));
		if (!c->otlp_cert[0] != !c->otlp_key[0])
			FAIL("--otlp-cert and --otlp-key go together");
		if (c->output == OUTPUT_OTLP && !strncmp(c->output_arg, "http://", 7) &&
		    (c->otlp_ca[0] || c->otlp_cert[0]))
			FAIL("--otlp-ca, --otlp-cert and --otlp-key need an https:// URL");
		if (c->disk_buffer[0] && !config_output_is_network(c))
			FAIL("--disk-buffer needs --output tcp:HOST:PORT, tls:HOST:PORT, "
			     "kafka:BROKERS/TOPIC or otlp:URL");
		if (!c->disk_buffer[0] && (c->disk_buffer_mode || c->disk_buffer_sync_ms != 1000 ||
					   c->disk_buffer_size != 1ULL << 30))
			FAIL("--disk-buffer-size, -mode and -sync need --disk-buffer DIR");
		/* A spilled batch goes from the disk to the output, past the
		 * reorder stage: the two would silently not compose. */
		if (!c->sequences && (c->sequence_flows != SEQTRACK_DEF_FLOWS_MAX ||
				      c->sequence_jump != SEQTRACK_DEF_JUMP_MAX))
			FAIL("--sequence-flows and --sequence-jump need --sequences");
		if (c->disk_buffer[0] && c->ordered)
			FAIL("--ordered and --disk-buffer cannot be used together yet: batches "
			     "spilled to disk would not pass through the ordering");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	if (key >= 0 && key < OPT_KEY_MAX)
		ps->set_by[key] = ps->layer;
	return 0;
}

const char *config_output_name(const struct config *c, char *buf, size_t len)
{
	static const char *const kinds[] = {
		[OUTPUT_NULL] = "null", [OUTPUT_STDOUT] = "stdout", [OUTPUT_FILE] = "file",
		[OUTPUT_TCP] = "tcp",	[OUTPUT_KAFKA] = "kafka",   [OUTPUT_OTLP] = "otlp",
		[OUTPUT_TLS] = "tls",
	};

	char shown[sizeof(c->output_arg)];

	/* a URL's userinfo is a secret: never in the summary or a log line */
	if (c->output_arg[0])
		snprintf(buf, len, "%s:%s", kinds[c->output],
			 redact_url(shown, sizeof(shown), c->output_arg));
	else
		snprintf(buf, len, "%s", kinds[c->output]);
	return buf;
}

static const struct argp argp = { options, parse_arg, NULL, doc };

static const struct argp_option *option_named(const char *name)
{
	/* argp's own end mark: a group header has a doc and no name. */
	for (const struct argp_option *o = options; o->name || o->key || o->doc; o++)
		if (o->name && !strcmp(o->name, name))
			return o;
	return NULL;
}

/*
 * One setting from a file, `name = value` with a long flag name, through the
 * same parser as the command line: "--name=value" (a flag without argument
 * takes yes/true/1 or nothing; no/false/0 leaves it unset). Exact names only:
 * argp would take an abbreviation.
 */
static int apply_setting(struct parse_state *ps, const char *name, const char *value,
			 bool has_value)
{
	const struct argp_option *o = option_named(name);
	char *argv[3] = { "syslogrx", NULL, NULL };
	char *arg;
	int ret;

	if (!o) {
		snprintf(ps->err, ps->errlen,
			 "unknown setting '%s' (the names are syslogrx's long "
			 "flags without --: see syslogrx --help)",
			 name);
		return EINVAL;
	}
	if (o->arg && !has_value) {
		snprintf(ps->err, ps->errlen, "--%s needs a value: %s = %s", name, name, o->arg);
		return EINVAL;
	}
	if (!o->arg && has_value && *value) {
		if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "0"))
			return 0;
		if (strcmp(value, "yes") && strcmp(value, "true") && strcmp(value, "1")) {
			snprintf(ps->err, ps->errlen, "--%s takes no value: %s = yes, or %s alone",
				 name, name, name);
			return EINVAL;
		}
	}
	if (asprintf(&arg, o->arg ? "--%s=%s" : "--%s", name, value) < 0)
		return ENOMEM;
	argv[1] = arg;
	ret = argp_parse(&argp, 2, argv, ARGP_NO_EXIT | ARGP_NO_ERRS | ARGP_NO_HELP, NULL, ps);
	free(arg);
	if (ret && !ps->err[0])
		snprintf(ps->err, ps->errlen, "--%s %s: invalid", name, value);
	return ret;
}

/* A file's setting, with the caller's err (the reader adds file and line). */
static int config_entry(const char *name, const char *value, bool has_value, unsigned int line,
			void *ctx, char *err, size_t errlen)
{
	struct parse_state *ps = ctx;
	char *saved = ps->err;
	size_t savedlen = ps->errlen;
	int ret;

	ps->err = err;
	ps->errlen = errlen;
	ret = apply_setting(ps, name, value, has_value);
	ps->err = saved;
	ps->errlen = savedlen;
	return ret;
}

/* The env-file named in a config file (the command line's wins). */
static int find_env_file(const char *name, const char *value, bool has_value, unsigned int line,
			 void *ctx, char *err, size_t errlen)
{
	struct config *c = ctx;

	if (!strcmp(name, "env-file") && has_value && *value && strlen(value) < sizeof(c->env_file))
		snprintf(c->env_file, sizeof(c->env_file), "%s", value);
	return 0;
}

static int env_emit(const char *flag, const char *value, void *ctx, char *err, size_t errlen)
{
	return config_entry(flag, value, true, 0, ctx, err, errlen);
}

static const char *const layer_names[] = {
	[LAYER_DEFAULT] = "",
	[LAYER_ENV] = "",
	[LAYER_CONFIG] = "config",
	[LAYER_CMDLINE] = "command line",
};

/* The files' layers over c: env-file, then config file; precedence rises. */
static int apply_files(struct parse_state *ps)
{
	struct config *c = ps->c;
	int ret;

	if (c->config_file[0] && !c->env_file[0]) {
		ret = config_file_read(c->config_file, find_env_file, c, ps->err, ps->errlen);
		if (ret)
			return EINVAL;
	}
	if (c->env_file[0]) {
		ps->layer = LAYER_ENV;
		ret = env_file_apply(c->env_file, env_emit, ps, &c->env, ps->err, ps->errlen);
		if (ret)
			return EINVAL;
	}
	if (c->config_file[0]) {
		ps->layer = LAYER_CONFIG;
		ret = config_file_read(c->config_file, config_entry, ps, ps->err, ps->errlen);
		if (ret)
			return EINVAL;
	}
	return 0;
}

/* Which later layer, if any, set each flag the env-file mapped. */
static void note_overrides(struct parse_state *ps)
{
	struct env_map *m = &ps->c->env;

	for (unsigned int i = 0; i < m->n; i++) {
		const struct argp_option *o =
			m->rows[i].flag[0] ? option_named(m->rows[i].flag + 2) : NULL;

		if (o && o->key >= 0 && o->key < OPT_KEY_MAX)
			snprintf(m->rows[i].overridden_by, sizeof(m->rows[i].overridden_by), "%s",
				 layer_names[ps->set_by[o->key]]);
	}
}

int config_parse(struct config *c, int argc, char **argv, unsigned int flags, char *err,
		 size_t errlen)
{
	struct parse_state *ps = calloc(1, sizeof(*ps));
	struct config *first = malloc(sizeof(*first));
	int ret;

	err[0] = '\0';
	if (!ps || !first) {
		free(ps);
		free(first);
		snprintf(err, errlen, "out of memory");
		return ENOMEM;
	}
	/* Our own errors are returned, not printed: the caller prints err. argp
	 * itself handles --help and unknown flags (it names them), exiting with
	 * argp_err_exit_status unless flags has ARGP_NO_EXIT.
	 *
	 * First the command line alone, to learn the files; then, from the
	 * defaults: the env-file, the config file, and the command line again,
	 * so that the command line wins and one parser validates every layer. */
	*ps = (struct parse_state){
		.c = first, .err = err, .errlen = errlen, .layer = LAYER_CMDLINE
	};
	config_defaults(first);
	ret = argp_parse(&argp, argc, argv, flags, NULL, ps);
	if (!ret) {
		config_defaults(c);
		memcpy(c->config_file, first->config_file, sizeof(c->config_file));
		memcpy(c->env_file, first->env_file, sizeof(c->env_file));
		*ps = (struct parse_state){ .c = c, .err = err, .errlen = errlen };
		ret = apply_files(ps);
	}
	if (!ret) {
		ps->layer = LAYER_CMDLINE;
		ps->final = true;
		ret = argp_parse(&argp, argc, argv, flags, NULL, ps);
		note_overrides(ps);
	}
	if (ret && !err[0])
		snprintf(err, errlen, "invalid command line (see --help)");
	free(first);
	free(ps);
	return ret;
}

int config_parse_file(struct config *c, const char *path, char *err, size_t errlen)
{
	struct parse_state *ps = calloc(1, sizeof(*ps));
	int ret;

	err[0] = '\0';
	if (!ps)
		return ENOMEM;
	*ps = (struct parse_state){ .c = c, .err = err, .errlen = errlen };
	snprintf(c->config_file, sizeof(c->config_file), "%s", path);
	ret = apply_files(ps);
	if (!ret) {
		/* The whole-configuration checks, with no arguments left. */
		char *argv[1] = { "syslogrx" };

		ps->layer = LAYER_CONFIG;
		ps->final = true;
		ret = argp_parse(&argp, 1, argv, ARGP_NO_EXIT | ARGP_NO_ERRS | ARGP_NO_HELP, NULL,
				 ps);
	}
	if (ret && !err[0])
		snprintf(err, errlen, "%s: invalid", path);
	free(ps);
	return ret;
}

/* The settings only a restart applies, by the flag that sets them. */
#define FIELD(flag, f)                                                                   \
	{                                                                                \
		flag, offsetof(struct config, f), sizeof(((struct config *)0)->f), false \
	}
#define STRING(flag, f)                                   \
	{                                                 \
		flag, offsetof(struct config, f), 0, true \
	}
static const struct restart_field {
	const char *flag;
	size_t off, size;
	bool string; /* compare up to the NUL: the rest may differ */
} restart_fields[] = {
	STRING("listen", listen),
	FIELD("max-sockets", max_sockets),
	FIELD("supervise", supervise),
	FIELD("balance", balance),
	FIELD("rcvbuf", rcvbuf),
	FIELD("batch", batch),
	FIELD("output", output),
	STRING("output", output_arg),
	FIELD("format", format),
	STRING("summary", summary),
	FIELD("duration", duration),
	FIELD("cost-ns", cost_ns),
	FIELD("cost-ns", nr_cost_ns),
	FIELD("window", window),
	FIELD("window-bytes", window_bytes),
	FIELD("output-rate", output_rate),
	FIELD("no-trace", trace),
	FIELD("stats-interval", stats_interval),
	FIELD("verbose", verbose),
	FIELD("kafka-key", kafka_key),
	FIELD("kafka-opt", kafka_nr_opts),
	FIELD("drain-timeout", drain_timeout),
	FIELD("otlp-compression", otlp_gzip),
	FIELD("otlp-encoding", otlp_json),
	STRING("otlp-ca", otlp_ca),
	STRING("otlp-cert", otlp_cert),
	STRING("otlp-key", otlp_key),
	FIELD("otlp-header", otlp_nr_headers),
	STRING("tls-ca", tls_ca),
	STRING("tls-cert", tls_cert),
	STRING("tls-key", tls_key),
	STRING("tls-name", tls_name),
	FIELD("otlp-original", otlp_original),
	STRING("timezone", timezone),
	STRING("metrics", metrics),
	STRING("health", health),
	STRING("user", user),
	STRING("env-file", env_file),
	FIELD("ordered", ordered),
	FIELD("ordered", ordered_hold_ms),
	FIELD("senders", senders),
	FIELD("senders-top", senders_top),
	FIELD("sequences", sequences),
	FIELD("no-escape-control", escape_control),
	FIELD("json-raw", json_raw),
	FIELD("sequence-flows", sequence_flows),
	FIELD("sequence-jump", sequence_jump),
};
#undef FIELD
#undef STRING

unsigned int config_restart_changes(const struct config *a, const struct config *b,
				    void (*fn)(const char *flag, void *ctx), void *ctx)
{
	const char *last = NULL;
	unsigned int n = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(restart_fields); i++) {
		const struct restart_field *f = &restart_fields[i];
		const char *pa = (const char *)a + f->off, *pb = (const char *)b + f->off;
		bool differ = f->string ? strcmp(pa, pb) : memcmp(pa, pb, f->size);

		if (!strcmp(f->flag, "listen") && !differ)
			differ = a->nr_listeners != b->nr_listeners ||
				 memcmp(a->listeners, b->listeners,
					a->nr_listeners * sizeof(a->listeners[0]));
		if (!strcmp(f->flag, "kafka-opt") && !differ)
			for (unsigned int k = 0; k < a->kafka_nr_opts && !differ; k++)
				differ = strcmp(a->kafka_opts[k], b->kafka_opts[k]);
		if (!strcmp(f->flag, "otlp-header") && !differ)
			for (unsigned int k = 0; k < a->otlp_nr_headers && !differ; k++)
				differ = strcmp(a->otlp_headers[k], b->otlp_headers[k]);
		/* One flag, one report (output and output_arg, cost-ns, ordered). */
		if (!differ || (last && !strcmp(last, f->flag)))
			continue;
		last = f->flag;
		n++;
		if (fn)
			fn(f->flag, ctx);
	}
	return n;
}
