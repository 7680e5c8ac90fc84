/* SPDX-License-Identifier: MIT */
/* The output stage's loop for stream sinks (null, stdout, file, tcp): src/rx/path/output_sync.c. */
#ifndef SYSLOGRX_OUTPUT_SYNC_H
#define SYSLOGRX_OUTPUT_SYNC_H

#include "rx/path/output_stage.h"

/* Sizes the format buffer for the largest datagram; 0 or -ENOMEM. */
int output_sync_init(struct output_stage *o);
/* Returns when the window is closed and drained (or force), all flushed. */
void output_sync_main(struct output_stage *o);

#endif
