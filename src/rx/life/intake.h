/* SPDX-License-Identifier: MIT */
/*
 * The receiver's intake: the listeners, their sockets (the reuseport group),
 * the balancer and the tracer handles, which socket holds which slot of the
 * balancer's map, and the steered counts carried across slot changes.
 *
 * Owned part: struct rx_intake's fields are read and written only by the
 * intake's own files, intake.c and the three that change it in place,
 * resize.c (a live resize), upgrade.c and handover_listeners.c (the fd
 * hand-over); tests/lab/test_receiver_parts.py keeps it so. Everyone else
 * asks through the functions below.
 */
#ifndef SYSLOGRX_INTAKE_H
#define SYSLOGRX_INTAKE_H

#include <stdbool.h>
#include <stdint.h>
#include "net/balancer.h"
#include "net/cbpf_balancer.h"
#include "net/socket_group.h"
#include "net/tracer.h"
#include "rx/settings/config.h"

/* One --listen: its own reuseport group in the kernel, a run of sockets
 * [first, first + n) of the intake's group, its own balancer and tracer.
 * Listener 0's balancer, classic BPF program and tracer are the intake's
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

struct rx_intake {
	const struct config *cfg; /* set by intake_open, or by an adoption */
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
	/* Slot k of the balancer's map (or, with hash, the k-th socket in the
	 * group) is group socket slot_sock[k], for k < live; other open sockets
	 * are spares (out of selection, still read). */
	unsigned int live;	 /* sockets in selection */
	unsigned int *slot_sock; /* slot_cap entries */
	unsigned int slot_cap;
	uint64_t *sock_steered; /* per group socket, credited at each slot change */
	unsigned int steered_cap;
	uint64_t *steered_base; /* per slot, the map's count at the last credit */
};

/* The privileged opening: the tracer (first when the port is known, so no
 * drop between bind and attach goes uncounted), listener 0's sockets and
 * slots, the balancer, then listeners 1... probe_err: what loading an eBPF
 * program here said (0: it can). 0 or -errno, logged. */
int intake_open(struct rx_intake *in, const struct config *cfg, int probe_err);
/* Listener 0 is the group as bound or adopted, named name (NULL: none). */
void intake_first_listener(struct rx_intake *in, const char *name);
/* Slots [0, live) are group sockets [0, live). 0 or -ENOMEM. */
int intake_set_slots(struct rx_intake *in, unsigned int live);
/* A final stop: the sockets leave the port before the final drain, unless
 * kept (another process reads them after us) or the eBPF balancer spreads
 * (see intake.c). */
void intake_leave_the_port(struct rx_intake *in, bool kept);
/* Detaches the programs unless kept (handed over, or a supervisor holds
 * the group), closes the balancers, tracers and sockets. */
void intake_close(struct rx_intake *in, bool kept);

/* --balance random without CAP_BPF (or handed over so): the classic BPF
 * program for the live sockets over the group, whose join order is the group
 * sockets' order [0, n): slots [0, live) are indices [0, live), the spares
 * sit past them and are never picked. why is for the ready line and the
 * summary. 0 or -errno, logged. */
int intake_use_cbpf(struct rx_intake *in, const char *why);
/* Listener l (not 0): classic BPF over its sockets, which are its group's
 * join order (no resize moves them). 0 or -errno. */
int intake_listener_cbpf(struct rx_intake *in, struct rx_listener *l);
/* Several listeners: what they do not do yet (a resize, an upgrade, the fd
 * store), said with the reason when asked for; NULL with one listener. */
const char *intake_single_only(const struct rx_intake *in);

/* Returns once every socket lookup (and BPF program run) that started
 * before has finished (an RCU grace period; 200 ms where membarrier is
 * refused). */
void intake_grace_period(void);

/* The socket group, to read (the workers, the reports). */
const struct socket_group *intake_group(const struct rx_intake *in);
/* Sockets in selection, per listener. */
unsigned int intake_live(const struct rx_intake *in);
/* Listeners opened (0 before the first); listener k's name (NULL: none),
 * its normalised ADDR:PORT and its tracer (NULL: none). */
