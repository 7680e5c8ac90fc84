// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "common/array.h"
#include "common/log.h"
#include "rx/settings/advice.h"

/* Headroom on a measured need: the next run's load is not this one's. */
#define RCVBUF_MARGIN 2
#define THREADS_MARGIN 1.25
/* A worker whose sockets took this much more than its share: concentrated. */
#define CONCENTRATED 1.5
/* What a datagram costs a buffer beyond its payload when truesize was not
 * measured (an skb and its head: about 1 KB on x86-64). */
#define SKB_OVERHEAD 1024
#define RCVBUF_MAX (1ULL << 30) /* --rcvbuf's most */

void advice_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const struct {
		uint64_t unit;
		char suffix;
	} units[] = {
		{ 1ULL << 30, 'G' },
		{ 1ULL << 20, 'M' },
		{ 1ULL << 10, 'K' },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(units); i++) {
		if (bytes && bytes % units[i].unit == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(bytes / units[i].unit),
				 units[i].suffix);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)bytes);
}

__attribute__((format(printf, 5, 6))) static void
add(struct advice *a, const char *kind, const char *name, const char *value, const char *fmt, ...)
{
	struct advice_item *it;
	va_list ap;

	if (a->n >= ADVICE_MAX)
		return;
	it = &a->items[a->n++];
	memset(it, 0, sizeof(*it));
	if (!strcmp(kind, "flag"))
		snprintf(it->flag, sizeof(it->flag), "%s", name);
	else if (!strcmp(kind, "sysctl"))
		snprintf(it->sysctl, sizeof(it->sysctl), "%s", name);
	else if (!strcmp(kind, "limit"))
		snprintf(it->limit, sizeof(it->limit), "%s", name);
	else
		snprintf(it->bug, sizeof(it->bug), "%s", name);
	snprintf(it->value, sizeof(it->value), "%s", value);
	va_start(ap, fmt);
	vsnprintf(it->why, sizeof(it->why), fmt, ap);
	va_end(ap);
}

static bool advised(const struct advice *a, const char *flag)
{
	for (unsigned int i = 0; i < a->n; i++)
		if (!strcmp(a->items[i].flag, flag))
			return true;
	return false;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v && p < (1ULL << 62))
		p <<= 1;
	return p;
}

/* net.ipv4.udp_mem raised so that `extra` more bytes fit; ratios kept. */
static void advise_udp_mem(const struct advice_input *in, struct advice *a, uint64_t extra,
			   const char *why)
{
	uint64_t page = in->page_size ? in->page_size : 4096, need;
	char v[64];

	if (!in->udp_mem[2])
		return;
	need = in->udp_mem[2] + (extra + page - 1) / page;
	snprintf(v, sizeof(v), "%llu %llu %llu",
		 (unsigned long long)(in->udp_mem[0] * need / in->udp_mem[2]),
		 (unsigned long long)(in->udp_mem[1] * need / in->udp_mem[2]),
		 (unsigned long long)need);
	add(a, "sysctl", "net.ipv4.udp_mem", v, "%s", why);
}

struct worker_load {
	uint64_t offered, received, drops;
	double busy_s;
};

/* The output stage's one thread was running or waiting to run nearly all
 * the time traffic came while the window was full: it writes (and formats
 * what the workers do not: Kafka, OTLP, --ordered) more slowly than the
 * input arrives, and a larger window only delays the loss. What costs less
 * per message: one copy of it in json, or raw. (Workers slowed by their
 * formatting leave the window empty: the kernel drops, and the advice on
 * --threads counts their busy time.) */
