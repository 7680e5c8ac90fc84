// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "net/sysctl.h"

int sysctl_read(const char *name, uint64_t *v, unsigned int n)
{
	char path[PATH_MAX];
	unsigned int got = 0;
	int len;
	FILE *f;

	len = snprintf(path, sizeof(path), "/proc/sys/%s", name);
	if (len < 0 || (size_t)len >= sizeof(path))
		return -ENAMETOOLONG;
	for (char *p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (got < n && fscanf(f, "%" SCNu64, &v[got]) == 1)
		got++;
	fclose(f);
	return got ? (int)got : -EINVAL;
}

int sysctl_read_u64(const char *name, uint64_t *v)
{
	int n = sysctl_read(name, v, 1);

	return n < 0 ? n : 0;
}

int sys_mem_available(uint64_t *bytes)
{
	char line[256];
	uint64_t kb;
	int err = -ENOENT;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kb) == 1) {
			*bytes = kb * 1024;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}
