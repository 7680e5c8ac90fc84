/* SPDX-License-Identifier: MIT */
/*
 * syslogrx's flags: their keys, in blocks by what they hold (each block has
 * its parser in config_parse.c), the argp table and --help's text.
 */
#ifndef SYSLOGRX_CONFIG_OPTIONS_H
#define SYSLOGRX_CONFIG_OPTIONS_H

#include <argp.h>

enum config_opt {
	/* The short flags (their letter is their key). */
	OPT_LISTEN = 'l',
	OPT_SOCKETS = 'n',
	OPT_THREADS = 't',
	OPT_BALANCE = 'b',
	OPT_OUTPUT = 'o',
	OPT_DURATION = 'd',
	OPT_VERBOSE = 'v',
	/* Input: the sockets, the workers, the window (parse_input_opt). */
	OPT_RCVBUF = 256,
	OPT_BATCH,
	OPT_MAX_SOCKETS,
	OPT_SHRINK_NAIVE,
	OPT_SUPERVISE,
	OPT_WINDOW,
	OPT_WINDOW_BYTES,
	OPT_NO_TRACE,
	OPT_COST,
	OPT_COST_MAKEUP,
	/* Accounting: per sender, per sequence marker (parse_accounting_opt). */
	OPT_SENDERS = 320,
	OPT_SENDERS_TOP,
	OPT_SEQUENCES,
	OPT_SEQUENCE_FLOWS,
	OPT_SEQUENCE_JUMP,
	OPT_FAIR_SHARE,
	OPT_PROTECT,
	/* Output: the records' format, order and pace (parse_output_opt). */
	OPT_FORMAT = 384,
	OPT_NO_ESCAPE_CONTROL,
	OPT_JSON_RAW,
	OPT_TIMEZONE,
	OPT_GUESS_TIMEZONE,
	OPT_ORDERED,
	OPT_OUTPUT_RATE,
	OPT_DRAIN_TIMEOUT,
	OPT_STOP_TIMEOUT,
	OPT_STALL_TIMEOUT,
	OPT_FRAMING,
	/* The kafka output (parse_kafka_opt). */
	OPT_KAFKA_KEY = 448,
	OPT_KAFKA_OPT,
	/* The otlp output (parse_otlp_opt). */
	OPT_OTLP_COMPRESSION = 512,
	OPT_OTLP_ENCODING,
	OPT_OTLP_CA,
	OPT_OTLP_CERT,
	OPT_OTLP_KEY,
	OPT_OTLP_HEADER,
	OPT_OTLP_HEADER_FILE,
	OPT_OTLP_ORIGINAL,
	/* The tls output (parse_tls_opt). */
	OPT_TLS_CA = 576,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_TLS_NAME,
	OPT_PROXY_PROTOCOL,
	OPT_PROXY_CONNECTIONS,
	OPT_PROXY_IDLE,
	/* The disk buffer (parse_disk_buffer_opt). */
	OPT_DISK_BUFFER = 640,
	OPT_DISK_BUFFER_SIZE,
	OPT_DISK_BUFFER_MODE,
	OPT_DISK_BUFFER_SYNC,
	/* The run: its reports, endpoints and user (parse_run_opt). */
	OPT_SUMMARY = 704,
	OPT_STATS_INTERVAL,
	OPT_METRICS, /* the Prometheus endpoint */
	OPT_HEALTH,  /* the health endpoints alone */
	OPT_USER,
	/* Files of settings, --config and --env-file (parse_file_opt); their own
	 * range, so flags added above never collide. */
	OPT_CONFIG = 1024,
	OPT_ENV_FILE,
	OPT_CHECK_CONFIG,
	OPT_KEY_MAX
};

/* The flags (argp's table, its end an empty entry) and --help's text. */
extern const struct argp_option config_options[];
extern const char config_doc[];

/* The flag with this long name (exact: argp would take an abbreviation). */
const struct argp_option *config_option_named(const char *name);

#endif
