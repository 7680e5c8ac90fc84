/* SPDX-License-Identifier: MIT */
/*
 * src/rx/: the receiver. This file is its wiring; beside it config (flags),
 * worker (recvmmsg loops), window (the bounded hand-off), output*.c (parse,
 * account, format, write), summary and stats_line (what a run did), sink/
 * (destinations) and main.c (the front end). Uses net, syslog and common.
 *
 * The receiver, wired: socket group, balancer, tracer, input window,
 * workers, output stage and sink. syslogrx's main is a thin front end over
 * it; tests and tools can drive it the same way.
 */
#ifndef SYSLOGRX_RECEIVER_H
#define SYSLOGRX_RECEIVER_H

#include "common/caps.h"
#include "net/balancer.h"
#include "net/cbpf_balancer.h"
#include "rx/settings/config.h"
#include "rx/path/diskbuf.h"
#include "rx/path/output.h"
#include "rx/path/reorder.h"
#include "rx/sink/sink.h"
#include "net/socket_group.h"
#include "net/tracer.h"
#include "rx/path/window.h"
#include "rx/path/worker.h"

struct sender_cache;
struct fair_share_run;
struct rx_route;

/* One --listen: its own reuseport group in the kernel, a run of sockets
 * [first, first + n) of the receiver's group, its own balancer and tracer.
 * Listener 0's balancer, classic BPF program and tracer are the receiver's
 * own fields (a resize and an upgrade act on them); the others' are here. */
struct rx_listener {
	const char *name; /* the config's, validated */
	char listen[80];  /* normalised, the port the kernel picked for port 0 */
	uint16_t port;
	unsigned int first, n;
	struct balancer *balancer; /* listeners 1..: eBPF, or NULL */
	bool cbpf;
	struct cbpf_order join_order;
	struct tracer *tracer;
	/* Adopted: the map's steered counts per slot at the hand-over (the
	 * process before steered those); NULL = none. */
	uint64_t *steered_base;
	uint64_t failures_base;
};

