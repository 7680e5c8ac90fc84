// SPDX-License-Identifier: MIT
/* The values of the flags that need more than a number: the output and its
 * destination, the time zone, the Kafka key, --cost-ns, OTLP headers. */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "common/array.h"
#include "common/parse_num.h"
#include "common/redact.h"
#include "rx/settings/config_values.h"

int parse_output(struct config *c, const char *arg)
{
	static const struct {
		const char *prefix;
		enum output_kind kind;
		bool has_arg;
	} kinds[] = {
		{ "null", OUTPUT_NULL, false },	  { "stdout", OUTPUT_STDOUT, false },
		{ "file:", OUTPUT_FILE, true },	  { "tcp:", OUTPUT_TCP, true },
		{ "kafka:", OUTPUT_KAFKA, true }, { "otlp:", OUTPUT_OTLP, true },
		{ "tls:", OUTPUT_TLS, true },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(kinds); i++) {
		size_t pl = strlen(kinds[i].prefix);

		if (kinds[i].has_arg ? strncmp(arg, kinds[i].prefix, pl) :
				       strcmp(arg, kinds[i].prefix))
			continue;
		if (kinds[i].has_arg && (!arg[pl] || strlen(arg + pl) >= sizeof(c->output_arg)))
			return -EINVAL;
		c->output = kinds[i].kind;
		snprintf(c->output_arg, sizeof(c->output_arg), "%s",
			 kinds[i].has_arg ? arg + pl : "");
		return 0;
	}
	return -EINVAL;
}

/* otlp:http[s]://HOST:PORT[/PATH]; without a path, OTLP/HTTP's /v1/logs. */
int parse_otlp_url(struct config *c)
{
	const char *u = c->output_arg, *host, *slash;
	size_t hl;

	if (!strncmp(u, "http://", 7))
		host = u + 7;
	else if (!strncmp(u, "https://", 8))
		host = u + 8;
	else
		return -EINVAL;
	slash = strchr(host, '/');
	hl = slash ? (size_t)(slash - host) : strlen(host);
	if (!hl || !memchr(host, ':', hl))
		return -EINVAL;
	if ((!slash || !slash[1]) && strlen(u) + sizeof("/v1/logs") > sizeof(c->output_arg))
		return -EINVAL;
	if (!slash)
		strcat(c->output_arg, "/v1/logs");
	else if (!slash[1])
		strcat(c->output_arg, "v1/logs");
	return 0;
}

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

/* A broker's host: a name or an IPv4 address (letters, digits, '.', '-',
 * '_'), or [an IPv6 address]. Nothing else: "user:password@" is refused
 * (Kafka takes credentials by --kafka-opt sasl.*), never sent or logged. */
static bool valid_broker_host(const char *h, size_t len)
{
	const char *ok = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_";

	if (len >= 2 && h[0] == '[' && h[len - 1] == ']') {
		h++;
		len -= 2;
		ok = "0123456789abcdefABCDEF:.";
	}
	for (size_t i = 0; i < len; i++)
		if (!strchr(ok, h[i]) || !h[i])
			return false;
	return len > 0;
}

/* One HOST:PORT of a broker list: a host (or [v6]) and a port 1..65535. */
static bool valid_broker(const char *b, size_t len)
{
	const char *colon = memrchr(b, ':', len);
	char port[8];
	uint64_t v;
	size_t pl;

	if (!colon || !valid_broker_host(b, colon - b))
		return false;
	pl = b + len - colon - 1;
	if (!pl || pl >= sizeof(port))
		return false;
	memcpy(port, colon + 1, pl);
	port[pl] = '\0';
	return !parse_u64(port, 1, 65535, &v);
}

/* Kafka's topic rule: 1..249 of [a-zA-Z0-9._-], not "." or "..". */
static bool valid_topic(const char *t)
{
	size_t len = strlen(t);

	if (!len || len > CONFIG_KAFKA_TOPIC_MAX || !strcmp(t, ".") || !strcmp(t, ".."))
		return false;
	for (const char *p = t; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
			return false;
	return true;
}

/* output_arg "BROKERS/TOPIC" -> kafka_brokers, kafka_topic. The last '/'
 * splits them: topics cannot contain one. */
int parse_kafka_dest(struct config *c)
{
	const char *slash = strrchr(c->output_arg, '/');
	const char *b, *end;

	if (!slash || slash == c->output_arg || !valid_topic(slash + 1))
		return -EINVAL;
	for (b = c->output_arg; b < slash; b = end + 1) {
		end = memchr(b, ',', slash - b);
		if (!end)
			end = slash;
		if (!valid_broker(b, end - b))
			return -EINVAL;
	}
	snprintf(c->kafka_brokers, sizeof(c->kafka_brokers), "%.*s", (int)(slash - c->output_arg),
		 c->output_arg);
	snprintf(c->kafka_topic, sizeof(c->kafka_topic), "%s", slash + 1);
	return 0;
}

int parse_kafka_key(const char *arg, enum kafka_key *out)
{
	static const char *const names[] = {
		[KAFKA_KEY_NONE] = "none",
		[KAFKA_KEY_SOURCE] = "source",
		[KAFKA_KEY_HOSTNAME] = "hostname",
		[KAFKA_KEY_APP] = "app",
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
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

/* One KEY=VALUE header, from a flag or a --otlp-header-file line (where
 * names it). An error never shows the value: it is a secret as often as
 * not (Authorization=Bearer ...). */
int add_otlp_header(struct config *c, const char *kv, const char *where, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	char shown[64];

	if (c->otlp_nr_headers >= CONFIG_MAX_OTLP_HEADERS) {
		snprintf(err, errlen, "%s: at most %d headers", where, CONFIG_MAX_OTLP_HEADERS);
		return -EINVAL;
	}
	if (!eq || eq == kv || strlen(kv) >= CONFIG_OTLP_HEADER_LEN || memchr(kv, ':', eq - kv) ||
	    memchr(kv, ' ', eq - kv)) {
		snprintf(err, errlen,
			 "%s %s: expected KEY=VALUE (shorter than %d bytes, no ':' in KEY)", where,
			 eq && eq - kv < 48 ? redact_header(shown, sizeof(shown), kv) : REDACTED,
			 CONFIG_OTLP_HEADER_LEN);
		return -EINVAL;
	}
	if (strpbrk(kv, "\r\n")) {
		snprintf(err, errlen, "%s: a header cannot hold a line break", where);
		return -EINVAL;
	}
	snprintf(c->otlp_headers[c->otlp_nr_headers++], CONFIG_OTLP_HEADER_LEN, "%s", kv);
	return 0;
}

int add_header_line(const char *kv, const char *where, void *ctx, char *err, size_t errlen)
{
	return add_otlp_header(ctx, kv, where, err, errlen);
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
