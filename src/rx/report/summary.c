// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/json_writer.h"
#include "common/log.h"
#include "common/no_follow.h"
#include "common/sockaddr.h"
#include "net/sockinfo.h"
#include "rx/report/snapshot.h"
#include "rx/settings/advice.h"
#include "rx/settings/preflight.h"
#include "rx/path/diskbuf.h"
#include "rx/report/summary.h"

int summary_check_drops(struct receiver *r)
{
	struct snapshot s;
	int bad = 0;

	if (snapshot_take(r, &s))
		return 0;
	/* Only the tracer counts apart from the kernel: without it (or with
	 * SO_MEMINFO as the count) there is nothing to compare. */
	for (unsigned int i = 0; s.by_reason && i < s.n; i++) {
		const struct snapshot_socket *ss = &s.socks[i];

		if (!ss->traced || !strcmp(ss->state, "closed") || !ss->have_meminfo)
			continue;
		if (ss->so_meminfo_drops != ss->st.total) {
			pr_warn("socket %u (cookie %llu): traced %llu drops, the kernel counts %llu "
				"(SO_MEMINFO): MISMATCH\n",
				i, (unsigned long long)ss->cookie, (unsigned long long)ss->st.total,
				(unsigned long long)ss->so_meminfo_drops);
			bad++;
		}
	}
	snapshot_free(&s);
	return bad;
}

static void write_reasons(struct json_writer *w, struct receiver *r, const char *key,
			  const uint64_t *by_reason, uint64_t total)
{
	jw_object_begin(w, key);
	jw_u64(w, "total", total);
	for (unsigned int i = 0; i < TRACER_MAX_REASONS; i++)
		if (by_reason[i])
			jw_u64(w, snapshot_reason_name(r, i), by_reason[i]);
	jw_object_end(w);
}

static void write_string_or_null(struct json_writer *w, const char *key, const char *s)
{
	if (s && s[0])
		jw_string(w, key, s);
	else
		jw_null(w, key);
}

/* config.config_file, config.env_file: the files read and what the SC4S
 * env_file's settings became. */
