/* SPDX-License-Identifier: MIT */
/*
 * What a run of syslogrx did: the JSON summary written at exit (one schema,
 * documented in README.md) and the periodic stats line. Every number is
 * measured; what was not measured is null, never an estimate.
 */
#ifndef SYSLOGRX_SUMMARY_H
#define SYSLOGRX_SUMMARY_H

#include <stdio.h>
#include "rx/receiver.h"

/* Reads the kernel's own drop counter of a socket (SO_MEMINFO). */
int socket_kernel_drops(int fd, uint64_t *drops, uint64_t *rmem_alloc);

/*
 * Compares each socket's traced drops with SO_MEMINFO and logs every
 * mismatch. Returns the number of sockets that disagree.
 */
int summary_check_drops(struct receiver *r);

/* Writes the summary of a stopped receiver to path ("-" = stdout). */
int summary_write(struct receiver *r, const char *path);

/* Stats line state: counts at the last line, to print per-interval deltas. */
struct stats_line {
	uint64_t last_ns;
	uint64_t *last_received;
	uint64_t *last_drops;
};

int stats_line_init(struct stats_line *s, unsigned int nr_sockets);
void stats_line_print(struct stats_line *s, struct receiver *r, FILE *f);
void stats_line_free(struct stats_line *s);

#endif
