// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "common/clock.h"
#include "common/log.h"
#include "common/no_follow.h"
#include "common/parse_num.h"
#include "rx/path/diskbuf_lock.h"

#define LOCK_NAME "lock"
#define POLL_MS 20

/* The pid the holder wrote into the file, 0 if none could be read. */
static long holder(int fd)
{
	char buf[24] = { 0 };
	uint64_t pid;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[strcspn(buf, "\n")] = '\0';
	return parse_u64(buf, 1, INT32_MAX, &pid) ? 0 : (long)pid;
}

static void write_pid(int fd)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (ftruncate(fd, 0) || pwrite(fd, buf, n, 0) != n)
		pr_debug("--disk-buffer: writing our pid to the lock: %s\n", strerror(errno));
}

int diskbuf_lock_take(const char *dir, diskbuf_lock_wait_fn on_wait, void *ctx, int wait_ms)
{
	uint64_t deadline = 0;
	bool waiting = false;
	int dirfd, fd, err;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		pr_warn("--disk-buffer %s: %s\n", dir, strerror(-err));
		return err;
	}
	dirfd = open_dir_no_follow(dir);
	if (dirfd < 0) {
		pr_warn("--disk-buffer %s: %s\n", dir, no_follow_strerror(-dirfd));
		return dirfd;
	}
	fd = openat(dirfd, LOCK_NAME, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	err = fd < 0 ? -errno : 0;
	close(dirfd);
	if (err) {
		pr_warn("--disk-buffer %s/%s: %s\n", dir, LOCK_NAME, no_follow_strerror(-err));
		return err;
	}
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		struct timespec tick = { 0, POLL_MS * 1000000L };

		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || !on_wait || (waiting && mono_ns() >= deadline)) {
			err = errno == EWOULDBLOCK ? -EBUSY : -errno;
			if (err == -EBUSY)
				pr_warn("--disk-buffer %s: in use by another syslogrx (pid %ld holds "
					"%s/%s)%s; one receiver per DIR\n",
					dir, holder(fd), dir, LOCK_NAME,
					waiting ? ", not let go in time" : "");
			else
				pr_warn("--disk-buffer %s/%s: %s\n", dir, LOCK_NAME,
					strerror(-err));
			close(fd);
			return err;
		}
		if (!waiting) {
			pr_info("--disk-buffer %s: waiting for pid %ld to let it go\n", dir,
				holder(fd));
			on_wait(ctx);
			waiting = true;
			deadline = mono_ns() + (uint64_t)wait_ms * 1000000ULL;
		}
		nanosleep(&tick, NULL);
	}
	write_pid(fd);
	return fd;
}

void diskbuf_lock_release(int fd)
{
	if (fd < 0)
		return;
	flock(fd, LOCK_UN);
	close(fd);
}
