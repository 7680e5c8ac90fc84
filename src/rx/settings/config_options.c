// SPDX-License-Identifier: MIT
/* syslogrx's flags as argp shows them (--help) and finds them (files). */
#include <argp.h>
#include <stddef.h>
#include <string.h>
#include "rx/settings/config_options.h"

const char *argp_program_version = "syslogrx 0.1";
const char *argp_program_bug_address = "the project's issue tracker";

const char config_doc[] =
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

const struct argp_option config_options[] = {
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
	/* --help names the policies first (config_parse.c's help_filter) */
	{ "balance", OPT_BALANCE, "POLICY", 0,
	  "(default random; without CAP_BPF random is classic BPF)" },
	{ "rcvbuf", OPT_RCVBUF, "BYTES", 0,
	  "Kernel receive buffer per socket, K/M/G suffixes (default: kernel's)" },
	{ "batch", OPT_BATCH, "N", 0, "recvmmsg batch, the fetch limit (default 64)" },
	{ "output", OPT_OUTPUT, "[LISTENER=]DEST", 0,
	  "null | stdout | file:PATH | tcp:HOST:PORT | tls:HOST:PORT | kafka:HOST:PORT[,HOST:PORT...]/TOPIC | otlp:http[s]://HOST:PORT[/PATH] (default stdout); repeat it as LISTENER=DEST for an output per listener (null, stdout, file, tcp, tls), the one without LISTENER= takes the other listeners' messages" },
	{ "format", OPT_FORMAT, "FMT", 0,
	  "raw | json | rfc5424 | original (the datagram's bytes as they came) (default raw)" },
	{ "framing", OPT_FRAMING, "octet|newline", 0,
	  "tcp, tls output: RFC 6587 octet counting or one message per line (default newline with --format original, else octet)" },
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
	  "Print a stats line per listener every S seconds" },
	{ "kafka-key", OPT_KAFKA_KEY, "KEY", 0,
	  "Kafka record key (picks the partition): none | source | hostname | app (default none)" },
	{ "kafka-opt", OPT_KAFKA_OPT, "KEY=VALUE", 0,
	  "librdkafka producer property, repeatable (e.g. acks=1, compression.type=lz4)" },
	{ "drain-timeout", OPT_DRAIN_TIMEOUT, "SECONDS", 0,
	  "At exit, wait this long for outstanding Kafka or OTLP deliveries, or --proxy-protocol acknowledgements (default 10)" },
	{ "stop-timeout", OPT_STOP_TIMEOUT, "SECONDS", 0,
	  "A stop delivers for at most this long, then saves (disk buffer) or counts what is "
	  "left (default 20)" },
	{ "stall-timeout", OPT_STALL_TIMEOUT, "SECONDS", 0,
	  "tcp, tls output: a server that takes nothing this long is stalled: said, shown, "
	  "reconnected; otlp: a request unanswered this long, kafka: messages in flight none "
	  "of which the broker acknowledged this long, show the output down (default 30)" },
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
	{ "proxy-protocol", OPT_PROXY_PROTOCOL, "v1|v2", 0,
	  "tcp, tls output: a connection per sender address, opened with a PROXY header naming the sender and the listener (syslog-ng's proxied-tcp, SC4S_SOURCE_PROXYCONNECT)" },
	{ "proxy-connections", OPT_PROXY_CONNECTIONS, "N", 0,
	  "--proxy-protocol: at most N connections; the least recently used closes for a new sender (default 256)" },
	{ "proxy-idle", OPT_PROXY_IDLE, "SECONDS", 0,
	  "--proxy-protocol: a sender's connection closes after this long with nothing to send (default 60)" },
	{ "otlp-header", OPT_OTLP_HEADER, "KEY=VALUE", 0,
	  "otlp output: an HTTP header on every request, repeatable (e.g. Content-Language=en; a secret: --otlp-header-file)" },
	{ "otlp-header-file", OPT_OTLP_HEADER_FILE, "FILE", 0,
	  "otlp output: HTTP headers from FILE, one KEY=VALUE a line; FILE not a symlink, not group/world writable" },
	{ "otlp-original", OPT_OTLP_ORIGINAL, NULL, 0,
	  "otlp output: the body is the datagram as it came (what Splunk's HEC exporter makes _raw), not MSG" },
	{ "timezone", OPT_TIMEZONE, "ZONE", 0,
	  "Zone of stamps without one, for the normalised time: local | UTC | +HH:MM | -HH:MM | an IANA name (default local: the host's, as syslog-ng's)" },
	{ "guess-timezone", OPT_GUESS_TIMEZONE, NULL, 0,
	  "Normalised time: an RFC 3164 stamp within 24 h of the receive time is the device's clock in a zone a whole number of quarter hours off, as syslog-ng's guess-timezone (SC4S's)" },
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0,
	  "Serve Prometheus metrics at http://ADDR:PORT/metrics (a port alone: 127.0.0.1); /healthz and /readyz too" },
	{ "health", OPT_HEALTH, "ADDR:PORT", 0,
	  "Serve only /healthz and /readyz at http://ADDR:PORT (a port alone: 127.0.0.1), e.g. without --metrics" },
	{ "ordered", OPT_ORDERED, "MS", OPTION_ARG_OPTIONAL,
	  "Write each flow in the order the kernel received it, holding a message at most MS ms for late batches (default 5)" },
	{ "disk-buffer", OPT_DISK_BUFFER, "DIR", 0,
	  "tcp, tls, kafka or otlp output: buffer batches in segment files in DIR (see --disk-buffer-mode)" },
	{ "disk-buffer-size", OPT_DISK_BUFFER_SIZE, "BYTES", 0,
	  "Cap on DIR's segment files, K/M/G (default 1G); past it new batches are dropped and counted" },
	{ "disk-buffer-mode", OPT_DISK_BUFFER_MODE, "MODE", 0,
	  "spill: what does not fit the window; reliable: every batch before the output (default spill)" },
	{ "disk-buffer-sync", OPT_DISK_BUFFER_SYNC, "MS", 0,
	  "fdatasync the disk buffer at most every MS ms; 0 = after every batch (default 1000)" },
	{ "senders", OPT_SENDERS, "N", 0,
	  "Count received and dropped per source address in tables of N senders (LRU in the kernel, one per worker); 0 = off (default 4096)" },
	{ "fair-share", OPT_FAIR_SHARE, NULL, 0,
	  "Under pressure, shed each sender's excess over its max-min fair share in the kernel, counted per sender as shed (eBPF)" },
	{ "protect", OPT_PROTECT, "PREFIX[=WEIGHT]", 0,
	  "--fair-share: never shed senders in PREFIX (e.g. 10.0.0.0/24), or give them WEIGHT shares (1-1000); repeatable" },
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
	{ "check-config", OPT_CHECK_CONFIG, NULL, 0,
	  "Check the settings (files and flags) as a start would, bind nothing, print them as they would apply; exit 0, or 1 naming every problem" },
	{},
};

const struct argp_option *config_option_named(const char *name)
{
	/* argp's own end mark: a group header has a doc and no name. */
	for (const struct argp_option *o = config_options; o->name || o->key || o->doc; o++)
		if (o->name && !strcmp(o->name, name))
			return o;
	return NULL;
}
