/* SPDX-License-Identifier: MIT */
/*
 * The whole-configuration checks, once every layer (env-file, config file,
 * command line) is applied: one function per concern, each returning 0 or
 * EINVAL with a one-line message in err that names the flags.
 */
#ifndef SYSLOGRX_CONFIG_CHECK_H
#define SYSLOGRX_CONFIG_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include "rx/settings/config.h"

/* --listen specs and names; --sockets times the listeners under the cap. */
int config_check_listeners(struct config *c, char *err, size_t errlen);
/* --max-sockets: one socket group only, and not below --sockets. */
int config_check_max_sockets(const struct config *c, char *err, size_t errlen);
/* --threads (its default: 2, or --sockets if fewer) and --cost-ns per thread. */
int config_check_threads(struct config *c, char *err, size_t errlen);
/* --supervise: the supervisor holds the sockets, so no live resize. */
int config_check_supervise(const struct config *c, char *err, size_t errlen);
/* Each output's own (its check in rx/settings/output_def.h's table), then: */
/* --json-raw: only with --format json; --framing only with a stream output. */
int config_check_format(const struct config *c, char *err, size_t errlen);
/* --disk-buffer*: a network output; not with --ordered. */
int config_check_disk_buffer(const struct config *c, char *err, size_t errlen);
/* --sequence-flows, --sequence-jump: only with --sequences. */
int config_check_sequences(const struct config *c, char *err, size_t errlen);
/* --protect needs --fair-share; --fair-share is refused with --supervise. */
int config_check_fair_share(const struct config *c, char *err, size_t errlen);

/* All of the above, in that order, each refusal handed to say (for
 * --check-config, which names every problem): the number refused. */
typedef void (*config_check_say_fn)(const char *msg, void *ctx);
unsigned int config_check_each(struct config *c, config_check_say_fn say, void *ctx);

/* All of the above, in that order: the first refusal is the one reported. */
int config_check(struct config *c, char *err, size_t errlen);

#endif
