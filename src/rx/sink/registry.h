/* SPDX-License-Identifier: MIT */
/*
 * The sinks by output kind (rx/settings/output_def.h names the kinds): one
 * line per output in registry.c's table, its open and its destination's
 * check.
 */
#ifndef SYSLOGRX_SINK_REGISTRY_H
#define SYSLOGRX_SINK_REGISTRY_H

#include "rx/settings/config.h"
#include "rx/sink/sink.h"
#include "rx/sink/stats.h"

/* Opens the sink the config names; NULL + errno, having logged why. */
struct sink *sink_open(const struct config *c);

/* --check-config: the destination as the sink will read it (HOST:PORT, the
 * PEM files as a TLS client reads them). The number of problems, each
 * logged. */
unsigned int sink_check(const struct config *c);

/* The output's own numbers from its sink s (NULL: not open yet) into st;
 * st->ops NULL when it keeps none. Safe while the output stage runs. */
void sink_stats_read(const struct config *c, struct sink *s, struct sink_stats *st);

#endif
