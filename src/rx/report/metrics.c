// SPDX-License-Identifier: MIT
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "common/array.h"
#include "common/sockaddr.h"
#include "rx/report/metrics.h"
#include "rx/report/snapshot.h"

/* socket="I", and listener="NAME" when the listeners are named. */
static void socket_labels(struct prom_labels *l, const struct snapshot *s, unsigned int i)
{
	prom_labels_init(l);
	prom_label_u64(l, "socket", i);
	if (s->listener_names && s->socks[i].listener < s->nr_lis)
		prom_label(l, "listener", s->lis[s->socks[i].listener].name);
}

/* listener="NAME". */
static void listener_labels(struct prom_labels *l, const struct snapshot *s, unsigned int k)
{
	prom_labels_init(l);
	prom_label(l, "listener", s->lis[k].name);
}

/* A family of one sample per row of an array (the sockets, the listeners):
 * n rows of stride bytes from rows, labelled by labels(), each the uint64_t
 * at off in its row. */
static void per_row(struct prom_text *p, const struct snapshot *s, const char *name,
		    enum prom_type type, const char *help, const void *rows, size_t stride,
		    unsigned int n,
		    void (*labels)(struct prom_labels *, const struct snapshot *, unsigned int),
		    size_t off)
{
	struct prom_labels l;

	prom_family(p, name, type, help);
	for (unsigned int i = 0; i < n; i++) {
		labels(&l, s, i);
		prom_u64(p, name, &l, *(const uint64_t *)((const char *)rows + i * stride + off));
	}
}

/* Families of one sample per socket: socket="I". */
static void per_socket(struct prom_text *p, const struct snapshot *s, const char *name,
		       enum prom_type type, const char *help, size_t off)
{
	per_row(p, s, name, type, help, s->socks, sizeof(*s->socks), s->n, socket_labels, off);
}

#define SOCK_FIELD(f) offsetof(struct snapshot_socket, f)

/* Families of one sample per named listener: listener="NAME". */
static void per_listener(struct prom_text *p, const struct snapshot *s, const char *name,
			 enum prom_type type, const char *help, size_t off)
{
	per_row(p, s, name, type, help, s->lis, sizeof(*s->lis), s->nr_lis, listener_labels, off);
}

#define LIS_FIELD(f) offsetof(struct snapshot_listener, f)

/* Each listener's books, when they are named. */
static void write_listeners(struct prom_text *p, const struct snapshot *s)
{
	per_listener(p, s, "syslogrx_listener_received_total", PROM_COUNTER,
		     "Datagrams read from the listener's sockets.", LIS_FIELD(received));
	per_listener(p, s, "syslogrx_listener_abandoned_total", PROM_COUNTER,
		     "The listener's datagrams still queued when the exit drain ran out of time.",
		     LIS_FIELD(abandoned));
	per_listener(p, s, "syslogrx_listener_so_meminfo_drops_total", PROM_COUNTER,
		     "The kernel's own drop counters of the listener's sockets (SO_MEMINFO).",
		     LIS_FIELD(so_meminfo_drops));
	if (s->traced)
		per_listener(p, s, "syslogrx_listener_kernel_drops_total", PROM_COUNTER,
			     "Datagrams the kernel dropped for the listener's sockets.",
			     LIS_FIELD(kernel_drops));
}

static void one(struct prom_text *p, const char *name, enum prom_type type, const char *help,
		uint64_t v)
{
	prom_family(p, name, type, help);
	prom_u64(p, name, NULL, v);
}

static void output_labels(struct prom_labels *l, const struct snapshot *s, unsigned int i)
{
	prom_labels_init(l);
	prom_label(l, "output", s->outputs[i].name);
}

#define OUT_FIELD(f) offsetof(struct output_row, f)

/* --output LISTENER=SPEC: each output's books, output="LISTENER" or
 * "default" (the totals' families stay the sums). */
