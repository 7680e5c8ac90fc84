// SPDX-License-Identifier: MIT
/* common/net_text: what a peer sent, made safe for a label and a log line.
 * Byte-exact expectations written out by hand from RFC 3629 (valid forms)
 * and Unicode's "U+FFFD per maximal invalid byte" being one per byte here. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "common/net_text.h"

#define FFFD "\xef\xbf\xbd"

static void check(size_t (*fn)(char *, size_t, const char *, size_t), size_t cap, const char *in,
		  size_t len, const char *want)
{
	char out[256];
	size_t n;

	memset(out, 'X', sizeof(out));
	n = fn(out, cap, in, len);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n);
	assert_int_equal(out[n], '\0');
	assert_true(n < cap);
	assert_int_equal(out[n + 1], 'X'); /* nothing past the NUL */
}

#define LABEL(cap, in, want) check(net_text_label, cap, in, sizeof(in) - 1, want)
#define LOG(cap, in, want) check(net_text_log, cap, in, sizeof(in) - 1, want)

static void test_kept_as_sent(void **state)
{
	LABEL(64, "no such tenant", "no such tenant");
	LOG(64, "no such tenant", "no such tenant");
	/* valid two-, three- and four-byte characters, the last code points */
	LABEL(64, "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
	      "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
	LABEL(64, "quote \" and back\\slash", "quote \" and back\\slash"); /* prom_text's */
	LABEL(64, "", "");
}

static void test_controls(void **state)
{
	LABEL(64, "a\x1b[31mred\r\nforged", "a [31mred  forged");
	LOG(64, "a\x1b[31mred\r\nforged", "a#033[31mred#015#012forged");
	LOG(64, "tab\tdel\x7f", "tab#011del#177");
	LOG(64, "nul\0end", "nul#000end");
	/* C1 controls (U+0080..U+009F), e.g. U+009B, the 8-bit CSI */
	LABEL(64,
	      "x\xc2\x9b"
	      "31m\xc2\x80\xc2\x9f",
	      "x 31m  ");
	LOG(64,
	    "x\xc2\x9b"
	    "31m\xc2\x85",
	    "x#233"
	    "31m#205");
	/* U+00A0 is the first character past C1: kept */
	LOG(64, "\xc2\xa0", "\xc2\xa0");
}

static void test_invalid_utf8(void **state)
{
	/* a sequence cut short: each byte of it replaced */
	LABEL(64, "ab\xe2\x80", "ab" FFFD FFFD);
	LABEL(64, "ab\xe2\x80z", "ab" FFFD FFFD "z");
	LABEL(64, "\xf0\x9f\x98", FFFD FFFD FFFD);
	/* overlong forms of '/' and of NUL */
	LABEL(64, "\xc0\xaf", FFFD FFFD);
	LABEL(64, "\xe0\x80\xaf", FFFD FFFD FFFD);
	LOG(64, "\xc0\x80", FFFD FFFD);
	/* a UTF-16 surrogate, past U+10FFFF, a lone continuation, 0xfe/0xff */
	LABEL(64, "\xed\xa0\x80", FFFD FFFD FFFD);
	LABEL(64, "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);
	LABEL(64, "\x80", FFFD);
	LOG(64, "\xfe\xff", FFFD FFFD);
}

static void test_cut_on_a_boundary(void **state)
{
	/* 61 bytes, then an em dash: 63 bytes of room keep 61 and no part of it */
	const char in[] = "0123456789012345678901234567890123456789012345678901234567890"
			  "\xe2\x80\x94"
			  "x";

	check(net_text_label, 64, in, sizeof(in) - 1,
	      "0123456789012345678901234567890123456789"
	      "012345678901234567890");
	check(net_text_label, 65, in, sizeof(in) - 1,
	      "0123456789012345678901234567890123456789"
	      "012345678901234567890\xe2\x80\x94");
	LABEL(5, "ab\xe2\x80\x94", "ab");
	LABEL(6, "ab\xe2\x80\x94", "ab\xe2\x80\x94");
	/* neither a replacement nor an octal escape is cut either */
	LABEL(5, "ab\xff", "ab");
	LOG(5, "a\x1b", "a");
	LOG(6, "a\x1b", "a#033");
	LABEL(1, "abc", "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_as_sent),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_cut_on_a_boundary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
