// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "common/log.h"

enum log_level log_level = LOG_LEVEL_NOTE;
const char *log_prog = "syslogrx";

static enum { PREFIX_NONE, PREFIX_JOURNAL, PREFIX_STAMP } prefix_mode;

/* sd-daemon(3)'s priorities: err, warning, info (NOTE too), debug. */
static const char journal_prio[] = { '3', '4', '6', '6', '7' };
static const char *const level_word[] = { "error", "warning", "info", "info", "debug" };

/* JOURNAL_STREAM is "DEV:INODE" of the stream systemd connected; a child
 * whose stderr was redirected elsewhere inherits the variable but not the
 * stream, so the pair must match fd 2 itself. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	if (!js || sscanf(js, "%llu:%llu%n", &dev, &ino, &end) != 2 || js[end])
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

void log_init(bool stamps)
{
	prefix_mode = stderr_is_journal() ? PREFIX_JOURNAL : stamps ? PREFIX_STAMP : PREFIX_NONE;
}

bool log_to_journal(void)
{
	return prefix_mode == PREFIX_JOURNAL;
}

size_t log_prefix(enum log_level level, char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	int n;

	if (level > LOG_LEVEL_DEBUG)
		level = LOG_LEVEL_DEBUG;
	if (prefix_mode == PREFIX_JOURNAL) {
		n = snprintf(buf, len, "<%c>%s: ", journal_prio[level], log_prog);
	} else if (prefix_mode == PREFIX_STAMP) {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = snprintf(buf, len,
			     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900,
			     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
			     ts.tv_nsec / 1000000, level_word[level], log_prog);
	} else {
		n = snprintf(buf, len, "%s: ", log_prog);
	}
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

static void write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, p, n);

		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/*
 * Each line of the message gets the prefix (a message of several lines stays
 * several lines the journal sorts alike), and the whole goes out in one
 * write(2), so lines of threads logging at once do not interleave. A message
 * longer than the buffer is cut, and says so.
 */
void log_vprint(enum log_level level, const char *fmt, va_list ap)
{
	char msg[4096], out[8192], pre[128];
	size_t plen, used = 0;
	const char *p, *nl;
	int n;

	if (level > log_level)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(msg))
		memcpy(msg + sizeof(msg) - 6, "...\n", 5);
	plen = log_prefix(level, pre, sizeof(pre));
	for (p = msg; *p; p = nl) {
		size_t llen;

		nl = strchr(p, '\n');
		nl = nl ? nl + 1 : p + strlen(p);
		llen = (size_t)(nl - p);
		if (used + plen + llen + 1 > sizeof(out)) {
			write_all(out, used);
			used = 0;
		}
		if (plen + llen + 1 > sizeof(out))
			llen = sizeof(out) - plen - 1;
		memcpy(out + used, pre, plen);
		memcpy(out + used + plen, p, llen);
		used += plen + llen;
	}
	/* A message without its newline still ends its line. */
	if (used && out[used - 1] != '\n')
		out[used++] = '\n';
	write_all(out, used);
}

void log_print(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vprint(level, fmt, ap);
	va_end(ap);
}
