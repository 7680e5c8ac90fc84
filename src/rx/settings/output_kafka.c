// SPDX-License-Identifier: MIT
/* The kafka output's settings: its destination, its flags, their checks. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common/array.h"
#include "common/parse_num.h"
#include "common/redact.h"
#include "rx/settings/config.h"
#include "rx/settings/config_options.h"
#include "rx/settings/output_kafka.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return EINVAL;                      \
	} while (0)

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

/* output_arg "BROKERS/TOPIC" -> kafka.brokers, kafka.topic. The last '/'
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
	snprintf(c->kafka.brokers, sizeof(c->kafka.brokers), "%.*s", (int)(slash - c->output_arg),
		 c->output_arg);
	snprintf(c->kafka.topic, sizeof(c->kafka.topic), "%s", slash + 1);
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

static int parse_arg(struct config *c, const char *given, char *err, size_t errlen)
{
	char shown[sizeof(c->output_arg) + 8];

	if (parse_kafka_dest(c))
		FAIL("--output %s: expected kafka:HOST:PORT[,HOST:PORT...]/TOPIC "
		     "(topic: 1-249 of a-z A-Z 0-9 . _ -)",
		     redact_url(shown, sizeof(shown), given));
	return 0;
}

static int parse_opt(struct config *c, int key, const char *arg, char *err, size_t errlen)
{
	char shown[sizeof(c->output_arg)];

	switch (key) {
	case OPT_KAFKA_KEY:
		if (parse_kafka_key(arg, &c->kafka.key))
			FAIL("--kafka-key %s: expected none, source, hostname or app", arg);
		return 0;
	case OPT_KAFKA_OPT:
		if (c->kafka.nr_opts >= CONFIG_MAX_KAFKA_OPTS)
			FAIL("--kafka-opt %s: at most %d --kafka-opt flags",
			     redact_header(shown, sizeof(shown), arg), CONFIG_MAX_KAFKA_OPTS);
		if (!strchr(arg, '=') || arg[0] == '=' || strlen(arg) >= CONFIG_KAFKA_OPT_LEN)
			FAIL("--kafka-opt %s: expected KEY=VALUE (shorter than %d bytes)",
			     strlen(arg) < 64 ? redact_header(shown, sizeof(shown), arg) : REDACTED,
			     CONFIG_KAFKA_OPT_LEN);
		snprintf(c->kafka.opts[c->kafka.nr_opts++], CONFIG_KAFKA_OPT_LEN, "%s", arg);
		return 0;
	}
	return -1;
}

int kafka_options_check(const struct config *c, char *err, size_t errlen)
{
	/* Kafka flags with another output would be silently ignored. */
	if (c->output != OUTPUT_KAFKA && (c->kafka.key != KAFKA_KEY_NONE || c->kafka.nr_opts))
		FAIL("--kafka-key and --kafka-opt need --output kafka:BROKERS/TOPIC");
	return 0;
}

static void print(const struct config *c, FILE *f)
{
	char shown[CONFIG_KAFKA_OPT_LEN];

	for (unsigned int i = 0; i < c->kafka.nr_opts; i++)
		fprintf(f, "kafka-opt = %s\n",
			redact_header(shown, sizeof(shown), c->kafka.opts[i]));
}

static const struct restart_field restart[] = {
	RESTART_FIELD("kafka-key", kafka.key),
	RESTART_STRINGS("kafka-opt", kafka.opts, kafka.nr_opts),
};

const struct output_def output_kafka = {
	.kind = OUTPUT_KAFKA,
	.name = "kafka",
	.usage = "kafka:HOST:PORT[,HOST:PORT...]/TOPIC",
	.has_arg = true,
	.network = true,
	.acknowledges = true,
	.whole = true,
	.parse_arg = parse_arg,
	.parse_opt = parse_opt,
	.check = kafka_options_check,
	.print = print,
	.restart = restart,
	.nr_restart = ARRAY_SIZE(restart),
};
