// SPDX-License-Identifier: MIT
/* The --resize-file parser and the flags of a live resize. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rx/config.h"
#include "rx/resize_file.h"

static char err[256];

static void test_keys_comments_blank_lines(void **state)
{
	struct resize_request r = { .sockets = 4, .threads = 2 };

	assert_int_equal(resize_parse("# grow\n\nsockets 8   # more\n\tthreads 3\n", &r, err,
				      sizeof(err)), 0);
	assert_int_equal(r.sockets, 8);
	assert_int_equal(r.threads, 3);
	assert_false(r.naive);
	assert_int_equal(resize_parse("shrink naive\r\n", &r, err, sizeof(err)), 0);
	assert_true(r.naive);
	assert_int_equal(r.sockets, 8);		/* a key not given keeps its value */
}

static void test_errors_name_the_line(void **state)
{
	struct resize_request r = { .sockets = 4, .threads = 2 };

	assert_int_equal(resize_parse("sockets 8\n\nsocket 9\n", &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 3"));
	assert_non_null(strstr(err, "socket"));
	assert_int_equal(resize_parse("threads 0\n", &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "threads 0"));
	assert_int_equal(resize_parse("sockets\n", &r, err, sizeof(err)), -EINVAL);
	assert_int_equal(resize_parse("sockets 4 5\n", &r, err, sizeof(err)), -EINVAL);
	assert_int_equal(resize_parse("shrink fast\n", &r, err, sizeof(err)), -EINVAL);
	assert_int_equal(r.sockets, 8);
}

static void test_file(void **state)
{
	struct resize_request r = { .sockets = 4, .threads = 2 };
	char path[] = "/tmp/srx13-resize-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "sockets 6\nthreads 2\n", 20), 20);
	close(fd);
	assert_int_equal(resize_file_read(path, &r, err, sizeof(err)), 0);
	assert_int_equal(r.sockets, 6);
	unlink(path);
	assert_int_equal(resize_file_read(path, &r, err, sizeof(err)), -ENOENT);
}

static int parse_flags(struct config *c, char **argv, int argc)
{
	return config_parse(c, argc, argv, ARGP_NO_EXIT | ARGP_NO_ERRS, err, sizeof(err));
}

static void test_flags(void **state)
{
	char *ok[] = { "syslogrx", "--sockets", "4", "--max-sockets", "8", "--resize-file", "/x",
		       "--supervise", NULL };
	char *less[] = { "syslogrx", "--sockets", "4", "--max-sockets", "2", NULL };
	char *zero[] = { "syslogrx", "--max-sockets", "0", NULL };
	struct config c;

	assert_int_equal(parse_flags(&c, ok, 8), 0);
	assert_int_equal(c.max_sockets, 8);
	assert_string_equal(c.resize_file, "/x");
	assert_true(c.supervise);
	assert_int_not_equal(parse_flags(&c, less, 5), 0);
	assert_non_null(strstr(err, "--max-sockets 2"));
	assert_int_not_equal(parse_flags(&c, zero, 3), 0);
	assert_non_null(strstr(err, "--max-sockets"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_comments_blank_lines),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
