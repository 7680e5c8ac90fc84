/* SPDX-License-Identifier: MIT */
/*
 * syslogrx's --metrics: the snapshot (rx/report/snapshot.h) as Prometheus text,
 * served by net/http_metrics on its own thread. Metric names and units are
 * listed in README.md ("Metrics").
 */
#ifndef SYSLOGRX_METRICS_H
#define SYSLOGRX_METRICS_H

#include "common/prom_text.h"
#include "net/http_metrics.h"
#include "rx/life/receiver.h"

/* Writes every metric of r now. 0 or -errno. */
int metrics_write(struct receiver *r, struct prom_text *p);

/* Serves GET /metrics from h (bound by http_metrics_open before the
 * capabilities were dropped) for r until http_metrics_close. */
int metrics_start(struct http_metrics *h, struct receiver *r);

#endif
