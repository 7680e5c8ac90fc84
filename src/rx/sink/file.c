// SPDX-License-Identifier: MIT
/*
 * null, stdout and file:PATH sinks: one write(2) per buffer of many lines.
 *
 * A regular file's dirty pages are kept bounded: every WB_CHUNK written, the
 * new chunk's writeback is started at once (sync_file_range WRITE: the disk
 * works from the first chunk on, not from vm.dirty_background_ratio on), and
 * once more than `ahead` bytes are written and not yet waited for, the
 * oldest of them are waited for (WAIT_BEFORE | WRITE | WAIT_AFTER), a chunk
 * at a time. A burst faster than the disk fills the page cache up to `ahead`
 * (min(WB_AHEAD_MAX, RAM / 10)), then a disk slower than the input shows as
 * a steady write rate of the output thread, one chunk's wait at a time, not
 * as the kernel's dirty-page throttling stopping it (and every other writer
 * on the machine) for seconds once vm.dirty_ratio is reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include "common/log.h"
#include "common/no_follow.h"
#include "rx/settings/config.h"
#include "rx/sink/sink.h"

/* Bytes per writeback step: large enough for few syscalls and a
 * sequential disk write. */
#define WB_CHUNK (8ULL << 20)
/* At most this much written and not waited for (and at most RAM / 10, the
 * kernel's default vm.dirty_background_ratio: below its throttling). */
#define WB_AHEAD_MAX (2ULL << 30)

struct sink_file {
	struct sink base;
	int fd;
	bool owns_fd;
	bool writeback;	   /* a regular file: bound its dirty pages */
	uint64_t end;	   /* bytes in the file after our last write */
	uint64_t wb_start; /* writeback started up to here */
	uint64_t wb_done;  /* ... and waited for up to here */
	uint64_t ahead;	   /* the most started and not waited for */
	char path[PATH_MAX];
};

/* Where writeback starts for a newly opened fd (appends go to its end). */
static void writeback_reset(struct sink_file *f)
{
	struct stat st;

	f->writeback = !fstat(f->fd, &st) && S_ISREG(st.st_mode);
	f->end = f->writeback ? (uint64_t)st.st_size : 0;
	f->wb_start = f->end;
	f->wb_done = f->end;
}

static uint64_t writeback_ahead(void)
{
	struct sysinfo si;
	uint64_t ram = !sysinfo(&si) ? (uint64_t)si.totalram * si.mem_unit : 0;
	uint64_t ahead = ram / 10 < WB_AHEAD_MAX ? ram / 10 : WB_AHEAD_MAX;

	return ahead < 2 * WB_CHUNK ? 2 * WB_CHUNK : ahead;
}

/* After a write of len bytes: start the writeback of what is new once a
 * chunk has gathered; wait for the oldest chunk while too much is ahead. */
static void writeback(struct sink_file *f, size_t len)
{
	off_t pos;
	int err = 0;

	f->end += len;
	if (f->end - f->wb_start < WB_CHUNK)
		return;
	/* O_APPEND: someone else may have written too; the position is ours. */
	pos = lseek(f->fd, 0, SEEK_CUR);
	if (pos > 0 && (uint64_t)pos > f->end)
		f->end = pos;
	err = sync_file_range(f->fd, f->wb_start, f->end - f->wb_start, SYNC_FILE_RANGE_WRITE);
	f->wb_start = f->end;
	while (!err && f->wb_start - f->wb_done > f->ahead) {
		err = sync_file_range(f->fd, f->wb_done, WB_CHUNK,
				      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
					      SYNC_FILE_RANGE_WAIT_AFTER);
		f->wb_done += WB_CHUNK;
	}
	if (err) {
		/* Not for this file system: plain writes, as before. */
		pr_warn("%s: sync_file_range: %s (dirty pages left to the kernel)\n", f->base.name,
			strerror(errno));
		f->writeback = false;
	}
}

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
	int err;

	if (f->fd < 0)
		return 0;
	err = write_all(f->fd, buf, len);
	if (!err && f->writeback)
		writeback(f, len);
	return err;
}

/* A symlink, a FIFO or another user's file is refused at start and at each
 * SIGHUP's reopen alike. */
static int open_path(const char *path)
{
	return open_own_file(path, O_WRONLY | O_CREAT | O_APPEND, 0640);
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
	writeback_reset(f);
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
			pr_warn("--output file:%s: %s\n", f->path, no_follow_strerror(-err));
			free(f);
			errno = -err;
			return NULL;
		}
		f->owns_fd = true;
		f->ahead = writeback_ahead();
		writeback_reset(f);
		break;
	default:
		free(f);
		errno = EINVAL;
		return NULL;
	}
	return &f->base;
}
