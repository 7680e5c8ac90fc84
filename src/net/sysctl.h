/* SPDX-License-Identifier: MIT */
/*
 * The kernel settings syslogrx sizes itself against, read from /proc: the
 * sysctls (net.core.rmem_max, net.ipv4.udp_mem, ...) and MemAvailable.
 * Values are those of the calling thread's network namespace where the
 * kernel keeps them per namespace (net.core.rmem_max on 6.x); udp_mem is
 * global.
 */
#ifndef SYSLOGRX_SYSCTL_H
#define SYSLOGRX_SYSCTL_H

#include <stdint.h>

/* "net.core.rmem_max" -> up to n numbers from /proc/sys/net/core/rmem_max.
 * Returns how many were read (>= 1), or -errno. */
int sysctl_read(const char *name, uint64_t *v, unsigned int n);

/* One number: 0 or -errno. */
int sysctl_read_u64(const char *name, uint64_t *v);

/* MemAvailable from /proc/meminfo, in bytes: 0 or -errno. */
int sys_mem_available(uint64_t *bytes);

#endif
