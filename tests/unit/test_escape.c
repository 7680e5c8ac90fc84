// SPDX-License-Identifier: MIT
/* Output line escaping and the JSON writer: byte-exact. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/escape.h"
#include "common/json_writer.h"

static void check_with(size_t (*escape)(char *, const char *, size_t), const char *in, size_t len,
		       const char *want)
{
	char out[256];
	size_t n = escape(out, in, len);

	assert_true(n <= ESCAPE_LINE_MAX(len));
	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n);
}

static void check_line(const char *in, size_t len, const char *want)
{
	check_with(escape_line, in, len, want);
}

static void test_escape_line(void **state)
{
	check_line("plain text", 10, "plain text");
	check_line("a\nb", 3, "a\\nb");
	check_line("a\r\nb\n", 5, "a\\r\\nb\\n");
	check_line("C:\\temp", 7, "C:\\\\temp");
	check_line("nul\0here", 8, "nul\\0here");
	check_line("\xff\xfe", 2, "\xff\xfe"); /* bytes kept as they are */
	check_line("", 0, "");
	check_line("\n\n", 2, "\\n\\n"); /* worst case: twice the input */
}

static void check_ctl(const char *in, size_t len, const char *want)
{
	check_with(escape_line_ctl, in, len, want);
}

/* rsyslog's $EscapeControlCharactersOnReceive form, byte-exact */
static void test_escape_line_ctl(void **state)
{
	check_ctl("plain text", 10, "plain text");
	check_ctl("\x1b[31mred\x1b[0m", 12, "#033[31mred#033[0m");
	check_ctl("a\tb", 3, "a#011b");
	check_ctl("del\x7f", 4, "del#177");
	check_ctl("\x01\x1f", 2, "#001#037");
	/* the line's own escapes stay backslashes: one line, NUL visible */
	check_ctl("a\nb\r\\\0", 6, "a\\nb\\r\\\\\\0");
	/* not controls: space, printable, UTF-8 and other high bytes */
	check_ctl(" ~\xc3\xa9\x80\xff", 6, " ~\xc3\xa9\x80\xff");
	check_ctl("\x1b\x1b", 2, "#033#033"); /* worst case: four times the input */
}

static void check_json(const char *in, size_t len, const char *want)
{
	char out[512];
	size_t n = escape_json(out, in, len);

	assert_true(n <= ESCAPE_JSON_MAX(len));
	if (n != strlen(want) || memcmp(out, want, n))
		fail_msg("escape_json: got '%.*s' want '%s'", (int)n, out, want);
}

static void test_escape_json(void **state)
{
	check_json("hello", 5, "hello");
	check_json("say \"hi\"", 8, "say \\\"hi\\\"");
	check_json("back\\slash", 10, "back\\\\slash");
	check_json("tab\there\nnl\rcr", 14, "tab\\there\\nnl\\rcr");
	check_json("\x01\x1f", 2, "\\u0001\\u001f");
	check_json("nul\0", 4, "nul\\u0000");
	check_json("caf\xc3\xa9", 5, "caf\xc3\xa9");			   /* valid UTF-8 kept */
	check_json("\xe2\x82\xac", 3, "\xe2\x82\xac");			   /* euro sign */
	check_json("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");		   /* emoji */
	check_json("bad\xff", 4, "bad\\ufffd");				   /* invalid byte */
	check_json("\xc3", 1, "\\ufffd");				   /* truncated sequence */
	check_json("\xc0\xaf", 2, "\\ufffd\\ufffd");			   /* overlong */
	check_json("\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd");		   /* surrogate */
	check_json("\xf4\x90\x80\x80", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"); /* > U+10FFFF */
}

static void test_json_writer(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer w;

	jw_init(&w, f, false);
	jw_object_begin(&w, NULL);
	jw_u64(&w, "a", 18446744073709551615ULL);
	jw_i64(&w, "b", -5);
	jw_string(&w, "s", "x\"y");
	jw_string(&w, "n", NULL);
	jw_array_begin(&w, "list");
	jw_u64(&w, NULL, 1);
	jw_object_begin(&w, NULL);
	jw_bool(&w, "t", true);
	jw_object_end(&w);
	jw_array_end(&w);
	jw_array_begin(&w, "empty");
	jw_array_end(&w);
	jw_double(&w, "d", 1.5, 2);
	jw_double(&w, "nan", 0.0 / 0.0, 2);
	jw_object_end(&w);
	jw_finish(&w);
	fclose(f);
	assert_string_equal(buf,
			    "{\"a\":18446744073709551615,\"b\":-5,\"s\":\"x\\\"y\",\"n\":null,"
			    "\"list\":[1,{\"t\":true}],\"empty\":[],\"d\":1.50,\"nan\":null}\n");
	free(buf);
}

static void test_json_writer_pretty(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer w;

	jw_init(&w, f, true);
	jw_object_begin(&w, NULL);
	jw_u64(&w, "a", 1);
	jw_array_begin(&w, "l");
	jw_u64(&w, NULL, 2);
	jw_array_end(&w);
	jw_object_end(&w);
	jw_finish(&w);
	fclose(f);
	assert_string_equal(buf, "{\n  \"a\": 1,\n  \"l\": [\n    2\n  ]\n}\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_line),	   cmocka_unit_test(test_escape_line_ctl),
		cmocka_unit_test(test_escape_json),	   cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_json_writer_pretty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
