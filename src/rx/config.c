// SPDX-License-Identifier: MIT
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "net/balancer.h"
#include "rx/config.h"
#include "common/parse_num.h"

const char *argp_program_version = "syslogrx 0.1";
const char *argp_program_bug_address = "the project's issue tracker";

static const char doc[] =
"syslogrx: a UDP syslog receiver that does not lose messages silently.\n"
"\n"
"N SO_REUSEPORT sockets on one port, an SK_REUSEPORT eBPF program spreading\n"
"datagrams across them, worker threads draining them with recvmmsg, and a\n"
"tracer counting every kernel drop per socket and per reason.\n"
"\n"
"EXAMPLES:\n"
"    syslogrx --listen 127.0.0.1:5514 --sockets 8 --threads 2 --balance random\n"
"    syslogrx --listen [::1]:5514 --rcvbuf 32M --output file:/var/log/rx.log \\\n"
"             --summary /tmp/summary.json --duration 60\n"
"    syslogrx --listen 0.0.0.0:514 --balance hash   # no BPF: the kernel's hash\n"
"    syslogrx --output kafka:10.0.0.5:9092,10.0.0.6:9092/syslog --format json \\\n"
"             --kafka-key source --kafka-opt compression.type=lz4";

enum {
	OPT_LISTEN = 'l', OPT_SOCKETS = 'n', OPT_THREADS = 't', OPT_BALANCE = 'b',
	OPT_OUTPUT = 'o', OPT_DURATION = 'd', OPT_VERBOSE = 'v',
	OPT_RCVBUF = 256, OPT_BATCH, OPT_FORMAT, OPT_SUMMARY, OPT_COST, OPT_WINDOW,
	OPT_WINDOW_BYTES, OPT_OUTPUT_RATE, OPT_NO_TRACE, OPT_STATS_INTERVAL,
	OPT_KAFKA_KEY, OPT_KAFKA_OPT, OPT_DRAIN_TIMEOUT,
	OPT_DISK_BUFFER, OPT_DISK_BUFFER_SIZE, OPT_DISK_BUFFER_MODE, OPT_DISK_BUFFER_SYNC,
};

static const struct argp_option options[] = {
	{ "listen", OPT_LISTEN, "ADDR:PORT", 0, "Address to receive on (default 127.0.0.1:5514)" },
	{ "sockets", OPT_SOCKETS, "N", 0, "SO_REUSEPORT sockets in the group (default 4)" },
	{ "threads", OPT_THREADS, "M", 0, "Worker threads, M <= N; each owns N/M sockets (default 2)" },
	{ "balance", OPT_BALANCE, "POLICY", 0, "random | roundrobin | hash (default random)" },
	{ "rcvbuf", OPT_RCVBUF, "BYTES", 0, "Kernel receive buffer per socket, K/M/G suffixes (default: kernel's)" },
	{ "batch", OPT_BATCH, "N", 0, "recvmmsg batch, the fetch limit (default 64)" },
	{ "output", OPT_OUTPUT, "DEST", 0, "null | stdout | file:PATH | tcp:HOST:PORT | kafka:HOST:PORT[,HOST:PORT...]/TOPIC (default null)" },
	{ "format", OPT_FORMAT, "FMT", 0, "raw | json | rfc5424 (default raw)" },
	{ "summary", OPT_SUMMARY, "PATH", 0, "Write the JSON summary here at exit" },
	{ "duration", OPT_DURATION, "SECONDS", 0, "Exit by itself after this long" },
	{ "cost-ns", OPT_COST, "N", 0, "Lab knob: CPU nanoseconds each worker spends per message" },
	{ "window", OPT_WINDOW, "N", 0, "Input window in messages (default 10000)" },
	{ "window-bytes", OPT_WINDOW_BYTES, "BYTES", 0, "Input window in bytes, K/M/G (default 64M)" },
	{ "output-rate", OPT_OUTPUT_RATE, "N", 0, "Lab knob: cap the output at N msgs/s" },
	{ "no-trace", OPT_NO_TRACE, NULL, 0, "Do not count kernel drops" },
	{ "stats-interval", OPT_STATS_INTERVAL, "SECONDS", 0, "Print per-socket stats every S seconds" },
	{ "kafka-key", OPT_KAFKA_KEY, "KEY", 0, "Kafka record key (picks the partition): none | source | hostname | app (default none)" },
	{ "kafka-opt", OPT_KAFKA_OPT, "KEY=VALUE", 0, "librdkafka producer property, repeatable (e.g. acks=1, compression.type=lz4)" },
	{ "drain-timeout", OPT_DRAIN_TIMEOUT, "SECONDS", 0, "At exit, wait this long for outstanding Kafka deliveries (default 10)" },
	{ "disk-buffer", OPT_DISK_BUFFER, "DIR", 0, "tcp/kafka output: buffer batches in segment files in DIR (see --disk-buffer-mode)" },
	{ "disk-buffer-size", OPT_DISK_BUFFER_SIZE, "BYTES", 0, "Cap on DIR's segment files, K/M/G (default 1G); past it new batches are dropped and counted" },
	{ "disk-buffer-mode", OPT_DISK_BUFFER_MODE, "MODE", 0, "spill: what does not fit the window; reliable: every batch before the output (default spill)" },
	{ "disk-buffer-sync", OPT_DISK_BUFFER_SYNC, "MS", 0, "fdatasync the disk buffer at most every MS ms; 0 = after every batch (default 1000)" },
	{ "verbose", OPT_VERBOSE, NULL, 0, "Verbose output, with libbpf's debug log" },
	{},
};

