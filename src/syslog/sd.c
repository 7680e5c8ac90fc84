// SPDX-License-Identifier: MIT
/* STRUCTURED-DATA walker (see sd.h). The syntax was checked by the parser;
 * every step still stays inside [p, end) whatever the bytes are. */
#include <string.h>
#include "common/escape.h"
#include "syslog/sd.h"

void sd_iter_init(struct sd_iter *it, const struct syslog_str *sd)
{
	it->p = sd->p;
	it->end = sd->p ? sd->p + sd->len : NULL;
}

static bool is_escaped(char c)
{
	return c == '"' || c == '\\' || c == ']';
}

bool sd_next_elem(struct sd_iter *it, struct syslog_str *id, struct sd_iter *params)
{
	const char *p = it->p, *q;

	if (!p || p >= it->end || *p != '[')
		return false;
	q = ++p;
	while (q < it->end && *q != ' ' && *q != ']')
		q++;
	*id = (struct syslog_str){ p, (uint32_t)(q - p) };
	params->p = q;
	/* the element ends at the first ']' outside a quoted value */
	for (bool quoted = false; q < it->end; q++) {
		if (quoted && *q == '\\' && q + 1 < it->end && is_escaped(q[1]))
			q++;
		else if (*q == '"')
			quoted = !quoted;
		else if (!quoted && *q == ']')
			break;
	}
	params->end = q;
	it->p = q < it->end ? q + 1 : q;
	return true;
}

bool sd_next_param(struct sd_iter *it, struct syslog_str *name, struct syslog_str *raw)
{
	const char *p = it->p, *q;

	while (p < it->end && *p == ' ')
		p++;
	q = p;
	while (q < it->end && *q != '=')
		q++;
	if (q == p || q + 1 >= it->end || q[1] != '"')
		return false;
	*name = (struct syslog_str){ p, (uint32_t)(q - p) };
	p = q += 2;
	while (q < it->end && *q != '"') {
		if (*q == '\\' && q + 1 < it->end && is_escaped(q[1]))
			q++;
		q++;
	}
	*raw = (struct syslog_str){ p, (uint32_t)(q - p) };
	it->p = q < it->end ? q + 1 : q;
	return true;
}

/* Run by run between escapes: an escape stands for an ASCII byte, which no
 * multi-byte sequence spans, so this is utf8_repair() of the unescaped value. */
size_t sd_unescape_utf8(char *dst, const struct syslog_str *raw)
{
	const char *p = raw->p, *end = raw->p + raw->len, *run = p;
	size_t out = 0;

	for (; p < end; p++) {
		if (*p == '\\' && p + 1 < end && is_escaped(p[1])) {
			out += utf8_repair(dst ? dst + out : NULL, run, p - run);
			run = ++p; /* the escaped byte starts the next run */
		}
	}
	return out + utf8_repair(dst ? dst + out : NULL, run, end - run);
}

static bool id_is(const struct syslog_str *id, const char *s, size_t n)
{
	return id->len == n && !memcmp(id->p, s, n);
}

void sd_walk_init(struct sd_walk *w, const struct syslog_str *sd, const char *skip)
{
	sd_iter_init(&w->it, sd);
	w->skip = skip;
	w->dropped = 0;
	w->n = 0;
}

/* Returned before: a repeat. At most SD_ELEMS_MAX compares per element. */
static bool seen(const struct sd_walk *w, const struct syslog_str *id)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->seen[i].len == id->len && w->seen[i].p[0] == id->p[0] &&
		    !memcmp(w->seen[i].p, id->p, id->len))
			return true;
	return false;
}

bool sd_walk_next(struct sd_walk *w, struct syslog_str *id, struct sd_iter *params)
{
	while (sd_next_elem(&w->it, id, params)) {
		if (w->skip && id_is(id, w->skip, strlen(w->skip)))
			continue;
		if (!id->len || id_is(id, SD_OWN_ID, sizeof(SD_OWN_ID) - 1) ||
		    w->n == SD_ELEMS_MAX || seen(w, id)) {
			w->dropped++;
			continue;
		}
		w->seen[w->n++] = *id;
		return true;
	}
	return false;
}

bool sd_elem_verbatim(const struct sd_walk *w, const struct syslog_str *id, struct sd_iter params,
		      struct syslog_str *text)
{
	const char *end = params.end;
	struct syslog_str name, raw, run, fix;
	struct sd_value_iter v;

	if (end >= w->it.end || *end != ']' || id->p[-1] != '[' || !sd_name_ok(id))
		return false;
	while (sd_next_param(&params, &name, &raw)) {
		sd_value_init(&v, &raw);
		if (!sd_name_ok(&name) || (sd_value_next(&v, &run, &fix) && fix.len))
			return false;
	}
	if (params.p != end) /* not params to its end: rebuilt from what was read */
		return false;
	*text = (struct syslog_str){ id->p - 1, (uint32_t)(end + 1 - (id->p - 1)) };
	return true;
}

void sd_value_init(struct sd_value_iter *v, const struct syslog_str *raw)
{
	v->p = raw->p;
	v->end = raw->p ? raw->p + raw->len : NULL;
}

bool sd_value_next(struct sd_value_iter *v, struct syslog_str *run, struct syslog_str *fix)
{
	const unsigned char *p = (const unsigned char *)v->p, *start = p;
	const unsigned char *end = (const unsigned char *)v->end;

	if (!p || p >= end)
		return false;
	*fix = (struct syslog_str){ "", 0 };
	while (p < end) {
		if (*p == '\\' && p + 1 < end && is_escaped(p[1])) {
			p += 2; /* an escape: stays */
		} else if (*p == '\\' || *p == ']' || *p == '"') {
			/* '"' ends a value the walker gave; one that came otherwise is escaped too */
			*fix = *p == '\\' ? (struct syslog_str){ "\\\\", 2 } :
			       *p == ']'  ? (struct syslog_str){ "\\]", 2 } :
					    (struct syslog_str){ "\\\"", 2 };
			break;
		} else if (*p < 0x80) {
			p++;
		} else {
			size_t n = utf8_seq_len(p, end - p);

			if (!n) {
				*fix = (struct syslog_str){ "\xef\xbf\xbd", 3 };
				break;
			}
			p += n;
		}
	}
	*run = (struct syslog_str){ (const char *)start, (uint32_t)(p - start) };
	v->p = (const char *)(p < end && fix->len ? p + 1 : p);
	return true;
}

bool sd_name_ok(const struct syslog_str *name)
{
	if (!name->len || name->len > SYSLOG_SD_NAME_MAX)
		return false;
	for (uint32_t i = 0; i < name->len; i++) {
		unsigned char c = name->p[i];

		if (c < 33 || c > 126 || c == '=' || c == ']' || c == '"')
			return false;
	}
	return true;
}
