/* SPDX-License-Identifier: MIT */
/*
 * Text a peer sent (a collector's partial-success errorMessage, the body of
 * a non-2xx answer): made safe once, here, before it becomes a metric label,
 * a summary string or a log line. A peer chooses every byte: a cut or
 * overlong UTF-8 sequence would make every later scrape unparsable, and an
 * ESC or a newline would move the operator's terminal or forge a log line.
 *
 * Both forms: valid UTF-8 (each byte of an invalid, overlong, surrogate or
 * truncated sequence becomes U+FFFD), never cut inside a character or a
 * replacement, at most cap - 1 bytes and NUL-terminated (cap >= 1). Neither
 * holds a NUL, a C0 control, DEL or a C1 control (U+0080..U+009F).
 */
#ifndef SYSLOGRX_NET_TEXT_H
#define SYSLOGRX_NET_TEXT_H

#include <stddef.h>

/*
 * For a label value (or a JSON string): every control character becomes one
 * space, so "bad\r\nrecord" reads "bad  record". The exposition format's
 * own escapes (\\, \", \n) are prom_text's, applied when the label is
 * written. Returns the bytes written, without the NUL.
 */
size_t net_text_label(char *dst, size_t cap, const char *src, size_t len);

/*
 * For a log line: every control character as '#' and three octal digits of
 * its code point (ESC -> "#033", newline -> "#012", U+009B -> "#233"), as
 * escape_line_ctl() and rsyslog show them. Returns the bytes written,
 * without the NUL.
 */
size_t net_text_log(char *dst, size_t cap, const char *src, size_t len);

#endif
