/* SPDX-License-Identifier: MIT */
/*
 * Upgrade in place (kill -USR2): the binary at our current path is started as
 * a new process that inherits the sockets, the BPF maps and the tracer's
 * links (net/handover.h), checks them by cookie and id, starts reading and
 * says "ready" on a pipe. Only then does the old process stop reading, drain
 * its input window to the output and exit. If the new one fails, the old one
 * goes on and says why.
 */
#ifndef SYSLOGRX_UPGRADE_H
#define SYSLOGRX_UPGRADE_H

#include <sys/types.h>
#include "net/handover.h"
#include "rx/life/receiver.h"

/* Seconds the new process has to say ready. */
#define UPGRADE_READY_SECONDS 10
/* Milliseconds systemd has to handle MAINPID= before the old process exits. */
#define UPGRADE_MAINPID_MS 5000

/* At start: remembers the path of our binary, the one an upgrade starts. */
int upgrade_init(void);

/* Old side. 0 and *child set when the new process is ready (the caller then
 * stops reading and exits); -errno with the reason logged, nothing changed. */
int receiver_upgrade(struct receiver *r, char *const argv[], pid_t *child);

/* The same for a supervisor: starts a receiver on r's sockets and BPF
 * objects (argv without --supervise), with ledger_fd (or -1) as its shared
 * state, and waits for it to say ready. 0 and *child set, or -errno (said). */
int upgrade_spawn(struct receiver *r, char *const argv[], int ledger_fd, pid_t *child);

/* New side: the receiver from a hand-over (handover_receive() said 1), in
 * place of receiver_open(). cfg's sockets/threads are set to the live ones. */
int receiver_adopt(struct receiver *r, struct config *cfg, struct handover *h);
/* After receiver_start(): shell_say_ready() tells the old process to stop. */

/*
 * systemd (Type=notify, FileDescriptorStoreMax=): stores the sockets, maps
 * and links in systemd's fd store (each under a name that says what it is,
 * net/handover.h), then READY=1. A restart gets them back with $LISTEN_FDS.
 * Nothing without $NOTIFY_SOCKET. 0 or -errno (logged).
 */
int upgrade_fdstore_put(struct receiver *r);
/* After an upgrade, tells systemd the new process is the service's main one
 * (MAINPID=) and waits until systemd has handled it (BARRIER=1), so that the
 * old process's exit is never taken for the main process's. Under systemd the
 * new process is the manager's child (clone(CLONE_PARENT)), not ours. */
void upgrade_notify_mainpid(pid_t pid);
/* A socket opened (add) or closed by a live resize: the store follows. */
void upgrade_fdstore_socket(const struct group_socket *s, bool add);

#endif