static void write_outputs(struct prom_text *p, const struct snapshot *s)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} fams[] = {
		{ "syslogrx_output_received_total",
		  "Datagrams the listeners of the output took from the kernel.",
		  OUT_FIELD(received) },
		{ "syslogrx_output_written_total", "Messages the output's destination accepted.",
		  OUT_FIELD(c.written) },
		{ "syslogrx_output_discarded_total",
		  "Messages of the output that could not be written (the reason is logged).",
		  OUT_FIELD(c.discarded) },
		{ "syslogrx_output_given_up_total",
		  "Messages of the output a stop gave up on, not written.", OUT_FIELD(c.given_up) },
	};

	static const struct {
		const char *name, *help;
		enum prom_type type;
		size_t off;
	} disk[] = {
		{ "syslogrx_output_disk_buffer_written_total",
		  "Messages of the output written to its disk buffer.", PROM_COUNTER,
		  OUT_FIELD(disk_written) },
		{ "syslogrx_output_disk_buffer_replayed_total",
		  "Messages of the output's disk buffer handed to it.", PROM_COUNTER,
		  OUT_FIELD(disk_replayed) },
		{ "syslogrx_output_disk_buffer_dropped_total",
		  "Messages of the output its disk buffer could not take (full).", PROM_COUNTER,
		  OUT_FIELD(disk_dropped) },
		{ "syslogrx_output_disk_buffer_messages",
		  "Messages on the output's disk buffer not yet delivered.", PROM_GAUGE,
		  OUT_FIELD(disk_msgs) },
	};

	for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++)
		per_row(p, s, fams[f].name, PROM_COUNTER, fams[f].help, s->outputs,
			sizeof(s->outputs[0]), s->nr_outputs, output_labels, fams[f].off);
	/* each output's own DIR (the disk_buffer families: their sums) */
	for (size_t f = 0;
	     s->nr_outputs && s->outputs[0].disk && f < sizeof(disk) / sizeof(disk[0]); f++)
		per_row(p, s, disk[f].name, disk[f].type, disk[f].help, s->outputs,
			sizeof(s->outputs[0]), s->nr_outputs, output_labels, disk[f].off);
}

/* up and stalled: one sample, or with outputs per listener one per
 * network output, labelled. */
static void output_state(struct prom_text *p, const struct snapshot *s, const char *name,
			 const char *help, bool all, size_t off)
{
	struct prom_labels l;

	prom_family(p, name, PROM_GAUGE, help);
	if (!s->nr_outputs) {
		prom_u64(p, name, NULL, all);
		return;
	}
	for (unsigned int i = 0; i < s->nr_outputs; i++) {
		if (!s->outputs[i].network)
			continue;
		output_labels(&l, s, i);
		prom_u64(p, name, &l, *((const bool *)((const char *)&s->outputs[i] + off)));
	}
}

/*
 * The reasons the alerting rules watch have a series from the start, at 0:
 * Prometheus's increase() sees a first drop only as a step from an earlier
 * sample, so a series that appeared with its first burst would never fire.
 * Other reasons appear once their count is non-zero.
 */
static const char *const socket_reasons_at_start[] = { "SOCKET_RCVBUFF", "PROTO_MEM" };
static const char *const no_socket_reasons_at_start[] = { "NO_SOCKET" };

/* A series per reason with a non-zero count or named in at_start; the
 * family is always there. */
static void by_reason(struct prom_text *p, struct receiver *r, const char *name,
		      const struct prom_labels *base, const uint64_t *counts,
		      const char *const *at_start, size_t n_at_start)
{
	bool shown[TRACER_MAX_REASONS] = {};
	struct prom_labels l;

	for (size_t i = 0; i < n_at_start; i++) {
		int k = snapshot_reason_value(r, at_start[i]);

		if (k >= 0) /* a kernel without that reason: nothing to show */
			shown[k] = true;
	}
	for (unsigned int k = 0; k < TRACER_MAX_REASONS; k++) {
		if (!counts[k] && !shown[k])
			continue;
		l = *base;
		prom_label(&l, "reason", snapshot_reason_name(r, k));
		prom_u64(p, name, &l, counts[k]);
	}
}

