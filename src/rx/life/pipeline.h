/* SPDX-License-Identifier: MIT */
/*
 * The receiver's pipeline: what a datagram goes through once a socket of
 * the intake holds it. The workers (their counters, per-sender tables and
 * threads), the input window, --ordered's reorder stage and its window, the
 * disk buffer (its DIR's lock and the ledger a supervisor reads), the output
 * stage and its sink, and the named outputs (--output LISTENER=SPEC, each
 * with its own sink, output stage and disk buffer); with the flags that
 * stop, force and reopen them.
 *
 * Owned part: struct rx_pipeline's fields are read and written only by the
 * pipeline's own files (pipeline.c, pipeline_workers.c, pipeline_report.c);
 * tests/lab/test_receiver_parts.py keeps it so. Everyone
 * else asks through the functions below. What the pipeline needs of the
 * other parts (the socket group, the order the workers read it in, the
 * listeners' names, the "ready" of an upgrade) it is given as arguments.
 */
#ifndef SYSLOGRX_PIPELINE_H
#define SYSLOGRX_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include "net/socket_group.h"
#include "rx/path/diskbuf.h"
#include "rx/path/output.h"
#include "rx/path/reorder.h"
#include "rx/path/senders.h"
#include "rx/path/window.h"
#include "rx/path/worker.h"
#include "rx/settings/config.h"
#include "rx/sink/stats.h"

/* A named output. */
struct rx_route {
	struct config cfg; /* the receiver's, with output and output_arg its own */
	struct sink *sink;
	struct output_stage out;
	bool started;
	bool ready;	     /* its counts readable: set once started, never cleared */
	volatile int reopen; /* SIGHUP, for this stage */
	/* --disk-buffer: its own, DIR/LISTENER (cfg.disk_buffer), locked
	 * until after its last write; or NULL. */
	struct diskbuf *disk;
	bool disk_locked;
	int disk_lock_fd;
};

/* Outputs in all: the unnamed, then each named one. */
#define RX_OUTPUTS_MAX (CONFIG_MAX_ROUTES + 1)

/* One output's numbers, for the summary and the metrics. */
struct output_row {
	const char *name; /* "default", or the listener's */
	char dest[160];	  /* as given, a URL's userinfo as *** */
	struct output_counts c;
	uint64_t received; /* datagrams its listeners took from the kernel */
	bool network;	   /* can be down: up and stalled say */
	bool up, stalled;
	bool resends; /* tcp, tls: resent and uncertain say */
	uint64_t resent, uncertain;
	/* --disk-buffer: this output's own DIR (the unnamed output's DIR,
	 * a named one's DIR/LISTENER); the totals' disk_buffer is their sum */
	bool disk;
	uint64_t disk_recovered, disk_written, disk_replayed, disk_dropped, disk_msgs;
};

struct rx_pipeline {
	const struct config *cfg;
	struct window window;
	bool window_ready;
	struct reorder *reorder;      /* --ordered: between window and ordered_window */
	struct window ordered_window; /* what the output stage reads with --ordered */
	bool ordered_ready;
	struct diskbuf *disk; /* --disk-buffer, or NULL */
	/* --disk-buffer: DIR/lock (rx/path/diskbuf_lock.h), held until after
	 * the buffer's last write. */
	bool disk_locked;
	int disk_lock_fd;
	/* --disk-buffer's messages in and out (diskbuf.h): supervised, what
	 * the supervisor reads after a kill -9 to count what was kept. */
	struct diskbuf_tally disk_tally;
	struct sink *sink;
	struct output_stage out;
	bool out_started;
	bool out_ready; /* its counts readable: set once started, never cleared */
	/* --output LISTENER=SPEC: the named outputs */
	struct rx_route *routes;
	unsigned int nr_routes;
	/* The workers: one counter per group socket (counters_cap of them,
	 * grown with the group), threads of them running over the sockets. */
	struct sock_counters *counters;
	unsigned int counters_cap;
	struct worker *workers;
	unsigned int nr_started;
	unsigned int threads; /* worker threads to run */
	struct worker_shared wsh;
	volatile int regroup; /* a live resize: the workers end without the final drain */
	volatile int stop;    /* stop reading: drain, then exit */
	volatile int force;   /* the stop gives up: save or count, write no more */
	volatile int reopen;  /* SIGHUP */
	uint64_t taken;	      /* datagrams taken from the kernel (worker.h) */
	/* --senders: one table per worker id (rx/path/senders.h), made when a
	 * worker of that id first starts and kept across resizes; NULL = off. */
	struct sender_table **senders; /* CONFIG_MAX_SOCKETS entries */
	unsigned int nr_senders;       /* tables made, read with an acquire load */
};

