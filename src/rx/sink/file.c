// SPDX-License-Identifier: MIT
/* null, stdout and file:PATH sinks: one write(2) per buffer of many lines. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "rx/settings/config.h"
#include "rx/sink/sink.h"

struct sink_file {
	struct sink base;
	int fd;
	bool owns_fd;
	char path[PATH_MAX];
};

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= n;
	}
	return 0;
}

static int file_write(struct sink *s, const char *buf, size_t len)
{
	struct sink_file *f = (struct sink_file *)s;

	return f->fd < 0 ? 0 : write_all(f->fd, buf, len);
}

static int open_path(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);

	return fd < 0 ? -errno : fd;
}

static int file_reopen(struct sink *s)
{
	struct sink_file *f = (struct sink_file *)s;
	int fd;

	if (!f->owns_fd)
		return 0;
	/* Open the new file before closing the old: a failure keeps writing
	 * to the old one rather than losing lines. */
	fd = open_path(f->path);
	if (fd < 0)
		return fd;
	close(f->fd);
	f->fd = fd;
	return 0;
}

static void file_close(struct sink *s)
{
	struct sink_file *f = (struct sink_file *)s;

	if (f->owns_fd && f->fd >= 0) {
		if (fsync(f->fd) && errno != EINVAL)
			pr_warn("%s: fsync: %s\n", s->name, strerror(errno));
		close(f->fd);
	}
	free(f);
}

static const struct sink_ops file_ops = {
	.write = file_write,
	.reopen = file_reopen,
	.close = file_close,
};

struct sink *sink_file_open(const struct config *c)
{
	struct sink_file *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return NULL;
	f->base.ops = &file_ops;
	f->fd = -1;
	switch (c->output) {
	case OUTPUT_NULL:
		f->base.discards = true;
		snprintf(f->base.name, sizeof(f->base.name), "null");
		break;
	case OUTPUT_STDOUT:
		f->fd = STDOUT_FILENO;
		snprintf(f->base.name, sizeof(f->base.name), "stdout");
		break;
	case OUTPUT_FILE:
		snprintf(f->path, sizeof(f->path), "%s", c->output_arg);
		snprintf(f->base.name, sizeof(f->base.name), "file:%s", f->path);
		f->fd = open_path(f->path);
		if (f->fd < 0) {
			err = f->fd;
			pr_warn("--output file:%s: %s\n", f->path, strerror(-err));
			free(f);
			errno = -err;
			return NULL;
		}
		f->owns_fd = true;
		break;
	default:
		free(f);
		errno = EINVAL;
		return NULL;
	}
	return &f->base;
}
