// SPDX-License-Identifier: MIT
/* The values of the flags that need more than a number: the time zone,
 * --cost-ns, --protect. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "common/parse_num.h"
#include "rx/settings/config_values.h"

/* --timezone: local (the host's), UTC, +HH:MM / -HH:MM, or a zone in the
 * system's tz database. */
int parse_timezone(struct config *c, const char *arg)
{
	char path[PATH_MAX];
	unsigned int hh, mm;
	char sign, end;

	if (strlen(arg) >= sizeof(c->timezone))
		return -EINVAL;
	snprintf(c->timezone, sizeof(c->timezone), "%s", arg);
	if (!strcmp(arg, "local")) {
		c->tz_kind = TZ_LOCAL;
		return 0;
	}
	if (!strcmp(arg, "UTC") || !strcmp(arg, "Z")) {
		c->tz_kind = TZ_UTC;
		return 0;
	}
	if (sscanf(arg, "%c%2u:%2u%c", &sign, &hh, &mm, &end) == 3 &&
	    (sign == '+' || sign == '-') && hh <= 14 && mm < 60 && strlen(arg) == 6) {
		c->tz_kind = TZ_FIXED;
		c->tz_offset = (sign == '-' ? -1 : 1) * (long)(hh * 3600 + mm * 60);
		return 0;
	}
	if (arg[0] == '/' || strstr(arg, ".."))
		return -EINVAL;
	snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", arg);
	if (access(path, R_OK))
		return -ENOENT;
	c->tz_kind = TZ_NAMED;
	return 0;
}

/* "N" or "N,N,...": at most CONFIG_MAX_COST_NS values; the count is checked
 * against --threads once every flag is read. */
int parse_cost_ns(struct config *c, const char *arg)
{
	char buf[32];
	unsigned int n = 0;

	for (const char *p = arg, *end;; p = end + 1) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		if (n == CONFIG_MAX_COST_NS || end - p >= (ptrdiff_t)sizeof(buf))
			return -EINVAL;
		memcpy(buf, p, end - p);
		buf[end - p] = '\0';
		if (parse_u64(buf, 0, 1000000000ULL, &c->cost_ns[n]))
			return -EINVAL;
		n++;
		if (!*end)
			break;
	}
	c->nr_cost_ns = n;
	return 0;
}

int add_protect(struct config *c, const char *arg)
{
	struct config_prefix *p;
	char buf[INET6_ADDRSTRLEN + 16], *len, *weight;
	uint64_t v;
	unsigned int max = 128, bits;

	if (c->nr_protect >= CONFIG_MAX_PROTECT || strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	p = &c->protect[c->nr_protect];
	memset(p, 0, sizeof(*p));
	weight = strchr(buf, '=');
	if (weight) {
		*weight++ = '\0';
		if (parse_u64(weight, 1, CONFIG_MAX_WEIGHT, &v))
			return -EINVAL;
		p->weight = v;
	}
	len = strchr(buf, '/');
	if (len)
		*len++ = '\0';
	if (inet_pton(AF_INET, buf, p->addr + 12) == 1) {
		p->addr[10] = p->addr[11] = 0xff;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, p->addr) != 1) {
		return -EINVAL;
	}
	if (len) {
		if (parse_u64(len, 0, max, &v))
			return -EINVAL;
		bits = v;
	} else {
		bits = max;
	}
	p->prefixlen = bits + (128 - max);
	/* A host bit past the prefix is a typo more often than a wish. */
	for (unsigned int i = p->prefixlen; i < 128; i++)
		if (p->addr[i / 8] & (0x80 >> (i % 8)))
			return -EINVAL;
	c->nr_protect++;
	return 0;
}