/* One series per listener's port (labelled when reports name the
 * listeners), each at 0 from the start. */
static void no_socket_series(struct prom_text *p, struct receiver *r, const struct snapshot *s)
{
	for (unsigned int k = 0; k < s->nr_lis; k++) {
		struct prom_labels l;

		prom_labels_init(&l);
		if (s->listener_names)
			prom_label(&l, "listener", s->lis[k].name);
		by_reason(p, r, "syslogrx_no_socket_drops_total", &l, s->lis[k].no_socket_by_reason,
			  no_socket_reasons_at_start, ARRAY_SIZE(no_socket_reasons_at_start));
	}
}

static void write_sockets(struct prom_text *p, struct receiver *r, const struct snapshot *s)
{
	struct prom_labels l;

	per_socket(p, s, "syslogrx_socket_received_total", PROM_COUNTER,
		   "Datagrams read from the socket.", SOCK_FIELD(received));
	per_socket(p, s, "syslogrx_socket_received_bytes_total", PROM_COUNTER,
		   "Payload bytes read from the socket.", SOCK_FIELD(bytes));
	per_socket(p, s, "syslogrx_socket_truncated_total", PROM_COUNTER,
		   "Datagrams longer than a receive slot, kept cut.", SOCK_FIELD(truncated));
	per_socket(p, s, "syslogrx_socket_rcvbuf_bytes", PROM_GAUGE,
		   "Effective kernel receive buffer (SO_RCVBUF).", SOCK_FIELD(rcvbuf));
	per_socket(p, s, "syslogrx_socket_queued_bytes", PROM_GAUGE,
		   "Bytes in the socket's kernel receive queue now (SO_MEMINFO).",
		   SOCK_FIELD(queued_bytes));
	per_socket(p, s, "syslogrx_socket_so_meminfo_drops_total", PROM_COUNTER,
		   "The kernel's own drop counter of the socket (SO_MEMINFO).",
		   SOCK_FIELD(so_meminfo_drops));
	if (s->have_selection)
		per_socket(p, s, "syslogrx_socket_steered_total", PROM_COUNTER,
			   "Datagrams the balancing BPF program sent to the socket.",
			   SOCK_FIELD(steered));
	if (!s->by_reason) /* SO_MEMINFO's count above is all there is */
		return;
	per_socket(p, s, "syslogrx_socket_queue_hwm_bytes", PROM_GAUGE,
		   "Most bytes queued on the socket, seen at enqueue (tracer).",
		   SOCK_FIELD(st.queue_hwm_bytes));
	prom_family(p, "syslogrx_socket_kernel_drops_total", PROM_COUNTER,
		    "Datagrams the kernel dropped for the socket, per drop reason (tracer).");
	for (unsigned int i = 0; i < s->n; i++) {
		socket_labels(&l, s, i);
		by_reason(p, r, "syslogrx_socket_kernel_drops_total", &l, s->socks[i].st.by_reason,
			  socket_reasons_at_start, ARRAY_SIZE(socket_reasons_at_start));
	}
}

