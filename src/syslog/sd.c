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
