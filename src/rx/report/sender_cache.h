/* SPDX-License-Identifier: MIT */
/*
 * The per-sender rows a scrape shows, read from the tables once every
 * SENDER_CACHE_REFRESH_S by the main thread, not by each scrape: reading
 * the kernel's per-sender map costs system calls in proportion to the
 * senders it holds (up to --senders), and a scrape's cost must not grow
 * with what the network sent. The summary reads the tables itself.
 */
#ifndef SYSLOGRX_SENDER_CACHE_H
#define SYSLOGRX_SENDER_CACHE_H

#include "rx/life/receiver.h"
#include "rx/report/snapshot_senders.h"

#define SENDER_CACHE_REFRESH_S 5.0

/* The receiver's sender cache, empty until the first refresh. 0 or -ENOMEM. Nothing
 * to do (0) without --senders. */
int sender_cache_open(struct receiver *r);
/* Reads the tables now and keeps the top --senders-top rows and the sums. */
void sender_cache_refresh(struct receiver *r);
/* The last refresh's rows and sums into ss (rows allocated). 0, -ENOENT
 * (no cache: read the tables), or -ENOMEM. */
int sender_cache_read(struct receiver *r, struct snapshot_senders *ss);
void sender_cache_close(struct receiver *r);

#endif