/* Nothing open, cfg->threads workers to run. */
void pipeline_init(struct rx_pipeline *p, const struct config *cfg);

/* The listeners' names, in the intake's order, for the named outputs. */
struct pipeline_listeners {
	unsigned int n;
	const char *name[CONFIG_MAX_LISTENERS];
};

/* Unprivileged, the sockets bound: the per-sender tables, the input window
 * (and --ordered's), the sink and the named outputs' sinks. 0 or -errno. */
int pipeline_open(struct rx_pipeline *p, const struct pipeline_listeners *lis);

/* An upgrade: the process before holds the DIRs until it is told we are
 * ready (say, once; pending: not yet said). */
struct pipeline_ready {
	bool (*pending)(void *ctx);
	void (*say)(void *ctx);
	void *ctx;
};
/* --disk-buffer: the unnamed output's DIR, then each named output's
 * DIR/LISTENER, each locked first (see pipeline.c). 0 or -errno. */
int pipeline_open_disk(struct rx_pipeline *p, const struct pipeline_ready *ready);

/* Starts the output stages and --ordered's merge over group; the workers
 * start with pipeline_workers_start. queues_outlive: what the workers read
 * at their end (shell_queues_outlive). 0 or -errno. */
int pipeline_start(struct rx_pipeline *p, const struct socket_group *group,
		   const bool *queues_outlive);
/* A stop, in two steps: the workers told to stop reading, drain and end
 * (joined); then the window closed and drained by the output stages, they
 * joined, the sinks finished and the disk buffers flushed. Each returns
 * its first error, 0 if none. */
int pipeline_stop_workers(struct rx_pipeline *p);
int pipeline_stop_outputs(struct rx_pipeline *p);
/* Workers or output stages started and not yet stopped. */
bool pipeline_started(const struct rx_pipeline *p);
/* Frees what it holds (stopped first: pipeline_started); the counts a
 * supervisor reads (pipeline_ledger_read) stay. */
void pipeline_close(struct rx_pipeline *p);

/* Told to stop (a signal): draining, then exit. */
bool pipeline_stopping(const struct rx_pipeline *p);
/* The stop gives up: what the outputs hold is saved or counted. */
void pipeline_give_up(struct rx_pipeline *p);
/* SIGHUP: every output reopens its file. */
void pipeline_reopen(struct rx_pipeline *p);

/* The workers (pipeline_workers.c). Threads to run; set while they are
 * paused. */
unsigned int pipeline_threads(const struct rx_pipeline *p);
void pipeline_set_threads(struct rx_pipeline *p, unsigned int threads);
/* Counters for cap group sockets (workers paused). 0 or -ENOMEM. */
int pipeline_grow_counters(struct rx_pipeline *p, unsigned int cap);
/* Starts the threads over the group's sockets order[0, n) (held by the
 * caller until they are joined), those in selection first. 0 or -errno. */
int pipeline_workers_start(struct rx_pipeline *p, const unsigned int *order, unsigned int n);
/* Joins every started worker; the first error, 0 if none. */
int pipeline_workers_join(struct rx_pipeline *p);
/* Joins them without the final drain (the kernel queues keep what arrives
 * meanwhile): a live resize, an upgrade. */
int pipeline_workers_pause(struct rx_pipeline *p);

