/* SPDX-License-Identifier: MIT */
/* libbpf's own messages, through common/log (the front ends that load BPF). */
#ifndef SYSLOGRX_LIBBPF_LOG_H
#define SYSLOGRX_LIBBPF_LOG_H

/* Routes libbpf's messages through log_print: only with -v (debug level),
 * since libbpf warns about things the callers handle themselves. */
void log_setup_libbpf(void);

#endif