static bool advise_output_cpu(const struct advice_input *in, struct advice *a, uint64_t drops)
{
	const char *fix;

	if (in->active_seconds <= 0 ||
	    in->output_busy_seconds < ADVICE_OUTPUT_BUSY_FULL * in->window_full_seconds ||
	    in->output_busy_seconds < ADVICE_OUTPUT_BUSY_ACTIVE * in->active_seconds)
		return false;
	fix = in->format == FORMAT_JSON && in->json_raw			? "without --json-raw" :
	      in->format != FORMAT_RAW && in->format != FORMAT_ORIGINAL ? "--format raw" :
									  "";
	add(a, "limit", "output_cpu", fix,
	    "the window was full for %.3f s and %llu datagrams were dropped: the output "
	    "stage's thread was on a CPU or waiting for one %.3f of the %.3f s traffic came "
	    "(%.0f%%), so it "
	    "writes (and formats what the workers do not) more slowly than the input "
	    "arrives; a larger window only delays the loss. %s",
	    in->window_full_seconds, (unsigned long long)drops, in->output_busy_seconds,
	    in->active_seconds, 100 * in->output_busy_seconds / in->active_seconds,
	    in->format == FORMAT_JSON && in->json_raw ?
		    "json without --json-raw writes each message once (about half the bytes)" :
	    in->format != FORMAT_RAW && in->format != FORMAT_ORIGINAL ?
		    "raw lines cost the least to format" :
		    "raw (or original) is already the cheapest format: the output stage needs "
		    "a CPU of its own (fewer --threads than CPUs)");
	return true;
}

/* A burst the workers kept up with on average: more room to hold it. */
static void advise_room(const struct advice_input *in, struct advice *a, uint64_t drops)
{
	uint64_t need = 0, hwm = 0, dropped = 0, rcvbuf, now = 0;
	char v[32], cur[32];

	if (in->window_full_seconds > 0 && advise_output_cpu(in, a, drops))
		return;
	if (in->window_full_seconds > 0) {
		/* The output stage made the workers wait: the kernel queues filled
		 * behind a full window. The window must hold what was dropped too. */
		uint64_t w = pow2_at_least((in->window_hwm + drops) * RCVBUF_MARGIN);

		snprintf(v, sizeof(v), "%llu", (unsigned long long)w);
		add(a, "flag", "--window", v,
		    "the window was full for %.3f s (the output stage "
		    "was slower than the input) and %llu datagrams were dropped in the run: "
		    "a window of %llu messages (at most %llu held + %llu dropped, x%d) holds that "
		    "burst; --window-bytes must hold them too",
		    in->window_full_seconds, (unsigned long long)drops, (unsigned long long)w,
		    (unsigned long long)in->window_hwm, (unsigned long long)drops, RCVBUF_MARGIN);
		return;
	}
	for (unsigned int i = 0; i < in->nsocks; i++) {
		const struct advice_sock *s = &in->socks[i];
		uint64_t lost = s->drop_bytes;

		if (!s->drops_rcvbuf)
			continue;
		if (!lost) {
			uint64_t avg = s->received ? s->bytes / s->received : 0;

			lost = s->drops_rcvbuf * (avg + SKB_OVERHEAD);
		}
		/* With that much more room the queue would have peaked at its
		 * high-water mark plus what did not fit. */
		if (s->queue_hwm_bytes + lost > need) {
			need = s->queue_hwm_bytes + lost;
			hwm = s->queue_hwm_bytes;
			dropped = lost;
			now = s->rcvbuf;
		}
	}
	if (!need)
		return;
	rcvbuf = pow2_at_least(need * RCVBUF_MARGIN);
	if (rcvbuf > RCVBUF_MAX)
		rcvbuf = RCVBUF_MAX;
	advice_format_size(rcvbuf, v, sizeof(v));
	advice_format_size(now, cur, sizeof(cur));
	add(a, "flag", "--rcvbuf", v,
	    "a burst: the workers kept up on average, but a socket's "
	    "queue (rcvbuf %s) peaked at %llu bytes and %llu more did not fit; %s holds that "
	    "peak (hwm + dropped, x%d)",
	    cur, (unsigned long long)hwm, (unsigned long long)dropped, v, RCVBUF_MARGIN);
	if (in->rmem_max && rcvbuf / 2 > in->rmem_max) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)(rcvbuf / 2));
		add(a, "sysctl", "net.core.rmem_max", v,
		    "--rcvbuf above 2 x net.core.rmem_max (%llu) "
		    "needs CAP_NET_ADMIN; without it, raise the limit",
		    (unsigned long long)in->rmem_max);
	}
	if (in->udp_mem[2] && (uint64_t)in->nsocks * rcvbuf > in->udp_mem[2] * in->page_size)
		advise_udp_mem(in, a, (uint64_t)in->nsocks * rcvbuf,
			       "the sockets' buffers together would exceed net.ipv4.udp_mem: "
			       "past it the kernel drops with PROTO_MEM");
}

