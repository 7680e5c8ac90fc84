// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "net/sysctl.h"
#include <stdio.h>
#include "common/sockaddr.h"
#include "rx/report/advice_measure.h"
#include "rx/report/snapshot.h"

/* The reason numbers behind SOCKET_RCVBUFF and PROTO_MEM in this kernel. */
static void find_reasons(const struct tracer *t, int *rcvbuf, int *proto_mem)
{
	*rcvbuf = *proto_mem = -1;
	for (int i = 0; i < TRACER_MAX_REASONS; i++) {
		const char *name = tracer_reason_name(t, i);

		if (!strcmp(name, "SOCKET_RCVBUFF"))
			*rcvbuf = i;
		else if (!strcmp(name, "PROTO_MEM"))
			*proto_mem = i;
	}
}

/* The per-sender drops, for the rules that name a sender. */
static void measure_senders(struct receiver *r, struct advice_senders *as)
{
	struct snapshot_senders ss;

	memset(as, 0, sizeof(*as));
	if (!pipeline_counts_senders(&r->pipeline) || !intake_listener_tracer(&r->intake, 0) ||
	    snapshot_senders_take(r, &ss))
		return;
	as->have = ss.traced;
	as->drops = ss.drops.attributed;
	for (size_t i = 0; i < ss.view.n && ss.view.rows[i].dropped; i++) {
		const struct sender_row *row = &ss.view.rows[i];
		double ratio = sender_loss_ratio(row->received, row->dropped);

		as->losing++;
		if (ratio > as->max_loss_ratio)
			as->max_loss_ratio = ratio;
	}
	if (as->losing) {
		format_addr16(ss.view.rows[0].addr, as->worst, sizeof(as->worst));
		as->worst_drops = ss.view.rows[0].dropped;
		as->worst_offered = ss.view.rows[0].dropped + ss.view.rows[0].received;
	}
	snapshot_senders_free(&ss);
}

/* Named listeners: the rules over each listener's sockets on their own, and
 * each line says which listener it is for. The selection failures and the
 * senders (listener 0's tracer) go with listener 0. */
static void advise_per_listener(struct receiver *r, const struct advice_input *all,
				const struct advice_sock *socks, struct advice *out)
{
	struct advice_sock *mine = calloc(all->nsocks ? all->nsocks : 1, sizeof(*mine));
	struct advice one;

	if (!mine)
		return;
	for (unsigned int k = 0; k < intake_listeners(&r->intake); k++) {
		struct advice_input in = *all;

		in.nsocks = 0;
		for (unsigned int i = 0; i < all->nsocks; i++)
			if (intake_group(&r->intake)->socks[i].listener == k)
				mine[in.nsocks++] = socks[i];
		in.socks = mine;
		if (k) {
			in.selection_failures = 0;
			memset(&in.senders, 0, sizeof(in.senders));
		}
		advice_compute(&in, &one);
		for (unsigned int i = 0; i < one.n && out->n < ADVICE_MAX; i++) {
			out->items[out->n] = one.items[i];
			snprintf(out->items[out->n].listener, sizeof(out->items[0].listener), "%s",
				 intake_listener_name(&r->intake, k));
			out->n++;
		}
	}
	free(mine);
}

int advice_measure(struct receiver *r, struct advice *out)
{
	const struct config *c = r->cfg;
	unsigned int n = intake_group(&r->intake)->n, nw = pipeline_nr_workers(&r->pipeline);
	struct advice_sock *socks = calloc(n ? n : 1, sizeof(*socks));
	uint64_t *busy = calloc(nw ? nw : 1, sizeof(*busy));
	uint64_t *steered = calloc(n ? n : 1, sizeof(*steered));
	struct advice_input in = {};
	struct window_stats ws;
	uint64_t first = 0, last = 0;
	int rcvbuf_reason = -1, proto_reason = -1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(out, 0, sizeof(*out));
	if (!socks || !busy || !steered) {
		free(socks);
		free(busy);
		free(steered);
		return -ENOMEM;
	}
	if (intake_listener_tracer(&r->intake, 0))
		find_reasons(intake_listener_tracer(&r->intake, 0), &rcvbuf_reason, &proto_reason);
	for (unsigned int i = 0; i < n; i++) {
		struct advice_sock *s = &socks[i];
		struct tracer_sock_stats st;
		struct sock_counters sc;

		pipeline_socket_counts(&r->pipeline, i, &sc);
		s->received = sc.received;
		s->bytes = sc.bytes;
		s->rcvbuf = intake_group(&r->intake)->socks[i].rcvbuf;
		if (intake_traced(&r->intake, i, &st))
			continue;
		s->drops = st.total;
		/* SO_MEMINFO has no reason: a socket's own drops are its full
		 * buffer, unless the machine's udp_mem ran out, which only the
		 * tracer can tell apart. Counted as buffer-full. */
		if (intake_drops_meminfo(&r->intake))
			s->drops_rcvbuf = st.total;
		else
			s->drops_rcvbuf = rcvbuf_reason >= 0 ? st.by_reason[rcvbuf_reason] : 0;
		s->drops_proto_mem = proto_reason >= 0 ? st.by_reason[proto_reason] : 0;
		s->drop_bytes = st.enqueue_failure_bytes;
		s->queue_hwm_bytes = st.queue_hwm_bytes;
	}
	pipeline_worker_times(&r->pipeline, busy, nw, &first, &last);
	pipeline_window_stats(&r->pipeline, &ws);
	in = (struct advice_input){
		.nsocks = n,
		.nworkers = nw,
		.ncpus = cpus > 0 ? cpus : 0,
		.balance = c->balance,
		.traced = intake_listener_tracer(&r->intake, 0) != NULL ||
			  intake_drops_meminfo(&r->intake),
		.socks = socks,
		.worker_busy_ns = busy,
		.active_seconds = last > first ? (last - first) / 1e9 : 0,
		.window = ws.size,
		.window_bytes = ws.size_bytes,
		.window_hwm = ws.hwm,
		.window_full_seconds = ws.full_seconds,
		.output_busy_seconds = pipeline_output_busy_ns(&r->pipeline) / 1e9,
		.format = c->format,
		.json_raw = c->json_raw,
		.page_size = sysconf(_SC_PAGESIZE),
	};
	if (intake_has_balancer(&r->intake))
		intake_steered(&r->intake, steered, &in.selection_failures); /* per group socket */
	measure_senders(r, &in.senders);
	sysctl_read_u64("net.core.rmem_max", &in.rmem_max);
	if (sysctl_read("net.ipv4.udp_mem", in.udp_mem, 3) != 3)
		memset(in.udp_mem, 0, sizeof(in.udp_mem));
	if (c->listener_names && intake_listeners(&r->intake))
		advise_per_listener(r, &in, socks, out);
	else
		advice_compute(&in, out);
	free(socks);
	free(busy);
	free(steered);
	return 0;
}