struct receiver {
	const struct config *cfg;
	/* --listen, in the config's order; one unless several were given. */
	struct rx_listener lis[CONFIG_MAX_LISTENERS];
	unsigned int nr_lis;
	struct socket_group group;
	struct balancer *balancer; /* eBPF; NULL for --balance hash or classic BPF */
	/* --balance random without CAP_BPF: a classic BPF program spreads
	 * (net/cbpf_balancer.h); join_order is the group's join order by group
	 * socket index, and slot k is the socket at index k. */
	bool cbpf;
	struct cbpf_order join_order;
	/* What spreads and why, for the ready line and the summary. */
	const char *balance_runs; /* "eBPF", "classic BPF", "kernel hash" */
	char balance_why[160];
	/* The tracer was wanted but the privilege is missing: per-socket drops
	 * come from SO_MEMINFO (exact, without reasons). */
	bool drops_meminfo;
	struct tracer *tracer; /* NULL with --no-trace */
	struct window window;
	bool window_ready;
	struct diskbuf *disk; /* --disk-buffer, or NULL */
	struct sink *sink;
	struct sock_counters *counters;
	struct worker *workers;
	unsigned int nr_started;
	struct output_stage out;
	bool out_started;
	bool out_ready; /* its counts readable: set once started, never cleared */
	/* --output LISTENER=SPEC: the named outputs (rx/life/receiver_outputs.h) */
	struct rx_route *routes;
	unsigned int nr_routes;
	struct worker_shared wsh;
	struct reorder *reorder;      /* --ordered: between window and ordered_window */
	struct window ordered_window; /* what the output stage reads with --ordered */
	bool ordered_ready;
	volatile int stop;	    /* stop reading: drain, then exit */
	volatile int force;	    /* the stop gives up: save or count, write no more */
	volatile int reopen;	    /* SIGHUP */
	uint64_t start_ns, stop_ns; /* CLOCK_MONOTONIC */
	/* Set by the front end for the summary, NULL = none. */
	const struct preflight *preflight;
	const struct advice *advice;
	/* Live resize (rx/life/resize.c). Slot k of the balancer's map (or, with
	 * hash, the k-th socket in the group) is group socket slot_sock[k], for
	 * k < live; other open sockets are spares (out of selection, still read). */
	unsigned int live;	 /* sockets in selection */
	unsigned int threads;	 /* worker threads running */
	unsigned int *slot_sock; /* slot_cap entries */
	unsigned int slot_cap;
	unsigned int *order; /* sockets the workers read: live, then spares */
	unsigned int counters_cap;
	uint64_t *sock_steered; /* per group socket, credited at each resize */
	uint64_t *steered_base; /* per slot, the map's count at the last credit */
	volatile int regroup;
	/* Held by a live resize and by snapshot_take: a metrics scrape never
	 * reads the group, the slots or the steered counts half changed. */
	pthread_mutex_t report_lock;
	struct caps_user user; /* --user, looked up before anything is bound */
	bool user_known;
	bool handed_over; /* a new process took the sockets and BPF objects */
	bool supervised;  /* a supervisor holds them: no resize, no USR2 */
	/* Supervised: the supervisor's word that a next child reads the
	 * queues (supervisor.h's ledger); NULL otherwise. */
	const bool *queues_kept;
	uint64_t taken; /* datagrams taken from the kernel (worker.h) */
	/* --senders: one table per worker id (rx/path/senders.h), made when a
	 * worker of that id first starts and kept across resizes; NULL = off. */
	struct sender_table **senders; /* CONFIG_MAX_SOCKETS entries */
	unsigned int nr_senders;       /* tables made, read with an acquire load */
	/* What scrapes show of them (rx/report/sender_cache.h), made and
	 * refreshed by the front end; NULL: a scrape reads the tables. */
	struct sender_cache *sender_cache;
	/* --metrics' listening socket, handed over with the group's (an
	 * upgrade, a supervisor's children, systemd's fd store); -1: none. */
	int metrics_fd;
	int health_fd; /* --health's, the same way */
	/* Adopted: the pipe on which the process before us waits for "ready". */
	bool ready_pending;
	int ready_fd;
	/* --disk-buffer: DIR/lock (rx/path/diskbuf_lock.h), held until after
	 * the buffer's last write. */
	bool disk_locked;
	int disk_lock_fd;
	/* --disk-buffer's messages in and out (diskbuf.h): supervised, what
	 * the supervisor reads after a kill -9 to count what was kept. */
	struct diskbuf_tally disk_tally;
	/* --fair-share (rx/life/fair_share_run.h); NULL: off. */
	struct fair_share_run *fair_share;
};

/* The privileged half of receiver_open: sockets, tracer, balancer. A
 * supervisor holds just these. */
int receiver_acquire(struct receiver *r, const struct config *cfg);
/* Looks --user up (a wrong name, a missing CAP_SETUID: said) and checks as
 * that user (or as uid 0 without capabilities) every path written later.
 * 0, -EINVAL (said: exit 2; *refused, when not NULL, the paths refused)
 * or -errno. Before anything is bound. */
int receiver_check_user_paths(struct receiver *r, unsigned int *refused);
/* Opens sockets, loads and attaches BPF, opens the sink. Returns 0 or -errno
 * (-EPERM, -EADDRINUSE, ...) having logged one line naming the problem. */
int receiver_open(struct receiver *r, const struct config *cfg);
/* Starts the output stage and the workers. */
int receiver_start(struct receiver *r);
/* Stops reading, drains kernel queues and the window, flushes the sink.
 * Returns the first worker/output error, 0 if none. */
int receiver_stop(struct receiver *r);
/* Returns once every socket lookup (and BPF program run) that started
 * before has finished (an RCU grace period; 200 ms where membarrier is
 * refused). */
void receiver_grace_period(void);
/* Frees everything, detaching BPF. */
void receiver_close(struct receiver *r);

/* The two halves of receiver_open, for rx/life/upgrade.c, which takes the sockets
 * and BPF objects from an old process instead: slots [0, live) are group
 * sockets [0, live); then counters, window, capabilities dropped, sink. */
int receiver_set_slots(struct receiver *r, unsigned int live, unsigned int threads);
int receiver_open_rest(struct receiver *r);
/* Becomes --user (or, without it, drops every capability) for good; every
 * thread started afterwards holds none. 0 or -errno, logged: the caller does
 * not start. */
int receiver_drop_privileges(struct receiver *r);
/* Adopted: tells the process that handed over that we are ready (it stops
 * reading then); once, later calls do nothing. */
