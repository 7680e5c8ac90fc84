// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/escape.h"
#include "common/json_writer.h"

void jw_init(struct json_writer *w, FILE *f, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
}

static void put_string(struct json_writer *w, const char *s, size_t len)
{
	char small[256];
	size_t need = ESCAPE_JSON_MAX(len);
	char *buf = need <= sizeof(small) ? small : malloc(need);

	fputc('"', w->f);
	if (buf) {
		fwrite(buf, 1, escape_json(buf, s, len), w->f);
		if (buf != small)
			free(buf);
	}
	fputc('"', w->f);
}

/* Comma, newline and indent before an item, then its key. */
static void item(struct json_writer *w, const char *key)
{
	if (w->depth > 0) {
		if (w->has_items[w->depth])
			fputc(',', w->f);
		w->has_items[w->depth] = true;
		if (w->pretty)
			fprintf(w->f, "\n%*s", 2 * w->depth, "");
	}
	if (key) {
		put_string(w, key, strlen(key));
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

static void open(struct json_writer *w, const char *key, char c)
{
	item(w, key);
	fputc(c, w->f);
	if (w->depth + 1 < JW_MAX_DEPTH)
		w->depth++;
	w->has_items[w->depth] = false;
}

static void close_(struct json_writer *w, char c)
{
	bool had = w->has_items[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (w->pretty && had)
		fprintf(w->f, "\n%*s", 2 * w->depth, "");
	fputc(c, w->f);
}

void jw_object_begin(struct json_writer *w, const char *key)
{
	open(w, key, '{');
}
void jw_object_end(struct json_writer *w)
{
	close_(w, '}');
}
void jw_array_begin(struct json_writer *w, const char *key)
{
	open(w, key, '[');
}
void jw_array_end(struct json_writer *w)
{
	close_(w, ']');
}

void jw_u64(struct json_writer *w, const char *key, uint64_t v)
{
	item(w, key);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_i64(struct json_writer *w, const char *key, int64_t v)
{
	item(w, key);
	fprintf(w->f, "%lld", (long long)v);
}

void jw_double(struct json_writer *w, const char *key, double v, int decimals)
{
	item(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.*f", decimals, v);
	else
		fputs("null", w->f); /* JSON has no NaN or infinity */
}

void jw_bool(struct json_writer *w, const char *key, bool v)
{
	item(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct json_writer *w, const char *key)
{
	item(w, key);
	fputs("null", w->f);
}

void jw_string_n(struct json_writer *w, const char *key, const char *s, size_t len)
{
	item(w, key);
	put_string(w, s, len);
}

void jw_string(struct json_writer *w, const char *key, const char *s)
{
	if (!s) {
		jw_null(w, key);
		return;
	}
	jw_string_n(w, key, s, strlen(s));
}

void jw_finish(struct json_writer *w)
{
	fputc('\n', w->f);
	fflush(w->f);
}
