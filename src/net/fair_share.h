/* SPDX-License-Identifier: MIT */
/*
 * User side of bpf/fair_share.bpf.c: load the socket filter, attach it to
 * each socket of a group, tell it each tick whether to shape and to which
 * level, read what it counted per sender. The level itself is computed here
 * (fair_share_level), max-min fair over the senders' last-second rates.
 */
#ifndef SYSLOGRX_FAIR_SHARE_H
#define SYSLOGRX_FAIR_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/fair_share.h"

struct fair_share;

/* Loads the filter with a buckets map of max_senders entries. NULL + errno,
 * logged (EPERM: CAP_BPF is needed). */
struct fair_share *fair_share_open(uint32_t max_senders);
void fair_share_close(struct fair_share *fs);
/* Calls fn for each of the loaded object's maps (by libbpf name), to hand
 * them to another process. */
int fair_share_export(struct fair_share *fs, int (*fn)(const char *name, int fd, void *ctx),
		      void *ctx);
/* The other side: the maps handed over by owner, from a checked hand-over,
 * loading nothing (no capability needed); the filter stays attached to the
 * handed-over sockets, its buckets go on. NULL + errno, logged. */
struct handover;
struct fair_share *fair_share_adopt(const struct handover *h, const char *owner);
/* Senders in addr/prefixlen (IPv4 mapped, prefixlen over 128 bits) get
 * weight shares; 0: never shed. Before the first datagram: a sender's weight
 * is looked up once, when its bucket is made. */
int fair_share_set_prefix(struct fair_share *fs, const uint8_t addr[16], unsigned int prefixlen,
			  uint32_t weight);
/* SO_ATTACH_BPF on fd (replaces any filter it had). 0 or -errno. */
int fair_share_attach(struct fair_share *fs, int fd);
/* SO_DETACH_BPF: whatever filter fd has is gone (none is not an error). */
int fair_share_detach(int fd);

/* One sender as the filter sees it. */
struct fair_share_row {
	uint8_t addr[16];
	uint64_t rate; /* datagrams per second in its last full window */
	uint64_t seen, shed;
	uint32_t weight;
	bool active; /* sent in the last second */
};
/* Calls fn for each sender in the map (at most max_senders). */
int fair_share_read(struct fair_share *fs, int (*fn)(const struct fair_share_row *row, void *ctx),
		    void *ctx);
/* The filter's per-CPU stats summed: stats[FAIR_SHARE_NR] (bpf/fair_share.h). */
int fair_share_stats(struct fair_share *fs, uint64_t *stats);
/* What the filter does now (an adopted one: what the process before set). */
void fair_share_get(struct fair_share *fs, bool *on, double *level);
/* Shape to level datagrams per second at weight 1 (on), or pass all (off). */
void fair_share_set(struct fair_share *fs, bool on, double level);

/*
 * Max-min fair level for n senders with rates and weights (weight 0:
 * protected, served first and never limited) sharing capacity datagrams per
 * second: the largest L with sum(min(rate_i, w_i x L)) <= capacity. When all
 * fit, the largest rate_i / w_i (nobody is limited). Pure: unit tested.
 */
double fair_share_level(const uint64_t *rate, const uint32_t *weight, unsigned int n,
			double capacity);

#endif