struct parse_state {
	struct config *c;
	char *err;
	size_t errlen;
};

static void config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen, sizeof(c->listen), "127.0.0.1:5514");
	c->sockets = 4;
	c->threads = 2;
	c->balance = BALANCE_RANDOM;
	c->batch = 64;
	c->output = OUTPUT_NULL;
	c->format = FORMAT_RAW;
	c->window = 10000;
	c->window_bytes = 64ULL << 20;
	c->trace = true;
	c->kafka_key = KAFKA_KEY_NONE;
	c->drain_timeout = 10.0;
	c->disk_buffer_size = 1ULL << 30;
	c->disk_buffer_sync_ms = 1000;
}

static int parse_output(struct config *c, const char *arg)
{
	static const struct { const char *prefix; enum output_kind kind; bool has_arg; } kinds[] = {
		{ "null", OUTPUT_NULL, false }, { "stdout", OUTPUT_STDOUT, false },
		{ "file:", OUTPUT_FILE, true }, { "tcp:", OUTPUT_TCP, true },
		{ "kafka:", OUTPUT_KAFKA, true },
	};

	for (unsigned int i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t pl = strlen(kinds[i].prefix);

		if (kinds[i].has_arg ? strncmp(arg, kinds[i].prefix, pl) : strcmp(arg, kinds[i].prefix))
			continue;
		if (kinds[i].has_arg && (!arg[pl] || strlen(arg + pl) >= sizeof(c->output_arg)))
			return -EINVAL;
		c->output = kinds[i].kind;
		snprintf(c->output_arg, sizeof(c->output_arg), "%s", kinds[i].has_arg ? arg + pl : "");
		return 0;
	}
	return -EINVAL;
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
	snprintf(c->kafka_brokers, sizeof(c->kafka_brokers), "%.*s",
		 (int)(slash - c->output_arg), c->output_arg);
	snprintf(c->kafka_topic, sizeof(c->kafka_topic), "%s", slash + 1);
	return 0;
}