/* --disk-buffer: what is on disk and what went through it. */
static void write_disk_buffer(struct prom_text *p, const struct snapshot *s)
{
	const struct diskbuf_stats *d = &s->disk;

	one(p, "syslogrx_disk_buffer_bytes", PROM_GAUGE,
	    "Bytes in the disk buffer's segment files.", d->bytes);
	one(p, "syslogrx_disk_buffer_size_bytes", PROM_GAUGE,
	    "The disk buffer's cap (--disk-buffer-size).", d->max_bytes);
	one(p, "syslogrx_disk_buffer_messages", PROM_GAUGE, "Messages on disk not yet delivered.",
	    d->msgs);
	prom_family(p, "syslogrx_disk_buffer_oldest_age_seconds", PROM_GAUGE,
		    "Age of the oldest message on disk not yet handed to the output.");
	prom_double(p, "syslogrx_disk_buffer_oldest_age_seconds", NULL, d->oldest_age_seconds);
	one(p, "syslogrx_disk_buffer_written_total", PROM_COUNTER, "Messages written to disk.",
	    d->written_msgs);
	one(p, "syslogrx_disk_buffer_replayed_total", PROM_COUNTER,
	    "Messages handed to the output from the disk buffer.", d->replayed_msgs);
	one(p, "syslogrx_disk_buffer_read_back_total", PROM_COUNTER,
	    "Of those, messages read back from the segment files (the rest were handed over "
	    "in memory).",
	    d->read_back_msgs);
	one(p, "syslogrx_disk_buffer_dropped_total", PROM_COUNTER,
	    "Messages not kept: the disk buffer was full (or a write failed).", d->dropped_msgs);
	one(p, "syslogrx_disk_buffer_corrupt_records_total", PROM_COUNTER,
	    "Records skipped at read: checksum mismatch or a torn tail.", d->corrupt_records);
	one(p, "syslogrx_disk_buffer_corrupt_messages_total", PROM_COUNTER,
	    "Messages in those, counted from the intact records around them (a lower bound "
	    "while syslogrx_disk_buffer_corrupt_uncounted_total is not 0).",
	    d->corrupt_msgs);
	one(p, "syslogrx_disk_buffer_corrupt_uncounted_total", PROM_COUNTER,
	    "Corrupt stretches whose messages could not be counted (a torn tail: nothing "
	    "intact of the same run after it).",
	    d->corrupt_uncounted);
	one(p, "syslogrx_disk_buffer_segments_refused", PROM_GAUGE,
	    "Segment files in the directory at start that were not read: larger than any "
	    "syslogrx writes or than --disk-buffer-size, or of a newer format.",
	    d->segments_refused);
	one(p, "syslogrx_disk_buffer_recovered_total", PROM_COUNTER,
	    "Messages found in the directory at start (left by an earlier run).",
	    d->recovered_msgs);
}

/*
 * --senders: the top --senders-top senders by drops, one series each, and
 * the rest as one total: a fixed number of series whatever addresses arrive
 * (a forged source address moves a sender between the top and the rest,
 * never adds a series). Which senders are in the top changes over time.
 */
static void write_senders(struct prom_text *p, const struct snapshot *s)
{
	const struct snapshot_senders *ss = &s->senders;
	size_t top = ss->top;
	char addr[INET6_ADDRSTRLEN];
	struct prom_labels l;

	prom_family(p, "syslogrx_sender_received_total", PROM_COUNTER,
		    "Datagrams read from a sender, for the top senders by drops (--senders-top).");
	for (size_t i = 0; i < top; i++) {
		format_addr16(ss->view.rows[i].addr, addr, sizeof(addr));
		prom_labels_init(&l);
		prom_label(&l, "sender", addr);
		prom_u64(p, "syslogrx_sender_received_total", &l, ss->view.rows[i].received);
	}
	if (ss->traced) {
		prom_family(
			p, "syslogrx_sender_kernel_drops_total", PROM_COUNTER,
			"Datagrams from a sender the kernel dropped, for the top senders by drops.");
		for (size_t i = 0; i < top; i++) {
			format_addr16(ss->view.rows[i].addr, addr, sizeof(addr));
			prom_labels_init(&l);
			prom_label(&l, "sender", addr);
			prom_u64(p, "syslogrx_sender_kernel_drops_total", &l,
				 ss->view.rows[i].dropped);
		}
	}
	if (ss->traced && s->cfg->fair_share) {
		prom_family(
			p, "syslogrx_sender_shed_total", PROM_COUNTER,
			"Of a sender's kernel drops, those --fair-share shed, for the top senders by drops.");
		for (size_t i = 0; i < top; i++) {
			format_addr16(ss->view.rows[i].addr, addr, sizeof(addr));
			prom_labels_init(&l);
			prom_label(&l, "sender", addr);
			prom_u64(p, "syslogrx_sender_shed_total", &l, ss->view.rows[i].shed);
		}
	}
	one(p, "syslogrx_senders_rest_received_total", PROM_COUNTER,
	    "Datagrams read from senders outside the top, evicted ones included.",
	    ss->rest_received + ss->received_evicted);
	if (ss->traced)
		one(p, "syslogrx_senders_rest_kernel_drops_total", PROM_COUNTER,
		    "Kernel drops of senders outside the top, evicted and unattributed included.",
		    ss->rest_dropped + ss->drops_evicted + ss->drops.unattributed);
	one(p, "syslogrx_senders_tracked", PROM_GAUGE, "Senders in the per-sender tables now.",
	    ss->tracked);
	prom_family(p, "syslogrx_senders_evicted_total", PROM_COUNTER,
		    "Per-sender entries given to another sender (table=workers|kernel).");
	prom_labels_init(&l);
	prom_label(&l, "table", "workers");
	prom_u64(p, "syslogrx_senders_evicted_total", &l, ss->evicted);
	if (ss->traced) {
		prom_labels_init(&l);
		prom_label(&l, "table", "kernel");
		prom_u64(p, "syslogrx_senders_evicted_total", &l, ss->drop_entries_evicted);
	}
}

