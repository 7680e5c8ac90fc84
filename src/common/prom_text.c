// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/prom_text.h"

void prom_text_init(struct prom_text *p)
{
	memset(p, 0, sizeof(*p));
}

void prom_text_free(struct prom_text *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

char *prom_text_take(struct prom_text *p, size_t *len)
{
	char *buf = p->buf;

	if (p->error || !buf) {
		prom_text_free(p);
		return NULL;
	}
	*len = p->len;
	memset(p, 0, sizeof(*p));
	return buf;
}

static bool reserve(struct prom_text *p, size_t more)
{
	size_t cap = p->cap ? p->cap : 4096;
	char *b;

	if (p->error)
		return false;
	if (p->len + more + 1 <= p->cap)
		return true;
	while (cap < p->len + more + 1)
		cap *= 2;
	b = realloc(p->buf, cap);
	if (!b) {
		p->error = -ENOMEM;
		return false;
	}
	p->buf = b;
	p->cap = cap;
	return true;
}

static void put(struct prom_text *p, const char *s, size_t n)
{
	if (!reserve(p, n))
		return;
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void puts_(struct prom_text *p, const char *s)
{
	put(p, s, strlen(s));
}

void prom_raw(struct prom_text *p, const char *text, size_t len)
{
	put(p, text, len);
}

static bool valid_name(const char *s, bool colon)
{
	if (!*s)
		return false;
	for (const char *c = s; *c; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
			     (colon && *c == ':');

		if (!alpha && !(c > s && *c >= '0' && *c <= '9'))
			return false;
	}
	return true;
}

static bool check_name(struct prom_text *p, const char *name)
{
	if (valid_name(name, true))
		return true;
	if (!p->error)
		p->error = -EINVAL;
	return false;
}

void prom_family(struct prom_text *p, const char *name, enum prom_type type, const char *help)
{
	if (!check_name(p, name))
		return;
	puts_(p, "# HELP ");
	puts_(p, name);
	puts_(p, " ");
	for (const char *c = help; *c; c++) {
		if (*c == '\\')
			puts_(p, "\\\\");
		else if (*c == '\n')
			puts_(p, "\\n");
		else
			put(p, c, 1);
	}
	puts_(p, "\n# TYPE ");
	puts_(p, name);
	puts_(p, type == PROM_COUNTER ? " counter\n" : " gauge\n");
}

void prom_labels_init(struct prom_labels *l)
{
	l->len = 0;
	l->n = 0;
	l->overflow = false;
	l->buf[0] = '\0';
}

static void lput(struct prom_labels *l, const char *s, size_t n)
{
	if (l->overflow || l->len + n >= sizeof(l->buf)) {
		l->overflow = true;
		return;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = '\0';
}

void prom_label(struct prom_labels *l, const char *key, const char *value)
{
	if (!valid_name(key, false) || l->n >= PROM_MAX_LABELS) {
		l->overflow = true;
		return;
	}
	if (l->n++)
		lput(l, ",", 1);
	lput(l, key, strlen(key));
	lput(l, "=\"", 2);
	for (const char *c = value; *c; c++) {
		if (*c == '\\')
			lput(l, "\\\\", 2);
		else if (*c == '"')
			lput(l, "\\\"", 2);
		else if (*c == '\n')
			lput(l, "\\n", 2);
		else
			lput(l, c, 1);
	}
	lput(l, "\"", 1);
}

void prom_label_u64(struct prom_labels *l, const char *key, uint64_t value)
{
	char v[24];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)value);
	prom_label(l, key, v);
}

static void sample(struct prom_text *p, const char *name, const struct prom_labels *l,
		   const char *value)
{
	if (!check_name(p, name))
		return;
	if (l && l->overflow) {
		if (!p->error)
			p->error = -EINVAL;
		return;
	}
	puts_(p, name);
	if (l && l->n) {
		puts_(p, "{");
		put(p, l->buf, l->len);
		puts_(p, "}");
	}
	puts_(p, " ");
	puts_(p, value);
	puts_(p, "\n");
}

void prom_u64(struct prom_text *p, const char *name, const struct prom_labels *l, uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
	sample(p, name, l, s);
}

void prom_double(struct prom_text *p, const char *name, const struct prom_labels *l, double v)
{
	char s[40];

	if (isnan(v))
		snprintf(s, sizeof(s), "NaN");
	else if (isinf(v))
		snprintf(s, sizeof(s), v > 0 ? "+Inf" : "-Inf");
	else
		/* The shortest text that reads back as the same double. */
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(s, sizeof(s), "%.*g", prec, v);
			if (strtod(s, NULL) == v)
				break;
		}
	sample(p, name, l, s);
}

void prom_one(struct prom_text *p, const char *name, enum prom_type type, const char *help,
	      uint64_t v)
{
	prom_family(p, name, type, help);
	prom_u64(p, name, NULL, v);
}
