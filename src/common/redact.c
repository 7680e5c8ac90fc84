// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "common/redact.h"

/* Where the authority starts: after "://", or, in an output spec without
 * one ("kafka:svc:pw@host:9092/t"), after "KIND:". NULL: none. */
static const char *authority(const char *url, bool *spec)
{
	const char *auth = strstr(url, "://");
	size_t kind;

	*spec = !auth;
	if (auth)
		return auth + 3;
	kind = strspn(url, "abcdefghijklmnopqrstuvwxyz");
	return kind && url[kind] == ':' ? url + kind + 1 : NULL;
}

const char *redact_url(char *dst, size_t cap, const char *url)
{
	const char *auth, *end, *at, *colon;
	bool spec;

	auth = authority(url, &spec);
	if (!auth) {
		snprintf(dst, cap, "%s", url);
		return dst;
	}
	end = auth + strcspn(auth, "/?#");
	/* the last '@' before the path ends the userinfo (RFC 3986 3.2.1) */
	at = NULL;
	for (const char *p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	if (!at) {
		snprintf(dst, cap, "%s", url);
		return dst;
	}
	colon = memchr(auth, ':', at - auth);
	/* a spec's "name@host" without a ':' may be a file's name, not a token */
	if (!colon && spec) {
		snprintf(dst, cap, "%s", url);
		return dst;
	}
	if (colon)
		snprintf(dst, cap, "%.*s" REDACTED "%s", (int)(colon + 1 - url), url, at);
	else
		snprintf(dst, cap, "%.*s" REDACTED "%s", (int)(auth - url), url, at);
	return dst;
}

const char *redact_header(char *dst, size_t cap, const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (eq)
		snprintf(dst, cap, "%.*s=" REDACTED, (int)(eq - kv), kv);
	else
		snprintf(dst, cap, REDACTED);
	return dst;
}
