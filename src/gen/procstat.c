// SPDX-License-Identifier: MIT
/* /proc/PID readers for resource monitors; see gen/procstat.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gen/procstat.h"

int procstat_parse_stat(const char *buf, struct procstat *ps)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')'), *p;
	size_t n;
	int field;

	/* comm may hold spaces and ')': it ends at the last ')' */
	if (!open || !close || close < open)
		return -EINVAL;
	n = close - open - 1;
	if (n >= sizeof(ps->comm))
		n = sizeof(ps->comm) - 1;
	memcpy(ps->comm, open + 1, n);
	ps->comm[n] = '\0';
	/* close + 2 is field 3 (state); utime is 14, stime 15 */
	p = close + 1;
	for (field = 3; field <= 15; field++) {
		char *end;
		unsigned long long v;

		while (*p == ' ')
			p++;
		if (!*p)
			return -EINVAL;
		if (field < 14) {
			p = strchr(p, ' ');
			if (!p)
				return -EINVAL;
			continue;
		}
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || end == p)
			return -EINVAL;
		if (field == 14)
			ps->utime_ticks = v;
		else
			ps->stime_ticks = v;
		p = end;
	}
	return 0;
}

static int find_u64(const char *buf, const char *key, uint64_t *out)
{
	const char *p = buf;
	size_t klen = strlen(key);

	while (p && *p) {
		if (!strncmp(p, key, klen)) {
			char *end;

			errno = 0;
			*out = strtoull(p + klen, &end, 10);
			return errno || end == p + klen ? -EINVAL : 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int procstat_parse_status(const char *buf, struct procstat *ps)
{
	uint64_t kb;
	int err = find_u64(buf, "VmRSS:", &kb);

	ps->have_rss = !err;
	if (!err)
		ps->rss_bytes = kb * 1024;
	return err;
}

int procstat_parse_io(const char *buf, struct procstat *ps)
{
	int err = find_u64(buf, "wchar:", &ps->wchar);

	if (!err)
		err = find_u64(buf, "write_bytes:", &ps->write_bytes);
	ps->have_io = !err;
	return err;
}

static int read_text(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		err = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return err;
}

int procstat_read(pid_t pid, struct procstat *ps)
{
	char buf[4096];
	int err;

	memset(ps, 0, sizeof(*ps));
	err = read_text(pid, "stat", buf, sizeof(buf));
	if (err)
		return err;
	err = procstat_parse_stat(buf, ps);
	if (err)
		return err;
	if (!read_text(pid, "status", buf, sizeof(buf)))
		procstat_parse_status(buf, ps);
	if (!read_text(pid, "io", buf, sizeof(buf)))
		procstat_parse_io(buf, ps);
	return 0;
}

void human_bytes(char *buf, size_t len, double v)
{
	static const char units[] = "KMGTP";
	int u = -1;

	if (v < 1024) {
		snprintf(buf, len, "%.0f b", v);
		return;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.2f%c", v, units[u]);
}
