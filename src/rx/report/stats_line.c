// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
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

/* One listener's interval: its sums, and its busiest socket (most received;
 * on a tie, the lower index), which is where a skewed spread shows. */
struct stats_lis {
	uint64_t rx, drops, queued;
	unsigned int sockets;
	int top; /* socket index, or -1 */
	uint64_t top_rx, top_drops, top_queued;
};

static void listener_sums(struct stats_line *s, const struct snapshot *now, unsigned int k,
			  struct stats_lis *l)
{
	*l = (struct stats_lis){ .top = -1 };
	for (unsigned int i = 0; i < now->n; i++) {
		const struct snapshot_socket *ss = &now->socks[i];
		uint64_t rx = ss->received, drops = ss->traced ? ss->st.total : 0;
		uint64_t queued = ss->have_meminfo ? ss->queued_bytes : 0;
		uint64_t d_rx = rx - s->last_received[i], d_drops = drops - s->last_drops[i];

		if (!strcmp(ss->state, "closed") || ss->listener != k)
			continue; /* closed by a live shrink, or another listener's */
		l->rx += d_rx;
		l->drops += d_drops;
		l->queued += queued;
		l->sockets++;
		if (l->top < 0 || d_rx > l->top_rx) {
			l->top = (int)i;
			l->top_rx = d_rx;
			l->top_drops = d_drops;
			l->top_queued = queued;
		}
		s->last_received[i] = rx;
		s->last_drops[i] = drops;
	}
}

/*
 * Per interval, one short line per listener: its rate, drops and bytes
 * queued over its sockets, and its busiest socket; then one line with the
 * window and, when drops happened, the sender that lost the most in the
 * interval. The numbers are one snapshot's (each counter read once), so a
 * listener's figures are the sums of its sockets'.
 */
void stats_line_print(struct stats_line *s, struct receiver *r, FILE *f)
{
	char worst[INET6_ADDRSTRLEN + 64] = "", shed[40] = "";
	struct snapshot now;
	struct stats_lis l;
	uint64_t ns, drop_sum = 0;
	double secs;

	(void)f;
	ns = mono_ns();
	secs = (ns - s->last_ns) / 1e9;
	s->last_ns = ns;
	/* A scrape's: the per-sender part from the cache, not the tables. */
	if (snapshot_take_scrape(r, &now))
		return;
	for (unsigned int k = 0; k < now.nr_lis; k++) {
		listener_sums(s, &now, k, &l);
		drop_sum += l.drops;
		pr_note("stats: %s %.1fs rx %llu/s drop %llu q %llu B, %u sockets, busiest s%d "
			"rx=%llu drop=%llu q=%llu\n",
			now.listener_names ? now.lis[k].name : now.lis[k].listen, secs,
			(unsigned long long)(secs > 0 ? l.rx / secs : 0),
			(unsigned long long)l.drops, (unsigned long long)l.queued, l.sockets, l.top,
			(unsigned long long)l.top_rx, (unsigned long long)l.top_drops,
			(unsigned long long)l.top_queued);
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
	pr_note("stats: window %llu/%llu%s%s\n", (unsigned long long)now.window.msgs,
		(unsigned long long)now.window.size, shed, worst);
	snapshot_free(&now);
}

/*
 * At exit, the run's books on one line, the summary's totals: what came in,
 * what went out, what was lost and where. Without the tracer or SO_MEMINFO
 * the kernel's drops were not counted, and the line says so rather than 0.
 */
void stats_line_books(struct receiver *r)
{
	char drops[64] = "kernel drops not counted", disk[64] = "";
	struct snapshot s;

	if (snapshot_take(r, &s))
		return;
	if (s.traced)
		snprintf(drops, sizeof(drops), "kernel drops %llu",
			 (unsigned long long)s.kernel_drops);
	if (s.have_disk)
		snprintf(disk, sizeof(disk), ", on disk %llu", (unsigned long long)s.disk.msgs);
	pr_note("books: received %llu, written %llu, %s, abandoned %llu, discarded %llu%s\n",
		(unsigned long long)s.received, (unsigned long long)s.out.written, drops,
		(unsigned long long)s.abandoned, (unsigned long long)s.out.discarded, disk);
	snapshot_free(&s);
}
