/* SPDX-License-Identifier: MIT */
/* Byte escaping for line-oriented outputs. Pure functions: no allocation, no I/O. */
#ifndef SYSLOGRX_ESCAPE_H
#define SYSLOGRX_ESCAPE_H

#include <stddef.h>

/* Worst-case output size for len input bytes. */
#define ESCAPE_LINE_MAX(len) (4 * (len)) /* "#033" for one byte */
#define ESCAPE_JSON_MAX(len) (6 * (len))

/*
 * One message on one line, reversibly: '\\' -> "\\\\", '\n' -> "\\n",
 * '\r' -> "\\r", NUL -> "\\0"; every other byte as it is.
 * dst holds at least ESCAPE_LINE_MAX(len) bytes; returns bytes written.
 */
size_t escape_line(char *dst, const char *src, size_t len);

/*
 * escape_line() and, like rsyslog's $EscapeControlCharactersOnReceive (on by
 * default there too), every other control byte -- 0x01-0x1f but '\n' and
 * '\r', tab included, and DEL (0x7f) -- as '#' and three octal digits:
 * ESC -> "#033", tab -> "#011", DEL -> "#177"; and the C1 controls as
 * net_text_log() shows them: U+0080..U+009F (C2 80..C2 9F) by code point
 * (U+009B -> "#233"), and so a byte 0x80..0x9F of no valid UTF-8 sequence
 * (0x9B -> "#233"); other bytes, valid or not, stay. A terminal that shows
 * the line runs no escape sequence a sender wrote. Not reversible for those
 * bytes (a message may hold the text "#033" itself), as rsyslog's is not.
 * dst holds at least ESCAPE_LINE_MAX(len) bytes; returns bytes written.
 */
size_t escape_line_ctl(char *dst, const char *src, size_t len);

/*
 * Only the control bytes, every one (0x00-0x1f, DEL, C1 as above) as "#ooo"; '\\' kept:
 * for text with its own backslash escapes, RFC 5424 structured data.
 * dst holds at least ESCAPE_LINE_MAX(len) bytes; returns bytes written.
 */
size_t escape_ctl(char *dst, const char *src, size_t len);

/*
 * The inside of a JSON string (no quotes), always valid UTF-8: '"' and '\\'
 * escaped, control bytes as \n \r \t or \u00XX (the C1 ones, U+0080..U+009F,
 * too), other valid UTF-8 sequences kept,
 * every byte of an invalid sequence replaced by U+FFFD ("\ufffd").
 * dst holds at least ESCAPE_JSON_MAX(len) bytes; returns bytes written.
 */
size_t escape_json(char *dst, const char *src, size_t len);

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid/truncated. */
size_t utf8_seq_len(const unsigned char *s, size_t avail);

/*
 * src as valid UTF-8, for a protobuf string: valid sequences (NUL included)
 * kept, every byte of an invalid sequence replaced by U+FFFD (EF BF BD), as
 * escape_json() replaces it. Writes at dst (at most UTF8_REPAIR_MAX(len)
 * bytes) unless dst is NULL; returns the length either way.
 */
#define UTF8_REPAIR_MAX(len) (3 * (len))
size_t utf8_repair(char *dst, const char *src, size_t len);

#endif
