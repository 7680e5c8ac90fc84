/* SPDX-License-Identifier: MIT */
/* The per-message step of the output stage's loops (output_sync.c, output_async.c). */
#ifndef SYSLOGRX_OUTPUT_MSG_H
#define SYSLOGRX_OUTPUT_MSG_H

#include "rx/path/output_stage.h"
#include "syslog/syslog_parse.h"

void output_count(uint64_t *counter, uint64_t n); /* relaxed atomic add */

/*
 * Takes message i of b: parses it into m where the output needs fields
 * (o->parse; a malformed one is counted for output_batch_done), feeds the
 * sequence accounting and fills meta. *data is the message's bytes. Without
 * o->parse, m is untouched and the result is SYSLOG_OK_3164 (raw output
 * reads neither).
 */
enum syslog_parse_result output_msg_take(struct output_stage *o, const struct batch *b, uint32_t i,
					 const char **data, struct syslog_msg *m,
					 struct msg_meta *meta);

/* After a batch: publishes its processed and malformed counts (one atomic
 * operation each, not one per message). */
void output_batch_done(struct output_stage *o);

/*
 * After a message: counts it processed and keeps --output-rate, sleeping
 * when ahead of the schedule; before_sleep (may be NULL) hands out what is
 * formatted first.
 */
void output_msg_done(struct output_stage *o, void (*before_sleep)(struct output_stage *o));

#endif
