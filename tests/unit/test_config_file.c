// SPDX-License-Identifier: MIT
/* --config and --env-file: the layers, their precedence, errors naming file
 * and line, and SC4S's env_file mapped with its warnings. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rx/settings/config.h"

static char err[512];
static char conf_path[64], env_path[64];
static struct config c;

static void write_file(char *path, const char *text)
{
	int fd;

	strcpy(path, "/tmp/test_config_file.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

#define PARSE(...)                                                            \
	({                                                                    \
		char *argv_[] = { "syslogrx", __VA_ARGS__, NULL };            \
		config_parse(&c, sizeof(argv_) / sizeof(argv_[0]) - 1, argv_, \
			     ARGP_NO_EXIT | ARGP_NO_ERRS, err, sizeof(err));  \
	})

static int teardown(void **state)
{
	if (conf_path[0])
		unlink(conf_path);
	if (env_path[0])
		unlink(env_path);
	conf_path[0] = env_path[0] = '\0';
	return 0;
}

static const struct env_mapping *row(const char *name)
{
	for (unsigned int i = 0; i < c.env.n; i++)
		if (!strcmp(c.env.rows[i].name, name))
			return &c.env.rows[i];
	return NULL;
}

static bool warned(const char *what)
{
	for (unsigned int i = 0; i < c.env.nr_warnings; i++)
		if (strstr(c.env.warnings[i], what))
			return true;
	return false;
}

static void test_config_file_and_command_line(void **state)
{
	write_file(conf_path,
		   "# syslogrx\n\nsockets = 8\nthreads=4   # a comment\n"
		   "balance = \"hash\"\nno-trace\nrcvbuf = 16M\noutput = file:/tmp/a#b.log\n");
	/* --threads 8 is valid only with the file's sockets = 8: layers checked as a whole. */
	assert_int_equal(PARSE("--config", conf_path, "--threads", "8", "--rcvbuf", "32M"), 0);
	assert_int_equal(c.sockets, 8);
	assert_int_equal(c.threads, 8); /* the command line wins */
	assert_int_equal(c.balance, BALANCE_HASH);
	assert_false(c.trace);
	assert_int_equal(c.rcvbuf, 32ULL << 20);
	assert_string_equal(c.output_arg, "/tmp/a#b.log"); /* '#' inside a value stays */
	assert_string_equal(c.config_file, conf_path);
}

/* One listen line per listener; the command line's --listen replace the
 * file's as a whole. */
static void test_listen_lines(void **state)
{
	write_file(conf_path, "listen = 127.0.0.1:5514\nlisten = cisco_asa=127.0.0.1:5000\n");
	assert_int_equal(PARSE("--config", conf_path), 0);
	assert_int_equal(c.nr_listeners, 2);
	assert_string_equal(c.listeners[0].name, "5514");
	assert_string_equal(c.listeners[1].name, "cisco_asa");
	assert_int_equal(PARSE("--config", conf_path, "--listen", "x=[::1]:6000"), 0);
	assert_int_equal(c.nr_listeners, 1);
	assert_string_equal(c.listeners[0].name, "x");
	assert_string_equal(c.listen, "[::1]:6000");
}

/* SC4S's per-vendor UDP ports: a listener each, named after the vendor; a
 * comma list, a listener per port; TCP and TLS left out, by line. */