unsigned int intake_listeners(const struct rx_intake *in);
const char *intake_listener_name(const struct rx_intake *in, unsigned int k);
const char *intake_listener_listen(const struct rx_intake *in, unsigned int k);
struct tracer *intake_listener_tracer(const struct rx_intake *in, unsigned int k);
/* What spreads ("eBPF", "classic BPF", "kernel hash"; NULL before the
 * decision) and why; whether an eBPF balancer or classic BPF does. */
const char *intake_balance_runs(const struct rx_intake *in);
const char *intake_balance_why(const struct rx_intake *in);
bool intake_has_balancer(const struct rx_intake *in);
bool intake_cbpf(const struct rx_intake *in);
/* Drops come from SO_MEMINFO: the tracer was wanted, the privilege missing. */
bool intake_drops_meminfo(const struct rx_intake *in);

/* The sockets the workers read, into order (group sockets' room): those in
 * selection first, then the spares and those still draining. Their number. */
unsigned int intake_read_order(const struct rx_intake *in, unsigned int *order);
/* Room for the steered counts of cap group sockets. 0 or -ENOMEM. */
int intake_grow_steered(struct rx_intake *in, unsigned int cap);
/* Moves what the map counted per slot since the last call to the sockets
 * that held the slots (call before a slot changes hands). */
void intake_credit_steered(struct rx_intake *in);
/* Steered per group socket (group.n entries) by listener 0's slots'
 * history, and selection failures. -ENOENT without an eBPF balancer. */
int intake_steered(struct rx_intake *in, uint64_t *per_socket, uint64_t *failures);
/* What listeners 1.. steered, by their own maps (slot k is their socket
 * first + k), set in per_socket; their failures added. */
void intake_other_steered(struct rx_intake *in, uint64_t *per_socket, uint64_t *failures);
/* "live", "spare", "retiring" (connected away, not yet drained) or "closed". */
const char *intake_socket_state(const struct rx_intake *in, unsigned int idx);
/* Socket i's traced drops (zeroed first); without the tracer for want of
 * privilege, SO_MEMINFO's count as the total, no reasons; -ENOENT with
 * --no-trace. */
int intake_traced(struct rx_intake *in, unsigned int i, struct tracer_sock_stats *st);

/* What report/'s snapshot takes from the intake (intake_report.c). */
struct intake_run_report {
	const char *listen;	  /* listener 0's, normalised */
	const char *balance_runs; /* intake_balance_runs */
	const char *balance_why;
	bool balancer;	    /* an eBPF balancer (not hash, not classic BPF) */
	bool drops_meminfo; /* drops from SO_MEMINFO, exact, without reasons */
	bool traced;	    /* drops counted: the tracer, or SO_MEMINFO */
	bool by_reason;	    /* the tracer runs: drops per reason, no-socket drops */
};

struct intake_socket_report {
	unsigned int listener;
	uint64_t cookie, inode, rcvbuf; /* set at open */
	const char *state;		/* intake_socket_state */
	bool have_meminfo;		/* SO_MEMINFO answered */
	uint64_t so_meminfo_drops;	/* the kernel's own drop count */
	uint64_t queued_bytes;		/* in the receive queue now */
	bool traced;			/* intake_traced answered */
	struct tracer_sock_stats st;
};

/* Datagrams for listener k's port that found no socket, as its tracer
 * counted them, and the tracer's map-full count. */
struct intake_no_socket {
	uint64_t drops;
	uint64_t by_reason[TRACER_MAX_REASONS];
	uint64_t map_full;
};

void intake_report_run(const struct rx_intake *in, struct intake_run_report *run);
void intake_report_socket(struct rx_intake *in, unsigned int i, struct intake_socket_report *s);
/* 0, or -ENOENT when listener k has no tracer (ns zeroed). */
int intake_report_no_socket(const struct rx_intake *in, unsigned int k,
			    struct intake_no_socket *ns);

#endif
