// SPDX-License-Identifier: MIT
#include <argp.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "net/balancer.h"
#include "rx/settings/config.h"
#include "rx/settings/output_routes.h"
#include "rx/settings/config_check.h"
#include "rx/settings/config_options.h"
#include "rx/settings/config_values.h"
#include "rx/settings/config_file.h"
#include "common/parse_num.h"
#include "net/http_metrics.h"

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
	c->format = FORMAT_RAW;
	c->window = 10000;
	c->window_bytes = 64ULL << 20;
	c->trace = true;
	c->drain_timeout = 10.0;
	c->stop_timeout = CONFIG_STOP_TIMEOUT;
	c->stall_timeout = 30.0;
	outputs_defaults(c);
	snprintf(c->timezone, sizeof(c->timezone), "local");
	c->tz_kind = TZ_LOCAL;
	c->nr_cost_ns = 1;
	c->disk_buffer_size = 1ULL << 30;
	c->disk_buffer_sync_ms = 1000;
	c->senders = CONFIG_SENDERS_DEFAULT;
	c->senders_top = CONFIG_SENDERS_TOP_DEFAULT;
	c->escape_control = true;
	c->sequence_flows = SEQTRACK_DEF_FLOWS_MAX;
	c->sequence_jump = SEQTRACK_DEF_JUMP_MAX;
}

#define FAIL(...)                                           \
	do {                                                \
		snprintf(ps->err, ps->errlen, __VA_ARGS__); \
		return EINVAL;                              \
	} while (0)

/* --listen: a layer's listeners replace a lower layer's (or the default) as
 * a whole; within one layer they add up. */
static error_t parse_listen(struct parse_state *ps, const char *arg)
{
	struct config *c = ps->c;
	struct listener_spec spec;
	char why[160];

	if (listener_spec_parse(arg, &spec, why, sizeof(why)))
		FAIL("--listen %s: %s", arg, why);
	if (ps->set_by[OPT_LISTEN] != ps->layer)
		c->nr_listeners = 0;
	if (c->nr_listeners == CONFIG_MAX_LISTENERS)
		FAIL("--listen %s: at most %d listeners", arg, CONFIG_MAX_LISTENERS);
	c->listeners[c->nr_listeners++] = spec;
	snprintf(c->listen, sizeof(c->listen), "%s", c->listeners[0].addr);
	return 0;
}

