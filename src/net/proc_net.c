// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/array.h"
#include "net/proc_net.h"
#include "net/sockinfo.h"

/* Fields of a /proc/net/udp row, as udp4_format_sock() prints them. */
enum {
	F_SL,
	F_LOCAL,
	F_REMOTE,
	F_STATE,
	F_TXRX,
	F_TIMER,
	F_RETRNSMT,
	F_UID,
	F_TIMEOUT,
	F_INODE,
	F_REF,
	F_POINTER,
	F_DROPS,
	F_NR
};

/* Whole token in base 10 or 16, no sign, no space: strtoull accepts both. */
static int parse_token(const char *s, size_t len, int base, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int d;

		if (isdigit((unsigned char)s[i]))
			d = s[i] - '0';
		else if (base == 16 && isxdigit((unsigned char)s[i]))
			d = tolower((unsigned char)s[i]) - 'a' + 10;
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* "HEX:HEX" with the part before the colon of exactly addr_len hex digits. */
static int split_colon(const char *s, size_t len, size_t addr_len, const char **second,
		       size_t *second_len)
{
	const char *colon = memchr(s, ':', len);

	if (!colon || (addr_len && (size_t)(colon - s) != addr_len))
		return -EINVAL;
	*second = colon + 1;
	*second_len = len - (colon - s) - 1;
	return 0;
}

/*
 * The kernel prints each 32-bit word of the address as a native-endian
 * integer (%08X of a __be32), so parsing a word and storing it as is gives
 * the address bytes back on any endianness.
 */
static int parse_address(const char *s, int family, char *out, size_t out_len, uint16_t port)
{
	int words = family == AF_INET ? 1 : 4;
	uint32_t addr[4];
	char text[INET6_ADDRSTRLEN];

	for (int i = 0; i < words; i++) {
		uint64_t w;

		if (parse_token(s + 8 * i, 8, 16, &w))
			return -EINVAL;
		addr[i] = (uint32_t)w;
	}
	if (!inet_ntop(family, addr, text, sizeof(text)))
		return -EINVAL;
	if (family == AF_INET)
		snprintf(out, out_len, "%s:%u", text, port);
	else
		snprintf(out, out_len, "[%s]:%u", text, port);
	return 0;
}

int proc_net_udp_parse_line(const char *line, int family, struct udp_sock_row *out)
{
	const char *tok[F_NR], *p = line, *second;
	size_t tok_len[F_NR], addr_len, second_len;
	uint64_t v;
	int n = 0;

	if (family == AF_INET)
		addr_len = 8;
	else if (family == AF_INET6)
		addr_len = 32;
	else
		return -EINVAL;

	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (n == F_NR)
			return -EINVAL; /* more fields than a row has */
		tok[n] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		tok_len[n] = p - tok[n];
		n++;
	}
	if (n != F_NR)
		return -EINVAL;

	memset(out, 0, sizeof(*out));
	out->family = family;

	/* "  42:" */
	if (tok_len[F_SL] < 2 || tok[F_SL][tok_len[F_SL] - 1] != ':' ||
	    parse_token(tok[F_SL], tok_len[F_SL] - 1, 10, &v))
		return -EINVAL;
	if (split_colon(tok[F_LOCAL], tok_len[F_LOCAL], addr_len, &second, &second_len) ||
	    second_len != 4 || parse_token(second, 4, 16, &v))
		return -EINVAL;
	out->port = (uint16_t)v;
	if (parse_address(tok[F_LOCAL], family, out->local, sizeof(out->local), out->port))
		return -EINVAL;
	if (split_colon(tok[F_REMOTE], tok_len[F_REMOTE], addr_len, &second, &second_len))
		return -EINVAL;
	/* "tx_queue:rx_queue" */
	if (split_colon(tok[F_TXRX], tok_len[F_TXRX], 0, &second, &second_len) ||
	    parse_token(tok[F_TXRX], second - 1 - tok[F_TXRX], 16, &v) ||
	    parse_token(second, second_len, 16, &out->rx_queue))
		return -EINVAL;
	if (parse_token(tok[F_UID], tok_len[F_UID], 10, &v) || v > UINT32_MAX)
		return -EINVAL;
	out->uid = (uint32_t)v;
	if (parse_token(tok[F_INODE], tok_len[F_INODE], 10, &out->inode))
		return -EINVAL;
	if (parse_token(tok[F_DROPS], tok_len[F_DROPS], 10, &out->drops))
		return -EINVAL;
	return 0;
}

/* Appends every row of one table to *rows. 0 or -errno. */
static int read_table(const char *path, int family, struct udp_sock_row **rows, size_t *n,
		      size_t *cap)
{
	char *line = NULL;
	size_t lcap = 0;
	int err = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		/* No IPv6 in this kernel: an empty table, not an error. */
		return errno == ENOENT && family == AF_INET6 ? 0 : -errno;
	if (getline(&line, &lcap, f) < 0) { /* the header */
		err = ferror(f) ? -EIO : 0;
		goto out;
	}
	while (getline(&line, &lcap, f) >= 0) {
		if (ARRAY_PUSH_ROOM(*rows, *cap, *n, 64)) {
			err = -ENOMEM;
			goto out;
		}
		if (proc_net_udp_parse_line(line, family, &(*rows)[*n])) {
			err = -EPROTO; /* the kernel changed its format */
			goto out;
		}
		(*n)++;
	}
	if (ferror(f))
		err = -EIO;
out:
	free(line);
	fclose(f);
	return err;
}