void receiver_say_ready(struct receiver *r);
/* Started as root without --user and outside systemd: says once that the
 * process stays uid 0 (having dropped every capability). */
void receiver_say_identity(const struct config *cfg);

/* --balance random without CAP_BPF (or handed over so): the classic BPF
 * program for r->live sockets over the group, whose join order is the group
 * sockets' order [0, n): slots [0, live) are indices [0, live), the spares
 * sit past them and are never picked. why is for the ready line and the
 * summary. 0 or -errno, logged. */
int receiver_use_cbpf(struct receiver *r, const char *why);

/* Live resize primitives (used by rx/life/resize.c): stop the workers without
 * the final drain (the kernel queues keep what arrives meanwhile), and start
 * r->threads of them over the open sockets, those in selection first. */
int receiver_workers_pause(struct receiver *r);
int receiver_workers_resume(struct receiver *r);
/* Counters for group sockets up to r->group.n (workers paused). */
int receiver_grow_counters(struct receiver *r);
/* Moves what the map counted per slot since the last call to the sockets
 * that held the slots (call before a slot changes hands). */
void receiver_credit_steered(struct receiver *r);
/* Steered per group socket (n = r->group.n entries) and selection failures. */
int receiver_steered(struct receiver *r, uint64_t *per_socket, uint64_t *failures);
/* "live", "spare", "retiring" (connected away, not yet drained) or "closed". */
const char *receiver_socket_state(const struct receiver *r, unsigned int idx);

/* Listener l (not 0): classic BPF over its sockets, which are its group's
 * join order (no resize moves them). 0 or -errno. */
int receiver_listener_cbpf(struct receiver *r, struct rx_listener *l);
/* Listener k's tracer (listener 0's is r->tracer), or NULL. */
struct tracer *receiver_listener_tracer(const struct receiver *r, unsigned int k);
/* Several listeners: what they do not do yet (a resize, an upgrade, the fd
 * store), said with the reason when asked for; NULL with one listener. */
const char *receiver_single_only(const struct receiver *r);

/* Messages taken from the kernel and not yet processed by the output stage. */
uint64_t receiver_in_flight(struct receiver *r);

/* Socket i's traced drops (zeroed first); without the tracer for want of
 * privilege, SO_MEMINFO's count as the total, no reasons; -ENOENT with
 * --no-trace. */
int receiver_traced(struct receiver *r, unsigned int i, struct tracer_sock_stats *st);

/* What report/ asks beyond the snapshot's numbers (rx/life/receiver_state.c). */
/* report_lock: held by a live resize; the group and the workers stay put
 * while a report holds it. */
void receiver_report_lock(struct receiver *r);
void receiver_report_unlock(struct receiver *r);
/* Told to stop (a signal): draining, then exit. */
bool receiver_stopping(const struct receiver *r);
/* The window and the output stage are ready and a worker has started. */
bool receiver_running(const struct receiver *r);
/* Worker threads started; worker i's last turn of its loop (CLOCK_MONOTONIC). */
unsigned int receiver_workers_started(const struct receiver *r);
uint64_t receiver_worker_beat_ns(const struct receiver *r, unsigned int i);
/* Group sockets open (not closed by a live shrink). */
unsigned int receiver_sockets_bound(const struct receiver *r);
/* The output stage's counts; false before it has started. */
bool receiver_output_counts(struct receiver *r, struct output_counts *c);
/* The disk buffer's; false without --disk-buffer. */
bool receiver_disk_stats(struct receiver *r, struct diskbuf_stats *d);
/* The output's sink is stalled (sink_is_stalled): its name, else NULL. */
const char *receiver_output_stalled(const struct receiver *r);
/* The output's name while it cannot reach its destination, else NULL. */
const char *receiver_output_down(const struct receiver *r);
/* A worker waits for room in the input window. */
bool receiver_window_full(struct receiver *r);
/* --senders: the workers count per sender. */
bool receiver_counts_senders(const struct receiver *r);
/* Where rx/report/sender_cache.c keeps the scrapes' rows; NULL = none. */
struct sender_cache *receiver_sender_cache(const struct receiver *r);
void receiver_set_sender_cache(struct receiver *r, struct sender_cache *c);

#endif
