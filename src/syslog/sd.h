/* SPDX-License-Identifier: MIT */
/*
 * Walks the STRUCTURED-DATA that syslog_parse() accepted (SYSLOG_OK_5424:
 * its syntax is checked there): elements "[SD-ID PARAM="VALUE" ...]" and
 * their params. Values are raw (with RFC 5424's escapes \" \\ \]);
 * sd_unescape_utf8() gives the value. Pure: no allocation, no I/O.
 *
 * What goes out is valid RFC 5424 whatever a sender wrote; the parser
 * accepts more than RFC 5424 allows, so every output walks the SD with
 * sd_walk and writes values through sd_value_next:
 *   - an element with syslogrx's own SD-ID (SD_OWN_ID) is dropped: that
 *     SD-ID says what syslogrx saw (the listener), never what a sender wrote;
 *   - an SD-ID appears once (RFC 5424 6.3.2): a repeat is dropped, and so is
 *     every element past SD_ELEMS_MAX distinct SD-IDs (it bounds the work);
 *     each dropped element is counted (sd_walk.dropped);
 *   - in a PARAM-VALUE, a ']' and a '\' that begins no escape get their
 *     backslash (RFC 5424 6.3.3: they MUST be escaped; the value read back
 *     is the same), and every byte of an invalid UTF-8 sequence becomes
 *     U+FFFD (PARAM-VALUE is UTF-8), as the json format replaces it.
 */
#ifndef SYSLOGRX_SD_H
#define SYSLOGRX_SD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "syslog/syslog_parse.h"

/* syslogrx's own SD-ID (the listener element), under the project's
 * private enterprise number. */
#define SD_OWN_ID "syslogrx@32473"
/* Distinct SD-IDs kept from one message; elements past them are dropped. */
#define SD_ELEMS_MAX 64

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

/* The elements that go out (rules above), in their order. */
struct sd_walk {
	struct sd_iter it;
	const char *skip; /* an SD-ID the caller merges itself: passed over, not counted */
	uint32_t dropped; /* elements dropped so far */
	uint32_t n;	  /* distinct SD-IDs returned */
	struct syslog_str seen[SD_ELEMS_MAX];
};

/* skip: NULL, or an SD-ID (NUL-terminated) that sd_walk_next passes over. */
void sd_walk_init(struct sd_walk *w, const struct syslog_str *sd, const char *skip);
bool sd_walk_next(struct sd_walk *w, struct syslog_str *id, struct sd_iter *params);
/* The element sd_walk_next just gave, "[" to "]" as received, when it goes
 * out as it is (its names valid, no value with a piece to fix): the common
 * case, written in one piece. False: it must be rebuilt. */
bool sd_elem_verbatim(const struct sd_walk *w, const struct syslog_str *id, struct sd_iter params,
		      struct syslog_str *text);

/*
 * A raw PARAM-VALUE as valid RFC 5424, piece by piece: each call gives a run
 * of bytes that stand as they are (*run: escapes and valid UTF-8) and the
 * text that replaces the byte after it (*fix: "\\", "\]" or U+FFFD;
 * empty at the end). False when the value is done. Names and SD-IDs need
 * none of it (the parser checks them); sd_name_ok() says so.
 */
struct sd_value_iter {
	const char *p, *end;
};

void sd_value_init(struct sd_value_iter *v, const struct syslog_str *raw);
bool sd_value_next(struct sd_value_iter *v, struct syslog_str *run, struct syslog_str *fix);
/* 1..32 printable US-ASCII bytes but '=', ']', '"' (RFC 5424 SD-NAME). */
bool sd_name_ok(const struct syslog_str *name);

#endif
