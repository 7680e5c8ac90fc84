// SPDX-License-Identifier: MIT
/* Output line escaping and the JSON writer: byte-exact. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <iconv.h>
#include <stdbool.h>
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
	check_ctl(" ~\xc3\xa9\xa0\xff", 6, " ~\xc3\xa9\xa0\xff");
	/* C1 controls as net_text_log shows them: U+0080..U+009F by code point,
	 * a byte 0x80..0x9F of no valid sequence by its value */
	check_ctl("\xc2\x9b"
		  "2J",
		  4, "#2332J");
	check_ctl("\xc2\x80\xc2\x9f\xc2\xa0", 6, "#200#237\xc2\xa0");
	check_ctl("\x9b"
		  "31m\x85",
		  5, "#23331m#205");
	check_ctl("\xe2\x82\xac\xe2\x82", 5, "\xe2\x82\xac\xe2#202"); /* cut: its 0x82 is alone */
	check_ctl("\xc2", 1, "\xc2");
	check_with(escape_ctl, "\xc2\x9b\x9b\\\xc3\xa9", 6, "#233#233\\\xc3\xa9");
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
	check_json("caf\xc3\xa9", 5, "caf\xc3\xa9");			     /* valid UTF-8 kept */
	check_json("\xe2\x82\xac", 3, "\xe2\x82\xac");			     /* euro sign */
	check_json("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");		     /* emoji */
	check_json("bad\xff", 4, "bad\\ufffd");				     /* invalid byte */
	check_json("\xc2\x9b\xc2\x80\xc2\xa0", 6, "\\u009b\\u0080\xc2\xa0"); /* C1 escaped */
	check_json("\x9b", 1, "\\ufffd");				     /* lone 0x9B */
	check_json("\xc3", 1, "\\ufffd");				   /* truncated sequence */
	check_json("\xc0\xaf", 2, "\\ufffd\\ufffd");			   /* overlong */
	check_json("\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd");		   /* surrogate */
	check_json("\xf4\x90\x80\x80", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"); /* > U+10FFFF */
}

/*
 * The oracle: glibc's iconv, a strict UTF-8 decoder written by others
 * (overlongs, surrogates and code points past U+10FFFF refused). The n bytes
 * at s are exactly one character if iconv turns them into one UTF-32 unit.
 */
static bool iconv_one_char(iconv_t cd, const unsigned char *s, size_t n)
{
	char in[4], out[16], *ip = in, *op = out;
	size_t il = n, ol = sizeof(out);

	memcpy(in, s, n);
	iconv(cd, NULL, NULL, NULL, NULL);
	if (iconv(cd, &ip, &il, &op, &ol) == (size_t)-1)
		return false;
	return il == 0 && sizeof(out) - ol == 4;
}

/* The length of the character at s by the oracle, 0 if none starts there. */
static size_t oracle_len(iconv_t cd, const unsigned char *s, size_t avail)
{
	for (size_t n = 1; n <= 4 && n <= avail; n++)
		if (iconv_one_char(cd, s, n))
			return n;
	return 0;
}

/* What escape_json must write for s (no byte below 0x20, no '"' or '\\'):
 * each character the oracle accepts as it is, each other byte as U+FFFD. */
static size_t oracle_json(iconv_t cd, const unsigned char *s, size_t len, char *out)
{
	char *o = out;

	for (size_t i = 0; i < len;) {
		size_t n = oracle_len(cd, s + i, len - i);

		if (n == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0) { /* C1: U+0080..U+009F */
			o += sprintf(o, "\\u%04x", s[i + 1]);
			i += n;
		} else if (n) {
			memcpy(o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(o, "\\ufffd", 6);
			o += 6;
			i++;
		}
	}
	return o - out;
}

/*
 * Every lead byte 0x80..0xff, every second byte, and third and fourth bytes
 * from the values where the rules change, each sequence cut at every length:
 * escape_json writes what the oracle says, and utf8_seq_len agrees with it.
 */
static void test_json_utf8_against_iconv(void **state)
{
	static const unsigned char tail[] = { 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0 };
	iconv_t cd = iconv_open("UTF-32LE", "UTF-8");
	unsigned char s[4];
	char got[64], want[64];

	assert_true(cd != (iconv_t)-1);
	for (unsigned int b0 = 0x80; b0 <= 0xff; b0++)
		for (unsigned int b1 = 0; b1 <= 0xff; b1++)
			for (size_t t2 = 0; t2 < sizeof(tail); t2++)
				for (size_t t3 = 0; t3 < sizeof(tail); t3++) {
					s[0] = b0, s[1] = b1, s[2] = tail[t2], s[3] = tail[t3];
					if (b1 < 0x20 || b1 == '"' || b1 == '\\')
						continue; /* ASCII escapes: test_escape_json */
					for (size_t len = 1; len <= 4; len++) {
						size_t n = escape_json(got, (const char *)s, len);
						size_t w = oracle_json(cd, s, len, want);

						if (n != w || memcmp(got, want, n))
							fail_msg(
								"escape_json(%02x %02x %02x %02x, %zu): "
								"got '%.*s' want '%.*s'",
								b0, b1, s[2], s[3], len, (int)n,
								got, (int)w, want);
						assert_int_equal(utf8_seq_len(s, len),
								 oracle_len(cd, s, len));
					}
				}
	iconv_close(cd);
}

/* The edges by name: 3- and 4-byte overlongs, surrogates, past U+10FFFF,
 * and the first and last valid sequence beside each. */
static void test_json_utf8_edges(void **state)
{
	check_json("\xe0\x80\xaf", 3, "\\ufffd\\ufffd\\ufffd"); /* '/' overlong in 3 */
	check_json("\xe0\x9f\xbf", 3, "\\ufffd\\ufffd\\ufffd"); /* U+07FF overlong */
	check_json("\xe0\xa0\x80", 3, "\xe0\xa0\x80");		/* U+0800, first 3-byte */
	check_json("\xf0\x80\x80\xaf", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"); /* '/' overlong in 4 */
	check_json("\xf0\x8f\xbf\xbf", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"); /* U+FFFF overlong */
	check_json("\xf0\x90\x80\x80", 4, "\xf0\x90\x80\x80");	/* U+10000, first 4-byte */
	check_json("\xed\x9f\xbf", 3, "\xed\x9f\xbf");		/* U+D7FF */
	check_json("\xed\xa0\x80", 3, "\\ufffd\\ufffd\\ufffd"); /* U+D800 */
	check_json("\xed\xbf\xbf", 3, "\\ufffd\\ufffd\\ufffd"); /* U+DFFF */
	check_json("\xee\x80\x80", 3, "\xee\x80\x80");		/* U+E000 */
	check_json("\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf");	/* U+10FFFF */
	check_json("\xf4\x90\x80\x80", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"); /* U+110000 */
	check_json("\xf7\xbf\xbf\xbf", 4, "\\ufffd\\ufffd\\ufffd\\ufffd"); /* U+1FFFFF */
	check_json("\xc3\xc3\xa9", 3, "\\ufffd\xc3\xa9"); /* lead, not continuation */
	check_json("\xe2\x82", 2, "\\ufffd\\ufffd");	  /* cut short */
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
		cmocka_unit_test(test_escape_line),
		cmocka_unit_test(test_escape_line_ctl),
		cmocka_unit_test(test_escape_json),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_json_writer_pretty),
		cmocka_unit_test(test_json_utf8_edges),
		cmocka_unit_test(test_json_utf8_against_iconv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