static void test_env_file_vendor_ports(void **state)
{
	write_file(env_path, "SC4S_LISTEN_CISCO_ASA_UDP_PORT=5000\n"
			     "SC4S_LISTEN_DEFAULT_UDP_PORT=514,5514\n"
			     "SC4S_LISTEN_CISCO_ASA_TCP_PORT=5000\n"
			     "SC4S_LISTEN_DEFAULT_TLS_PORT=6514\n");
	assert_int_equal(PARSE("--env-file", env_path), 0);
	assert_int_equal(c.nr_listeners, 3);
	/* DEFAULT first, wherever it is written */
	assert_string_equal(c.listeners[0].name, "default_514");
	assert_string_equal(c.listeners[0].addr, "0.0.0.0:514");
	assert_string_equal(c.listeners[1].name, "default_5514");
	assert_string_equal(c.listeners[1].addr, "0.0.0.0:5514");
	assert_string_equal(c.listeners[2].name, "cisco_asa");
	assert_string_equal(c.listeners[2].addr, "0.0.0.0:5000");
	assert_true(c.listener_names);
	assert_string_equal(row("SC4S_LISTEN_DEFAULT_UDP_PORT")->became,
			    "default_514=0.0.0.0:514, default_5514=0.0.0.0:5514");
	assert_int_equal(row("SC4S_LISTEN_DEFAULT_UDP_PORT")->line, 2);
	assert_int_equal(row("SC4S_LISTEN_CISCO_ASA_UDP_PORT")->line, 1);
	assert_int_equal(c.env.nr_skipped, 2);
	assert_string_equal(c.env.skipped[0].name, "SC4S_LISTEN_CISCO_ASA_TCP_PORT");
	assert_int_equal(c.env.skipped[0].line, 3);
	assert_true(c.env.skipped[0].listener);
	assert_int_equal(c.env.skipped[1].line, 4);
	/* one DEFAULT port: one unnamed listener, records as before */
	teardown(NULL);
	write_file(env_path, "SC4S_LISTEN_DEFAULT_UDP_PORT=5514\n");
	assert_int_equal(PARSE("--env-file", env_path), 0);
	assert_int_equal(c.nr_listeners, 1);
	assert_false(c.listener_names);
	/* errors carry the same prefix as every other line */
	teardown(NULL);
	write_file(env_path, "\nSC4S_LISTEN_DEFAULT_UDP_PORT=514,x\n");
	assert_int_not_equal(PARSE("--env-file", env_path), 0);
	assert_true(!strncmp(err, "--env-file ", 11));
	assert_non_null(strstr(err, ":2: SC4S_LISTEN_DEFAULT_UDP_PORT=514,x: expected a port"));
	teardown(NULL);
	write_file(env_path, "SC4S_LISTEN_A_UDP_PORT=600\nSC4S_LISTEN_B_UDP_PORT=600\n");
	assert_int_not_equal(PARSE("--env-file", env_path), 0);
	assert_true(!strncmp(err, "--env-file ", 11));
	assert_non_null(strstr(err, ":2: SC4S_LISTEN_B_UDP_PORT=600: expected a port no other"));
	/* SC4S's DEFAULT listener keeps 514 when the file leaves it unset */
	teardown(NULL);
	write_file(env_path, "SC4S_LISTEN_A_UDP_PORT=514\n");
	assert_int_not_equal(PARSE("--env-file", env_path), 0);
	assert_non_null(strstr(err, ":1: SC4S_LISTEN_A_UDP_PORT=514: expected a port no other "
				    "SC4S_LISTEN_*_UDP_PORT has (the DEFAULT listener, unset"));
}

/* What SC4S does with what the file leaves unset: its DEFAULT listener on
 * 514 beside the vendor ports, 4 sockets, so-rcvbuf 17039360 (doubled by
 * the kernel); an empty DEFAULT port leaves that listener out. */
