/* SPDX-License-Identifier: MIT */
/*
 * The outputs, in one table (outputs.c): each names its --output spelling,
 * says what it is (the properties the rest of the program asks for), and
 * hands its own flags, checks, restart fields and printout to its settings
 * file (output_kafka.c, output_otlp.c, output_tls.c); rx/sink/ opens it. Only
 * this table, those files and sink/ tell the kinds apart.
 */
#ifndef SYSLOGRX_OUTPUT_DEF_H
#define SYSLOGRX_OUTPUT_DEF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct config;

/* --framing: how a tcp or tls output delimits messages. DEFAULT: the
 * format's (config_framing()). */
enum out_framing { FRAMING_DEFAULT, FRAMING_OCTET, FRAMING_NEWLINE };

enum output_kind {
	OUTPUT_NULL,
	OUTPUT_STDOUT,
	OUTPUT_FILE,
	OUTPUT_TCP,
	OUTPUT_KAFKA,
	OUTPUT_OTLP,
	OUTPUT_TLS, /* tcp over TLS (RFC 5425) */
	OUTPUT_KINDS,
};

/* A setting only a restart applies, at its offset in struct config. */
struct restart_field {
	const char *flag;
	size_t off, size;
	enum { RESTART_BYTES, RESTART_STRING, RESTART_STRINGS } how;
	size_t count_off; /* RESTART_STRINGS: the unsigned int that counts them */
};

#define RESTART_FIELD(fl, f)                                   \
	{                                                      \
		.flag = fl, .off = offsetof(struct config, f), \
		.size = sizeof(((struct config *)0)->f)        \
	}
#define RESTART_STRING(fl, f)                                                        \
	{                                                                            \
		.flag = fl, .off = offsetof(struct config, f), .how = RESTART_STRING \
	}
/* Strings f[0..n) of sizeof(f[0]) bytes each: n and each string compared. */
#define RESTART_STRINGS(fl, f, n)                                                   \
	{                                                                           \
		.flag = fl, .off = offsetof(struct config, f),                      \
		.size = sizeof(((struct config *)0)->f[0]), .how = RESTART_STRINGS, \
		.count_off = offsetof(struct config, n)                             \
	}

struct output_def {
	enum output_kind kind;
	const char *name;  /* --output NAME or NAME:ARG */
	const char *usage; /* the spelling a refusal shows: "kafka:BROKERS/TOPIC" */
	bool has_arg;
	bool network;	   /* can be down and come back: --disk-buffer, up/stalled */
	bool acknowledges; /* deliveries acknowledged later (--drain-timeout) */
	bool stream;	   /* a byte stream of framed messages (--framing) */
	bool whole;	   /* a record holds any bytes: --format original keeps them all */
	bool path;	   /* ARG is a file the receiver writes */
	bool discards;	   /* nothing is written: formatting can be skipped */
	bool records;	   /* encodes each message itself: no formatted line */
	/* ARG's shape once the kind is known: 0, or EINVAL with err. */
	int (*parse_arg)(struct config *c, const char *given, char *err, size_t errlen);
	/* Its own flags: 0, EINVAL with err, or -1: not its flag. */
	int (*parse_opt)(struct config *c, int key, const char *arg, char *err, size_t errlen);
	void (*defaults)(struct config *c);
	/* Its flags beside the whole: called whatever the output is. */
	int (*check)(const struct config *c, char *err, size_t errlen);
	void (*print)(const struct config *c, FILE *f);
	const struct restart_field *restart;
	unsigned int nr_restart;
};

/* Every output, in --help's order; NULL-terminated. */
extern const struct output_def *const outputs[];

/* The output c names. */
const struct output_def *output_of(const struct config *c);

/* The output SPEC names ("tcp:HOST:PORT", "null", ...), *arg its ARG (""
 * for none); NULL: no output's spelling. */
const struct output_def *output_match(const char *spec, const char **arg);

/* --output DEST: the kind, output_arg and the kind's own shape of ARG.
 * 0, or EINVAL with err naming the flag. */
int outputs_parse(struct config *c, const char *arg, char *err, size_t errlen);

/* Each output's defaults, its flags (-1: no output's), its printout.
 * config_check.c runs each output's check, config_restart.c compares each
 * output's restart fields. */
void outputs_defaults(struct config *c);
int outputs_parse_opt(struct config *c, int key, const char *arg, char *err, size_t errlen);
void outputs_print(const struct config *c, FILE *f);

/* The output as given: "null", "stdout", "file:PATH", "tcp:HOST:PORT",
 * "kafka:...", a URL's userinfo as ***. */
const char *config_output_name(const struct config *c, char *buf, size_t len);
/* tcp, tls, kafka, otlp: a destination that can be down (and come back). */
bool config_output_is_network(const struct config *c);
/* The framing a tcp or tls output uses: --framing, else newline for
 * --format original (syslog-ng's network() and SC4S's default TCP and TLS
 * ports read lines) and octet counting for the others (RFC 5425 and 6587:
 * syslog-ng's syslog(), SC4S's port 601). */
enum out_framing config_framing(const struct config *c);
/* The FORMAT_F_* flags the output formats with. */
unsigned int config_format_flags(const struct config *c);

/* An output's printout: "name = v" when v is set. */
static inline void output_print_str(FILE *f, const char *name, const char *v)
{
	if (v[0])
		fprintf(f, "%s = %s\n", name, v);
}

#endif
