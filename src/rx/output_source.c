// SPDX-License-Identifier: MIT
#include "rx/diskbuf.h"
#include "rx/output_source.h"

/* Disk appends do not wake a waiter on the window: with a disk buffer the
 * output stage looks at the disk at least this often when idle. */
#define DISK_POLL_MS 5

static struct batch *disk_pop(struct output_stage *o)
{
	struct batch *b = window_batch_get(o->window);

	if (!b)
		return NULL;
	if (diskbuf_read(o->disk, b) == 1)
		return b;
	window_batch_put(o->window, b);
	return NULL;
}

struct batch *output_pop(struct output_stage *o, int timeout_ms)
{
	struct batch *b;

	/* Not spilling (spill mode; reliable always spills): nothing is on
	 * disk or queued for it, and nothing goes there while the window has
	 * batches to pop: the window alone, at no cost. */
	if (!o->disk || !diskbuf_spilling(o->disk))
		return window_pop(o->window, timeout_ms);
	/* The window first: what is in it was received before anything spilled
	 * after it filled up (a worker spills only when the window has no room,
	 * and keeps spilling until the disk is read to its end). */
	b = window_pop(o->window, 0);
	if (!b)
		b = disk_pop(o);
	if (b || !timeout_ms)
		return b;
	b = window_pop(o->window, timeout_ms < DISK_POLL_MS ? timeout_ms : DISK_POLL_MS);
	return b ? b : disk_pop(o);
}

bool output_source_done(struct output_stage *o)
{
	return window_done(o->window) && (!o->disk || !diskbuf_unread(o->disk));
}

void output_release(struct output_stage *o, struct batch *b, bool delivered)
{
	if (!b->disk_seg) {
		window_release(o->window, b);
		return;
	}
	if (delivered && !o->async) {
		/* Formatted, not yet written: done once the buffer is. */
		b->next = o->held;
		o->held = b;
		return;
	}
	if (delivered)
		diskbuf_done(o->disk, b);
	window_batch_put(o->window, b);
}

static void release_held(struct output_stage *o, bool done)
{
	while (o->held) {
		struct batch *b = o->held;

		o->held = b->next;
		if (done)
			diskbuf_done(o->disk, b);
		window_batch_put(o->window, b);
	}
}

void output_flushed(struct output_stage *o)
{
	release_held(o, true);
}

void output_source_free(struct output_stage *o)
{
	release_held(o, false);
}
