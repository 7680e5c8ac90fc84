// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common/no_follow.h"
#include "common/secret_file.h"
#include "rx/settings/header_file.h"

#define FLAG "--otlp-header-file"

/* The whole file, NUL-terminated, into buf (HEADER_FILE_MAX + 1 bytes). */
static int read_checked(const char *path, char *buf, size_t *len, char *err, size_t errlen)
{
	int fd = open_no_follow(path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
	struct stat st;
	ssize_t n;
	size_t got = 0;

	if (fd < 0) {
		snprintf(err, errlen, FLAG " %s: %s", path, no_follow_strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, FLAG " %s: not a regular file: refused", path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, errlen,
			 FLAG
			 " %s: writable by group or others (mode %04o): refused (chmod 0600 it)",
			 path, (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	secret_file_warn(FLAG, path, &st);
	while ((n = read(fd, buf + got, HEADER_FILE_MAX + 1 - got)) > 0 && got < HEADER_FILE_MAX)
		got += n;
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, FLAG " %s: %s", path, strerror(errno));
		return -EIO;
	}
	if (got > HEADER_FILE_MAX) {
		snprintf(err, errlen, FLAG " %s: larger than %d bytes: refused", path,
			 HEADER_FILE_MAX);
		return -EFBIG;
	}
	if (memchr(buf, '\0', got)) {
		snprintf(err, errlen, FLAG " %s: holds a NUL byte: refused", path);
		return -EINVAL;
	}
	buf[got] = '\0';
	*len = got;
	return 0;
}

int header_file_read(const char *path, header_line_fn fn, void *ctx, char *err, size_t errlen)
{
	char *buf = malloc(HEADER_FILE_MAX + 1), *line, *next;
	char where[PATH_MAX + 64];
	unsigned int nr = 0;
	size_t len;
	int ret;

	if (!buf) {
		snprintf(err, errlen, FLAG " %s: out of memory", path);
		return -ENOMEM;
	}
	ret = read_checked(path, buf, &len, err, errlen);
	for (line = buf; !ret && line < buf + len; line = next) {
		size_t n = strcspn(line, "\n");

		next = line + n + (line[n] == '\n');
		line[n] = '\0';
		nr++;
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		snprintf(where, sizeof(where), FLAG " %s:%u", path, nr);
		ret = fn(line, where, ctx, err, errlen) ? -EINVAL : 0;
	}
	free(buf);
	return ret;
}
