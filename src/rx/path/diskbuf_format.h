/* SPDX-License-Identifier: MIT */
/*
 * The disk buffer's files as they are on disk: a segment is a 16-byte header
 * (SEG_MAGIC, SEG_VERSION) and records one after another; a record is a
 * struct rec_hdr, then one struct disk_msg per message, then (version 2)
 * its listener-name table, then the messages' bytes back to back. The
 * layouts are fixed: a restart, or an upgrade in place, reads back what an
 * earlier run wrote, version-1 records too.
 */
#ifndef SYSLOGRX_DISKBUF_FORMAT_H
#define SYSLOGRX_DISKBUF_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include "rx/path/diskbuf_opts.h"
#include "rx/settings/listeners.h"

struct batch;

#define SEG_MAGIC "SRXDBUF1"
#define SEG_VERSION 2 /* 1: a segment of version-1 records; both are read */
#define SEG_HDR 16
#define REC_MAGIC 0x52585253u /* "SRXR" in little-endian byte order */
#define REC_VERSION 2
#define REC_V1 0      /* a version-1 record's version field (its "zero") */
#define REC_V1_HDR 40 /* a version-1 header ends after first_ns */

struct rec_hdr {
	uint32_t magic;
	uint32_t hdr_crc;  /* crc32 of this header with hdr_crc = 0 */
	uint32_t len;	   /* payload bytes */
	uint32_t count;	   /* messages */
	uint32_t crc;	   /* crc32 of the payload */
	uint32_t version;  /* REC_VERSION (REC_V1: the 40 bytes up to first_ns) */
	uint64_t seq;	   /* record number, increasing across segments */
	uint64_t first_ns; /* receive time of the first message */
	/* version 2 on: what a lost stretch is counted by */
	uint64_t msg_seq; /* messages its run wrote to the buffer before it */
	uint32_t run;	  /* the writing run's number (random per open) */
	uint32_t names;	  /* entries in its listener-name table, 1..count */
};
_Static_assert(sizeof(struct rec_hdr) == 56, "record header is 56 bytes on disk");

struct disk_msg {
	uint32_t len, sock, truncated, src_len;
	uint64_t recv_ns;
	uint8_t src[28];   /* sockaddr_in6, or sockaddr_in in its first 16 */
	uint32_t listener; /* version 2: its entry in the record's name table;
			    * version 1: which --listen, by position */
};
_Static_assert(sizeof(struct disk_msg) == 56, "message descriptor is 56 bytes on disk");
_Static_assert(sizeof(struct sockaddr_in6) == 28, "sockaddr_in6 fits the descriptor");

/* A listener's name as the receiving run showed it: len 0 when it showed
 * none (one unnamed listener); the bytes past len are 0. */
struct disk_name {
	uint32_t len;
	char name[LISTENER_NAME_MAX];
};
_Static_assert(sizeof(struct disk_name) == 36, "name entry is 36 bytes on disk");

/* A record's payload at its largest (a header's len past it is corrupt):
 * DISKBUF_COUNT_MAX messages of DISKBUF_MSG_MAX bytes, each with its
 * descriptor and a name entry. */
#define REC_MAX_PAYLOAD                \
	((uint64_t)DISKBUF_COUNT_MAX * \
	 (sizeof(struct disk_msg) + sizeof(struct disk_name) + DISKBUF_MSG_MAX))
/* A segment file at its largest: records are appended while they fit the
 * segment size (at most 64 MiB, under this), but the first one always
 * goes in. A file past it was not written by syslogrx. */
#define SEG_FILE_MAX (SEG_HDR + sizeof(struct rec_hdr) + REC_MAX_PAYLOAD)

/* zlib's crc32 of p[0, len) (see diskbuf_format.c for why that one). */
uint32_t dbuf_crc(const void *p, size_t len);
/* The header's own CRC: over it (its version's length) with hdr_crc = 0. */
uint32_t dbuf_hdr_crc(const struct rec_hdr *h);
/* A header's bytes on disk: by its version. */
static inline uint64_t dbuf_hdr_len(const struct rec_hdr *h)
{
	return h->version == REC_V1 ? REC_V1_HDR : sizeof(*h);
}
/* pread until len bytes are read: 0, or -errno (-EIO at the file's end). */
int dbuf_pread_all(int fd, void *buf, size_t len, uint64_t off);

/* The name of a message's listener past this run's (see
 * DISKBUF_LISTENER_NONE), or NULL: for the output stage (sink.h's
 * listener_name), any thread. */
const char *diskbuf_listener_name(const void *d, uint32_t listener);

#endif