static void test_env_file_sc4s_defaults(void **state)
{
	write_file(env_path, "SC4S_LISTEN_CISCO_ASA_UDP_PORT=5516\n");
	assert_int_equal(PARSE("--env-file", env_path), 0);
	assert_int_equal(c.nr_listeners, 2);
	assert_string_equal(c.listeners[0].name, "default");
	assert_string_equal(c.listeners[0].addr, "0.0.0.0:514");
	assert_string_equal(c.listeners[1].name, "cisco_asa");
	assert_string_equal(c.listeners[1].addr, "0.0.0.0:5516");
	assert_int_equal(c.sockets, 4);
	assert_int_equal(c.rcvbuf, 2 * 17039360ULL);
	assert_true(row("SC4S_LISTEN_DEFAULT_UDP_PORT")->sc4s_default);
	assert_true(row("SC4S_SOURCE_UDP_SO_RCVBUFF")->sc4s_default);
	assert_string_equal(row("SC4S_SOURCE_UDP_SO_RCVBUFF")->value, "17039360");
	assert_false(row("SC4S_LISTEN_CISCO_ASA_UDP_PORT")->sc4s_default);
	assert_int_equal(row("SC4S_LISTEN_CISCO_ASA_UDP_PORT")->line, 1);
	/* nothing about listeners: SC4S's one, unnamed */
	teardown(NULL);
	write_file(env_path, "SC4S_SOURCE_LISTEN_UDP_SOCKETS=2\n");
	assert_int_equal(PARSE("--env-file", env_path), 0);
	assert_int_equal(c.nr_listeners, 1);
	assert_string_equal(c.listen, "0.0.0.0:514");
	assert_int_equal(c.sockets, 2);
	/* emptied: no default listener, the vendor's alone */
	teardown(NULL);
	write_file(env_path,
		   "SC4S_LISTEN_DEFAULT_UDP_PORT=\nSC4S_LISTEN_CISCO_ASA_UDP_PORT=5516\n");
	assert_int_equal(PARSE("--env-file", env_path), 0);
	assert_int_equal(c.nr_listeners, 1);
	assert_string_equal(c.listeners[0].addr, "0.0.0.0:5516");
	assert_int_equal(row("SC4S_LISTEN_DEFAULT_UDP_PORT")->line, 1);
	assert_non_null(strstr(row("SC4S_LISTEN_DEFAULT_UDP_PORT")->became, "no default listener"));
	/* the last one wins: emptied, then set again */
	teardown(NULL);
	write_file(env_path, "SC4S_LISTEN_DEFAULT_UDP_PORT=\nSC4S_LISTEN_DEFAULT_UDP_PORT=5514\n");
	assert_int_equal(PARSE("--env-file", env_path), 0);
	assert_string_equal(c.listen, "0.0.0.0:5514");
}

static void test_flag_without_value(void **state)
{
	write_file(conf_path, "no-trace = no\nverbose = yes\n");
	assert_int_equal(PARSE("--config", conf_path), 0);
	assert_true(c.trace);
	assert_true(c.verbose);
	teardown(NULL);
	write_file(conf_path, "no-trace = maybe\n");
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	assert_non_null(strstr(err, ":1: --no-trace takes no value"));
}

/* otlp-original in a file: on with an OTLP output, refused (naming the file,
 * its line and the flag) without one. */
static void test_otlp_original(void **state)
{
	write_file(conf_path, "output = otlp:http://127.0.0.1:4318\notlp-original = yes\n");
	assert_int_equal(PARSE("--config", conf_path), 0);
	assert_true(c.otlp.original);
	teardown(NULL);
	write_file(conf_path, "output = otlp:http://127.0.0.1:4318\notlp-original = no\n");
	assert_int_equal(PARSE("--config", conf_path), 0);
	assert_false(c.otlp.original);
	teardown(NULL);
	write_file(conf_path, "otlp-original\n");
	assert_int_not_equal(PARSE("--config", conf_path, "--output", "null"), 0);
	assert_non_null(strstr(err, "--otlp-original needs --output otlp:URL"));
}

static void test_unknown_name_names_file_and_line(void **state)
{
	char want[128];

	write_file(conf_path, "sockets = 2\n\n# x\nsock = 4\n");
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	snprintf(want, sizeof(want), "%s:4: unknown setting 'sock'", conf_path);
	assert_non_null(strstr(err, want)); /* no abbreviations, unlike argp */
}

static void test_bad_value_names_file_line_and_flag(void **state)
{
	char want[128];

	write_file(conf_path, "threads = 1\nsockets = lots\n");
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	snprintf(want, sizeof(want), "%s:2: --sockets lots: expected a number", conf_path);
	assert_non_null(strstr(err, want));
	teardown(NULL);
	write_file(conf_path, "rcvbuf\n");
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	assert_non_null(strstr(err, ":1: --rcvbuf needs a value"));
	teardown(NULL);
	write_file(conf_path, "config = /etc/other\n");
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	assert_non_null(strstr(err, "only on the command line"));
	/* A whole-configuration error after every layer. */
	teardown(NULL);
	write_file(conf_path, "sockets = 2\nthreads = 2\n");
	assert_int_not_equal(PARSE("--config", conf_path, "--threads", "3"), 0);
	assert_non_null(strstr(err, "--threads 3 is more than --sockets 2"));
}

