// SPDX-License-Identifier: MIT
/* The whole-configuration checks, one concern at a time: each refusal's
 * message exactly, and a combination each concern accepts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "rx/settings/config.h"
#include "rx/settings/config_check.h"
#include "rx/settings/output_kafka.h"
#include "rx/settings/output_otlp.h"
#include "rx/settings/output_tls.h"

_Static_assert(CONFIG_MAX_SOCKETS == 4096, "the messages below name it");

static char err[512];
static struct config c;

/* The defaults, as the parser leaves them with no flag. */
static int setup(void **state)
{
	char *argv[] = { "syslogrx", NULL };

	err[0] = '\0';
	return config_parse(&c, 1, argv, ARGP_NO_EXIT | ARGP_NO_ERRS, err, sizeof(err));
}

#define REFUSED(call, msg)                        \
	do {                                      \
		err[0] = '\0';                    \
		assert_int_equal((call), EINVAL); \
		assert_string_equal(err, (msg));  \
	} while (0)

#define ACCEPTED(call)                        \
	do {                                  \
		err[0] = '\0';                \
		assert_int_equal((call), 0);  \
		assert_string_equal(err, ""); \
	} while (0)

static void listen_on(unsigned int i, const char *addr)
{
	snprintf(c.listeners[i].addr, sizeof(c.listeners[i].addr), "%s", addr);
	c.listeners[i].named = false;
	c.nr_listeners = i + 1;
}

static void test_listeners(void **state)
{
	listen_on(0, "127.0.0.1:5514");
	listen_on(1, "127.0.0.1:5515");
	c.sockets = 8;
	ACCEPTED(config_check_listeners(&c, err, sizeof(err)));
	assert_string_equal(c.listeners[1].name, "5515");
	assert_true(c.listener_names);

	c.sockets = 2049; /* CONFIG_MAX_SOCKETS is 4096 */
	REFUSED(config_check_listeners(&c, err, sizeof(err)),
		"--sockets 2049 (--max-sockets 0) for 2 listeners: at most 4096 sockets in all");
	c.sockets = 2;
	c.max_sockets = 3000; /* each listener binds its --max-sockets pool */
	REFUSED(config_check_listeners(&c, err, sizeof(err)),
		"--sockets 2 (--max-sockets 3000) for 2 listeners: at most 4096 sockets in all");
	c.max_sockets = 0;
	c.sockets = 8;
	listen_on(1, "127.0.0.1:5514x");
	REFUSED(config_check_listeners(&c, err, sizeof(err)),
		"--listen 127.0.0.1:5514x: not [NAME=]ADDR:PORT");
	listen_on(1, "[::1]:5514");
	c.listeners[1].named = true;
	snprintf(c.listeners[1].name, sizeof(c.listeners[1].name), "5514");
	REFUSED(config_check_listeners(&c, err, sizeof(err)),
		"--listen 127.0.0.1:5514 and --listen [::1]:5514: both named '5514' (unnamed, a "
		"listener is named after its port: give NAME=ADDR:PORT)");
	listen_on(1, "0.0.0.0:5514");
	REFUSED(config_check_listeners(&c, err, sizeof(err)),
		"--listen 127.0.0.1:5514 and --listen 0.0.0.0:5514: one address and port in two "
		"listeners (a datagram would match both)");
}

static void test_max_sockets(void **state)
{
	c.sockets = 4;
	c.max_sockets = 16;
	ACCEPTED(config_check_max_sockets(&c, err, sizeof(err)));
	c.max_sockets = 3;
	REFUSED(config_check_max_sockets(&c, err, sizeof(err)),
		"--max-sockets 3 is less than --sockets 4");
	c.max_sockets = 16;
	listen_on(1, "127.0.0.1:5515");
	ACCEPTED(config_check_max_sockets(&c, err, sizeof(err))); /* each listener resizes */
}

static void test_threads(void **state)
{
	c.sockets = 1;
	c.threads = 0;
	ACCEPTED(config_check_threads(&c, err, sizeof(err)));
	assert_int_equal(c.threads, 1); /* not given: --sockets, when under 2 */
	c.sockets = 8;
	c.threads = 0;
	ACCEPTED(config_check_threads(&c, err, sizeof(err)));
	assert_int_equal(c.threads, 2);

	c.threads = 9;
	REFUSED(config_check_threads(&c, err, sizeof(err)),
		"--threads 9 is more than --sockets 8: each thread owns at least one socket");
	c.threads = 4;
	c.nr_cost_ns = 3;
	REFUSED(config_check_threads(&c, err, sizeof(err)),
		"--cost-ns: 3 values for 4 threads (give one value, or one per thread)");
	c.nr_cost_ns = 4;
	ACCEPTED(config_check_threads(&c, err, sizeof(err)));
}

static void test_supervise(void **state)
{
	c.supervise = true;
	c.sockets = 4;
	c.max_sockets = 4;
	ACCEPTED(config_check_supervise(&c, err, sizeof(err)));
	c.max_sockets = 8;
	REFUSED(config_check_supervise(&c, err, sizeof(err)),
		"--supervise and --max-sockets cannot be used together: a supervised receiver "
		"does not resize (its supervisor holds the sockets); change --sockets and "
		"--threads with a restart");
}

