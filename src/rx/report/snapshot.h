/* SPDX-License-Identifier: MIT */
/*
 * Every number syslogrx reports, read at one moment into one struct: the
 * summary at exit and each metrics scrape while it runs are written from
 * it, so the two are the same numbers by construction.
 *
 * Safe from any thread while the receiver runs: counters are read with
 * relaxed atomic loads, the window without its lock (window_peek_stats),
 * the kernel's and the BPF programs' numbers with getsockopt and map
 * lookups. Nothing a worker or the output stage waits on is taken.
 * Each number is exact on its own; numbers read a few microseconds apart
 * while traffic flows need not add up (after receiver_stop they do).
 */
#ifndef SYSLOGRX_SNAPSHOT_H
#define SYSLOGRX_SNAPSHOT_H

#include "rx/life/fair_share_run.h"
#include <stdbool.h>
#include <stdint.h>
#include "net/sender_view.h"
#include "net/tracer.h"
#include "rx/path/diskbuf.h"
#include "rx/path/output.h"
#include "rx/path/reorder.h"
#include "rx/life/receiver.h"
#include "rx/life/pipeline.h"
#include "rx/sink/stats.h"
#include "rx/path/window.h"
#include "rx/report/snapshot_senders.h"

struct snapshot_socket {
	const char *state;		/* intake_socket_state: live, spare, closed */
	unsigned int listener;		/* index into snapshot.lis */
	uint64_t cookie, inode, rcvbuf; /* set at open */
	uint64_t received, bytes, truncated, empty, abandoned;
	bool have_steered; /* a balancer (not --balance hash) */
	uint64_t steered;
	bool have_meminfo;	     /* SO_MEMINFO answered */
	uint64_t so_meminfo_drops;   /* the kernel's own drop count */
	uint64_t queued_bytes;	     /* in the receive queue now */
	bool traced;		     /* a tracer (not --no-trace) */
	struct tracer_sock_stats st; /* drops per reason, queue_hwm_bytes */
};

/* One --listen's books: the sums over its sockets, and what its tracer
 * counted for its port with no socket to take it. */
struct snapshot_listener {
	const char *name;
	const char *listen; /* normalised ADDR:PORT */
	unsigned int sockets;
	uint64_t received, bytes, truncated, empty, abandoned, steered;
	uint64_t kernel_drops, so_meminfo_drops, no_socket_drops;
	uint64_t no_socket_by_reason[TRACER_MAX_REASONS];
};

struct preflight;
struct advice;

struct snapshot {
	/* What the run was, for the summary's head. */
	const struct config *cfg;
	const char *listen;	  /* the group's, normalised */
	const char *balance_runs; /* "eBPF", "classic BPF", "kernel hash"; NULL = none */
	const char *balance_why;
	bool balancer;			   /* an eBPF balancer (not hash, not classic BPF) */
	bool drops_meminfo;		   /* drops from SO_MEMINFO, exact, without reasons */
	uint64_t elapsed_ns;		   /* start to stop: set once stopped */
	const struct preflight *preflight; /* set by the front end, NULL = none */
	const struct advice *advice;
	unsigned int n;
	struct snapshot_socket *socks;
	unsigned int nr_lis;
	struct snapshot_listener *lis;
	bool listener_names; /* reports name the listeners (several, or one named) */
	/* the sums over sockets */
	uint64_t received, bytes, truncated, empty, abandoned;
	bool have_selection; /* a balancer */
	uint64_t selection_failures;
	bool traced;
	bool by_reason;	       /* the tracer runs: drops per reason, no-socket drops */
	uint64_t kernel_drops; /* sum of the sockets' st.total */
	uint64_t kernel_drops_by_reason[TRACER_MAX_REASONS];
	bool drops_match_so_meminfo;
	uint64_t tracer_map_full;
	/* datagrams for our port the kernel dropped with no socket to take them
	 * (before bind, after close, or a port nobody listened on) */
	uint64_t no_socket_drops;
	uint64_t no_socket_by_reason[TRACER_MAX_REASONS];
	struct output_counts out; /* written, malformed, discarded, write_errors */
	struct window_stats window;
	bool have_seq;	   /* the output stage has started */
	uint64_t seq_gaps; /* seqtrack's missing */
	/* snapshot_take only (a scrape leaves them zero): */
	struct seqtrack_totals seq;	     /* with have_seq */
	struct fair_share_report fair_share; /* --fair-share (on: false without) */
	bool have_reorder;		     /* --ordered */
	struct reorder_stats reorder;
	bool have_disk; /* --disk-buffer */
	struct diskbuf_stats disk;
	bool have_output_state; /* a network output: tcp, tls, kafka, otlp */
	bool output_up;		/* delivering, not retrying an unreachable destination */
	bool output_stalled;	/* connected, but its destination takes nothing */
	bool have_resend;	/* tcp, tls: a connection's output resends */
	uint64_t output_resent, output_uncertain; /* with have_resend: struct sink's */
	/* The output's own numbers (kafka, otlp), if it keeps any */
	struct sink_stats output;
	/* --output LISTENER=SPEC: each output's row (the unnamed first), and
	 * out and the output_* above are over them all; 0 without. */
	unsigned int nr_outputs;
	struct output_row outputs[RX_OUTPUTS_MAX];
	struct snapshot_senders senders;
};

/* Reads r into s (s->socks allocated). 0 or -ENOMEM. */
int snapshot_take(struct receiver *r, struct snapshot *s);
/* The same for a scrape: the per-sender part from the last refresh of
 * rx/report/sender_cache.h (a constant number of system calls whatever the
 * tables hold), the rest read now. */
int snapshot_take_scrape(struct receiver *r, struct snapshot *s);
void snapshot_free(struct snapshot *s);

/* "SOCKET_RCVBUFF" for a reason index of the snapshot's arrays. */
const char *snapshot_reason_name(struct receiver *r, unsigned int reason);
/* The index of reason "SOCKET_RCVBUFF" in the snapshot's arrays; -1: this
 * kernel has none by that name, or no tracer runs. */
int snapshot_reason_value(struct receiver *r, const char *name);

#endif