static void test_missing_file(void **state)
{
	assert_int_not_equal(PARSE("--config", "/nonexistent/syslogrx.conf"), 0);
	assert_non_null(strstr(err, "/nonexistent/syslogrx.conf: No such file"));
}

static const char sc4s_env[] =
	"SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=https://splunk:8088\n"
	"SC4S_LISTEN_DEFAULT_UDP_PORT=5514\n"
	"SC4S_SOURCE_LISTEN_UDP_SOCKETS=8\n"
	"SC4S_ENABLE_EBPF=yes\n"
	"SC4S_EBPF_NO_SOCKETS=32 # to achieve best results set to number of threads x 4\n"
	"SC4S_SOURCE_UDP_SO_RCVBUFF=8388608\n"
	"SC4S_SOURCE_UDP_IW_SIZE=1000000\n"
	"SC4S_SOURCE_UDP_FETCH_LIMIT=1000\n"
	"SC4S_USE_NAME_CACHE=no\n"
	"SC4S_DEFAULT_TIMEZONE=America/Chicago\n";

static void test_env_file_mapping(void **state)
{
	write_file(env_path, sc4s_env);
	assert_int_equal(PARSE("--env-file", env_path), 0);
	assert_string_equal(c.listen, "0.0.0.0:5514");
	assert_int_equal(c.sockets, 8);
	assert_int_equal(c.balance, BALANCE_RANDOM);
	assert_int_equal(c.rcvbuf, 16ULL << 20); /* so-rcvbuf(N): the kernel doubles it */
	assert_int_equal(c.window, 1000000);
	assert_int_equal(c.window_bytes, 1000000ULL * 1024);
	assert_int_equal(c.batch, 1000);
	assert_string_equal(row("SC4S_SOURCE_UDP_SO_RCVBUFF")->flag, "--rcvbuf");
	assert_string_equal(row("SC4S_SOURCE_UDP_SO_RCVBUFF")->became, "16777216");
	assert_int_equal(row("SC4S_SOURCE_LISTEN_UDP_SOCKETS")->line, 3);
	assert_string_equal(row("SC4S_EBPF_NO_SOCKETS")->flag, "");
	/* SC4S's zone of stamps without one is --timezone's */
	assert_string_equal(row("SC4S_DEFAULT_TIMEZONE")->flag, "--timezone");
	assert_string_equal(c.timezone, "America/Chicago");
	assert_int_equal(c.tz_kind, TZ_NAMED);
	assert_int_equal(c.env.nr_ignored, 2);
	assert_string_equal(c.env.ignored, "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL, SC4S_USE_NAME_CACHE");
	/* Where SC4S would misbehave silently. */
	assert_true(warned("SC4S_EBPF_NO_SOCKETS=32 but SC4S_SOURCE_LISTEN_UDP_SOCKETS=8"));
	assert_true(warned("SC4S_SOURCE_UDP_IW_SIZE is set without SC4S_SOURCE_UDP_IW_USE=yes"));
	assert_true(
		warned("SC4S_SOURCE_UDP_FETCH_LIMIT is set without SC4S_SOURCE_UDP_IW_USE=yes"));
}

static void test_env_file_no_warning_when_consistent(void **state)
{
	write_file(env_path,
		   "SC4S_SOURCE_LISTEN_UDP_SOCKETS=4\nSC4S_EBPF_NO_SOCKETS=4\n"
		   "SC4S_ENABLE_EBPF=no\nSC4S_SOURCE_UDP_IW_USE=yes\nSC4S_SOURCE_UDP_IW_SIZE=5000\n"
		   "SC4S_SOURCE_UDP_SO_RCVBUFF=-1\n");
	assert_int_equal(PARSE("--env-file", env_path), 0);
	assert_int_equal(c.env.nr_warnings, 0);
	assert_int_equal(c.balance, BALANCE_HASH);
	assert_int_equal(c.window, 5000);
	assert_int_equal(c.window_bytes, 64ULL << 20); /* 5000 x 1 KB fits the default */
	assert_int_equal(c.rcvbuf, 0);		       /* -1: the kernel's default */
	assert_non_null(strstr(row("SC4S_SOURCE_UDP_SO_RCVBUFF")->became, "kernel's default"));
}

