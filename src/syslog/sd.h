/* SPDX-License-Identifier: MIT */
/*
 * Walks the STRUCTURED-DATA that syslog_parse() accepted (SYSLOG_OK_5424:
 * its syntax is checked there): elements "[SD-ID PARAM="VALUE" ...]" and
 * their params. Values are raw (with RFC 5424's escapes \" \\ \]);
 * sd_unescape_utf8() gives the value. Pure: no allocation, no I/O.
 */
#ifndef SYSLOGRX_SD_H
#define SYSLOGRX_SD_H

#include <stdbool.h>
#include <stddef.h>
#include "syslog/syslog_parse.h"

struct sd_iter {
	const char *p, *end;
};

/* Starts at the SD of a parsed message (absent SD: no elements). */
void sd_iter_init(struct sd_iter *it, const struct syslog_str *sd);
/* The next element: its SD-ID and an iterator over its params. */
bool sd_next_elem(struct sd_iter *it, struct syslog_str *id, struct sd_iter *params);
/* The next param of an element: its name and raw value. */
bool sd_next_param(struct sd_iter *params, struct syslog_str *name, struct syslog_str *raw);
/* The value unescaped and as valid UTF-8 (utf8_repair, escape.h), at dst
 * unless dst is NULL (at most 3 * raw->len bytes). Returns its length. */
size_t sd_unescape_utf8(char *dst, const struct syslog_str *raw);

#endif