static int parse_kafka_key(const char *arg, enum kafka_key *out)
{
	static const char *const names[] = {
		[KAFKA_KEY_NONE] = "none", [KAFKA_KEY_SOURCE] = "source",
		[KAFKA_KEY_HOSTNAME] = "hostname", [KAFKA_KEY_APP] = "app",
	};

	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

#define FAIL(...) do { snprintf(ps->err, ps->errlen, __VA_ARGS__); return EINVAL; } while (0)

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct parse_state *ps = state->input;
	struct config *c = ps->c;
	uint64_t v;

	switch (key) {
	case OPT_LISTEN:
		if (strlen(arg) >= sizeof(c->listen))
			FAIL("--listen %s: too long", arg);
		snprintf(c->listen, sizeof(c->listen), "%s", arg);
		break;
	case OPT_SOCKETS:
		if (parse_u64(arg, 1, CONFIG_MAX_SOCKETS, &v))
			FAIL("--sockets %s: expected a number from 1 to %d", arg, CONFIG_MAX_SOCKETS);
		c->sockets = v;
		break;
	case OPT_THREADS:
		if (parse_u64(arg, 1, CONFIG_MAX_SOCKETS, &v))
			FAIL("--threads %s: expected a number from 1 to %d", arg, CONFIG_MAX_SOCKETS);
		c->threads = v;
		break;
	case OPT_BALANCE:
		if (balance_policy_from_name(arg, &c->balance))
			FAIL("--balance %s: expected random, roundrobin or hash", arg);
		break;
	case OPT_RCVBUF:
		if (parse_size(arg, 1, 1ULL << 30, &c->rcvbuf))
			FAIL("--rcvbuf %s: expected bytes from 1 to 1G, with an optional K/M/G suffix", arg);
		break;
	case OPT_BATCH:
		if (parse_u64(arg, 1, CONFIG_MAX_BATCH, &v))
			FAIL("--batch %s: expected a number from 1 to %d", arg, CONFIG_MAX_BATCH);
		c->batch = v;
		break;
	case OPT_OUTPUT:
		if (parse_output(c, arg))
			FAIL("--output %s: expected null, stdout, file:PATH, tcp:HOST:PORT or "
			     "kafka:HOST:PORT[,HOST:PORT...]/TOPIC", arg);
		if (c->output == OUTPUT_KAFKA && parse_kafka_dest(c))
			FAIL("--output %s: expected kafka:HOST:PORT[,HOST:PORT...]/TOPIC "
			     "(topic: 1-249 of a-z A-Z 0-9 . _ -)", arg);
		break;
	case OPT_KAFKA_KEY:
		if (parse_kafka_key(arg, &c->kafka_key))
			FAIL("--kafka-key %s: expected none, source, hostname or app", arg);
		break;
	case OPT_KAFKA_OPT:
		if (c->kafka_nr_opts >= CONFIG_MAX_KAFKA_OPTS)
			FAIL("--kafka-opt %s: at most %d --kafka-opt flags", arg, CONFIG_MAX_KAFKA_OPTS);
		if (!strchr(arg, '=') || arg[0] == '=' || strlen(arg) >= CONFIG_KAFKA_OPT_LEN)
			FAIL("--kafka-opt %s: expected KEY=VALUE (shorter than %d bytes)", arg,
			     CONFIG_KAFKA_OPT_LEN);
		snprintf(c->kafka_opts[c->kafka_nr_opts++], CONFIG_KAFKA_OPT_LEN, "%s", arg);
		break;
	case OPT_DRAIN_TIMEOUT:
		if (parse_seconds(arg, 0, 3600.0, &c->drain_timeout))
			FAIL("--drain-timeout %s: expected seconds from 0 to 3600", arg);
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
		if (parse_u64(arg, 0, 1000000000ULL, &c->cost_ns))
			FAIL("--cost-ns %s: expected nanoseconds from 0 to 1000000000", arg);
		break;
	case OPT_WINDOW:
		if (parse_u64(arg, 1, 100000000ULL, &c->window))
			FAIL("--window %s: expected messages from 1 to 100000000", arg);
		break;
	case OPT_WINDOW_BYTES:
		if (parse_size(arg, 65536, 64ULL << 30, &c->window_bytes))
			FAIL("--window-bytes %s: expected bytes from 64K to 64G, with an optional K/M/G suffix", arg);
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
	case OPT_VERBOSE:
		c->verbose = true;
		break;
	case OPT_DISK_BUFFER:
		if (!*arg || strlen(arg) >= sizeof(c->disk_buffer))
			FAIL("--disk-buffer %s: expected a directory path", arg);
		snprintf(c->disk_buffer, sizeof(c->disk_buffer), "%s", arg);
		break;
	case OPT_DISK_BUFFER_SIZE:
		if (parse_size(arg, 1ULL << 20, 1ULL << 50, &c->disk_buffer_size))
			FAIL("--disk-buffer-size %s: expected bytes from 1M, with an optional K/M/G suffix", arg);
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
	case ARGP_KEY_ARG:
		FAIL("unexpected argument '%s' (every setting is a --flag)", arg);
	case ARGP_KEY_END:
		if (c->threads > c->sockets)
			FAIL("--threads %u is more than --sockets %u: each thread owns at least one socket",
			     c->threads, c->sockets);
		/* Kafka flags with another output would be silently ignored. */
		if (c->output != OUTPUT_KAFKA && (c->kafka_key != KAFKA_KEY_NONE || c->kafka_nr_opts))
			FAIL("--kafka-key and --kafka-opt need --output kafka:BROKERS/TOPIC");
		if (c->disk_buffer[0] && c->output != OUTPUT_TCP && c->output != OUTPUT_KAFKA)
			FAIL("--disk-buffer needs --output tcp:HOST:PORT or kafka:BROKERS/TOPIC");
		if (!c->disk_buffer[0] && (c->disk_buffer_mode || c->disk_buffer_sync_ms != 1000 ||
					   c->disk_buffer_size != 1ULL << 30))
			FAIL("--disk-buffer-size, -mode and -sync need --disk-buffer DIR");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int config_parse(struct config *c, int argc, char **argv, unsigned int flags, char *err, size_t errlen)
{
	static const struct argp argp = { options, parse_arg, NULL, doc };
	struct parse_state ps = { c, err, errlen };
	int ret;

	config_defaults(c);
	err[0] = '\0';
	/* Our own errors are returned, not printed: the caller prints err. argp
	 * itself handles --help and unknown flags (it names them), exiting with
	 * argp_err_exit_status unless flags has ARGP_NO_EXIT. */
	ret = argp_parse(&argp, argc, argv, flags, NULL, &ps);
	if (ret && !err[0])
		snprintf(err, errlen, "invalid command line (see --help)");
	return ret;
}