/* What the reports ask (pipeline_report.c). */
/* The window and the output stage are ready and a worker has started. */
bool pipeline_running(const struct rx_pipeline *p);
unsigned int pipeline_workers_started(const struct rx_pipeline *p);
uint64_t pipeline_worker_beat_ns(const struct rx_pipeline *p, unsigned int i);
/* Messages taken from the kernel and not yet processed by the output stage. */
uint64_t pipeline_in_flight(struct rx_pipeline *p);
/* A worker waits for room in the input window. */
bool pipeline_window_full(struct rx_pipeline *p);
/* Row 0 the unnamed output, then each named one; how many (1 without
 * named outputs). Zero counts before the stages start. g: the group whose
 * sockets' counts say what each output's listeners received. */
unsigned int pipeline_outputs_rows(struct rx_pipeline *p, const struct socket_group *g,
				   struct output_row *rows);
/* The output stages' counts summed; false before they have started. */
bool pipeline_output_counts(struct rx_pipeline *p, struct output_counts *c);
/* The disk buffers' figures summed; false without --disk-buffer. */
bool pipeline_disk_stats(struct rx_pipeline *p, struct diskbuf_stats *d);
/* The first output (the unnamed, then the named ones) whose sink is
 * stalled (sink_is_stalled), or down (sink_is_down): its name, else NULL. */
const char *pipeline_output_stalled(const struct rx_pipeline *p);
const char *pipeline_output_down(const struct rx_pipeline *p);
/* --senders: the workers count per sender. */
bool pipeline_counts_senders(const struct rx_pipeline *p);
/* Each worker's sender table read (sender_table_read's fn and ctx), their
 * stats summed into st. 0 or the first error. */
int pipeline_senders_read(struct rx_pipeline *p, struct sender_table_stats *st,
			  int (*fn)(const uint8_t addr[16], uint64_t count, void *ctx), void *ctx);
/* Group socket i's counts (relaxed loads: whole values). */
void pipeline_socket_counts(const struct rx_pipeline *p, unsigned int i, struct sock_counters *c);
/* What the workers took from the group sockets of listener k. */
uint64_t pipeline_taken_by(const struct rx_pipeline *p, const struct socket_group *g,
			   unsigned int k);

/* What report/'s snapshot takes from the pipeline. */
struct pipeline_run_report {
	struct output_counts out; /* zero before the stages start */
	bool have_disk;
	struct diskbuf_stats disk;
	struct window_stats window;
	bool have_seq; /* the output stage has started */
	uint64_t seq_gaps;
	struct seqtrack_totals seq; /* not on a scrape */
	bool have_reorder;	    /* --ordered, not on a scrape */
	struct reorder_stats reorder;
	bool have_output_state; /* the unnamed output is a network one */
	bool output_up, output_stalled, have_resend;
	uint64_t output_resent, output_uncertain;
	struct sink_stats output;
};
void pipeline_report_run(struct rx_pipeline *p, bool scrape, struct pipeline_run_report *run);

/* For the sizing advice: the workers last started, and over them each
 * one's busy time (busy, nr entries), the first and the last read. */
unsigned int pipeline_nr_workers(const struct rx_pipeline *p);
void pipeline_worker_times(const struct rx_pipeline *p, uint64_t *busy, unsigned int nr,
			   uint64_t *first_ns, uint64_t *last_ns);
/* The input window's figures (window_get_stats), once stopped. */
void pipeline_window_stats(struct rx_pipeline *p, struct window_stats *ws);
/* The output stage's busy time. */
uint64_t pipeline_output_busy_ns(const struct rx_pipeline *p);

/* What a supervisor reads of its child's pipeline, in the memory they
 * share, once the child is gone (supervisor.h's ledger). */
struct pipeline_ledger {
	uint64_t taken;
	uint64_t written, discarded;
	uint64_t disk_written, disk_replayed, disk_dropped;
};
void pipeline_ledger_read(const struct rx_pipeline *p, struct pipeline_ledger *l);

#endif
