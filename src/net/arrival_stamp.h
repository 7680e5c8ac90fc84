/* SPDX-License-Identifier: MIT */
/*
 * The kernel's arrival stamp of a datagram (SO_TIMESTAMPNS). The kernel
 * stamps a datagram as it arrives only while its netstamp switch is on; the
 * first socket on the host that asks for stamps turns it on from a work
 * item, a moment later (longer on a loaded host). Until then a datagram is
 * stamped when it is read, so a stage that orders by the stamps would order
 * the first datagrams after a start by read time.
 */
#ifndef SYSLOGRX_ARRIVAL_STAMP_H
#define SYSLOGRX_ARRIVAL_STAMP_H

#include <stdint.h>
#include <sys/socket.h>

/* The SCM_TIMESTAMPNS of a received message, CLOCK_REALTIME ns; 0 if none. */
uint64_t arrival_stamp(struct msghdr *h);

/* Waits, at most timeout_ms, until the kernel stamps on arrival: a datagram
 * sent to a socket of our own on 127.0.0.1 carries a stamp taken before it
 * was read. 0, -ETIMEDOUT, or -errno (no loopback in this namespace). */
int arrival_stamps_wait(unsigned int timeout_ms);

#endif
