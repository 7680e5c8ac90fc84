/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus text exposition format, version 0.0.4: what GET /metrics
 * answers. Debian 12 has no maintained C client library, so this is ours:
 * a growable buffer, one "# HELP"/"# TYPE" pair per family, then its samples
 *
 *   name{label="value",...} 123
 *
 * Label values are escaped as the format says (\ -> \\, " -> \", newline ->
 * \n); HELP text escapes \ and newline. Names are the caller's: they must
 * match [a-zA-Z_:][a-zA-Z0-9_:]* (labels [a-zA-Z_][a-zA-Z0-9_]*), which
 * prom_text checks and refuses (the whole text becomes an error) rather
 * than write a line a scraper would reject.
 */
#ifndef SYSLOGRX_PROM_TEXT_H
#define SYSLOGRX_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROM_TEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

enum prom_type { PROM_COUNTER, PROM_GAUGE };

struct prom_text {
	char *buf; /* NUL-terminated; owned */
	size_t len, cap;
	int error; /* first error: -ENOMEM or -EINVAL (a bad name) */
};

/* A sample's labels, built in order: at most PROM_MAX_LABELS. */
#define PROM_MAX_LABELS 8
#define PROM_LABELS_LEN 1024

struct prom_labels {
	char buf[PROM_LABELS_LEN]; /* 'k="v",k2="v2"', escaped */
	size_t len;
	unsigned int n;
	bool overflow;
};

void prom_text_init(struct prom_text *p);
void prom_text_free(struct prom_text *p);
/* Hands the buffer over (the caller frees it) and resets p. NULL on error. */
char *prom_text_take(struct prom_text *p, size_t *len);

/* "# HELP name help" and "# TYPE name counter|gauge". */
void prom_family(struct prom_text *p, const char *name, enum prom_type type, const char *help);

void prom_labels_init(struct prom_labels *l);
void prom_label(struct prom_labels *l, const char *key, const char *value);
void prom_label_u64(struct prom_labels *l, const char *key, uint64_t value);

/* Text already in the format (e.g. a copy of an earlier render), as is. */
void prom_raw(struct prom_text *p, const char *text, size_t len);

/* One sample; labels may be NULL. */
void prom_u64(struct prom_text *p, const char *name, const struct prom_labels *l, uint64_t v);
void prom_double(struct prom_text *p, const char *name, const struct prom_labels *l, double v);
/* A family of one unlabelled sample. */
void prom_one(struct prom_text *p, const char *name, enum prom_type type, const char *help,
	      uint64_t v);

#endif
