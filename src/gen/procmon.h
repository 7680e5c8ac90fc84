/* SPDX-License-Identifier: MIT */
/*
 * Once-a-second monitor of a receiver process, laid out like Fluent Bit's
 * performance tools:
 *
 *  records   write (b)     write   secs |  % cpu  user (ms)  sys (ms)  Mem (bytes)      Mem
 * --------  ----------  --------  ----- + ------  ---------  --------  -----------  -------
 *
 * records   - messages the caller sent in the interval
 * write (b) - bytes the process wrote in the interval: the change of wchar in
 *             /proc/PID/io (every write(2)/send(2) to any fd: files, pipes,
 *             sockets), not write_bytes (storage only, counted at dirtying)
 * secs      - length of the interval, measured
 * % cpu     - (user + sys) time over secs, relative to one core (100 = one core)
 * Mem       - VmRSS at the end of the interval
 * A column that could not be read shows "-" (JSON: absent): never a guess.
 */
#ifndef SYSLOGRX_PROCMON_H
#define SYSLOGRX_PROCMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "common/json_writer.h"
#include "gen/procstat.h"

struct procmon_row {
	uint64_t records;
	double secs;
	bool alive; /* false: the process is gone, nothing else is set */
	double cpu_pct;
	uint64_t user_ms, sys_ms;
	bool have_rss, have_io;
	uint64_t rss_bytes;
	uint64_t write_bytes; /* wchar delta */
};

struct procmon {
	pid_t pid;
	char comm[64];
	long hz;
	bool alive;
	struct procstat last;
	uint64_t last_ns;
	/* sums for the summary */
	double elapsed;
	uint64_t cpu_ticks, records, wchar;
	double rss_sum;
	uint64_t rss_samples;
	bool have_io;
};

/* 0 or -errno (the process cannot be read). */
int procmon_init(struct procmon *m, pid_t pid, uint64_t now_ns);
void procmon_sample(struct procmon *m, uint64_t now_ns, uint64_t records, struct procmon_row *r);

void procmon_print_header(FILE *f);
void procmon_print_row(FILE *f, const struct procmon_row *r);
void procmon_print_summary(FILE *f, const struct procmon *m);
/* The row's receiver fields as an object named key. */
void procmon_json_row(struct json_writer *w, const char *key, const struct procmon_row *r);
void procmon_json_summary(struct json_writer *w, const char *key, const struct procmon *m);

#endif
