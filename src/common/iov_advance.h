/* SPDX-License-Identifier: MIT */
/*
 * What is left of an iovec array after a writev or pwritev wrote n bytes of
 * it: the vectors written whole are stepped over, the first one written in
 * part starts after its written bytes. For the loops that write until every
 * byte is out (a short write is rare, but a full disk's last bytes are one).
 */
#ifndef SYSLOGRX_IOV_ADVANCE_H
#define SYSLOGRX_IOV_ADVANCE_H

#include <stddef.h>
#include <sys/uio.h>

/* Steps *iov and *cnt past n written bytes (n <= what the vectors hold). */
static inline void iov_advance(struct iovec **iov, int *cnt, size_t n)
{
	struct iovec *v = *iov;

	while (*cnt && n >= v->iov_len) {
		n -= v->iov_len;
		v++;
		(*cnt)--;
	}
	if (*cnt) {
		v->iov_base = (char *)v->iov_base + n;
		v->iov_len -= n;
	}
	*iov = v;
}

#endif
