// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common/no_follow.h"

int open_no_follow(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);

	return fd < 0 ? -errno : fd;
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
	int fd = open_no_follow(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
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
	return err == ELOOP ? "it is a symbolic link: refused (syslogrx never follows one)" :
			      strerror(err);
}
