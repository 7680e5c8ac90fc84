// SPDX-License-Identifier: MIT
/* The disk buffer's cursor: where a restart starts reading DIR again. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include "common/clock.h"
#include "common/log.h"
#include "rx/path/diskbuf_format.h"
#include "rx/path/diskbuf_int.h"
#include "rx/path/window.h"

/*
 * DIR/cursor: 24 bytes, the oldest segment's id and the offset before which
 * every record of it is done, with a CRC. Rewritten in place by the writer
 * thread (at most every CURSOR_NS) so that a restart after a crash does not
 * send again what was delivered: only what was in flight, and what was done
 * since the last rewrite. A missing or damaged cursor means "from the start":
 * duplicates, never a loss.
 */
#define CURSOR_NS (100 * 1000000ULL)

static uint32_t cursor_crc(const struct cursor *c)
{
	return dbuf_crc(c, offsetof(struct cursor, crc));
}

/* A planted cursor (a link, not a regular file, another owner's) refuses
 * the open; one that cannot be made only costs duplicates after a restart. */
int dbuf_cursor_load(struct diskbuf *d)
{
	struct cursor c;

	d->cursor_fd = dbuf_open_own_file(d, "cursor", O_CREAT);
	if (d->cursor_fd == -EPERM)
		return -EPERM;
	if (d->cursor_fd < 0) {
		pr_warn("--disk-buffer %s: cursor: %s (a restart sends whole segments again)\n",
			d->dir, strerror(-d->cursor_fd));
		d->cursor_fd = -1;
		return 0;
	}
	if (!dbuf_pread_all(d->cursor_fd, &c, sizeof(c), 0) && c.crc == cursor_crc(&c))
		d->cursor = c;
	return 0;
}

/* Under the lock: the cursor as it is now. */
static struct cursor cursor_now(const struct diskbuf *d)
{
	struct cursor c = { 0 };

	if (d->head) {
		c.seg = d->head->id;
		c.off = d->head->done_off;
	}
	c.crc = cursor_crc(&c);
	return c;
}

/* Under the lock: rewrites the cursor if it moved (the lock is released
 * around the write). */
void dbuf_cursor_save(struct diskbuf *d, bool now)
{
	struct cursor c = cursor_now(d);
	uint64_t t = mono_ns();

	if (d->cursor_fd < 0 || !memcmp(&c, &d->cursor, sizeof(c)) ||
	    (!now && t - d->cursor_ns < CURSOR_NS))
		return;
	d->cursor = c;
	d->cursor_ns = t;
	pthread_mutex_unlock(&d->lock);
	if (pwrite(d->cursor_fd, &c, sizeof(c), 0) != sizeof(c))
		pr_warn("--disk-buffer %s: writing the cursor: %s\n", d->dir, strerror(errno));
	pthread_mutex_lock(&d->lock);
}
