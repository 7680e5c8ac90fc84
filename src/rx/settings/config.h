/* SPDX-License-Identifier: MIT */
/* syslogrx's command line: every flag, its default, its validation. */
#ifndef SYSLOGRX_CONFIG_H
#define SYSLOGRX_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "syslog/format.h"
#include "syslog/seqtrack.h"
#include "bpf/balancer.h"
#include "rx/settings/env_file.h"
#include "rx/settings/listeners.h"
#include "rx/settings/kafka_options.h"
#include "rx/settings/otlp_options.h"
#include "rx/settings/output_def.h"
#include "rx/settings/proxy_options.h"
#include "rx/settings/route_options.h"
#include "rx/settings/tls_options.h"

#define CONFIG_MAX_SOCKETS REUSEPORT_MAX_SOCKETS
#define CONFIG_MAX_BATCH 1024

/* --cost-ns takes one value for every thread, or one per thread. */
#define CONFIG_MAX_COST_NS 64

/* --stop-timeout's default, seconds: under the unit's TimeoutStopSec=30 with room
 * for the give-up, the summary and the exit. */
#define CONFIG_STOP_TIMEOUT 20.0

/* --timezone: the zone of RFC 3164 stamps that carry none. */
/* TZ_LOCAL: the host's zone (TZ, else /etc/localtime), as syslog-ng's default */

enum tz_kind { TZ_UTC, TZ_FIXED, TZ_NAMED, TZ_LOCAL };

/* --disk-buffer-mode: what the disk buffer (rx/path/diskbuf.c) keeps. */
enum diskbuf_mode {
	DISKBUF_SPILL,	  /* only what does not fit the input window */
	DISKBUF_RELIABLE, /* every batch, before the output sees it */
};

/* --protect PREFIX[=WEIGHT]: addr IPv4 mapped, prefixlen over its 128 bits. */
#define CONFIG_MAX_PROTECT 64
#define CONFIG_MAX_WEIGHT 1000
struct config_prefix {
	uint8_t addr[16];
	unsigned int prefixlen;
	unsigned int weight; /* 0: never shed */
};

