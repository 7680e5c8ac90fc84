// SPDX-License-Identifier: MIT
/* The Prometheus text exposition writer: byte-exact output. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/prom_text.h"

static void expect_text(struct prom_text *p, const char *want)
{
	size_t len = 0;
	char *got = prom_text_take(p, &len);

	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	free(got);
}

static void test_family_and_samples(void **state)
{
	struct prom_text p;
	struct prom_labels l;

	prom_text_init(&p);
	prom_family(&p, "syslogrx_socket_received_total", PROM_COUNTER,
		    "Datagrams read from the socket.");
	prom_labels_init(&l);
	prom_label_u64(&l, "socket", 0);
	prom_u64(&p, "syslogrx_socket_received_total", &l, 12345);
	prom_labels_init(&l);
	prom_label_u64(&l, "socket", 1);
	prom_u64(&p, "syslogrx_socket_received_total", &l, 0);
	prom_family(&p, "syslogrx_window_messages", PROM_GAUGE, "Messages held now.");
	prom_u64(&p, "syslogrx_window_messages", NULL, 18446744073709551615ULL);
	expect_text(&p, "# HELP syslogrx_socket_received_total Datagrams read from the socket.\n"
			"# TYPE syslogrx_socket_received_total counter\n"
			"syslogrx_socket_received_total{socket=\"0\"} 12345\n"
			"syslogrx_socket_received_total{socket=\"1\"} 0\n"
			"# HELP syslogrx_window_messages Messages held now.\n"
			"# TYPE syslogrx_window_messages gauge\n"
			"syslogrx_window_messages 18446744073709551615\n");
}

static void test_label_escaping(void **state)
{
	struct prom_text p;
	struct prom_labels l;

	prom_text_init(&p);
	prom_labels_init(&l);
	prom_label(&l, "comm", "a\\b\"c\nd");
	prom_label(&l, "local", "[::1]:514");
	prom_label(&l, "empty", "");
	prom_u64(&p, "x", &l, 7);
	expect_text(&p, "x{comm=\"a\\\\b\\\"c\\nd\",local=\"[::1]:514\",empty=\"\"} 7\n");
}

static void test_help_escaping(void **state)
{
	struct prom_text p;

	prom_text_init(&p);
	/* HELP escapes backslash and newline only; quotes stay as they are. */
	prom_family(&p, "y", PROM_GAUGE, "C:\\dir \"q\"\nnext");
	expect_text(&p, "# HELP y C:\\\\dir \"q\"\\nnext\n# TYPE y gauge\n");
}

static void test_doubles(void **state)
{
	struct prom_text p;

	prom_text_init(&p);
	prom_double(&p, "a", NULL, 0.1);
	prom_double(&p, "a", NULL, 1.5);
	prom_double(&p, "a", NULL, 0);
	prom_double(&p, "a", NULL, 123456.789);
	prom_double(&p, "a", NULL, INFINITY);
	prom_double(&p, "a", NULL, -INFINITY);
	prom_double(&p, "a", NULL, NAN);
	prom_raw(&p, "# raw\n", 6);
	expect_text(&p, "a 0.1\na 1.5\na 0\na 123456.789\na +Inf\na -Inf\na NaN\n# raw\n");
}

static void test_bad_names_refused(void **state)
{
	struct prom_text p;
	struct prom_labels l;
	size_t len;

	prom_text_init(&p);
	prom_u64(&p, "9starts_with_digit", NULL, 1);
	assert_int_equal(p.error, -EINVAL);
	assert_null(prom_text_take(&p, &len));

	prom_text_init(&p);
	prom_labels_init(&l);
	prom_label(&l, "bad:colon", "v"); /* colons are for metric names only */
	prom_u64(&p, "ok", &l, 1);
	assert_int_equal(p.error, -EINVAL);
	prom_text_free(&p);

	prom_text_init(&p);
	prom_family(&p, "has space", PROM_COUNTER, "h");
	assert_int_equal(p.error, -EINVAL);
	prom_text_free(&p);
}

static void test_large_grows(void **state)
{
	struct prom_text p;
	struct prom_labels l;
	size_t len = 0;
	char *got;

	prom_text_init(&p);
	for (unsigned int i = 0; i < 5000; i++) {
		prom_labels_init(&l);
		prom_label_u64(&l, "socket", i);
		prom_u64(&p, "n_total", &l, i);
	}
	got = prom_text_take(&p, &len);
	assert_non_null(got);
	assert_int_equal(strlen(got), len);
	assert_non_null(strstr(got, "n_total{socket=\"4999\"} 4999\n"));
	assert_memory_equal(got, "n_total{socket=\"0\"} 0\nn_total{socket=\"1\"} 1\n", 42);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_and_samples), cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_help_escaping),	   cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_bad_names_refused),  cmocka_unit_test(test_large_grows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