static int cmp_inode(const void *a, const void *b)
{
	const struct udp_sock_row *x = a, *y = b;

	return x->inode < y->inode ? -1 : x->inode > y->inode;
}

/* Whether sorted rows[0..n) hold a socket of this inode (not 0). */
static bool has_inode(const struct udp_sock_row *rows, size_t n, uint64_t inode)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].inode < inode)
			lo = mid + 1;
		else
			hi = mid;
	}
	return inode && lo < n && rows[lo].inode == inode;
}

/*
 * The kernel writes /proc/net/udp a page at a time, and finds where it left
 * off by counting rows from the first: a socket bound or closed meanwhile
 * in an earlier hash slot moves the rest, so that one read can miss a row
 * or show one twice. Two reads: each socket (by inode) once, as the second
 * read shows it, or as the first did if the second missed it. A socket
 * closed between them is still shown, as it would be had it closed a
 * moment after a single read.
 */
static int for_each_in_table(const char *path, int family,
			     int (*fn)(const struct udp_sock_row *r, void *ctx), void *ctx)
{
	struct udp_sock_row *rows = NULL, *second;
	size_t n = 0, cap = 0, first, nsecond;
	int err;

	err = read_table(path, family, &rows, &n, &cap);
	first = n;
	if (!err)
		err = read_table(path, family, &rows, &n, &cap);
	if (err)
		goto out;
	second = rows + first;
	nsecond = n - first;
	array_sort(second, nsecond, sizeof(rows[0]), cmp_inode);
	for (size_t i = 0; i < nsecond && !err; i++)
		/* a kernel socket (inode 0) is never a repeat of another */
		if (!i || !second[i].inode || second[i].inode != second[i - 1].inode)
			err = fn(&second[i], ctx);
	array_sort(rows, first, sizeof(rows[0]), cmp_inode);
	for (size_t i = 0; i < first && !err; i++)
		if (rows[i].inode && !has_inode(second, nsecond, rows[i].inode) &&
		    (!i || rows[i].inode != rows[i - 1].inode))
			err = fn(&rows[i], ctx);
out:
	free(rows);
	return err;
}

int proc_net_udp_for_each(int (*fn)(const struct udp_sock_row *r, void *ctx), void *ctx)
{
	int err = for_each_in_table("/proc/net/udp", AF_INET, fn, ctx);

	if (err)
		return err;
	return for_each_in_table("/proc/net/udp6", AF_INET6, fn, ctx);
}

int proc_pid_socket_fd(int pid, uint64_t inode)
{
	char path[64], want[64], link[64];
	struct dirent *de;
	int fd = -ENOENT;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)inode);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(dir))) {
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (n < 0)
			continue; /* closed while we looked */
		link[n] = '\0';
		if (!strcmp(link, want)) {
			fd = atoi(de->d_name);
			break;
		}
	}
	closedir(dir);
	return fd;
}

int proc_pid_comm(int pid, char *comm, size_t comm_len)
{
	char path[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(comm, comm_len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	n = strlen(comm);
	if (n && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	return 0;
}

int proc_socket_owner(uint64_t inode, int *pid, char *comm, size_t comm_len)
{
	struct dirent *de;
	int err = -ENOENT;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		int p;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		p = atoi(de->d_name);
		if (proc_pid_socket_fd(p, inode) < 0)
			continue;
		if (comm && proc_pid_comm(p, comm, comm_len))
			continue; /* exited meanwhile */
		*pid = p;
		err = 0;
		break;
	}
	closedir(dir);
	return err;
}

int proc_pid_fd_borrow(int pid, int fd, uint64_t inode)
{
	int pidfd, copy, err;
	struct stat st;

	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	copy = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = copy < 0 ? -errno : 0;
	close(pidfd);
	if (err)
		return err;
	/* The fd number may have been closed and reused since we read the link. */
	if (fstat(copy, &st) || !S_ISSOCK(st.st_mode) || st.st_ino != inode) {
		close(copy);
		return -ENOENT;
	}
	return copy;
}

int proc_socket_borrow(int pid, uint64_t inode)
{
	int fd = proc_pid_socket_fd(pid, inode);

	return fd < 0 ? fd : proc_pid_fd_borrow(pid, fd, inode);
}

int proc_socket_cookie(int pid, uint64_t inode, uint64_t *cookie)
{
	int fd, err;

	fd = proc_socket_borrow(pid, inode);
	if (fd < 0)
		return fd;
	err = sockinfo_cookie(fd, cookie);
	close(fd);
	return err;
}
