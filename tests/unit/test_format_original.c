// SPDX-License-Identifier: MIT
/*
 * --format original and the octet-counted frame: the datagram's bytes as
 * they came, its line end left off and a '\n' or NUL inside written as
 * "#012" or "#000" as a line (counted), every byte with FORMAT_F_WHOLE; "LEN SP MSG" frames
 * and the count of messages a sink reads back from what was formatted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "syslog/format.h"
#include "syslog/syslog_parse.h"

static char out[4096];

/* One message of in (n bytes) with flags; *breaks counts escapes. */
static size_t fmt(const char *in, size_t n, unsigned int flags, uint32_t *breaks)
{
	struct msg_meta meta = { .breaks_escaped = breaks };

	memset(out, 0xAA, sizeof(out));
	return format_message_flags(out, FORMAT_ORIGINAL, flags, in, n, NULL, SYSLOG_MALFORMED,
				    &meta);
}

#define EXPECT(in, flags, want, nbreaks)                                       \
	do {                                                                   \
		uint32_t b = 0;                                                \
		size_t n = fmt(in, sizeof(in) - 1, flags, &b);                 \
		assert_int_equal(n, sizeof(want) - 1);                         \
		assert_memory_equal(out, want, n);                             \
		assert_int_equal(b, nbreaks);                                  \
		assert_true(n <= format_max_len(FORMAT_ORIGINAL, sizeof(in))); \
	} while (0)

/* As a line: in, what is written, whether counted. */
static const struct {
	const char *in;
	size_t len;
	const char *want;
	size_t want_len;
	uint32_t breaks;
} lines[] = {
#define LINE(in, want, breaks)                                     \
	{                                                          \
		in, sizeof(in) - 1, want, sizeof(want) - 1, breaks \
	}
	/* as it came: no escape of '\\', controls, invalid UTF-8, no parse */
	LINE("<134>%ASA-6-302013: a\\b\x1b\xff\t", "<134>%ASA-6-302013: a\\b\x1b\xff\t\n", 0),
	/* its own line end left off: '\n', "\r\n", NULs, and runs of them */
	LINE("<13>x\n", "<13>x\n", 0),
	LINE("<13>x\r\n", "<13>x\n", 0),
	LINE("<13>x\0", "<13>x\n", 0),
	LINE("<13>x\n\0\0", "<13>x\n", 0),
	LINE("\n\r\0", "\n", 0),
	LINE("", "\n", 0),
	/* a CR inside stays; a NUL ends a message for syslog-ng's network() */
	LINE("<13>a\rb", "<13>a\rb\n", 0),
	LINE("<13>a\0b\0", "<13>a#000b\n", 1),
	LINE("<13>a\0\nb\r\n", "<13>a#000#012b\n", 1),
	/* a line break inside: "#012", the datagram counted once */
	LINE("<13>a\nb\n\nc\n", "<13>a#012b#012#012c\n", 1),
	LINE("\nx", "#012x\n", 1),
#undef LINE
};

static void test_line(void **state)
{
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		uint32_t b = 0;
		size_t n = fmt(lines[i].in, lines[i].len, 0, &b);

		assert_int_equal(n, lines[i].want_len);
		assert_memory_equal(out, lines[i].want, n);
		assert_int_equal(b, lines[i].breaks);
		assert_true(n <= format_max_len(FORMAT_ORIGINAL, lines[i].len));
	}
}

static void test_whole(void **state)
{
	EXPECT("<13>a\nb\r\n\0", FORMAT_F_WHOLE, "<13>a\nb\r\n\0\n", 0);
	EXPECT("", FORMAT_F_WHOLE, "\n", 0);
}

static void test_octet_frame(void **state)
{
	unsigned int f = FORMAT_F_WHOLE | FORMAT_F_OCTET_FRAME;

	EXPECT("<13>a\nb\n", f, "8 <13>a\nb\n", 0);
	EXPECT("", f, "0 ", 0);
	/* a line format framed: the line without its '\n' */
	{
		size_t n = format_message_flags(out, FORMAT_RAW, FORMAT_F_OCTET_FRAME, "a\nb", 3,
						NULL, SYSLOG_MALFORMED, NULL);

		assert_int_equal(n, 6);
		assert_memory_equal(out, "4 a\\nb", 6);
	}
	/* the longest datagram fits its bound with its prefix */
	{
		static char big[65535], dst[4 * 65535 + 64];
		size_t n;

		memset(big, 'x', sizeof(big));
		n = format_message_flags(dst, FORMAT_ORIGINAL, f, big, sizeof(big), NULL,
					 SYSLOG_MALFORMED, NULL);
		assert_int_equal(n, 6 + sizeof(big));
		assert_memory_equal(dst, "65535 xxx", 9);
		assert_true(n <= format_max_len(FORMAT_ORIGINAL, sizeof(big)));
	}
}

static void test_count(void **state)
{
	const char lines[] = "a\nb\n\n";
	const char frames[] = "3 a\nb0 12 <13>x\n\n\n\n\n\n\n";

	assert_int_equal(format_count_messages(lines, sizeof(lines) - 1, 0), 3);
	assert_int_equal(format_count_messages(frames, sizeof(frames) - 1, FORMAT_F_OCTET_FRAME),
			 3);
	assert_int_equal(format_count_messages("", 0, FORMAT_F_OCTET_FRAME), 0);
}

static void test_name(void **state)
{
	enum out_format f;

	assert_int_equal(format_from_name("original", &f), 0);
	assert_int_equal(f, FORMAT_ORIGINAL);
	assert_string_equal(format_name(FORMAT_ORIGINAL), "original");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line),	    cmocka_unit_test(test_whole),
		cmocka_unit_test(test_octet_frame), cmocka_unit_test(test_count),
		cmocka_unit_test(test_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
