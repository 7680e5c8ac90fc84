/* SPDX-License-Identifier: MIT */
/*
 * A process's resource use from /proc/PID/{stat,status,io}, for monitors in
 * the manner of Fluent Bit's performance tools. Parsers are pure (text in,
 * fields out) so they are tested without a process.
 */
#ifndef SYSLOGRX_PROCSTAT_H
#define SYSLOGRX_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procstat {
	char comm[64];
	uint64_t utime_ticks; /* stat field 14 */
	uint64_t stime_ticks; /* stat field 15 */
	uint64_t rss_bytes;   /* status VmRSS */
	uint64_t wchar;	      /* io: bytes passed to write(2) and friends, any fd */
	uint64_t write_bytes; /* io: bytes sent to the storage layer */
	bool have_rss;
	bool have_io; /* /proc/PID/io needs ptrace access (CAP_SYS_PTRACE) */
};

int procstat_parse_stat(const char *buf, struct procstat *ps);
int procstat_parse_status(const char *buf, struct procstat *ps);
int procstat_parse_io(const char *buf, struct procstat *ps);

/* Reads all three; 0, or -errno when stat cannot be read (process gone).
 * status and io failures only clear have_rss / have_io. */
int procstat_read(pid_t pid, struct procstat *ps);

/* "0 b", "1023 b", "12.50K", "125.77M", "1.20G" (powers of 1024). */
void human_bytes(char *buf, size_t len, double v);

#endif