/* env-file < config file < command line, and the mapping says who won. */
static void test_precedence(void **state)
{
	write_file(env_path, sc4s_env);
	write_file(conf_path, "sockets = 6\n");
	{
		char line[128];
		FILE *f = fopen(conf_path, "a");

		snprintf(line, sizeof(line), "env-file = %s\n", env_path);
		fputs(line, f);
		fclose(f);
	}
	assert_int_equal(PARSE("--config", conf_path, "--batch", "256"), 0);
	assert_string_equal(c.env_file, env_path); /* named in the config file */
	assert_int_equal(c.sockets, 6);
	assert_int_equal(c.batch, 256);
	assert_int_equal(c.rcvbuf, 16ULL << 20);
	assert_string_equal(row("SC4S_SOURCE_LISTEN_UDP_SOCKETS")->overridden_by, "config");
	assert_string_equal(row("SC4S_SOURCE_UDP_FETCH_LIMIT")->overridden_by, "command line");
	assert_string_equal(row("SC4S_SOURCE_UDP_SO_RCVBUFF")->overridden_by, "");
}

static void test_env_file_bad_value(void **state)
{
	char want[128];

	write_file(env_path, "SC4S_ENABLE_EBPF=yes\nSC4S_SOURCE_LISTEN_UDP_SOCKETS=0\n");
	assert_int_not_equal(PARSE("--env-file", env_path), 0);
	snprintf(want, sizeof(want),
		 "%s:2: SC4S_SOURCE_LISTEN_UDP_SOCKETS=0: --sockets 0:", env_path);
	assert_non_null(strstr(err, want));
	teardown(NULL);
	write_file(env_path, "SC4S_ENABLE_EBPF=perhaps\n");
	assert_int_not_equal(PARSE("--env-file", env_path), 0);
	assert_non_null(strstr(err, ":1: SC4S_ENABLE_EBPF=perhaps: expected yes or no"));
}

