/* SPDX-License-Identifier: MIT */
/*
 * Per-sender rows for a report (--senders): what each source address had
 * received and dropped, merged from the tracer's per-sender drops and, in
 * syslogrx, its workers' received counts; ordered worst first. Its size is
 * bounded by the tables it is built from (fixed at start), never by traffic.
 */
#ifndef SYSLOGRX_SENDER_VIEW_H
#define SYSLOGRX_SENDER_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include "net/tracer.h"

/* Drop reasons kept per sender; a sender's drops under further reasons are
 * in other_drops (dropped is always the whole). */
#define SENDER_REASONS 4

struct sender_row {
	uint8_t addr[16]; /* IPv4 mapped (common/sockaddr.h sockaddr_addr16) */
	uint64_t received;
	uint64_t dropped;
	uint32_t reason[SENDER_REASONS];       /* enum skb_drop_reason */
	uint64_t reason_drops[SENDER_REASONS]; /* 0: slot unused */
	uint64_t other_drops;
	uint64_t shed; /* of dropped: shed by --fair-share (reason SOCKET_FILTER) */
};

struct sender_view {
	struct sender_row *rows;
	size_t n, cap;
	/* The reason whose drops are shed (SOCKET_FILTER, the --fair-share
	 * filter's), set by sender_view_add_tracer; -1 (or 0 before): none. */
	int shed_reason;
};

/* Appends a row (one address may be added many times). 0 or -ENOMEM. */
int sender_view_add(struct sender_view *v, const uint8_t addr[16], uint64_t received,
		    uint64_t dropped);
/* Appends drops of one reason. 0 or -ENOMEM. */
int sender_view_add_drops(struct sender_view *v, const uint8_t addr[16], uint32_t reason,
			  uint64_t count);
/* Adds the tracer's drops per sender and reason, and fills totals (NULL:
 * not wanted) from the same read. 0, -ENOENT when the tracer does not count
 * senders, or -errno. */
int sender_view_add_tracer(struct sender_view *v, struct tracer *t,
			   struct tracer_sender_totals *totals);
/* Merges the rows of each address, then orders them: most dropped first,
 * then most received, then by address (a stable order for tests). */
void sender_view_finish(struct sender_view *v);
/* Sums of rows [from, v->n). */
void sender_view_sum(const struct sender_view *v, size_t from, uint64_t *received,
		     uint64_t *dropped);
void sender_view_free(struct sender_view *v);

/* dropped / (received + dropped); 0 when both are 0. */
double sender_loss_ratio(uint64_t received, uint64_t dropped);

#endif