/* More than a worker drains, for longer than a buffer holds: more CPU. */
static void advise_cpu(const struct advice_input *in, struct advice *a,
		       const struct worker_load *wl, double total_rate, double capacity,
		       unsigned int busiest)
{
	double share = wl[busiest].offered / (double)(total_rate * in->active_seconds);
	unsigned int need = (unsigned int)ceil(total_rate * THREADS_MARGIN / capacity);
	bool random = advised(a, "--balance"); /* by the per-sender rule */
	char v[32];

	if (need < 1)
		need = 1;
	if (!random && in->balance == BALANCE_HASH && in->nworkers > 1 &&
	    share > CONCENTRATED / in->nworkers) {
		random = true;
		add(a, "flag", "--balance", "random",
		    "the kernel's hash put %.0f%% of the datagrams "
		    "on worker %u's socket(s) (one flow goes to one socket), more than it drains "
		    "(%.0f/s offered, %.0f/s per busy second); random spreads them over all %u "
		    "workers",
		    share * 100, busiest, wl[busiest].offered / in->active_seconds, capacity,
		    in->nworkers);
	}
	/* Overloaded with the load spread: one worker more at least. */
	if (!random && need <= in->nworkers)
		need = in->nworkers + 1;
	if (need > in->nworkers) {
		snprintf(v, sizeof(v), "%u", need);
		add(a, "flag", "--threads", v,
		    "%.0f datagrams/s offered in all, a worker drains "
		    "%.0f/s per busy second: %u workers (x%.2f headroom)%s%s",
		    total_rate, capacity, need, THREADS_MARGIN,
		    need > in->nsocks ? ", and as many --sockets" : "",
		    in->ncpus && need > in->ncpus ?
			    "; more than this machine's CPUs: make each "
			    "message cheaper (output, format) or add a machine" :
			    "");
		if (need > in->nsocks)
			add(a, "flag", "--sockets", v, "each worker owns at least one socket");
	}
}

/* One sender with most of the drops on a hashed group: its datagrams are one
 * flow, which the kernel's hash puts on one socket whatever its rate. */
static void advise_one_sender(const struct advice_input *in, struct advice *a)
{
	const struct advice_senders *s = &in->senders;

	if (!s->have || in->balance != BALANCE_HASH || in->nsocks < 2 || !s->drops ||
	    s->worst_drops <= s->drops * ADVICE_ONE_SENDER_SHARE)
		return;
	add(a, "flag", "--balance", "random",
	    "sender %s caused %llu of the %llu drops (%.0f%%, %.0f%% of its datagrams): with "
	    "--balance hash all of one sender's datagrams go to one socket; random spreads "
	    "them over all %u sockets",
	    s->worst, (unsigned long long)s->worst_drops, (unsigned long long)s->drops,
	    100.0 * s->worst_drops / s->drops,
	    s->worst_offered ? 100.0 * s->worst_drops / s->worst_offered : 0, in->nsocks);
}

/* Many senders, each losing a little, none most of it: the queue overflows
 * for everyone at once, a burst: room, not a sender's flow. */
static bool spread_thin(const struct advice_input *in)
{
	const struct advice_senders *s = &in->senders;

	return s->have && s->losing >= ADVICE_MANY_SENDERS &&
	       s->worst_drops <= s->drops * ADVICE_THIN_SHARE &&
	       s->max_loss_ratio <= ADVICE_THIN_LOSS;
}

