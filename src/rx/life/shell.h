/* SPDX-License-Identifier: MIT */
/*
 * The receiver's process shell: who the process runs as (--user), the
 * endpoints' listening sockets it hands on (--metrics, --health), its link
 * to a supervisor, whether another process took its sockets, and the pipe
 * on which the process it took over from waits for "ready".
 *
 * Owned part: struct rx_shell's fields are read and written by shell.c
 * alone (tests/lab/test_receiver_parts.py keeps it so); everyone else asks
 * through the functions below.
 */
#ifndef SYSLOGRX_SHELL_H
#define SYSLOGRX_SHELL_H

#include <stdbool.h>
#include "common/caps.h"
#include "rx/settings/config.h"

struct rx_shell {
	struct caps_user user; /* --user, looked up before anything is bound */
	bool user_known;
	bool handed_over; /* a new process took the sockets and BPF objects */
	bool supervised;  /* a supervisor holds them: no resize, no USR2 */
	/* Supervised: the supervisor's word that a next child reads the
	 * queues (supervisor.h's ledger); NULL otherwise. */
	const bool *queues_kept;
	/* --metrics' listening socket, handed over with the group's (an
	 * upgrade, a supervisor's children, systemd's fd store); -1: none. */
	int metrics_fd;
	int health_fd; /* --health's, the same way */
	/* Adopted: the pipe on which the process before us waits for "ready". */
	bool ready_pending;
	int ready_fd;
};

/* No endpoint, no user looked up, nothing handed over or pending. */
void shell_init(struct rx_shell *sh);

/* Looks --user up (a wrong name, a missing CAP_SETUID: said) and checks as
 * that user (or as uid 0 without capabilities) every path written later.
 * 0, -EINVAL (said: exit 2; *refused, when not NULL, the paths refused)
 * or -errno. Before anything is bound. */
int shell_check_user_paths(struct rx_shell *sh, const struct config *cfg, unsigned int *refused);
/* Becomes --user (or, without it, drops every capability) for good; every
 * thread started afterwards holds none. 0 or -errno, logged: the caller does
 * not start. */
int shell_drop_privileges(struct rx_shell *sh, const struct config *cfg);
/* Started as root without --user and outside systemd: says once that the
 * process stays uid 0 (having dropped every capability). */
void shell_say_identity(const struct config *cfg);

/* The endpoints' listening sockets (-1: none), handed on with the group. */
void shell_set_endpoints(struct rx_shell *sh, int metrics_fd, int health_fd);
int shell_metrics_fd(const struct rx_shell *sh);
int shell_health_fd(const struct rx_shell *sh);

/* A supervisor holds the sockets; queues_kept is its word that a next
 * child reads the queues. */
void shell_set_supervised(struct rx_shell *sh, const bool *queues_kept);
bool shell_supervised(const struct rx_shell *sh);
bool shell_queues_kept(const struct rx_shell *sh);
/* Another process took the sockets and BPF objects (or systemd's fd
 * store holds them), or, false, nobody reads them after us. */
void shell_set_handed_over(struct rx_shell *sh, bool over);
bool shell_handed_over(const struct rx_shell *sh);
/* What the workers read at their end to know whether another process reads
 * the queues after them: the supervisor's word, else whether handed over. */
const bool *shell_queues_outlive(const struct rx_shell *sh);

/* Adopted: the process before waits for "ready" on fd (-1: none). */
void shell_expect_ready(struct rx_shell *sh, int fd);
bool shell_ready_pending(const struct rx_shell *sh);
/* Tells the process that handed over that we are ready (it stops reading
 * then); once, later calls do nothing. */
void shell_say_ready(struct rx_shell *sh);

#endif
