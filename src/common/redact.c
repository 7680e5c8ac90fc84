// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include "common/redact.h"

const char *redact_url(char *dst, size_t cap, const char *url)
{
	const char *auth = strstr(url, "://");
	const char *end, *at, *colon;

	if (!auth) {
		snprintf(dst, cap, "%s", url);
		return dst;
	}
	auth += 3;
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
