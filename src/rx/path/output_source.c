// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "common/clock.h"
#include "rx/path/diskbuf.h"
#include "rx/path/output_msg.h"
#include "rx/path/output_source.h"

/* Disk appends do not wake a waiter on the window: with a disk buffer the
 * output stage looks at the disk at least this often when idle. */
#define DISK_POLL_MS 5
/* At a stop that gives up, what is appended waits for the disk buffer's
 * writer past this many bytes: its queue refuses more than 64 MiB, and a
 * batch refused there would be counted dropped, not saved. */
#define SAVE_FLUSH_BYTES (8ULL << 20)

static struct batch *disk_pop(struct output_stage *o)
{
	/* The batch just written, if it is the next record: not read back. */
	struct batch *b = diskbuf_take(o->disk);
	int ret;

	if (b)
		return b;
	b = window_batch_get(o->window);
	if (!b)
		return NULL;
	ret = diskbuf_read(o->disk, b);
	if (ret == 1)
		return b;
	window_batch_put(o->window, b);
	/* Written and handed over just now, after the take above. */
	return ret == 2 ? diskbuf_take(o->disk) : NULL;
}

struct batch *output_pop(struct output_stage *o, int timeout_ms)
{
	struct batch *b;

	/* Not spilling (spill mode; reliable always spills): nothing is on
	 * disk or queued for it, and nothing goes there while the window has
	 * batches to pop: the window alone, at no cost. */
	if (!o->disk || !diskbuf_spilling(o->disk))
		return window_pop_from(o->window, o->queue, timeout_ms);
	/* The window first: what is in it was received before anything spilled
	 * after it filled up (a worker spills only when the window has no room,
	 * and keeps spilling until the disk is read to its end). */
	b = window_pop_from(o->window, o->queue, 0);
	if (!b)
		b = disk_pop(o);
	if (b || !timeout_ms)
		return b;
	b = window_pop_from(o->window, o->queue,
			    timeout_ms < DISK_POLL_MS ? timeout_ms : DISK_POLL_MS);
	return b ? b : disk_pop(o);
}

bool output_source_done(struct output_stage *o)
{
	return window_done_for(o->window, o->queue) && (!o->disk || !diskbuf_unread(o->disk));
}

/* A disk record whose lines went to a stream sink. */
struct held_rec {
	uint64_t seg, off, written_ns;
	uint32_t count;
	uint32_t settled; /* written by a flush while it was being taken */
};

void output_release(struct output_stage *o, struct batch *b, bool delivered)
{
	if (!b->disk_seg) {
		window_release(o->window, b);
		return;
	}
	if (delivered && !o->async) {
		if (o->held_n == o->held_cap) {
			size_t cap = o->held_cap ? o->held_cap * 2 : 256;
			struct held_rec *h = realloc(o->held, cap * sizeof(*h));

			if (!h) {
				/* Out of memory: done now rather than never. */
				diskbuf_done(o->disk, b->disk_seg, b->disk_off, b->count);
				window_batch_put(o->window, b);
				return;
			}
			o->held = h;
			o->held_cap = cap;
		}
		o->held[o->held_n++] = (struct held_rec){ .seg = b->disk_seg,
							  .off = b->disk_off,
							  .count = b->count,
							  .settled = b->settled };
	} else if (delivered) {
		diskbuf_done(o->disk, b->disk_seg, b->disk_off, b->count);
	}
	window_batch_put(o->window, b);
}

/* Marks held[0, n) done and drops them from the list. */
static void held_done(struct output_stage *o, size_t n, bool done)
{
	for (size_t i = 0; i < n && done; i++)
		diskbuf_done(o->disk, o->held[i].seg, o->held[i].off, o->held[i].count);
	memmove(o->held, o->held + n, (o->held_n - n) * sizeof(*o->held));
	o->held_n -= n;
	o->held_written -= n;
}

void output_flushed(struct output_stage *o, bool wrote)
{
	uint64_t now;
	size_t n = 0;

	if (!o->held_n || !wrote)
		return;
	/* A write went through just now: the connection was there, and the
	 * sink would resend what it wrote in the last settle_ns if it ended. */
	now = mono_ns();
	while (n < o->held_written && o->held[n].written_ns + o->sink->settle_ns <= now)
		n++;
	for (size_t i = o->held_written; i < o->held_n; i++)
		o->held[i].written_ns = now;
	o->held_written = o->held_n;
	if (n)
		held_done(o, n, true);
}

void output_source_free(struct output_stage *o, bool done)
{
	if (o->held_n)
		held_done(o, o->held_n, done);
	free(o->held);
	o->held = NULL;
	o->held_cap = 0;
}

void output_hold(struct output_stage *o, struct batch *b)
{
	if (b->disk_seg) { /* a disk record is held on disk (held_rec) */
		output_release(o, b, true);
		return;
	}
	b->next = NULL;
	if (o->unflushed_tail)
		o->unflushed_tail->next = b;
	else
		o->unflushed = b;
	o->unflushed_tail = b;
}

void output_hold_done(struct output_stage *o)
{
	while (o->unflushed) {
		struct batch *b = o->unflushed;

		o->unflushed = b->next;
		window_release(o->window, b);
	}
	o->unflushed_tail = NULL;
}

/* A stop gave up on b, b->settled of it written (or discarded) already: a
 * disk record stays where it is, whole; a window batch goes to the disk
 * buffer whole (saved; refused there, it is counted dropped by the buffer)
 * or, without one, what was not settled is counted given up. */
void output_keep(struct output_stage *o, struct batch *b)
{
	if (b->disk_seg) {
		output_count(&o->counts.kept_written, b->settled);
		output_release(o, b, false);
		return;
	}
	if (!o->disk) {
		output_count(&o->counts.given_up, b->count - b->settled);
	} else {
		if (o->saved_bytes >= SAVE_FLUSH_BYTES) {
			diskbuf_flush(o->disk);
			o->saved_bytes = 0;
		}
		/* Whole: what of it was written already is sent again. */
		if (!diskbuf_append(o->disk, b, false)) {
			output_count(&o->counts.saved, b->count);
			output_count(&o->counts.kept_written, b->settled);
			o->saved_bytes += b->used;
		}
	}
	window_release(o->window, b);
}

void output_settle(struct output_stage *o)
{
	struct batch *b;
	uint64_t kept = 0;

	while ((b = o->unflushed)) {
		o->unflushed = b->next;
		output_keep(o, b);
	}
	o->unflushed_tail = NULL;
	/* Written, not yet settled (the sink would resend them on its next
	 * connection), or partly written: left on disk, sent again by the
	 * next run. */
	for (size_t i = 0; i < o->held_n; i++)
		kept += i < o->held_written ? o->held[i].count : o->held[i].settled;
	output_count(&o->counts.kept_written, kept);
	/* What the window holds, and what the workers push until it closes
	 * (they stop soon: the same flag ends their drain). */
	while (!window_done_for(o->window, o->queue)) {
		if ((b = window_pop_from(o->window, o->queue, 100))) {
			b->settled = 0;
			output_keep(o, b);
		}
	}
}
