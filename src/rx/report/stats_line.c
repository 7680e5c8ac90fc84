// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/clock.h"
#include "common/sockaddr.h"
#include "rx/report/snapshot.h"
#include "rx/report/stats_line.h"

int stats_line_init(struct stats_line *s, unsigned int nr_sockets)
{
	s->last_ns = mono_ns();
	s->last_received = calloc(nr_sockets, sizeof(uint64_t));
	s->last_drops = calloc(nr_sockets, sizeof(uint64_t));
	return s->last_received && s->last_drops ? 0 : -ENOMEM;
}

void stats_line_free(struct stats_line *s)
{
	free(s->last_received);
	free(s->last_drops);
	sender_view_free(&s->last_senders);
}

static int cmp_row_addr(const void *a, const void *b)
{
	return memcmp(((const struct sender_row *)a)->addr, ((const struct sender_row *)b)->addr,
		      sizeof(((const struct sender_row *)a)->addr));
}

/* " worst 192.0.2.7 drops=N of M": the sender whose drops grew most since
 * the last line with drops (N: in the interval; M: its datagrams so far), or
 * nothing without --senders and the tracer. */
static void worst_sender(struct stats_line *s, struct receiver *r, const struct snapshot *now,
			 char *buf, size_t len)
{
	const struct sender_row *worst = NULL;
	struct snapshot_senders ss;
	char addr[INET6_ADDRSTRLEN];
	uint64_t most = 0;

	buf[0] = '\0';
	/* Every sender, not the scrape's top rows: the worst in the interval
	 * need not be among the worst so far. */
	if (!now->senders.on || !now->by_reason || snapshot_senders_take(r, &ss))
		return;
	for (size_t i = 0; ss.traced && i < ss.view.n; i++) {
		const struct sender_row *row = &ss.view.rows[i];
		const struct sender_row *was =
			s->last_senders.n ? bsearch(row, s->last_senders.rows, s->last_senders.n,
						    sizeof(*row), cmp_row_addr) :
					    NULL;
		uint64_t grew =
			row->dropped - (was && was->dropped <= row->dropped ? was->dropped : 0);

		if (grew > most) {
			most = grew;
			worst = row;
		}
	}
	if (worst) {
		format_addr16(worst->addr, addr, sizeof(addr));
		snprintf(buf, len, " worst %s drops=%llu of %llu", addr, (unsigned long long)most,
			 (unsigned long long)(worst->dropped + worst->received));
	}
	/* This line's view is the next one's base, by address. */
	array_sort(ss.view.rows, ss.view.n, sizeof(ss.view.rows[0]), cmp_row_addr);
	sender_view_free(&s->last_senders);
	s->last_senders = ss.view;
}

struct stats_cols {
	char text[4096];
	size_t used;
	uint64_t rx, drops; /* in the interval, over the columns written */
};

/* The columns of listener k's sockets (every socket with one listener). */
static void socket_cols(struct stats_line *s, const struct snapshot *now, unsigned int k,
			struct stats_cols *c)
{
	char *cols = c->text;
	size_t used = 0;

	cols[0] = '\0';
	c->rx = c->drops = 0;
	for (unsigned int i = 0; i < now->n; i++) {
		const struct snapshot_socket *ss = &now->socks[i];
		uint64_t rx = ss->received, drops = ss->traced ? ss->st.total : 0;
		uint64_t queued = ss->have_meminfo ? ss->queued_bytes : 0;

		if (!strcmp(ss->state, "closed") || ss->listener != k)
			continue; /* closed by a live shrink, or another listener's */
		if (used < sizeof(c->text))
			used += snprintf(cols + used, sizeof(c->text) - used,
					 " s%u rx=%llu drop=%llu q=%llu", i,
					 (unsigned long long)(rx - s->last_received[i]),
					 (unsigned long long)(drops - s->last_drops[i]),
					 (unsigned long long)queued);
		c->rx += rx - s->last_received[i];
		c->drops += drops - s->last_drops[i];
		s->last_received[i] = rx;
		s->last_drops[i] = drops;
	}
	c->used = used < sizeof(c->text) ? used : sizeof(c->text) - 1;
}

/* One line per interval: totals, then per socket received/dropped in the
 * interval and bytes queued now; with named listeners, each listener's
 * received and dropped before its sockets. The numbers are one snapshot's
 * (each counter read once), so the totals are the sum of the columns. When
 * drops happened in the interval, the sender that lost the most in it is
 * named after them. */
void stats_line_print(struct stats_line *s, struct receiver *r, FILE *f)
{
	static struct stats_cols c;
	char cols[8192], worst[INET6_ADDRSTRLEN + 64] = "", shed[40] = "";
	size_t used = 0;
	struct snapshot now;
	uint64_t ns, rx_sum = 0, drop_sum = 0;
	double secs;

	ns = mono_ns();
	secs = (ns - s->last_ns) / 1e9;
	s->last_ns = ns;
	/* A scrape's: the per-sender part from the cache, not the tables. */
	if (snapshot_take_scrape(r, &now))
		return;
	cols[0] = '\0';
	for (unsigned int k = 0; k < now.nr_lis; k++) {
		socket_cols(s, &now, k, &c);
		rx_sum += c.rx;
		drop_sum += c.drops;
		if (now.listener_names && used < sizeof(cols))
			used += snprintf(cols + used, sizeof(cols) - used,
					 "%s %s rx=%llu drop=%llu:", k ? " |" : "", now.lis[k].name,
					 (unsigned long long)c.rx, (unsigned long long)c.drops);
		if (used < sizeof(cols))
			used += snprintf(cols + used, sizeof(cols) - used, "%s", c.text);
	}
	if (drop_sum)
		worst_sender(s, r, &now, worst, sizeof(worst));
	/* --fair-share: of the drops, those shed in the interval. From the
	 * same read as the drops (the tracer's SOCKET_FILTER count), so never
	 * more than they; without the tracer, the filter's own count. */
	if (now.fair_share.on) {
		int k = now.by_reason ? snapshot_reason_value(r, "SOCKET_FILTER") : -1;
		uint64_t total = k >= 0 ? now.kernel_drops_by_reason[k] : now.fair_share.shed;

		snprintf(shed, sizeof(shed), " shed %llu",
			 (unsigned long long)(total - s->last_shed));
		s->last_shed = total;
	}
	fprintf(f, "stats: %.1fs rx %llu/s drops %llu%s%s window %llu/%llu |%s\n", secs,
		(unsigned long long)(secs > 0 ? rx_sum / secs : 0), (unsigned long long)drop_sum,
		shed, worst, (unsigned long long)now.window.msgs, (unsigned long long)now.window.size,
		cols);
	fflush(f);
	snapshot_free(&now);
}
