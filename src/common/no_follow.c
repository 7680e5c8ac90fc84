// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "common/no_follow.h"

int open_no_follow(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);

	return fd < 0 ? -errno : fd;
}

int own_file_check(const struct stat *st)
{
	if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3))
		return 0; /* /dev/null */
	if (!S_ISREG(st->st_mode))
		return NO_FOLLOW_NOT_REGULAR;
	if (st->st_uid != geteuid())
		return NO_FOLLOW_NOT_OWNED;
	return 0;
}

int open_own_file(const char *path, int flags, mode_t mode)
{
	int fd = open_no_follow(path, (flags & ~O_TRUNC) | O_NONBLOCK | O_NOCTTY, mode);
	struct stat st;
	int err;

	if (fd == -ENXIO) /* a FIFO nobody reads (O_WRONLY | O_NONBLOCK) */
		return -NO_FOLLOW_NOT_REGULAR;
	if (fd < 0)
		return fd;
	err = fstat(fd, &st) ? errno : own_file_check(&st);
	if (!err && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		err = errno;
	if (!err && (flags & O_TRUNC) && S_ISREG(st.st_mode) && ftruncate(fd, 0))
		err = errno;
	if (!err)
		return fd;
	close(fd);
	return -err;
}

int open_dir_no_follow(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd >= 0)
		return fd;
	/* a symlink to a folder may answer ENOTDIR (O_DIRECTORY) as well */
	if (errno == ENOTDIR && !lstat(path, &st) && S_ISLNK(st.st_mode))
		return -ELOOP;
	return -errno;
}

FILE *fopen_private(const char *path)
{
	int fd = open_own_file(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}

const char *no_follow_strerror(int err)
{
	switch (err) {
	case ELOOP:
		return "it is a symbolic link: refused (syslogrx never follows one)";
	case NO_FOLLOW_NOT_REGULAR:
		return "not a regular file (a FIFO, socket or device): refused, left untouched";
	case NO_FOLLOW_NOT_OWNED:
		return "owned by another user: refused, left untouched (they could read or swap "
		       "what syslogrx writes)";
	default:
		return strerror(err);
	}
}
