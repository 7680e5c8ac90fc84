// SPDX-License-Identifier: MIT
#include "common/log.h"
#include "common/secret_file.h"

bool secret_file_warn(const char *flag, const char *path, const struct stat *st)
{
	if (!(st->st_mode & (S_IRGRP | S_IROTH)))
		return false;
	pr_warn("%s %s: a secret readable by %s (mode %04o): chmod 0600 it\n", flag, path,
		st->st_mode & S_IROTH ? "every user" : "its group",
		(unsigned int)(st->st_mode & 07777));
	return true;
}

bool secret_path_warn(const char *flag, const char *path)
{
	struct stat st;

	return !stat(path, &st) && secret_file_warn(flag, path, &st);
}
