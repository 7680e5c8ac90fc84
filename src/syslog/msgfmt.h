/* SPDX-License-Identifier: MIT */
/*
 * sysloggen's datagrams: exact size, a sequence marker seqtrack finds.
 *
 *   rfc5424: <PRI>1 TS HOST APP PID - [seq@32473 run="RUN" flow="F" seq="N"] PAD
 *            TS = YYYY-MM-DDThh:mm:ssZ (UTC)
 *   rfc3164: <PRI>TS HOST APP[PID]: seq@32473 run=RUN flow=F seq=N PAD
 *            TS = Mmm dd hh:mm:ss (UTC, day space-padded)
 * N is plain decimal (no leading zeros). PAD is "abc...xyz" repeated, cut to
 * make the datagram exactly size bytes; in rfc5424 a space separates it from
 * the structured data (no space, no PAD when the header fills size exactly).
 * The rfc3164 marker always ends with the space after N.
 *
 * End marker: after a flow's last message the sender says how many it sent
 * (N) and how many copies of this end marker it sends (K), same size, same
 * layout with "end" for "seq":
 *   rfc5424: ... [seq@32473 run="RUN" flow="F" end="N" copies="K"] PAD
 *   rfc3164: ... seq@32473 run=RUN flow=F end=N copies=K PAD
 *
 * Pure functions: no I/O, no allocation. A slot (one sendmmsg buffer) is
 * rendered in full once, then only the timestamp (when the second changes)
 * and the digits of N are patched; a full render happens again only when N
 * gains a digit.
 */
#ifndef SYSLOGRX_MSGFMT_H
#define SYSLOGRX_MSGFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MSGFMT_RUN_MAX 32
#define MSGFMT_HOST_MAX 255
#define MSGFMT_APP_MAX 48

enum msgfmt_format {
	MSGFMT_RFC3164,
	MSGFMT_RFC5424,
};

struct msgfmt_params {
	enum msgfmt_format format;
	unsigned pri;	  /* 0..191 */
	const char *host; /* printable ASCII, no space, 1..255 */
	const char *app;  /* printable ASCII, no space, no '[' ':', 1..48 */
	uint32_t pid;
	const char *run; /* [A-Za-z0-9._:-], 1..32 */
	uint32_t flow;
	size_t size; /* exact datagram size */
};

struct msgfmt_slot {
	char *buf;	    /* size bytes, owned by the caller */
	size_t seq_off;	    /* where N's digits start */
	unsigned seq_width; /* digits of N now in buf; 0 = not rendered */
	int64_t ts_sec;	    /* second the timestamp in buf shows */
};

/* Field checks for the CLI (which names the flag). */
bool msgfmt_run_valid(const char *run);
bool msgfmt_token_valid(const char *s, size_t max);

/* Bytes of header + marker for sequence numbers up to max_seq: the smallest
 * valid size. */
size_t msgfmt_min_size(const struct msgfmt_params *p, uint64_t max_seq);

/* Writes exactly p->size bytes to buf. -EMSGSIZE if size is too small for seq. */
int msgfmt_render(const struct msgfmt_params *p, char *buf, uint64_t seq, int64_t sec,
		  size_t *seq_off);

/* Bytes of header + end marker: the smallest size that carries it. */
size_t msgfmt_end_min_size(const struct msgfmt_params *p, uint64_t sent, uint64_t copies);

/* Writes the end marker, exactly p->size bytes. -EMSGSIZE if it does not fit. */
int msgfmt_render_end(const struct msgfmt_params *p, char *buf, uint64_t sent, uint64_t copies,
		      int64_t sec);

void msgfmt_slot_init(struct msgfmt_slot *s, char *buf);

/* Makes the slot's buffer the datagram for (seq, sec): patches, or renders in
 * full when needed. Returns 0 or -EMSGSIZE. */
int msgfmt_slot_fill(const struct msgfmt_params *p, struct msgfmt_slot *s, uint64_t seq,
		     int64_t sec);

#endif
