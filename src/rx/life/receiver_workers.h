/* SPDX-License-Identifier: MIT */
/* What receiver.c and pipeline_workers.c share inside life/ (the rest of the
 * workers' API is in receiver.h). */
#ifndef SYSLOGRX_RECEIVER_WORKERS_H
#define SYSLOGRX_RECEIVER_WORKERS_H

struct receiver;

/* Joins every started worker; the first error, 0 if none. */
int receiver_join_workers(struct receiver *r);

#endif
