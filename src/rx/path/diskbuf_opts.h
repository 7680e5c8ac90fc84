/* SPDX-License-Identifier: MIT */
/*
 * What the disk buffer's owner hands it (its options and the tally it
 * keeps) and reads back (its stats), and its bounds: the disk buffer's own
 * files build on these too (rx/path/diskbuf.h is its interface).
 */
#ifndef SYSLOGRX_DISKBUF_OPTS_H
#define SYSLOGRX_DISKBUF_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "rx/settings/config.h" /* enum diskbuf_mode */

/*
 * What the buffer took in and gave out, in messages, kept where its owner
 * says (the receiver's pipeline: for a supervised receiver, memory the
 * supervisor shares, so that it can tell after a kill -9 what reached the
 * disk). Each is bumped (atomic, relaxed) as soon as it is so: written
 * after the record's pwrite returned, so a kill -9 between the two counts
 * one record short (it is recovered by the next run all the same).
 */
struct diskbuf_tally {
	uint64_t recovered; /* found in DIR at open */
	uint64_t written;   /* appended to a segment: on disk */
	uint64_t replayed;  /* handed to the output */
	uint64_t dropped;   /* the buffer full, or a write failed */
};

struct diskbuf_opts {
	const char *dir;
	uint64_t max_bytes;	/* the cap on all segment files together */
	uint64_t segment_bytes; /* 0: max_bytes / 8, within 64 KiB .. 64 MiB */
	int sync_ms;		/* fdatasync at most this often; 0: after every batch */
	enum diskbuf_mode mode;
	bool owner_set; /* DIR and its files belong to owner (--user); else geteuid() */
	uid_t owner;
	/* The hand-off's bounds; 0: none (records are always read back). */
	uint64_t handoff_msgs, handoff_bytes;
	struct diskbuf_tally *tally; /* or NULL */
	/* This run's --listen list: a record keeps each message's listener by
	 * name (none when !listener_names: one unnamed listener). */
	const struct listener_spec *listeners;
	unsigned int nr_listeners;
	bool listener_names;
};

/* msg_rec.listener of a message read back: this run's listener of that
 * name, DISKBUF_LISTENER_NONE if the run that received it showed no name
 * (or a version-1 record's position is past this run's listeners: kept,
 * and shown as none), else WINDOW_MAX_LISTENERS + k for the k-th name read
 * back that is no listener of this run (diskbuf_listener_name gives it);
 * past DISKBUF_RECORDED_MAX such names, none (said once). */
#define DISKBUF_LISTENER_NONE UINT32_MAX
#define DISKBUF_RECORDED_MAX 64

#define DISKBUF_MSG_MAX 65536u	/* bytes of one message: a datagram's receive slot */
#define DISKBUF_COUNT_MAX 1024u /* messages in one record: --batch's maximum */

struct diskbuf_stats {
	uint64_t max_bytes;
	uint64_t bytes;		/* segment files' total size now */
	uint64_t msgs, batches; /* on disk and not yet done */
	uint64_t queued_msgs;	/* encoded, waiting for the writer thread */
	uint64_t segments;
	double oldest_age_seconds; /* oldest message not yet handed out (to within a batch) */
	uint64_t recovered_msgs;   /* found in DIR at open */
	uint64_t written_msgs, written_batches, written_bytes;
	uint64_t replayed_msgs;	 /* handed to the output */
	uint64_t read_back_msgs; /* of those, read back from disk (the rest: the hand-off) */
	uint64_t dropped_msgs, dropped_batches;	 /* buffer full (or a write failed) */
	uint64_t corrupt_records, corrupt_bytes; /* skipped: CRC, torn tail */
	/* Messages in those, counted from the intact records around each
	 * stretch; corrupt_uncounted stretches could not be (then it is a
	 * lower bound). */
	uint64_t corrupt_msgs, corrupt_uncounted;
	uint64_t segments_refused; /* left in DIR unread: too big, or a newer version */
	uint64_t syncs;
};

#endif