struct config {
	char listen[LISTENER_ADDR_MAX]; /* the first listener's ADDR:PORT */
	/* --listen, repeatable: one SO_REUSEPORT group each (--sockets each) */
	unsigned int nr_listeners;
	struct listener_spec listeners[CONFIG_MAX_LISTENERS];
	bool listener_names; /* records carry the name (listener_names_shown) */
	unsigned int sockets;
	unsigned int threads;
	unsigned int max_sockets; /* --max-sockets: pool bound at start (0 = sockets) */
	bool shrink_naive;	  /* lab knob: a live shrink closes sockets with their queue */
	bool supervise;		  /* --supervise: hold the sockets, run the receiver as a child */
	enum balance_policy balance;
	uint64_t rcvbuf;    /* 0: the kernel's default */
	unsigned int batch; /* recvmmsg batch: the fetch limit */
	enum output_kind output;
	char output_arg[PATH_MAX]; /* file path, HOST:PORT for tcp, BROKERS/TOPIC for kafka */
	/* --output LISTENER=SPEC, repeatable: an output per listener; the
	 * unnamed output (output, output_arg) takes the other listeners'. */
	unsigned int nr_routes;
	struct output_route routes[CONFIG_MAX_ROUTES];
	bool output_unnamed; /* an --output without LISTENER= came with them */
	/* Each output's own flags (its options header: kafka_options.h, ...) */
	struct kafka_options kafka;
	struct otlp_options otlp;
	struct tls_options tls;
	struct proxy_options proxy; /* tcp, tls: a connection per sender */
	enum out_format format;
	enum out_framing framing;	      /* --framing, as given */
	char summary[PATH_MAX];		      /* "" = none */
	double duration;		      /* 0 = until a signal */
	uint64_t cost_ns[CONFIG_MAX_COST_NS]; /* lab knob: CPU spent per message by worker t */
	unsigned int nr_cost_ns; /* 1: cost_ns[0] for every worker; else one per thread */
	bool cost_makeup;	 /* lab knob: time lost to preemption is made up */
	uint64_t window;	 /* input window, messages */
	uint64_t window_bytes;	 /* input window, bytes (soft: + one batch) */
	uint64_t output_rate;	 /* lab knob: output stage cap, msgs/s; 0 = none */
	bool trace;		 /* count kernel drops with bpf/tracer.bpf.c */
	double stats_interval;	 /* 0 = no periodic stats line */
	bool verbose;
	double drain_timeout; /* seconds to wait for outstanding deliveries at exit */
	/* How long a stop delivers before it gives up on what is left (saved
	 * to the disk buffer, or counted given up): below systemd's
	 * TimeoutStopSec (30 s in dist/) with room for the summary. */
	double stop_timeout;
	double stall_timeout; /* tcp, tls: seconds a connected server may take nothing;
			       * otlp, kafka: unanswered before shown down */
	char timezone[64];    /* --timezone, as given ("local" by default) */
	enum tz_kind tz_kind; /* what it is */
	long tz_offset;	      /* TZ_FIXED: seconds east of UTC */
	bool guess_tz;	      /* --guess-timezone */
	char metrics[128];    /* --metrics ADDR:PORT, "" = none */
	char health[128];     /* --health ADDR:PORT (/healthz, /readyz only), "" = none */
	char user[64];	      /* --user: run as this user once started; "" = stay */
	/* Files of settings: env-file < config file < command line. */
	char config_file[PATH_MAX]; /* --config, "" = none */
	char env_file[PATH_MAX];    /* --env-file (or env-file in the config file) */
	bool check_config;	    /* --check-config: check, print, exit; start nothing */
	struct env_map env;	    /* what the env-file mapped, for the summary */
	/* --ordered[=MS]: merge by the kernel's arrival stamp */
	bool ordered;
	uint64_t ordered_hold_ms; /* most a message is held for late batches */
	/* --disk-buffer (rx/path/diskbuf.h): "" = none */
	char disk_buffer[PATH_MAX];
	uint64_t disk_buffer_size; /* bytes, all segment files together */
	enum diskbuf_mode disk_buffer_mode;
	unsigned int disk_buffer_sync_ms; /* fdatasync interval; 0 = every batch */
	bool escape_control; /* raw/rfc5424: controls as #033 (--no-escape-control: off) */
	bool json_raw;	     /* json: "raw" for every message (--json-raw), else malformed only */
	/* --sequences: lab-only marker accounting, off by default */
	bool sequences;
	uint32_t sequence_flows; /* --sequence-flows: seqtrack's flows_max */
	uint64_t sequence_jump;	 /* --sequence-jump: seqtrack's jump_max */
	/* Per sender (--senders): table entries (tracer LRU and each worker's
	 * table), 0 = not counted; senders in the summary's and /metrics' top. */
	uint32_t senders;
	unsigned int senders_top;
	/* --fair-share: shed each sender's excess under pressure; --protect:
	 * prefixes with a weight (0: never shed), in the order given. */
	bool fair_share;
	unsigned int nr_protect;
	struct config_prefix protect[CONFIG_MAX_PROTECT];
};

#define CONFIG_SENDERS_DEFAULT 4096
#define CONFIG_SENDERS_MAX (1U << 20)
#define CONFIG_SENDERS_TOP_DEFAULT 20
#define CONFIG_SENDERS_TOP_MAX 1000

#define CONFIG_ORDERED_HOLD_MS 5 /* --ordered without =MS */

/*
 * Parses argv into c (defaults first). flags are argp_parse flags: 0 in the
 * program (argp prints and exits on --help and unknown flags), ARGP_NO_EXIT |
 * ARGP_NO_ERRS in tests. Returns 0, or an errno with a one-line message in err
 * naming the flag.
 */
int config_parse(struct config *c, int argc, char **argv, unsigned int flags, char *err,
		 size_t errlen);

/*
 * Applies a config file (and the env-file it names, under it) over c, then
 * checks the whole: for a re-read without a command line. To re-read with
 * the command line's precedence, call config_parse() again with the same
 * argv: it reads the files anew. Returns 0, or an errno with err naming the
 * file, the line and the flag.
 */
int config_parse_file(struct config *c, const char *path, char *err, size_t errlen);

/*
 * For a re-read on SIGHUP: calls fn with the long flag name of each setting
 * that differs between a and b and that only a restart applies (all but
 * sockets, threads and shrink-naive, which a live resize applies). Returns
 * how many.
 */
unsigned int config_restart_changes(const struct config *a, const struct config *b,
				    void (*fn)(const char *flag, void *ctx), void *ctx);

#endif
