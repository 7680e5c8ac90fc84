/* SPDX-License-Identifier: MIT */
/*
 * Advice after a loss: from what a run measured, the setting that would have
 * held its load. Pure rules (advice_compute) over measurements gathered from
 * a stopped receiver (advice_measure, in rx/report/advice_measure.c), so that the
 * rules are tested on synthetic inputs.
 *
 * The rules, in order:
 *  - selection failures: the balancer could not pick a socket: a bug report;
 *  - PROTO_MEM drops: the machine's UDP memory (net.ipv4.udp_mem) ran out;
 *  - buffer-full drops (SOCKET_RCVBUFF), per worker: the datagrams offered to
 *    its sockets (received + dropped) over the time traffic came, against what
 *    it drains per busy second. Above: a sustained overload: more threads, or
 *    --balance random when the kernel's hash put one flow on one worker's
 *    socket. Below (it kept up on average): a burst: a larger --rcvbuf, sized
 *    from the queue's high-water mark plus the bytes that did not fit, or a
 *    larger window when the output stage made the workers wait.
 *  - per sender (--senders with the tracer): one sender with most
 *    of the drops on a hashed group is one flow the kernel's hash put on one
 *    socket: --balance random; many senders each losing a little is the
 *    queue, not a sender: a larger --rcvbuf.
 */
#ifndef SYSLOGRX_ADVICE_H
#define SYSLOGRX_ADVICE_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/balancer.h"

struct advice_sock {
	uint64_t received;	  /* datagrams read */
	uint64_t bytes;		  /* their payload bytes */
	uint64_t drops;		  /* every traced drop */
	uint64_t drops_rcvbuf;	  /* SOCKET_RCVBUFF */
	uint64_t drops_proto_mem; /* PROTO_MEM */
	uint64_t drop_bytes;	  /* truesize of the failed enqueues; 0 = not measured */
	uint64_t queue_hwm_bytes; /* most bytes queued */
	uint64_t rcvbuf;	  /* effective */
};

/* The drops per sender, when counted. */
struct advice_senders {
	bool have;
	uint64_t drops;		/* socket drops counted per sender */
	unsigned int losing;	/* senders with at least one drop */
	char worst[48];		/* the sender with the most drops */
	uint64_t worst_drops;	/* its drops */
	uint64_t worst_offered; /* its received + drops */
	double max_loss_ratio;	/* the highest dropped / offered of any sender */
};

/* One sender with more than this share of the drops: its flow. */
#define ADVICE_ONE_SENDER_SHARE 0.5
/* At least this many senders losing, none with more than ADVICE_THIN_SHARE
 * of the drops or ADVICE_THIN_LOSS of its datagrams: spread thin. */
#define ADVICE_MANY_SENDERS 4
#define ADVICE_THIN_SHARE 0.25
#define ADVICE_THIN_LOSS 0.1

struct advice_input {
	unsigned int nsocks; /* socket i belongs to worker i % nworkers */
	unsigned int nworkers;
	unsigned int ncpus;
	enum balance_policy balance;
	bool traced; /* drops were counted (not --no-trace) */
	const struct advice_sock *socks;
	const uint64_t *worker_busy_ns; /* time each worker spent handling reads */
	double active_seconds;		/* from the first datagram read to the last */
	uint64_t selection_failures;
	uint64_t window, window_bytes; /* the bounds in force */
	uint64_t window_hwm;	       /* most messages held */
	double window_full_seconds;    /* time workers waited for room */
	uint64_t rmem_max;	       /* net.core.rmem_max, 0 = unknown */
	uint64_t udp_mem[3];	       /* net.ipv4.udp_mem, pages; 0 = unknown */
	uint64_t page_size;
	struct advice_senders senders;
};

#define ADVICE_MAX 6

/* Exactly one of flag, sysctl, bug is set. */
struct advice_item {
	char flag[24];	 /* "--rcvbuf" */
	char sysctl[40]; /* "net.ipv4.udp_mem" */
	char bug[32];	 /* "selection_failures" */
	char value[64];	 /* "8M", "random", "1 2 3" */
	char why[512];
};

struct advice {
	unsigned int n;
	struct advice_item items[ADVICE_MAX];
};

/* The advice for in (none when nothing was dropped). */
void advice_compute(const struct advice_input *in, struct advice *out);

/* "8M", "512K", "1G" when exact, else bytes: what --rcvbuf parses. */
void advice_format_size(uint64_t bytes, char *buf, size_t len);

/* Prints each item on stderr. */
void advice_print(const struct advice *a);

#endif
