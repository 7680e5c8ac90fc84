/* SPDX-License-Identifier: MIT */
/*
 * --listen [NAME=]ADDR:PORT, repeatable: one SO_REUSEPORT group per
 * listener. A name becomes a metrics label, an RFC 5424 SD value, a JSON
 * string, an OTLP attribute and a Kafka header: it is checked here against
 * a small charset and a bounded length, so no writer needs to escape it.
 */
#ifndef SYSLOGRX_LISTENERS_H
#define SYSLOGRX_LISTENERS_H

#include <stdbool.h>
#include <stddef.h>

#define LISTENER_NAME_MAX 32 /* bytes, without the NUL */
#define CONFIG_MAX_LISTENERS 64
#define LISTENER_ADDR_MAX 128

struct listener_spec {
	char name[LISTENER_NAME_MAX + 1];
	char addr[LISTENER_ADDR_MAX]; /* ADDR:PORT as given */
	bool named;		      /* NAME= given (or by --env-file) */
};

/* 1..LISTENER_NAME_MAX of [a-z0-9_.-] (lowercase: one name, one label),
 * starting with a letter or a digit. */
bool listener_name_valid(const char *name);

/* "[NAME=]ADDR:PORT" into out. 0, or -EINVAL with why (without the flag). */
int listener_spec_parse(const char *arg, struct listener_spec *out, char *why, size_t whylen);

/* The whole list, once every layer is applied: an unnamed listener is named
 * after its PORT; two listeners on one port where one address is that of
 * the other or a wildcard, and two alike names, are refused. 0, or -EINVAL
 * with err naming the flag. */
int listener_specs_check(struct listener_spec *l, unsigned int n, char *err, size_t errlen);

/* Two ADDR:PORTs a datagram could both match: one port (not 0), and one
 * address or a wildcard either side (a v6 wildcard takes v4 too). */
struct sockaddr_storage;
bool listener_addrs_overlap(const struct sockaddr_storage *a, const struct sockaddr_storage *b);

/* Records carry the listener's name: several listeners, or one named. */
bool listener_names_shown(const struct listener_spec *l, unsigned int n);

#endif
