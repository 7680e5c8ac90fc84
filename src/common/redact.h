/* SPDX-License-Identifier: MIT */
/*
 * Secrets kept out of what syslogrx shows: the summary, log lines, errors.
 * A URL's userinfo (http://svc:S3cret@host) and an HTTP header's value
 * (Authorization=Bearer ...) are shown as "***"; the rest as given, so the
 * operator still sees which destination and which header.
 */
#ifndef SYSLOGRX_REDACT_H
#define SYSLOGRX_REDACT_H

#include <stddef.h>

#define REDACTED "***"

/* A URL whose authority has userinfo: the password after "user:" as ***
 * (http://svc:S3cret@host -> http://svc:***@host), or, with no ':', the
 * whole userinfo (a token alone); anything else as it is. An output spec
 * without "://" is read the same after its "KIND:" (kafka:svc:pw@h:9092/t ->
 * kafka:svc:***@h:9092/t; there, only a "user:" userinfo). Returns dst (cut
 * to cap - 1 bytes). */
const char *redact_url(char *dst, size_t cap, const char *url);

/* "KEY=VALUE" -> "KEY=***" (no '=': "***"). Returns dst. */
const char *redact_header(char *dst, size_t cap, const char *kv);

#endif
