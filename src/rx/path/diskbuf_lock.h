/* SPDX-License-Identifier: MIT */
/*
 * One writer per disk buffer: DIR/lock, an flock(2) held from before the
 * buffer is opened until after its last write. Two receivers on one DIR
 * would read each other's segments half written and delete each other's
 * files; the second one is refused instead. An upgrade in place (kill -USR2)
 * hands the DIR over: the new process says it is ready, the old one stops
 * reading, writes what it holds and closes the buffer, which lets the lock
 * go; only then does the new one open DIR and read what was left there.
 * The kernel releases the lock of a process that dies (a supervised child).
 */
#ifndef SYSLOGRX_DISKBUF_LOCK_H
#define SYSLOGRX_DISKBUF_LOCK_H

/* Called once if another process holds the lock and we are to wait for it
 * (an upgrade: tell the old process to let go). */
typedef void (*diskbuf_lock_wait_fn)(void *ctx);

/*
 * Creates DIR (mode 0700) if it is not there and takes DIR/lock. Held by
 * another process: with on_wait, calls it and waits up to wait_ms for the
 * lock; without, fails at once. Returns the lock's fd, or -EBUSY (said,
 * naming the pid that holds it) or another -errno (said, naming the flag).
 */
int diskbuf_lock_take(const char *dir, diskbuf_lock_wait_fn on_wait, void *ctx, int wait_ms);
/* Lets the lock go (after the buffer's last write). fd < 0: nothing. */
void diskbuf_lock_release(int fd);

#endif
