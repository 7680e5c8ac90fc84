// SPDX-License-Identifier: MIT
/* The whole-configuration checks: flags that only make sense together. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "rx/settings/config_check.h"
#include "rx/settings/output_routes.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return EINVAL;                      \
	} while (0)

int config_check_listeners(struct config *c, char *err, size_t errlen)
{
	if (listener_specs_check(c->listeners, c->nr_listeners, err, errlen))
		return EINVAL;
	c->listener_names = listener_names_shown(c->listeners, c->nr_listeners);
	/* Each listener binds its own pool (--max-sockets) at start. */
	if (c->nr_listeners * (c->max_sockets > c->sockets ? c->max_sockets : c->sockets) >
	    CONFIG_MAX_SOCKETS)
		FAIL("--sockets %u (--max-sockets %u) for %u listeners: at most %d sockets "
		     "in all",
		     c->sockets, c->max_sockets, c->nr_listeners, CONFIG_MAX_SOCKETS);
	return 0;
}

int config_check_max_sockets(const struct config *c, char *err, size_t errlen)
{
	if (c->max_sockets && c->max_sockets < c->sockets)
		FAIL("--max-sockets %u is less than --sockets %u", c->max_sockets, c->sockets);
	return 0;
}

int config_check_threads(struct config *c, char *err, size_t errlen)
{
	if (!c->threads)
		c->threads = c->sockets < 2 ? c->sockets : 2;
	if (c->threads > c->sockets)
		FAIL("--threads %u is more than --sockets %u: each thread owns at least one socket",
		     c->threads, c->sockets);
	if (c->nr_cost_ns > 1 && c->nr_cost_ns != c->threads)
		FAIL("--cost-ns: %u values for %u threads (give one value, or one per thread)",
		     c->nr_cost_ns, c->threads);
	return 0;
}

int config_check_supervise(const struct config *c, char *err, size_t errlen)
{
	/* The supervisor binds and holds the sockets; a child cannot add to or
	 * close them behind its back (the next child would get the
	 * supervisor's set). */
	if (c->supervise && c->max_sockets > c->sockets)
		FAIL("--supervise and --max-sockets cannot be used together: a supervised "
		     "receiver does not resize (its supervisor holds the sockets); change "
		     "--sockets and --threads with a restart");
	return 0;
}

int config_check_format(const struct config *c, char *err, size_t errlen)
{
	if (c->json_raw && c->format != FORMAT_JSON)
		FAIL("--json-raw needs --format json");
	if (c->framing != FRAMING_DEFAULT && !output_of(c)->stream)
		FAIL("--framing needs --output tcp:HOST:PORT or tls:HOST:PORT (a file or stdout "
		     "has one message per line, a Kafka or OTLP record is one message)");
	return 0;
}

int config_check_disk_buffer(const struct config *c, char *err, size_t errlen)
{
	if (c->disk_buffer[0] && !config_output_is_network(c))
		FAIL("--disk-buffer needs --output tcp:HOST:PORT, tls:HOST:PORT, "
		     "kafka:BROKERS/TOPIC or otlp:URL");
	if (!c->disk_buffer[0] && (c->disk_buffer_mode || c->disk_buffer_sync_ms != 1000 ||
				   c->disk_buffer_size != 1ULL << 30))
		FAIL("--disk-buffer-size, -mode and -sync need --disk-buffer DIR");
	/* A spilled batch goes from the disk to the output, past the reorder
	 * stage: the two would silently not compose. */
	if (c->disk_buffer[0] && c->ordered)
		FAIL("--ordered and --disk-buffer cannot be used together yet: batches "
		     "spilled to disk would not pass through the ordering");
	return 0;
}

int config_check_sequences(const struct config *c, char *err, size_t errlen)
{
	if (!c->sequences && (c->sequence_flows != SEQTRACK_DEF_FLOWS_MAX ||
			      c->sequence_jump != SEQTRACK_DEF_JUMP_MAX))
		FAIL("--sequence-flows and --sequence-jump need --sequences");
	return 0;
}

int config_check_fair_share(const struct config *c, char *err, size_t errlen)
{
	if (c->nr_protect && !c->fair_share)
		FAIL("--protect needs --fair-share");
	/* A supervised child does not load BPF: it adopts what the supervisor
	 * holds, and the filter's pressure would be left as it was. */
	if (c->fair_share && c->supervise)
		FAIL("--fair-share and --supervise cannot be used together yet: the filter "
		     "and its buckets are not handed to a supervised child");
	return 0;
}

unsigned int config_check_each(struct config *c, config_check_say_fn say, void *ctx)
{
	unsigned int bad = 0;
	char err[512];

#define CHECK(fn)                              \
	do {                                   \
		err[0] = '\0';                 \
		if (fn(c, err, sizeof(err))) { \
			say(err, ctx);         \
			bad++;                 \
		}                              \
	} while (0)
	CHECK(config_check_listeners);
	CHECK(config_check_routes);
	CHECK(config_check_max_sockets);
	CHECK(config_check_threads);
	CHECK(config_check_supervise);
	for (const struct output_def *const *d = outputs; *d; d++)
		if ((*d)->check)
			CHECK((*d)->check);
	CHECK(config_check_format);
	CHECK(config_check_disk_buffer);
	CHECK(config_check_sequences);
	CHECK(config_check_fair_share);
#undef CHECK
	return bad;
}

struct first_refusal {
	char *err;
	size_t errlen;
	bool said;
};

static void keep_first(const char *msg, void *ctx)
{
	struct first_refusal *f = ctx;

	if (!f->said)
		snprintf(f->err, f->errlen, "%s", msg);
	f->said = true;
}

int config_check(struct config *c, char *err, size_t errlen)
{
	struct first_refusal f = { err, errlen, false };

	return config_check_each(c, keep_first, &f) ? EINVAL : 0;
}
