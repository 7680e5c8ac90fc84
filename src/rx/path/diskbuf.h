/* SPDX-License-Identifier: MIT */
/*
 * The disk buffer (--disk-buffer DIR): append-only segment files holding
 * whole batches, so that a destination outage (spill) or a crash (reliable)
 * loses nothing that was received.
 *
 * Workers append batches (their record headers and descriptors encoded and
 * queued with the batch itself, not a copy of its bytes; the buffer's writer
 * thread writes what is queued for one segment with one pwritev, so a worker
 * never waits for the disk); the output
 * stage reads them back in the order they were appended and says when each
 * is done (written to a stream sink, or acknowledged by Kafka). A segment is
 * deleted when every record of it was read and done. On open, segments left
 * in DIR by an earlier run are queued first, so they are sent before anything
 * new.
 *
 * On-disk format (host byte order: a DIR is read back by the same machine;
 * the layout is in diskbuf_format.h):
 *   segment file  DIR/NNNNNNNNNNNNNNNN.seg (hex id, increasing)
 *                 16-byte header: "SRXDBUF1", u32 version (2; 1 is read
 *                 too), u32 0; then records, back to back
 *   record        56-byte header: u32 magic "SRXR", u32 crc32 of the header
 *                 (with this field 0), u32 payload length, u32 messages,
 *                 u32 crc32 of the payload, u32 version (2), u64 record
 *                 number, u64 receive time of the first message
 *                 (CLOCK_REALTIME ns), u64 messages its run wrote before
 *                 it, u32 the run's number, u32 name entries
 *                 payload: one 56-byte descriptor per message (length,
 *                 socket, truncated, source address, its name entry), the
 *                 name entries (36 bytes: u32 length, 32 bytes of the
 *                 listener's name as the receiving run showed it, 0-padded;
 *                 length 0: it showed none), then the messages' bytes back
 *                 to back.
 *   version 1     (an earlier syslogrx's) a 40-byte header ending after the
 *                 receive time, its version field 0, no name entries: a
 *                 descriptor's last field is the listener's position.
 * A record whose header or payload does not match its CRC (zlib's crc32) is
 * never handed out: the reader resynchronises on the next valid record
 * header. A CRC is no proof against a forger, so every field is checked
 * before use too, and a record that fails is corrupt the same way: at most
 * DISKBUF_COUNT_MAX messages, each at most DISKBUF_MSG_MAX bytes (one
 * datagram: the asynchronous path formats into a buffer that size), a source
 * address of 0, 16 (AF_INET) or 28 (AF_INET6) bytes matching its family,
 * a socket index below the group's maximum, truncated 0 or 1, 1 to count
 * name entries, each a name --listen takes (or none) with its padding 0,
 * each descriptor's entry (or position) in range.
 * What a corrupt stretch cost is counted from the intact records around it
 * when one run wrote both (its writer numbers records and messages without
 * a gap, across segments whose ids follow each other): exact; otherwise
 * (a torn tail, two runs, a deleted segment between, version 1) one record
 * whose messages are not known (corrupt_uncounted). An earlier run's
 * segments are counted so at open. A segment file larger than any syslogrx
 * writes (SEG_FILE_MAX) or than max_bytes, or of a newer version, is left
 * in DIR unread and said.
 *
 * The hand-off (reliable mode): a batch its writer has just written whose
 * record is the next unread one (the reader is caught up) is kept in memory
 * and given to the reader as it is (diskbuf_take), not read back from the
 * segment: no pread, no second CRC, no copy. The record stays on disk, and
 * is done, counted and moves the cursor exactly as one read back; what the
 * output gets is only ever what was written first. The hand-off holds at
 * most handoff_msgs messages in batches taking at most handoff_bytes
 * (BATCH_MEM): the receiver gives it the input window's bounds, which
 * reliable mode leaves unused (every batch goes to disk, none to the
 * window). Past them, or once the reader is behind, records are read back
 * from disk as before, until the reader has caught up again.
 *
 * DIR is trusted only if it is the owner's alone: created 0700 (and given to
 * the user syslogrx will run as); an existing DIR owned by another user, or
 * writable by group or others, is refused at open. Segment and cursor files
 * are opened with O_NOFOLLOW and must be regular files of that owner: a
 * planted symbolic link (or FIFO, device) is refused at open, never followed.
 */
#ifndef SYSLOGRX_DISKBUF_H
#define SYSLOGRX_DISKBUF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "rx/path/diskbuf_format.h" /* diskbuf_listener_name */
#include "rx/path/diskbuf_opts.h"
#include "rx/path/window.h"

struct diskbuf;
struct listener_spec;

/* Opens (creating) DIR and queues what an earlier run left there. NULL +
 * errno, having logged one line naming the flag and the file. */
struct diskbuf *diskbuf_open(const struct diskbuf_opts *opts);
/* Syncs and closes; what is still on disk stays for the next run. */
void diskbuf_close(struct diskbuf *d);

/*
 * Appends b as one record. With only_if_spilling, appends only while the
 * buffer is spilling (it holds unread records, or the mode is reliable) and
 * returns 1 without appending otherwise: the caller's batch then belongs to
 * the window. 0: queued for the writer (spilling from now on). -ENOSPC: the
 * buffer is full, -ENOBUFS: the writer is that far behind; both counted as
 * dropped (as is a later failed write, in the stats).
 */
int diskbuf_append(struct diskbuf *d, const struct batch *b, bool only_if_spilling);
/*
 * The same (never only_if_spilling) without copying b's bytes: b is the
 * buffer's until its record is written, then handed to put(ctx, b); at once
 * if it is not queued (nothing in it, or counted as dropped). The caller
 * must not touch b after the call.
 */
int diskbuf_append_batch(struct diskbuf *d, struct batch *b,
			 void (*put)(void *ctx, struct batch *b), void *ctx);
bool diskbuf_spilling(struct diskbuf *d);
/* Waits until everything appended so far is written (tests; exit). */
void diskbuf_flush(struct diskbuf *d);

/*
 * The oldest unread record into b (its recs and data grow as needed;
 * b->disk_seg names its segment). 1: a batch, 0: nothing unread (in spill
 * mode the buffer stops spilling then), 2: none read, the hand-off has it
 * (written since the caller's diskbuf_take): diskbuf_take it.
 */
int diskbuf_read(struct diskbuf *d, struct batch *b);
/*
 * The oldest unread record's batch if the hand-off holds it (its writer's
 * batch itself: give it back the way a batch read into is given back, with
 * b->disk_seg and b->disk_off set), else NULL: read it with diskbuf_read.
 */
struct batch *diskbuf_take(struct diskbuf *d);
/* Records appended and not yet read. */
uint64_t diskbuf_unread(struct diskbuf *d);
/* The output is done with the record read into a batch (b->disk_seg,
 * b->disk_off, b->count): written, or acknowledged. Its segment goes once
 * every record of it is done; the cursor moves past it once every record
 * before it is done too. */
void diskbuf_done(struct diskbuf *d, uint64_t seg, uint64_t off, uint32_t count);

void diskbuf_get_stats(struct diskbuf *d, struct diskbuf_stats *out);
const char *diskbuf_mode_name(enum diskbuf_mode m);

#endif
