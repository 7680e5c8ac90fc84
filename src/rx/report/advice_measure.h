/* SPDX-License-Identifier: MIT */
/* What rx/settings/advice.c's rules need, gathered from a stopped receiver. */
#ifndef SYSLOGRX_ADVICE_MEASURE_H
#define SYSLOGRX_ADVICE_MEASURE_H

#include "rx/settings/advice.h"
#include "rx/life/receiver.h"

/* Computes the advice for r's run into out. 0 or -errno. */
int advice_measure(struct receiver *r, struct advice *out);

#endif
