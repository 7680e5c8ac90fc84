/* SPDX-License-Identifier: MIT */
/*
 * What a run of syslogrx did: the JSON summary written at exit (one schema,
 * documented in README.md). Every number is measured; what was not
 * measured is null, never an estimate.
 */
#ifndef SYSLOGRX_SUMMARY_H
#define SYSLOGRX_SUMMARY_H

#include "rx/life/receiver.h"

/*
 * Compares each socket's traced drops with SO_MEMINFO and logs every
 * mismatch. Returns the number of sockets that disagree.
 */
int summary_check_drops(struct receiver *r);

/* Writes the summary of a stopped receiver to path ("-" = stdout). */
int summary_write(struct receiver *r, const char *path);

#endif
