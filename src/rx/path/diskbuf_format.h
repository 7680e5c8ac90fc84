/* SPDX-License-Identifier: MIT */
/*
 * The disk buffer's files as they are on disk: a segment is a 16-byte header
 * (SEG_MAGIC, SEG_VERSION) and records one after another; a record is a
 * struct rec_hdr, then one struct disk_msg per message, then the messages'
 * bytes back to back. Both layouts are fixed: a restart, or an upgrade in
 * place, reads back what an earlier run wrote.
 */
#ifndef SYSLOGRX_DISKBUF_FORMAT_H
#define SYSLOGRX_DISKBUF_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

struct batch;

#define SEG_MAGIC "SRXDBUF1"
#define SEG_VERSION 1
#define SEG_HDR 16
#define REC_MAGIC 0x52585253u	    /* "SRXR" in little-endian byte order */
#define REC_MAX_PAYLOAD (64u << 20) /* sanity bound on a header's length */

struct rec_hdr {
	uint32_t magic;
	uint32_t hdr_crc; /* crc32 of this header with hdr_crc = 0 */
	uint32_t len;	  /* payload bytes */
	uint32_t count;	  /* messages */
	uint32_t crc;	  /* crc32 of the payload */
	uint32_t zero;
	uint64_t seq;	   /* record number, increasing across segments */
	uint64_t first_ns; /* receive time of the first message */
};
_Static_assert(sizeof(struct rec_hdr) == 40, "record header is 40 bytes on disk");

struct disk_msg {
	uint32_t len, sock, truncated, src_len;
	uint64_t recv_ns;
	uint8_t src[28];   /* sockaddr_in6, or sockaddr_in in its first 16 */
	uint32_t listener; /* which --listen, by position (0 with one) */
};
_Static_assert(sizeof(struct disk_msg) == 56, "message descriptor is 56 bytes on disk");
_Static_assert(sizeof(struct sockaddr_in6) == 28, "sockaddr_in6 fits the descriptor");

/* zlib's crc32 of p[0, len) (see diskbuf_format.c for why that one). */
uint32_t dbuf_crc(const void *p, size_t len);
/* The header's own CRC: over it with hdr_crc = 0. */
uint32_t dbuf_hdr_crc(const struct rec_hdr *h);
/* pread until len bytes are read: 0, or -errno (-EIO at the file's end). */
int dbuf_pread_all(int fd, void *buf, size_t len, uint64_t off);
/* The bytes of b's record on disk: header, descriptors, the messages. */
uint64_t dbuf_rec_len(const struct batch *b);

#endif