static void advise_buffer_drops(const struct advice_input *in, struct advice *a, uint64_t drops)
{
	struct worker_load wl[64] = {};
	unsigned int nw = in->nworkers < 64 ? in->nworkers : 64, busiest = 0;
	double total = 0, busy = 0, rx = 0, capacity;
	bool overloaded = false;

	if (spread_thin(in)) {
		unsigned int before = a->n;

		advise_room(in, a, drops);
		if (a->n > before && !strcmp(a->items[before].flag, "--rcvbuf")) {
			struct advice_item *it = &a->items[before];
			size_t len = strlen(it->why);

			snprintf(it->why + len, sizeof(it->why) - len,
				 "; %u senders lost datagrams, none more than %.0f%% of its own "
				 "(the worst, %s, %.0f%% of the drops): the queue, not one sender",
				 in->senders.losing, in->senders.max_loss_ratio * 100,
				 in->senders.worst,
				 100.0 * in->senders.worst_drops / in->senders.drops);
		}
		return;
	}
	if (!nw || in->active_seconds <= 0)
		return advise_room(in, a, drops);
	for (unsigned int i = 0; i < in->nsocks; i++) {
		struct worker_load *w = &wl[i % in->nworkers % 64];

		w->offered += in->socks[i].received + in->socks[i].drops_rcvbuf;
		w->received += in->socks[i].received;
		w->drops += in->socks[i].drops_rcvbuf;
	}
	for (unsigned int t = 0; t < nw; t++) {
		wl[t].busy_s = in->worker_busy_ns ? in->worker_busy_ns[t] / 1e9 : 0;
		total += wl[t].offered;
		if (wl[t].received && wl[t].busy_s > 0) {
			rx += wl[t].received;
			busy += wl[t].busy_s;
		}
		if (wl[t].offered > wl[busiest].offered)
			busiest = t;
		/* Offered over the time traffic came, against what it drains per
		 * busy second: above, no buffer would have been enough. */
		if (wl[t].drops && wl[t].busy_s > 0 &&
		    wl[t].offered / in->active_seconds > wl[t].received / wl[t].busy_s)
			overloaded = true;
	}
	if (!overloaded || !busy)
		return advise_room(in, a, drops);
	capacity = rx / busy;
	advise_cpu(in, a, wl, total / in->active_seconds, capacity, busiest);
}

void advice_compute(const struct advice_input *in, struct advice *out)
{
	uint64_t drops = 0, rcvbuf_drops = 0, proto = 0, buffers = 0;

	memset(out, 0, sizeof(*out));
	if (in->selection_failures)
		add(out, "bug", "selection_failures", "",
		    "%llu datagram(s): the balancer could not "
		    "pick a socket and the kernel's hash took them; the map and the group disagree, "
		    "a bug: please report it with this summary",
		    (unsigned long long)in->selection_failures);
	if (!in->traced)
		return;
	for (unsigned int i = 0; i < in->nsocks; i++) {
		drops += in->socks[i].drops;
		rcvbuf_drops += in->socks[i].drops_rcvbuf;
		proto += in->socks[i].drops_proto_mem;
		buffers += in->socks[i].rcvbuf;
	}
	if (proto) {
		char why[256];

		snprintf(
			why, sizeof(why),
			"%llu PROTO_MEM drop(s): the machine's UDP sockets "
			"together reached net.ipv4.udp_mem's limit (%llu pages) before our buffers "
			"were full; a larger --rcvbuf does not help",
			(unsigned long long)proto, (unsigned long long)in->udp_mem[2]);
		advise_udp_mem(in, out, buffers, why);
	}
	if (rcvbuf_drops) {
		advise_one_sender(in, out);
		advise_buffer_drops(in, out, rcvbuf_drops);
	}
}

void advice_print(const struct advice *a)
{
	for (unsigned int i = 0; i < a->n; i++) {
		const struct advice_item *it = &a->items[i];

		char who[48] = "";

		if (it->listener[0])
			snprintf(who, sizeof(who), " (listener %s)", it->listener);
		if (it->flag[0])
			pr_warn("advice%s: %s %s: %s\n", who, it->flag, it->value, it->why);
		else if (it->sysctl[0])
			pr_warn("advice%s: sysctl -w %s=\"%s\": %s\n", who, it->sysctl, it->value,
				it->why);
		else if (it->limit[0])
			pr_warn("advice: the limit is %s%s%s: %s\n", it->limit,
				it->value[0] ? ", try " : "", it->value, it->why);
		else
			pr_warn("advice%s: report a bug (%s): %s\n", who, it->bug, it->why);
	}
}
