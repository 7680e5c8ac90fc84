/* SPDX-License-Identifier: MIT */
/*
 * A streaming JSON writer for summaries and --json rows (not the hot path).
 * Keys are given with each value; pass NULL as key inside arrays and at the top.
 */
#ifndef SYSLOGRX_JSON_WRITER_H
#define SYSLOGRX_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 16

struct json_writer {
	FILE *f;
	bool pretty; /* indented, else one line */
	int depth;
	bool has_items[JW_MAX_DEPTH];
};

void jw_init(struct json_writer *w, FILE *f, bool pretty);
void jw_object_begin(struct json_writer *w, const char *key);
void jw_object_end(struct json_writer *w);
void jw_array_begin(struct json_writer *w, const char *key);
void jw_array_end(struct json_writer *w);
void jw_u64(struct json_writer *w, const char *key, uint64_t v);
void jw_i64(struct json_writer *w, const char *key, int64_t v);
void jw_double(struct json_writer *w, const char *key, double v, int decimals);
void jw_bool(struct json_writer *w, const char *key, bool v);
void jw_null(struct json_writer *w, const char *key);
void jw_string(struct json_writer *w, const char *key, const char *s);
void jw_string_n(struct json_writer *w, const char *key, const char *s, size_t len);
/* Ends the document: a newline after the top-level value. */
void jw_finish(struct json_writer *w);

#endif