static const char *version(void)
{
	const char *v = argp_program_version ? argp_program_version : "unknown";
	const char *sp = strrchr(v, ' ');

	return sp ? sp + 1 : v; /* "syslogrx 0.1" -> "0.1" */
}

int metrics_write(struct receiver *r, struct prom_text *p)
{
	struct prom_labels l, none;
	struct snapshot s;
	int err;

	err = snapshot_take_scrape(r, &s);
	if (err)
		return err;
	prom_labels_init(&none);
	prom_family(p, "syslogrx_build_info", PROM_GAUGE, "Always 1; the version as a label.");
	prom_labels_init(&l);
	prom_label(&l, "version", version());
	prom_u64(p, "syslogrx_build_info", &l, 1);

	write_sockets(p, r, &s);
	if (s.listener_names)
		write_listeners(p, &s);

	one(p, "syslogrx_window_messages", PROM_GAUGE, "Messages in the input window now.",
	    s.window.msgs);
	one(p, "syslogrx_window_bytes", PROM_GAUGE, "Bytes in the input window now.",
	    s.window.bytes);
	one(p, "syslogrx_window_allocated_bytes", PROM_GAUGE,
	    "What the input window's batches take now, its pool included.", s.window.alloc_bytes);
	one(p, "syslogrx_window_size_messages", PROM_GAUGE, "The input window's bound (--window).",
	    s.window.size);
	one(p, "syslogrx_window_hwm_messages", PROM_GAUGE,
	    "Most messages the input window held at once.", s.window.hwm);
	prom_family(p, "syslogrx_window_full_seconds_total", PROM_COUNTER,
		    "Time reading stopped because the input window was full.");
	prom_double(p, "syslogrx_window_full_seconds_total", NULL, s.window.full_seconds);

	one(p, "syslogrx_written_total", PROM_COUNTER, "Messages accepted by the output.",
	    s.out.written);
	one(p, "syslogrx_discarded_total", PROM_COUNTER,
	    "Messages that could not be written (the reason is logged).", s.out.discarded);
	if (s.out.parsed) { /* raw or null output: nothing parsed, no series */
		one(p, "syslogrx_malformed_total", PROM_COUNTER,
		    "Messages that did not parse (written raw all the same).", s.out.malformed);
		one(p, "syslogrx_sd_dropped_total", PROM_COUNTER,
		    "Senders' structured-data elements not written: syslogrx's own SD-ID, a "
		    "repeated SD-ID, past 64 SD-IDs.",
		    s.out.sd_dropped);
	}
	one(p, "syslogrx_line_breaks_escaped_total", PROM_COUNTER,
	    "Messages of --format original with a line break or NUL inside, written as #012 "
	    "or #000 to stay one line.",
	    s.out.breaks_escaped);
	one(p, "syslogrx_output_errors_total", PROM_COUNTER, "Failed writes to the output.",
	    s.out.write_errors);
	one(p, "syslogrx_given_up_total", PROM_COUNTER,
	    "Received messages a stop gave up on (--stop-timeout, a second signal), not written.",
	    s.out.given_up);
	one(p, "syslogrx_saved_total", PROM_COUNTER,
	    "Received messages a stop saved to the disk buffer for the next run.", s.out.saved);
	one(p, "syslogrx_abandoned_total", PROM_COUNTER,
	    "Datagrams still queued when the exit drain ran out of time.", s.abandoned);
	if (s.have_selection)
		one(p, "syslogrx_selection_failures_total", PROM_COUNTER,
		    "Datagrams the BPF program could not place (the kernel's hash took them).",
		    s.selection_failures);
	if (s.by_reason) {
		prom_family(
			p, "syslogrx_no_socket_drops_total", PROM_COUNTER,
			"Datagrams for our port dropped with no socket to take them, per reason.");
		no_socket_series(p, r, &s);
		one(p, "syslogrx_tracer_map_full_total", PROM_COUNTER,
		    "Drop counts lost because a tracer map was full.", s.tracer_map_full);
	}
	if (s.have_seq)
		one(p, "syslogrx_sequence_gaps", PROM_GAUGE,
		    "Sequence numbers missing from sysloggen/loggen traffic now (a late "
		    "message fills its gap).",
		    s.seq_gaps);
	if (s.have_output_state)
		output_state(
			p, &s, "syslogrx_output_up",
			"1: the network output delivers; 0: it cannot reach its destination and "
			"retries (the window and the disk buffer hold what arrives).",
			s.output_up, OUT_FIELD(up));
	if (s.have_output_state)
		output_state(
			p, &s, "syslogrx_output_stalled",
			"1: the network output's destination is connected but has taken nothing "
			"of what it holds for --stall-timeout (it reconnects); 0: not stalled.",
			s.output_stalled, OUT_FIELD(stalled));
	if (s.nr_outputs)
		write_outputs(p, &s);
	if (s.have_resend) {
		one(p, "syslogrx_output_resent_total", PROM_COUNTER,
		    "Messages a tcp or tls output sent again on a new connection: the last one "
		    "ended with them maybe unread (duplicates possible).",
		    s.output_resent);
		one(p, "syslogrx_output_uncertain_total", PROM_COUNTER,
		    "Messages a tcp or tls output wrote that a connection ended or the stop closed "
		    "with, maybe unread by the server, and did not send again.",
		    s.output_uncertain);
	}
	if (s.output.ops) /* the output's own rows: syslogrx_kafka_*, syslogrx_otlp_* */
		s.output.ops->metrics(p, &s.output);
	if (s.have_disk)
		write_disk_buffer(p, &s);
	if (s.senders.on)
		write_senders(p, &s);
	if (s.fair_share.on) {
		one(p, "syslogrx_fair_share_shedding", PROM_GAUGE,
		    "1: the group is under pressure and --fair-share sheds each sender's excess.",
		    s.fair_share.shedding);
		one(p, "syslogrx_fair_share_shed_total", PROM_COUNTER,
		    "Datagrams --fair-share shed in the kernel (also in the kernel drops, reason "
		    "SOCKET_FILTER).",
		    s.fair_share.shed);
	}
	snapshot_free(&s);
	return p->error;
}

static int write_page(struct prom_text *p, void *ctx)
{
	return metrics_write(ctx, p);
}

int metrics_start(struct http_metrics *h, struct receiver *r)
{
	return http_metrics_start(h, write_page, r);
}
