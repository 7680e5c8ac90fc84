// SPDX-License-Identifier: MIT
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include "common/sockaddr.h"
#include "rx/settings/listeners.h"

bool listener_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > LISTENER_NAME_MAX)
		return false;
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
		      ch == '.' || ch == '-'))
			return false;
	}
	return true;
}

int listener_spec_parse(const char *arg, struct listener_spec *out, char *why, size_t whylen)
{
	const char *eq = strchr(arg, '=');
	struct sockaddr_storage ss;
	socklen_t sl;

	memset(out, 0, sizeof(*out));
	if (eq) {
		size_t nl = (size_t)(eq - arg);

		if (!nl || nl > LISTENER_NAME_MAX) {
			snprintf(why, whylen, "a NAME= of 1 to %d characters", LISTENER_NAME_MAX);
			return -EINVAL;
		}
		memcpy(out->name, arg, nl);
		out->name[nl] = '\0';
		if (!listener_name_valid(out->name)) {
			snprintf(why, whylen,
				 "name '%.*s': use a-z, 0-9, '_', '.', '-', starting with a letter "
				 "or a digit",
				 (int)nl > LISTENER_NAME_MAX ? LISTENER_NAME_MAX : (int)nl, arg);
			return -EINVAL;
		}
		out->named = true;
		arg = eq + 1;
	}
	if (strlen(arg) >= sizeof(out->addr)) {
		snprintf(why, whylen, "too long");
		return -EINVAL;
	}
	if (parse_host_port(arg, &ss, &sl)) {
		snprintf(
			why, whylen,
			"not [NAME=]ADDR:PORT (127.0.0.1:5514, [::1]:5514, cisco_asa=0.0.0.0:5000)");
		return -EINVAL;
	}
	snprintf(out->addr, sizeof(out->addr), "%s", arg);
	return 0;
}

static bool wildcard(const struct sockaddr_storage *s)
{
	if (s->ss_family == AF_INET)
		return ((const struct sockaddr_in *)s)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)s)->sin6_addr);
}

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return IN6_ARE_ADDR_EQUAL(&((const struct sockaddr_in6 *)a)->sin6_addr,
				  &((const struct sockaddr_in6 *)b)->sin6_addr);
}

/* Two groups a datagram could both match: the kernel would pick one, and
 * the other's books would not be its own. */
bool listener_addrs_overlap(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	uint16_t pa = sockaddr_port(a), pb = sockaddr_port(b);

	if (!pa || pa != pb) /* port 0: the kernel picks apart ones */
		return false;
	return same_addr(a, b) || wildcard(a) || wildcard(b);
}

int listener_specs_check(struct listener_spec *l, unsigned int n, char *err, size_t errlen)
{
	struct sockaddr_storage ss[CONFIG_MAX_LISTENERS];
	socklen_t sl;

	for (unsigned int i = 0; i < n; i++) {
		if (parse_host_port(l[i].addr, &ss[i], &sl)) {
			snprintf(err, errlen, "--listen %s: not [NAME=]ADDR:PORT", l[i].addr);
			return -EINVAL;
		}
		if (!l[i].named)
			snprintf(l[i].name, sizeof(l[i].name), "%u",
				 (unsigned int)sockaddr_port(&ss[i]));
	}
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int j = 0; j < i; j++) {
			if (listener_addrs_overlap(&ss[i], &ss[j])) {
				snprintf(err, errlen,
					 "--listen %s and --listen %s: one address and port in two "
					 "listeners (a datagram would match both)",
					 l[j].addr, l[i].addr);
				return -EINVAL;
			}
			if (!strcmp(l[i].name, l[j].name)) {
				snprintf(err, errlen,
					 "--listen %s and --listen %s: both named '%s' (unnamed, a "
					 "listener is named after its port: give NAME=ADDR:PORT)",
					 l[j].addr, l[i].addr, l[i].name);
				return -EINVAL;
			}
		}
	}
	return 0;
}

bool listener_names_shown(const struct listener_spec *l, unsigned int n)
{
	return n > 1 || (n == 1 && l[0].named);
}