static void write_config_files(struct json_writer *w, const struct config *c)
{
	const struct env_map *m = &c->env;

	write_string_or_null(w, "config_file", c->config_file);
	if (!c->env_file[0]) {
		jw_null(w, "env_file");
		return;
	}
	jw_object_begin(w, "env_file");
	jw_string(w, "path", c->env_file);
	jw_array_begin(w, "mapped");
	for (unsigned int i = 0; i < m->n; i++) {
		const struct env_mapping *e = &m->rows[i];

		jw_object_begin(w, NULL);
		jw_string(w, "name", e->name);
		jw_string(w, "value", e->value);
		if (e->sc4s_default)
			jw_null(w, "line"); /* unset in the file: SC4S's default */
		else
			jw_u64(w, "line", e->line);
		write_string_or_null(w, "flag", e->flag);
		jw_string(w, "became", e->became);
		write_string_or_null(w, "overridden_by", e->overridden_by);
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_array_begin(w, "ignored");
	for (const char *p = m->ignored; *p;) {
		size_t len = strcspn(p, ",");

		jw_string_n(w, NULL, p, len);
		p += len;
		p += strspn(p, ", ");
	}
	jw_array_end(w);
	jw_array_begin(w, "warnings");
	for (unsigned int i = 0; i < m->nr_warnings; i++)
		jw_string(w, NULL, m->warnings[i]);
	jw_array_end(w);
	jw_object_end(w);
}

/* "preflight": each check made at start, {check, ok, message, fix}. */
static void write_preflight(struct json_writer *w, const struct preflight *p)
{
	if (!p) {
		jw_null(w, "preflight");
		return;
	}
	jw_array_begin(w, "preflight");
	for (unsigned int i = 0; i < p->n; i++) {
		const struct preflight_check *c = &p->checks[i];

		jw_object_begin(w, NULL);
		jw_string(w, "check", c->check);
		if (c->listener[0])
			jw_string(w, "listener", c->listener);
		jw_bool(w, "ok", c->ok);
		jw_string(w, "message", c->message);
		write_string_or_null(w, "fix", c->fix);
		jw_object_end(w);
	}
	jw_array_end(w);
}

/* "advice": after a loss, the settings that would have held the load. */
static void write_advice(struct json_writer *w, const struct advice *a)
{
	if (!a) {
		jw_null(w, "advice");
		return;
	}
	jw_array_begin(w, "advice");
	for (unsigned int i = 0; i < a->n; i++) {
		const struct advice_item *it = &a->items[i];

		jw_object_begin(w, NULL);
		if (it->listener[0])
			jw_string(w, "listener", it->listener);
		if (it->flag[0])
			jw_string(w, "flag", it->flag);
		else if (it->sysctl[0])
			jw_string(w, "sysctl", it->sysctl);
		else if (it->limit[0])
			jw_string(w, "limit", it->limit);
		else
			jw_string(w, "bug", it->bug);
		jw_string(w, "value", it->value);
		jw_string(w, "why", it->why);
		jw_object_end(w);
	}
	jw_array_end(w);
}

static void write_config(struct json_writer *w, const struct config *c)
{
	char out[PATH_MAX + 16];

	jw_object_begin(w, "config");
	jw_u64(w, "sockets", c->sockets);
	jw_u64(w, "threads", c->threads);
	jw_u64(w, "max_sockets", c->max_sockets > c->sockets ? c->max_sockets : c->sockets);
	jw_u64(w, "batch", c->batch);
	if (c->rcvbuf)
		jw_u64(w, "rcvbuf", c->rcvbuf);
	else
		jw_null(w, "rcvbuf");
	jw_u64(w, "window", c->window);
	jw_u64(w, "window_bytes", c->window_bytes);
	jw_string(w, "output", config_output_name(c, out, sizeof(out)));
	jw_string(w, "format", format_name(c->format));
	jw_string(w, "timezone", c->timezone);
	jw_bool(w, "guess_timezone", c->guess_tz);
	jw_bool(w, "escape_control", c->escape_control);
	jw_bool(w, "sequences", c->sequences);
	if (c->nr_cost_ns > 1) { /* one per thread */
		jw_array_begin(w, "cost_ns");
		for (unsigned int t = 0; t < c->nr_cost_ns; t++)
			jw_u64(w, NULL, c->cost_ns[t]);
		jw_array_end(w);
	} else {
		jw_u64(w, "cost_ns", c->cost_ns[0]);
	}
	jw_u64(w, "output_rate", c->output_rate);
	jw_bool(w, "trace", c->trace);
	write_config_files(w, c);
	jw_object_end(w);
}

static void write_loss(struct json_writer *w, const struct snapshot *s)
{
	const struct seqtrack_totals *t = &s->seq;

	jw_object_begin(w, "loss");
	/* Without --sequences no marker is read: the section says so and
	 * carries no sequence figure at all. */
	jw_bool(w, "sequences", s->have_seq);
	if (!s->have_seq) {
		jw_object_end(w);
		return;
	}
	jw_u64(w, "flows_max", s->cfg->sequence_flows);
	jw_u64(w, "jump_max", s->cfg->sequence_jump);
	jw_u64(w, "sequenced", t->sequenced);
	jw_u64(w, "received", t->received);
	/* per flow: sent - received once its end marker arrived, else the gaps */
	jw_u64(w, "missing", s->seq_gaps);
	jw_u64(w, "duplicates", t->duplicates);
	jw_u64(w, "reordered", t->reordered);
	jw_u64(w, "untracked", t->untracked);
	/* markers not believed (a jump past jump_max): in no figure above */
	jw_u64(w, "implausible", t->implausible);
	jw_u64(w, "flows", t->flows);
	jw_u64(w, "flows_closed", t->flows_closed);
	if (t->flows_closed == t->flows && t->flows)
		jw_u64(w, "sent", t->sent);
	else
		jw_null(w, "sent");
	jw_u64(w, "end_markers", t->end_markers);
	jw_u64(w, "end_markers_lost", t->end_markers_lost);
	/* sent = received + kernel drops, when every datagram carried a marker
	 * (data or end): then the missing messages and the lost end markers are
	 * the datagrams the kernel dropped, to the last one when every flow was
	 * closed by its end marker. */
	if (s->traced && t->sequenced && t->sequenced + t->end_markers == s->out.processed)
		jw_bool(w, "gaps_equal_kernel_drops",
			s->seq_gaps + t->end_markers_lost == s->kernel_drops);
	else
		jw_null(w, "gaps_equal_kernel_drops");
	jw_object_end(w);
}

/* "ordering": --ordered's merge (null without it). late = written at once
 * because a later-stamped message of any flow was already written. */
static void write_ordering(struct json_writer *w, const struct snapshot *s)
{
	const struct reorder_stats *st = &s->reorder;

	if (!s->have_reorder) {
		jw_null(w, "ordering");
		return;
	}
	jw_object_begin(w, "ordering");
	jw_u64(w, "hold_ms", st->hold_ns / 1000000);
	jw_u64(w, "merged", st->merged);
	jw_u64(w, "late", st->late);
	jw_u64(w, "held_hwm", st->held_hwm);
	jw_double(w, "lag_max_ms", st->lag_max_ns / 1e6, 3);
	jw_object_end(w);
}

/* "disk_buffer": what --disk-buffer holds and did. Messages received +
 * recovered = written to the sink + discarded + given_up + dropped + msgs
 * (still on disk for the next run) - kept_written (written, and kept on
 * disk by a stop that gave up: sent again by the next run). */
static void write_disk_buffer(struct json_writer *w, const struct snapshot *s)
{
	const struct diskbuf_stats *d = &s->disk;

	if (!s->have_disk)
		return;
	jw_object_begin(w, "disk_buffer");
	jw_string(w, "dir", s->cfg->disk_buffer);
	jw_string(w, "mode", diskbuf_mode_name(s->cfg->disk_buffer_mode));
	jw_u64(w, "size", d->max_bytes);
	jw_u64(w, "sync_ms", s->cfg->disk_buffer_sync_ms);
	jw_u64(w, "bytes", d->bytes);
	jw_u64(w, "msgs", d->msgs);
	jw_u64(w, "segments", d->segments);
	jw_double(w, "oldest_age_seconds", d->oldest_age_seconds, 3);
	jw_u64(w, "recovered", d->recovered_msgs);
	jw_u64(w, "written", d->written_msgs);
	jw_u64(w, "written_bytes", d->written_bytes);
	jw_u64(w, "replayed", d->replayed_msgs);
	jw_u64(w, "read_back", d->read_back_msgs);
	jw_u64(w, "dropped", d->dropped_msgs);
	jw_u64(w, "kept_written", s->out.kept_written);
	jw_u64(w, "dropped_batches", d->dropped_batches);
	jw_u64(w, "corrupt", d->corrupt_records);
	jw_u64(w, "corrupt_bytes", d->corrupt_bytes);
	jw_u64(w, "corrupt_msgs", d->corrupt_msgs);
	jw_u64(w, "corrupt_uncounted", d->corrupt_uncounted);
	jw_u64(w, "segments_refused", d->segments_refused);
	jw_u64(w, "syncs", d->syncs);
	jw_object_end(w);
}

/* A sender's drops per reason: {"SOCKET_RCVBUFF": n, ..., "OTHER": n}. */
static void write_sender_reasons(struct json_writer *w, struct receiver *r,
				 const struct sender_row *row)
{
	jw_object_begin(w, "kernel_drops");
	for (int k = 0; k < SENDER_REASONS; k++)
		if (row->reason_drops[k])
			jw_u64(w, snapshot_reason_name(r, row->reason[k]), row->reason_drops[k]);
	if (row->other_drops)
		jw_u64(w, "OTHER", row->other_drops);
	jw_object_end(w);
}

/*
 * "senders" (--senders): the top --senders-top by drops, then one row for the
 * rest. received = the rows' received + rest.received + evicted.received;
 * dropped = the rows' dropped + rest.dropped + evicted.dropped +
 * unattributed_drops (the per-socket totals, when only our sockets use the
 * port). complete: nothing evicted or unattributed, the rows are all of it.
 */
static void write_senders(struct json_writer *w, struct receiver *r, const struct snapshot *s)
{
	const struct snapshot_senders *ss = &s->senders;
	const struct tracer_sender_totals *d = &ss->drops;
	size_t top = ss->top;
	char addr[INET6_ADDRSTRLEN];

	if (!ss->on) {
		jw_null(w, "senders");
		return;
	}
	jw_object_begin(w, "senders");
	jw_u64(w, "table_size", s->cfg->senders);
	jw_u64(w, "top", s->cfg->senders_top);
	jw_bool(w, "drops_traced", ss->traced);
	jw_u64(w, "tracked", ss->tracked);
	jw_u64(w, "received", ss->received);
	if (ss->traced)
		jw_u64(w, "dropped", d->attributed + d->unattributed);
	else
		jw_null(w, "dropped");
	jw_array_begin(w, "rows");
	for (size_t i = 0; i < top; i++) {
		const struct sender_row *row = &ss->view.rows[i];

		format_addr16(row->addr, addr, sizeof(addr));
		jw_object_begin(w, NULL);
		jw_string(w, "address", addr);
		jw_u64(w, "received", row->received);
		if (ss->traced) {
			jw_u64(w, "dropped", row->dropped);
			jw_u64(w, "shed", row->shed);
			jw_double(w, "loss_ratio", sender_loss_ratio(row->received, row->dropped),
				  6);
			write_sender_reasons(w, r, row);
		} else {
			jw_null(w, "dropped");
			jw_null(w, "loss_ratio");
			jw_null(w, "kernel_drops");
		}
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_begin(w, "rest");
	jw_u64(w, "senders", ss->tracked - top);
	jw_u64(w, "received", ss->rest_received);
	jw_u64(w, "dropped", ss->rest_dropped);
	jw_object_end(w);
	jw_object_begin(w, "evicted");
	jw_u64(w, "received_entries", ss->evicted);
	jw_u64(w, "received", ss->received_evicted);
	jw_u64(w, "dropped_entries", ss->drop_entries_evicted);
	jw_u64(w, "dropped", ss->drops_evicted);
	jw_object_end(w);
	jw_u64(w, "unattributed_drops", d->unattributed);
	jw_bool(w, "complete",
		!ss->evicted && !ss->drops_evicted && !ss->drop_entries_evicted &&
			!d->unattributed);
	jw_object_end(w);
}

/* "listeners": each --listen's books, when records name them (several, or
 * one named): sent to it = received + kernel_drops + abandoned (+ what a
 * sender's own host dropped, which no receiver sees). */
static void write_listeners(struct json_writer *w, const struct snapshot *s)
{
	if (!s->cfg->listener_names)
		return;
	jw_array_begin(w, "listeners");
	for (unsigned int k = 0; k < s->nr_lis; k++) {
		const struct snapshot_listener *l = &s->lis[k];

		jw_object_begin(w, NULL);
		write_string_or_null(w, "name", l->name);
		jw_string(w, "listen", l->listen);
		jw_u64(w, "sockets", l->sockets);
		jw_u64(w, "received", l->received);
		jw_u64(w, "bytes", l->bytes);
		jw_u64(w, "truncated", l->truncated);
		jw_u64(w, "empty", l->empty);
		jw_u64(w, "abandoned", l->abandoned);
		if (s->have_selection)
			jw_u64(w, "steered", l->steered);
		else
			jw_null(w, "steered");
		if (s->traced)
			jw_u64(w, "kernel_drops", l->kernel_drops);
		else
			jw_null(w, "kernel_drops");
		jw_u64(w, "so_meminfo_drops", l->so_meminfo_drops);
		if (s->traced && !s->drops_meminfo)
			jw_u64(w, "no_socket_drops", l->no_socket_drops);
		else
			jw_null(w, "no_socket_drops");
		jw_object_end(w);
	}
	jw_array_end(w);
}

/* The head: the format's version, where it listened, what spread the
 * datagrams and why, the settings, how long it ran. */
static void write_head(struct json_writer *w, const struct snapshot *s)
{
	jw_u64(w, "version", 1);
	jw_string(w, "listen", s->listen);
	jw_string(w, "balance", balance_policy_name(s->cfg->balance));
	/* What spreads, and why that one: eBPF, classic BPF or the kernel's hash. */
	jw_object_begin(w, "balancer");
	write_string_or_null(w, "runs", s->balance_runs);
	write_string_or_null(w, "why", s->balance_why);
	jw_object_end(w);
	write_config(w, s->cfg);
	jw_double(w, "elapsed_seconds", s->elapsed_ns / 1e9, 3);
}

/* "sockets": one object per group socket, in group order. */
static void write_sockets(struct json_writer *w, struct receiver *r, const struct snapshot *s)
{
	jw_array_begin(w, "sockets");
	for (unsigned int i = 0; i < s->n; i++) {
		const struct snapshot_socket *ss = &s->socks[i];

		jw_object_begin(w, NULL);
		jw_u64(w, "index", i);
		if (s->cfg->listener_names && ss->listener < s->nr_lis)
			write_string_or_null(w, "listener", s->lis[ss->listener].name);
		jw_string(w, "state", ss->state);
		jw_u64(w, "cookie", ss->cookie);
		jw_u64(w, "inode", ss->inode);
		jw_u64(w, "rcvbuf", ss->rcvbuf);
		jw_u64(w, "received", ss->received);
		jw_u64(w, "bytes", ss->bytes);
		jw_u64(w, "truncated", ss->truncated);
		jw_u64(w, "empty", ss->empty);
		jw_u64(w, "abandoned", ss->abandoned);
		if (ss->have_steered)
			jw_u64(w, "steered", ss->steered);
		else
			jw_null(w, "steered");
		if (ss->have_meminfo)
			jw_u64(w, "so_meminfo_drops", ss->so_meminfo_drops);
		else
			jw_null(w, "so_meminfo_drops");
		if (ss->traced) {
			write_reasons(w, r, "kernel_drops", ss->st.by_reason, ss->st.total);
			if (s->drops_meminfo) /* only the tracer watches the queue */
				jw_null(w, "queue_hwm_bytes");
			else
				jw_u64(w, "queue_hwm_bytes", ss->st.queue_hwm_bytes);
		} else {
			jw_null(w, "kernel_drops");
			jw_null(w, "queue_hwm_bytes");
		}
		jw_object_end(w);
	}
	jw_array_end(w);
}

/* totals.kernel_drops and what goes with it: the tracer's per reason, the
 * kernel's own count without reasons, or null with --no-trace. */
static void write_total_drops(struct json_writer *w, struct receiver *r, const struct snapshot *s)
{
	if (s->traced && s->drops_meminfo) {
		/* Exact per socket (the kernel's own counter), without reasons. */
		jw_object_begin(w, "kernel_drops");
		jw_u64(w, "total", s->kernel_drops);
		jw_string(w, "reasons", "unavailable without CAP_BPF and CAP_PERFMON");
		jw_object_end(w);
		jw_string(w, "kernel_drops_source", "SO_MEMINFO");
		jw_null(w, "kernel_drops_match_so_meminfo"); /* the same counter */
		jw_null(w, "no_socket_drops");
	} else if (s->traced) {
		write_reasons(w, r, "kernel_drops", s->kernel_drops_by_reason, s->kernel_drops);
		jw_bool(w, "kernel_drops_match_so_meminfo", s->drops_match_so_meminfo);
		jw_u64(w, "tracer_map_full", s->tracer_map_full);
		write_reasons(w, r, "no_socket_drops", s->no_socket_by_reason, s->no_socket_drops);
	} else {
		jw_null(w, "kernel_drops");
		jw_null(w, "kernel_drops_match_so_meminfo");
		jw_null(w, "no_socket_drops");
	}
}

/* "totals": the sums over sockets and the output stage's counts. */
static void write_totals(struct json_writer *w, struct receiver *r, const struct snapshot *s)
{
	jw_object_begin(w, "totals");
	jw_u64(w, "received", s->received);
	jw_u64(w, "bytes", s->bytes);
	jw_u64(w, "written", s->out.written);
	if (s->out.parsed) {
		jw_u64(w, "malformed", s->out.malformed);
		jw_u64(w, "sd_dropped", s->out.sd_dropped);
	} else {
		jw_null(w, "malformed"); /* raw or null output: nothing parsed */
		jw_null(w, "sd_dropped");
	}
	jw_u64(w, "line_breaks_escaped", s->out.breaks_escaped);
	jw_u64(w, "truncated", s->truncated);
	jw_u64(w, "empty", s->empty);
	jw_u64(w, "abandoned", s->abandoned);
	jw_u64(w, "discarded", s->out.discarded);
	jw_u64(w, "given_up", s->out.given_up);
	jw_u64(w, "saved", s->out.saved);
	if (s->balancer)
		jw_u64(w, "selection_failures", s->selection_failures);
	else
		jw_null(w, "selection_failures"); /* hash: no program to fail */
	write_total_drops(w, r, s);
	jw_object_end(w);
}

/* "outputs" (--output LISTENER=SPEC; null without): each output's books,
 * the unnamed one first as "default": received by its listeners = written
 * + discarded + given_up + saved. */
static void write_outputs(struct json_writer *w, const struct snapshot *s)
{
	if (!s->nr_outputs) {
		jw_null(w, "outputs");
		return;
	}
	jw_array_begin(w, "outputs");
	for (unsigned int i = 0; i < s->nr_outputs; i++) {
		const struct output_row *o = &s->outputs[i];

		jw_object_begin(w, NULL);
		jw_string(w, "output", o->name);
		jw_string(w, "destination", o->dest);
		jw_u64(w, "received", o->received);
		jw_u64(w, "written", o->c.written);
		jw_u64(w, "discarded", o->c.discarded);
		jw_u64(w, "given_up", o->c.given_up);
		jw_u64(w, "saved", o->c.saved);
		if (o->network)
			jw_bool(w, "up", o->up);
		else
			jw_null(w, "up");
		if (o->resends) {
			jw_u64(w, "resent", o->resent);
			jw_u64(w, "uncertain", o->uncertain);
		} else {
			jw_null(w, "resent");
			jw_null(w, "uncertain");
		}
		jw_object_end(w);
	}
	jw_array_end(w);
}

/* "window": the bounded hand-off between the workers and the output stage. */
static void write_window(struct json_writer *w, const struct snapshot *s)
{
	jw_object_begin(w, "window");
	jw_u64(w, "size", s->window.size);
	jw_u64(w, "size_bytes", s->window.size_bytes);
	jw_u64(w, "hwm", s->window.hwm);
	/* what its batches take at exit, pool included (bounded: window.h) */
	jw_u64(w, "allocated_bytes", s->window.alloc_bytes);
	jw_u64(w, "pool_batches", s->window.pool);
	jw_double(w, "full_seconds", s->window.full_seconds, 3);
	jw_object_end(w);
}

/*
 * "fair_share" (--fair-share; null without): what the filter ran on and
 * shed in all, whether it sheds now and at which level (datagrams/s per
 * sender of weight 1), how often shedding started. Per sender: the senders
 * rows' "shed".
 */
static void write_fair_share(struct json_writer *w, const struct snapshot *s)
{
	const struct fair_share_report *f = &s->fair_share;

	if (!f->on) {
		jw_null(w, "fair_share");
		return;
	}
	jw_object_begin(w, "fair_share");
	jw_bool(w, "shedding", f->shedding);
	jw_double(w, "level", f->level, 1);
	jw_u64(w, "episodes", f->episodes);
	jw_u64(w, "filtered", f->seen);
	jw_u64(w, "shed", f->shed);
	jw_u64(w, "unshaped", f->unshaped);
	jw_u64(w, "senders_seen", f->inserts);
	jw_object_end(w);
}

/* The whole document, in its order of keys. */
static void write_summary(struct json_writer *w, struct receiver *r, const struct snapshot *s)
{
	jw_object_begin(w, NULL);
	write_head(w, s);
	write_sockets(w, r, s);
	write_listeners(w, s);
	write_totals(w, r, s);
	write_outputs(w, s);
	write_window(w, s);
	write_loss(w, s);
	write_ordering(w, s);
	/* a network output: delivering (true) or retrying a destination it
	 * cannot reach (false) when the summary was written */
	if (s->have_output_state)
		jw_bool(w, "output_up", s->output_up);
	else
		jw_null(w, "output_up");
	/* connected, but taking nothing for --stall-timeout (tcp, tls) */
	if (s->have_output_state)
		jw_bool(w, "output_stalled", s->output_stalled);
	else
		jw_null(w, "output_stalled");
	/* tcp, tls: sent again on a new connection; written, maybe unread */
	if (s->have_resend) {
		jw_u64(w, "output_resent", s->output_resent);
		jw_u64(w, "output_uncertain", s->output_uncertain);
	} else {
		jw_null(w, "output_resent");
		jw_null(w, "output_uncertain");
	}
	if (s->output.ops) /* the output's own object: "kafka", "otlp" */
		s->output.ops->summary(w, &s->output);
	write_preflight(w, s->preflight);
	write_advice(w, s->advice);
	write_disk_buffer(w, s);
	write_senders(w, r, s);
	write_fair_share(w, s);
	jw_object_end(w);
}

int summary_write(struct receiver *r, const char *path)
{
	struct json_writer w;
	struct snapshot s;
	FILE *f;
	int err;

	err = snapshot_take(r, &s);
	if (err)
		return err;
	f = strcmp(path, "-") ? fopen_private(path) : stdout;
	if (!f) {
		err = -errno;
		pr_warn("--summary %s: %s\n", path, no_follow_strerror(errno));
		snapshot_free(&s);
		return err;
	}
	jw_init(&w, f, true);
	write_summary(&w, r, &s);
	jw_finish(&w);
	snapshot_free(&s);
	if (f != stdout && fclose(f)) {
		pr_warn("--summary %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}