/* Input: the sockets, the workers, the window. */
static error_t parse_input_opt(struct parse_state *ps, int key, char *arg)
{
	struct config *c = ps->c;
	char names[64];
	uint64_t v;

	switch (key) {
	case OPT_LISTEN:
		return parse_listen(ps, arg);
	case OPT_SOCKETS:
		if (parse_u64(arg, 1, CONFIG_MAX_SOCKETS, &v))
			FAIL("--sockets %s: expected a number from 1 to %d", arg,
			     CONFIG_MAX_SOCKETS);
		c->sockets = v;
		return 0;
	case OPT_THREADS:
		if (parse_u64(arg, 1, CONFIG_MAX_SOCKETS, &v))
			FAIL("--threads %s: expected a number from 1 to %d", arg,
			     CONFIG_MAX_SOCKETS);
		c->threads = v;
		return 0;
	case OPT_MAX_SOCKETS:
		if (parse_u64(arg, 1, CONFIG_MAX_SOCKETS, &v))
			FAIL("--max-sockets %s: expected a number from 1 to %d", arg,
			     CONFIG_MAX_SOCKETS);
		c->max_sockets = v;
		return 0;
	case OPT_SHRINK_NAIVE:
		c->shrink_naive = true;
		return 0;
	case OPT_SUPERVISE:
		c->supervise = true;
		return 0;
	case OPT_BALANCE:
		if (balance_policy_from_name(arg, &c->balance))
			FAIL("--balance %s: expected %s", arg,
			     balance_policy_list(names, sizeof(names), ", ", " or ", 0, 0));
		return 0;
	case OPT_RCVBUF:
		if (parse_size(arg, 1, 1ULL << 30, &c->rcvbuf))
			FAIL("--rcvbuf %s: expected bytes from 1 to 1G, with an optional K/M/G suffix",
			     arg);
		return 0;
	case OPT_BATCH:
		if (parse_u64(arg, 1, CONFIG_MAX_BATCH, &v))
			FAIL("--batch %s: expected a number from 1 to %d", arg, CONFIG_MAX_BATCH);
		c->batch = v;
		return 0;
	case OPT_WINDOW:
		if (parse_u64(arg, 1, 100000000ULL, &c->window))
			FAIL("--window %s: expected messages from 1 to 100000000", arg);
		return 0;
	case OPT_WINDOW_BYTES:
		if (parse_size(arg, 65536, 64ULL << 30, &c->window_bytes))
			FAIL("--window-bytes %s: expected bytes from 64K to 64G, with an optional K/M/G suffix",
			     arg);
		return 0;
	case OPT_NO_TRACE:
		c->trace = false;
		return 0;
	case OPT_COST:
		if (parse_cost_ns(c, arg))
			FAIL("--cost-ns %s: expected nanoseconds from 0 to 1000000000, one value or "
			     "up to %d separated by commas (one per thread)",
			     arg, CONFIG_MAX_COST_NS);
		return 0;
	case OPT_COST_MAKEUP:
		c->cost_makeup = true;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* Accounting: per sender, per sequence marker. */
static error_t parse_accounting_opt(struct parse_state *ps, int key, char *arg)
{
	struct config *c = ps->c;
	uint64_t v;

	switch (key) {
	case OPT_SENDERS:
		if (parse_u64(arg, 0, CONFIG_SENDERS_MAX, &v) || (v && v < 16))
			FAIL("--senders %s: expected 0 (off) or a number of senders from 16 to %u",
			     arg, CONFIG_SENDERS_MAX);
		c->senders = v;
		return 0;
	case OPT_SENDERS_TOP:
		if (parse_u64(arg, 1, CONFIG_SENDERS_TOP_MAX, &v))
			FAIL("--senders-top %s: expected a number from 1 to %d", arg,
			     CONFIG_SENDERS_TOP_MAX);
		c->senders_top = v;
		return 0;
	case OPT_SEQUENCES:
		c->sequences = true;
		return 0;
	case OPT_SEQUENCE_FLOWS:
		if (parse_u64(arg, 1, 1000000, &v))
			FAIL("--sequence-flows %s: expected flows from 1 to 1000000", arg);
		c->sequence_flows = v;
		return 0;
	case OPT_FAIR_SHARE:
		c->fair_share = true;
		return 0;
	case OPT_PROTECT:
		if (add_protect(c, arg))
			FAIL("--protect %s: expected an IPv4 or IPv6 PREFIX (ADDR or ADDR/LEN, no host "
			     "bits past LEN) and an optional =WEIGHT from 1 to %d; at most %d",
			     arg, CONFIG_MAX_WEIGHT, CONFIG_MAX_PROTECT);
		return 0;
	case OPT_SEQUENCE_JUMP:
		if (parse_u64(arg, 1, 1ULL << 40, &v))
			FAIL("--sequence-jump %s: expected a number from 1 to 2^40", arg);
		c->sequence_jump = v;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* Output: the destination, the records' format, order and pace. */
static error_t parse_output_opt(struct parse_state *ps, int key, char *arg)
{
	struct config *c = ps->c;

	switch (key) {
	case OPT_OUTPUT: {
		int ret;

		if (ps->set_by[OPT_OUTPUT] != ps->layer)
			output_routes_reset(c);
		ret = output_routes_parse(c, arg, ps->err, ps->errlen);
		if (ret >= 0)
			return ret;
		c->output_unnamed = true;
		return outputs_parse(c, arg, ps->err, ps->errlen);
	}
	case OPT_FORMAT:
		if (format_from_name(arg, &c->format))
			FAIL("--format %s: expected raw, json, rfc5424 or original", arg);
		return 0;
	case OPT_FRAMING:
		if (!strcmp(arg, "octet"))
			c->framing = FRAMING_OCTET;
		else if (!strcmp(arg, "newline"))
			c->framing = FRAMING_NEWLINE;
		else
			FAIL("--framing %s: expected octet or newline", arg);
		return 0;
	case OPT_NO_ESCAPE_CONTROL:
		c->escape_control = false;
		return 0;
	case OPT_JSON_RAW:
		c->json_raw = true;
		return 0;
	case OPT_TIMEZONE:
		if (parse_timezone(c, arg))
			FAIL("--timezone %s: expected local, UTC, +HH:MM, -HH:MM or a zone of "
			     "/usr/share/zoneinfo (e.g. Europe/Paris)",
			     arg);
		return 0;
	case OPT_GUESS_TIMEZONE:
		c->guess_tz = true;
		return 0;
	case OPT_ORDERED:
		c->ordered = true;
		c->ordered_hold_ms = CONFIG_ORDERED_HOLD_MS;
		if (arg && parse_u64(arg, 1, 10000, &c->ordered_hold_ms))
			FAIL("--ordered=%s: expected a hold in milliseconds from 1 to 10000", arg);
		return 0;
	case OPT_OUTPUT_RATE:
		if (parse_u64(arg, 0, 100000000ULL, &c->output_rate))
			FAIL("--output-rate %s: expected msgs/s from 0 (no cap) to 100000000", arg);
		return 0;
	case OPT_DRAIN_TIMEOUT:
		if (parse_seconds(arg, 0, 3600.0, &c->drain_timeout))
			FAIL("--drain-timeout %s: expected seconds from 0 to 3600", arg);
		return 0;
	case OPT_STOP_TIMEOUT:
		if (parse_seconds(arg, 0, 3600.0, &c->stop_timeout))
			FAIL("--stop-timeout %s: expected seconds from 0 to 3600", arg);
		return 0;
	case OPT_STALL_TIMEOUT:
		if (parse_seconds(arg, 1.0, 3600.0, &c->stall_timeout))
			FAIL("--stall-timeout %s: expected seconds from 1 to 3600", arg);
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* An output's own flags: its parse_opt (rx/settings/output_def.h). */
static error_t parse_outputs_opt(struct parse_state *ps, int key, char *arg)
{
	int ret = outputs_parse_opt(ps->c, key, arg, ps->err, ps->errlen);

	return ret < 0 ? ARGP_ERR_UNKNOWN : ret;
}

static error_t parse_disk_buffer_opt(struct parse_state *ps, int key, char *arg)
{
	struct config *c = ps->c;
	uint64_t v;

	switch (key) {
	case OPT_DISK_BUFFER:
		if (!*arg || strlen(arg) >= sizeof(c->disk_buffer))
			FAIL("--disk-buffer %s: expected a directory path", arg);
		snprintf(c->disk_buffer, sizeof(c->disk_buffer), "%s", arg);
		return 0;
	case OPT_DISK_BUFFER_SIZE:
		if (parse_size(arg, 1ULL << 20, 1ULL << 50, &c->disk_buffer_size))
			FAIL("--disk-buffer-size %s: expected bytes from 1M, with an optional K/M/G suffix",
			     arg);
		return 0;
	case OPT_DISK_BUFFER_MODE:
		if (strcmp(arg, "spill") && strcmp(arg, "reliable"))
			FAIL("--disk-buffer-mode %s: expected spill or reliable", arg);
		c->disk_buffer_mode = strcmp(arg, "reliable") ? DISKBUF_SPILL : DISKBUF_RELIABLE;
		return 0;
	case OPT_DISK_BUFFER_SYNC:
		if (parse_u64(arg, 0, 3600000, &v))
			FAIL("--disk-buffer-sync %s: expected milliseconds from 0 to 3600000", arg);
		c->disk_buffer_sync_ms = v;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* --metrics and --health: an HTTP endpoint's address. */
static error_t parse_endpoint(struct parse_state *ps, int key, const char *arg)
{
	struct config *c = ps->c;
	struct sockaddr_storage addr;
	socklen_t len;
	bool m = key == OPT_METRICS;
	char *dst = m ? c->metrics : c->health;

	_Static_assert(sizeof(c->metrics) == sizeof(c->health), "one size for both");
	if (strlen(arg) >= sizeof(c->metrics) || http_metrics_parse(arg, &addr, &len))
		FAIL("--%s %s: expected PORT or ADDR:PORT, e.g. %s or 127.0.0.1:%s",
		     m ? "metrics" : "health", arg, m ? "9464" : "9465", m ? "9464" : "9465");
	snprintf(dst, sizeof(c->metrics), "%s", arg);
	return 0;
}

/* The run: its length, its reports and endpoints, its user. */
static error_t parse_run_opt(struct parse_state *ps, int key, char *arg)
{
	struct config *c = ps->c;

	switch (key) {
	case OPT_DURATION:
		if (parse_seconds(arg, 0.001, 86400.0 * 365, &c->duration))
			FAIL("--duration %s: expected seconds, e.g. 10 or 0.5", arg);
		return 0;
	case OPT_VERBOSE:
		c->verbose = true;
		return 0;
	case OPT_SUMMARY:
		if (!*arg || strlen(arg) >= sizeof(c->summary))
			FAIL("--summary %s: expected a file path", arg);
		snprintf(c->summary, sizeof(c->summary), "%s", arg);
		return 0;
	case OPT_STATS_INTERVAL:
		if (parse_seconds(arg, 0.01, 86400.0, &c->stats_interval))
			FAIL("--stats-interval %s: expected seconds, e.g. 1 or 0.5", arg);
		return 0;
	case OPT_METRICS:
	case OPT_HEALTH:
		return parse_endpoint(ps, key, arg);
	case OPT_USER:
		if (!*arg || strlen(arg) >= sizeof(c->user))
			FAIL("--user %s: expected a user name or number", arg);
		snprintf(c->user, sizeof(c->user), "%s", arg);
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* The files of settings: --config on the command line, --env-file above it. */
static error_t parse_file_opt(struct parse_state *ps, int key, char *arg)
{
	struct config *c = ps->c;

	switch (key) {
	case OPT_CONFIG:
		if (ps->layer != LAYER_CMDLINE)
			FAIL("--config %s: only on the command line", arg);
		if (!*arg || strlen(arg) >= sizeof(c->config_file))
			FAIL("--config %s: expected a file path", arg);
		snprintf(c->config_file, sizeof(c->config_file), "%s", arg);
		return 0;
	case OPT_ENV_FILE:
		if (ps->layer == LAYER_ENV)
			FAIL("--env-file %s: not inside an env file", arg);
		if (!*arg || strlen(arg) >= sizeof(c->env_file))
			FAIL("--env-file %s: expected a file path", arg);
		snprintf(c->env_file, sizeof(c->env_file), "%s", arg);
		return 0;
	case OPT_CHECK_CONFIG:
		if (ps->layer != LAYER_CMDLINE)
			FAIL("--check-config: only on the command line");
		c->check_config = true;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	static error_t (*const block[])(struct parse_state *, int, char *) = {
		parse_input_opt,       parse_accounting_opt, parse_output_opt, parse_outputs_opt,
		parse_disk_buffer_opt, parse_run_opt,	     parse_file_opt,
	};
	struct parse_state *ps = state->input;
	error_t ret = ARGP_ERR_UNKNOWN;

	switch (key) {
	case ARGP_KEY_ARG:
		FAIL("unexpected argument '%s' (every setting is a --flag)", arg);
	case ARGP_KEY_END:
		/* Settings still to come from other layers may make it whole. */
		/* --check-config runs every check itself, to name each problem. */
		return ps->final && !ps->c->check_config ?
			       config_check(ps->c, ps->err, ps->errlen) :
			       0;
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(block) && ret == ARGP_ERR_UNKNOWN; i++)
		ret = block[i](ps, key, arg);
	if (ret)
		return ret;
	if (key >= 0 && key < OPT_KEY_MAX)
		ps->set_by[key] = ps->layer;
	return 0;
}

/* --help: --balance's policies, from their table (bpf/balancer.h). */
static char *help_filter(int key, const char *text, void *input)
{
	char names[128], *out;

	(void)input;
	if (key != OPT_BALANCE ||
	    asprintf(&out, "%s %s", balance_policy_list(names, sizeof(names), " | ", " | ", 0, 0),
		     text) < 0)
		return (char *)text;
	return out;
}

static const struct argp argp = { config_options, parse_arg, NULL, config_doc, NULL, help_filter };

/*
 * One setting from a file, `name = value` with a long flag name, through the
 * same parser as the command line: "--name=value" (a flag without argument
 * takes yes/true/1 or nothing; no/false/0 leaves it unset). Exact names only:
 * argp would take an abbreviation.
 */
static int apply_setting(struct parse_state *ps, const char *name, const char *value,
			 bool has_value)
{
	const struct argp_option *o = config_option_named(name);
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
			m->rows[i].flag[0] ? config_option_named(m->rows[i].flag + 2) : NULL;

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