/* A re-read without the command line (SIGHUP): the file over what is there. */
static void test_config_parse_file(void **state)
{
	assert_int_equal(PARSE("--sockets", "4"), 0);
	write_file(conf_path, "sockets = 16\nthreads = 4\n");
	assert_int_equal(config_parse_file(&c, conf_path, err, sizeof(err)), 0);
	assert_int_equal(c.sockets, 16);
	assert_int_equal(c.threads, 4);
	teardown(NULL);
	write_file(conf_path, "sockets = 2\nthreads = 4\n");
	assert_int_not_equal(config_parse_file(&c, conf_path, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--threads 4 is more than --sockets 2"));
}

/* SIGHUP's re-read (issue 13): the same argv again over a rewritten file. */
static void test_reread_resize_settings(void **state)
{
	static struct config before;
	FILE *f;

	write_file(conf_path, "# live resize\r\nsockets = 4\n\nthreads = 2   # two\r\n");
	assert_int_equal(PARSE("--config", conf_path, "--max-sockets", "8", "--ordered"), 0);
	assert_int_equal(c.sockets, 4);
	assert_int_equal(c.threads, 2);
	assert_int_equal(c.max_sockets, 8);
	assert_true(c.ordered);
	assert_false(c.shrink_naive);
	before = c;
	f = fopen(conf_path, "w"); /* the same path, new text */
	assert_non_null(f);
	fputs("sockets = 8\nthreads = 1\nshrink-naive\n", f);
	fclose(f);
	assert_int_equal(PARSE("--config", conf_path, "--max-sockets", "8", "--ordered"), 0);
	assert_int_equal(c.sockets, 8);
	assert_int_equal(c.threads, 1);
	assert_true(c.shrink_naive);
	/* Applied live: nothing that needs a restart. */
	assert_int_equal(config_restart_changes(&before, &c, NULL, NULL), 0);
}

/* A supervised receiver does not resize: a pool for resizes is refused. */
static void test_supervise_with_a_resize_pool_is_refused(void **state)
{
	assert_int_not_equal(PARSE("--supervise", "--sockets", "4", "--max-sockets", "8"), 0);
	assert_non_null(strstr(err, "--supervise and --max-sockets cannot be used together"));
	teardown(NULL);
	assert_int_equal(PARSE("--supervise", "--sockets", "4", "--max-sockets", "4"), 0);
}

static char changed[8][32];
static unsigned int nr_changed;

static void note_changed(const char *flag, void *ctx)
{
	(void)ctx;
	snprintf(changed[nr_changed++], sizeof(changed[0]), "%s", flag);
}

static void test_reread_names_what_needs_a_restart(void **state)
{
	static struct config before;
	FILE *f;

	write_file(conf_path, "sockets = 2\nrcvbuf = 1M\noutput = file:/a\n");
	assert_int_equal(PARSE("--config", conf_path, "--sockets", "3"), 0);
	assert_int_equal(c.sockets, 3); /* the command line pins it */
	before = c;
	f = fopen(conf_path, "w");
	assert_non_null(f);
	fputs("sockets = 6\nrcvbuf = 2M\noutput = file:/b\nno-trace\n", f);
	fclose(f);
	assert_int_equal(PARSE("--config", conf_path, "--sockets", "3"), 0);
	assert_int_equal(c.sockets, 3);
	nr_changed = 0;
	assert_int_equal(config_restart_changes(&before, &c, note_changed, NULL), 3);
	assert_int_equal(nr_changed, 3);
	assert_string_equal(changed[0], "rcvbuf");
	assert_string_equal(changed[1], "output"); /* once, though two fields differ */
	assert_string_equal(changed[2], "no-trace");
}

static void test_reread_errors_name_file_and_line(void **state)
{
	char want[128];

	write_file(conf_path, "sockets = 2\n\nsockets = x\n");
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	snprintf(want, sizeof(want), "%s:3: --sockets x", conf_path);
	assert_non_null(strstr(err, want));
	teardown(NULL);
	write_file(conf_path, "sockets = 2\nthreads = 3\n");
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	assert_non_null(strstr(err, "--threads 3 is more than --sockets 2"));
	teardown(NULL);
	write_file(conf_path, "shrink-naive = fast\n");
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	snprintf(want, sizeof(want), "%s:1: --shrink-naive takes no value", conf_path);
	assert_non_null(strstr(err, want));
	unlink(conf_path);
	assert_int_not_equal(PARSE("--config", conf_path), 0);
	assert_non_null(strstr(err, "No such file"));
	assert_non_null(strstr(err, conf_path));
	conf_path[0] = '\0';
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_config_file_and_command_line, teardown),
		cmocka_unit_test_teardown(test_flag_without_value, teardown),
		cmocka_unit_test_teardown(test_otlp_original, teardown),
		cmocka_unit_test_teardown(test_unknown_name_names_file_and_line, teardown),
		cmocka_unit_test_teardown(test_bad_value_names_file_line_and_flag, teardown),
		cmocka_unit_test_teardown(test_missing_file, teardown),
		cmocka_unit_test_teardown(test_env_file_mapping, teardown),
		cmocka_unit_test_teardown(test_env_file_no_warning_when_consistent, teardown),
		cmocka_unit_test_teardown(test_precedence, teardown),
		cmocka_unit_test_teardown(test_env_file_bad_value, teardown),
		cmocka_unit_test_teardown(test_config_parse_file, teardown),
		cmocka_unit_test_teardown(test_reread_resize_settings, teardown),
		cmocka_unit_test_teardown(test_supervise_with_a_resize_pool_is_refused, teardown),
		cmocka_unit_test_teardown(test_reread_names_what_needs_a_restart, teardown),
		cmocka_unit_test_teardown(test_reread_errors_name_file_and_line, teardown),
		cmocka_unit_test_teardown(test_listen_lines, teardown),
		cmocka_unit_test_teardown(test_env_file_vendor_ports, teardown),
		cmocka_unit_test_teardown(test_env_file_sc4s_defaults, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
