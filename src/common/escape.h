/* SPDX-License-Identifier: MIT */
/* Byte escaping for line-oriented outputs. Pure functions: no allocation, no I/O. */
#ifndef SYSLOGRX_ESCAPE_H
#define SYSLOGRX_ESCAPE_H

#include <stddef.h>

/* Worst-case output size for len input bytes. */
#define ESCAPE_LINE_MAX(len) (2 * (len))
#define ESCAPE_JSON_MAX(len) (6 * (len))

/*
 * One message on one line, reversibly: '\\' -> "\\\\", '\n' -> "\\n",
 * '\r' -> "\\r", NUL -> "\\0"; every other byte as it is.
 * dst holds at least ESCAPE_LINE_MAX(len) bytes; returns bytes written.
 */
size_t escape_line(char *dst, const char *src, size_t len);

/*
 * The inside of a JSON string (no quotes), always valid UTF-8: '"' and '\\'
 * escaped, control bytes as \n \r \t or \u00XX, valid UTF-8 sequences kept,
 * every byte of an invalid sequence replaced by U+FFFD ("\ufffd").
 * dst holds at least ESCAPE_JSON_MAX(len) bytes; returns bytes written.
 */
size_t escape_json(char *dst, const char *src, size_t len);

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid/truncated. */
size_t utf8_seq_len(const unsigned char *s, size_t avail);

#endif
