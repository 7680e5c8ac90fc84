// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include "common/clock.h"
#include "net/sockinfo.h"
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
}

/* One line per interval: totals, then per socket received/dropped in the
 * interval and bytes queued now. Each counter is read once, so the totals
 * are the sum of the columns. */
void stats_line_print(struct stats_line *s, struct receiver *r, FILE *f)
{
	char cols[4096];
	size_t used = 0;
	struct window_stats ws;
	uint64_t now, rx_sum = 0, drop_sum = 0;
	double secs;

	now = mono_ns();
	secs = (now - s->last_ns) / 1e9;
	s->last_ns = now;
	window_get_stats(&r->window, &ws);
	cols[0] = '\0';

	for (unsigned int i = 0; i < r->group.n; i++) {
		uint64_t rx = __atomic_load_n(&r->counters[i].received, __ATOMIC_RELAXED);
		struct tracer_sock_stats st;
		uint64_t drops = 0, queued = 0;

		if (r->group.socks[i].fd < 0)
			continue; /* closed by a live shrink */
		if (!receiver_traced(r, i, &st))
			drops = st.total;
		sockinfo_meminfo(r->group.socks[i].fd, NULL, &queued);
		if (used < sizeof(cols))
			used += snprintf(cols + used, sizeof(cols) - used,
					 " s%u rx=%llu drop=%llu q=%llu", i,
					 (unsigned long long)(rx - s->last_received[i]),
					 (unsigned long long)(drops - s->last_drops[i]),
					 (unsigned long long)queued);
		rx_sum += rx - s->last_received[i];
		drop_sum += drops - s->last_drops[i];
		s->last_received[i] = rx;
		s->last_drops[i] = drops;
	}
	fprintf(f, "stats: %.1fs rx %llu/s drops %llu window %llu/%llu |%s\n", secs,
		(unsigned long long)(secs > 0 ? rx_sum / secs : 0), (unsigned long long)drop_sum,
		(unsigned long long)ws.msgs, (unsigned long long)ws.size, cols);
	fflush(f);
}