static void test_kafka(void **state)
{
	c.kafka.key = KAFKA_KEY_SOURCE;
	REFUSED(kafka_options_check(&c, err, sizeof(err)),
		"--kafka-key and --kafka-opt need --output kafka:BROKERS/TOPIC");
	c.kafka.key = KAFKA_KEY_NONE;
	c.kafka.nr_opts = 1;
	REFUSED(kafka_options_check(&c, err, sizeof(err)),
		"--kafka-key and --kafka-opt need --output kafka:BROKERS/TOPIC");
	c.output = OUTPUT_KAFKA;
	c.kafka.key = KAFKA_KEY_SOURCE;
	ACCEPTED(kafka_options_check(&c, err, sizeof(err)));
}

static void test_otlp(void **state)
{
	c.otlp.json = true;
	REFUSED(otlp_options_check(&c, err, sizeof(err)),
		"--otlp-compression, -encoding, -ca, -cert, -key and -header need --output otlp:URL");
	c.otlp.json = false;
	c.otlp.original = true;
	REFUSED(otlp_options_check(&c, err, sizeof(err)),
		"--otlp-original needs --output otlp:URL (the other outputs carry the datagram "
		"already: --format raw, and json's \"raw\" with --json-raw)");

	c.output = OUTPUT_OTLP;
	snprintf(c.output_arg, sizeof(c.output_arg), "https://127.0.0.1:4318/v1/logs");
	c.format = FORMAT_JSON;
	REFUSED(otlp_options_check(&c, err, sizeof(err)),
		"--format json does not apply to --output otlp: each message is one OTLP log "
		"record (see --otlp-encoding)");
	c.format = FORMAT_RAW;
	snprintf(c.otlp.cert, sizeof(c.otlp.cert), "/etc/rx/client.pem");
	REFUSED(otlp_options_check(&c, err, sizeof(err)), "--otlp-cert and --otlp-key go together");
	snprintf(c.otlp.key, sizeof(c.otlp.key), "/etc/rx/client.key");
	ACCEPTED(otlp_options_check(&c, err, sizeof(err)));
	snprintf(c.output_arg, sizeof(c.output_arg), "http://127.0.0.1:4318/v1/logs");
	REFUSED(otlp_options_check(&c, err, sizeof(err)),
		"--otlp-ca, --otlp-cert and --otlp-key need an https:// URL");
}

static void test_format(void **state)
{
	c.json_raw = true;
	REFUSED(config_check_format(&c, err, sizeof(err)), "--json-raw needs --format json");
	c.format = FORMAT_JSON;
	ACCEPTED(config_check_format(&c, err, sizeof(err)));
}

static void test_tls(void **state)
{
	snprintf(c.tls.name, sizeof(c.tls.name), "logs.example.net");
	REFUSED(tls_options_check(&c, err, sizeof(err)),
		"--tls-ca, --tls-cert, --tls-key and --tls-name need --output tls:HOST:PORT");
	c.output = OUTPUT_TLS;
	ACCEPTED(tls_options_check(&c, err, sizeof(err)));
	snprintf(c.tls.key, sizeof(c.tls.key), "/etc/rx/client.key");
	REFUSED(tls_options_check(&c, err, sizeof(err)), "--tls-cert and --tls-key go together");
}

static void test_disk_buffer(void **state)
{
	snprintf(c.disk_buffer, sizeof(c.disk_buffer), "/var/spool/rx");
	REFUSED(config_check_disk_buffer(&c, err, sizeof(err)),
		"--disk-buffer needs --output tcp:HOST:PORT, tls:HOST:PORT, kafka:BROKERS/TOPIC or "
		"otlp:URL");
	c.output = OUTPUT_TCP;
	ACCEPTED(config_check_disk_buffer(&c, err, sizeof(err)));
	c.ordered = true;
	REFUSED(config_check_disk_buffer(&c, err, sizeof(err)),
		"--ordered and --disk-buffer cannot be used together yet: batches spilled to disk "
		"would not pass through the ordering");
	c.ordered = false;
	c.disk_buffer[0] = '\0';
	c.disk_buffer_sync_ms = 0;
	REFUSED(config_check_disk_buffer(&c, err, sizeof(err)),
		"--disk-buffer-size, -mode and -sync need --disk-buffer DIR");
}

static void test_sequences(void **state)
{
	c.sequence_jump = 5;
	REFUSED(config_check_sequences(&c, err, sizeof(err)),
		"--sequence-flows and --sequence-jump need --sequences");
	c.sequences = true;
	ACCEPTED(config_check_sequences(&c, err, sizeof(err)));
}

/* The whole: the defaults pass; a refusal from any concern stops it. */
static void test_all(void **state)
{
	ACCEPTED(config_check(&c, err, sizeof(err)));
	c.json_raw = true;
	REFUSED(config_check(&c, err, sizeof(err)), "--json-raw needs --format json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_listeners, setup),
		cmocka_unit_test_setup(test_max_sockets, setup),
		cmocka_unit_test_setup(test_threads, setup),
		cmocka_unit_test_setup(test_supervise, setup),
		cmocka_unit_test_setup(test_kafka, setup),
		cmocka_unit_test_setup(test_otlp, setup),
		cmocka_unit_test_setup(test_format, setup),
		cmocka_unit_test_setup(test_tls, setup),
		cmocka_unit_test_setup(test_disk_buffer, setup),
		cmocka_unit_test_setup(test_sequences, setup),
		cmocka_unit_test_setup(test_all, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
