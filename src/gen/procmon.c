// SPDX-License-Identifier: MIT
/* Per-second process monitor; columns documented in gen/procmon.h. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include "gen/procmon.h"

int procmon_init(struct procmon *m, pid_t pid, uint64_t now_ns)
{
	int err;

	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->hz = sysconf(_SC_CLK_TCK);
	if (m->hz <= 0)
		m->hz = 100;
	err = procstat_read(pid, &m->last);
	if (err)
		return err;
	strcpy(m->comm, m->last.comm);
	m->alive = true;
	m->have_io = m->last.have_io;
	m->last_ns = now_ns;
	return 0;
}

void procmon_sample(struct procmon *m, uint64_t now_ns, uint64_t records, struct procmon_row *r)
{
	struct procstat ps;
	uint64_t ut, st;

	memset(r, 0, sizeof(*r));
	r->records = records;
	r->secs = (now_ns - m->last_ns) / 1e9;
	m->last_ns = now_ns;
	m->records += records;
	if (!m->alive || procstat_read(m->pid, &ps)) {
		m->alive = false;
		return;
	}
	m->elapsed += r->secs;
	r->alive = true;
	ut = ps.utime_ticks - m->last.utime_ticks;
	st = ps.stime_ticks - m->last.stime_ticks;
	m->cpu_ticks += ut + st;
	r->user_ms = ut * 1000 / m->hz;
	r->sys_ms = st * 1000 / m->hz;
	r->cpu_pct = r->secs > 0 ? (double)(ut + st) / m->hz / r->secs * 100 : 0;
	r->have_rss = ps.have_rss;
	r->rss_bytes = ps.rss_bytes;
	if (ps.have_rss) {
		m->rss_sum += ps.rss_bytes;
		m->rss_samples++;
	}
	r->have_io = ps.have_io && m->last.have_io;
	if (r->have_io) {
		r->write_bytes = ps.wchar - m->last.wchar;
		m->wchar += r->write_bytes;
	} else {
		m->have_io = false;
	}
	m->last = ps;
}

void procmon_print_header(FILE *f)
{
	fprintf(f,
		"write (b) is the receiver's wchar (/proc/PID/io): bytes passed to write/send on any fd\n");
	fprintf(f,
		" records   write (b)     write   secs |  %% cpu  user (ms)  sys (ms)  Mem (bytes)      Mem\n");
	fprintf(f,
		"--------  ----------  --------  ----- + ------  ---------  --------  -----------  -------\n");
}

void procmon_print_row(FILE *f, const struct procmon_row *r)
{
	char wb[32] = "-", wh[32] = "-", mb[32] = "-", mh[32] = "-";

	if (!r->alive) {
		fprintf(f, "%8" PRIu64 "  %10s  %8s  %5.2f | (process gone)\n", r->records, "-",
			"-", r->secs);
		return;
	}
	if (r->have_io) {
		snprintf(wb, sizeof(wb), "%" PRIu64, r->write_bytes);
		human_bytes(wh, sizeof(wh), r->write_bytes);
	}
	if (r->have_rss) {
		snprintf(mb, sizeof(mb), "%" PRIu64, r->rss_bytes);
		human_bytes(mh, sizeof(mh), r->rss_bytes);
	}
	fprintf(f,
		"%8" PRIu64 "  %10s  %8s  %5.2f | %6.2f  %9" PRIu64 "  %8" PRIu64 "  %11s  %7s\n",
		r->records, wb, wh, r->secs, r->cpu_pct, r->user_ms, r->sys_ms, mb, mh);
}

void procmon_print_summary(FILE *f, const struct procmon *m)
{
	char buf[32];
	double e = m->elapsed;

	fprintf(f, "\n- Summary\n");
	fprintf(f, "  - Process     : %s\n", m->comm);
	fprintf(f, "  - PID         : %d\n", (int)m->pid);
	fprintf(f, "  - Elapsed Time: %.2f seconds%s\n", e, m->alive ? "" : " (process exited)");
	if (m->rss_samples) {
		human_bytes(buf, sizeof(buf), m->rss_sum / m->rss_samples);
		fprintf(f, "  - Avg Memory  : %s\n", buf);
	} else {
		fprintf(f, "  - Avg Memory  : -\n");
	}
	if (e > 0) {
		fprintf(f, "  - Avg CPU     : %.2f%%\n", (double)m->cpu_ticks / m->hz / e * 100);
		if (m->have_io) {
			human_bytes(buf, sizeof(buf), m->wchar / e);
			fprintf(f, "  - Avg Rate    : %s/sec\n", buf);
		} else {
			fprintf(f, "  - Avg Rate    : -\n");
		}
		fprintf(f, "  - Avg Records : %.2f/sec\n", m->records / e);
	}
}

void procmon_json_row(struct json_writer *w, const char *key, const struct procmon_row *r)
{
	jw_object_begin(w, key);
	jw_bool(w, "alive", r->alive);
	if (r->alive) {
		jw_double(w, "cpu_pct", r->cpu_pct, 2);
		jw_u64(w, "user_ms", r->user_ms);
		jw_u64(w, "sys_ms", r->sys_ms);
		if (r->have_rss)
			jw_u64(w, "rss_bytes", r->rss_bytes);
		if (r->have_io)
			jw_u64(w, "wchar_bytes", r->write_bytes);
	}
	jw_object_end(w);
}

void procmon_json_summary(struct json_writer *w, const char *key, const struct procmon *m)
{
	double e = m->elapsed;

	jw_object_begin(w, key);
	jw_string(w, "process", m->comm);
	jw_i64(w, "pid", m->pid);
	jw_double(w, "elapsed_s", e, 3);
	jw_bool(w, "exited", !m->alive);
	if (m->rss_samples)
		jw_u64(w, "avg_rss_bytes", m->rss_sum / m->rss_samples);
	if (e > 0) {
		jw_double(w, "avg_cpu_pct", (double)m->cpu_ticks / m->hz / e * 100, 2);
		if (m->have_io)
			jw_double(w, "avg_wchar_bytes_per_s", m->wchar / e, 1);
		jw_double(w, "avg_records_per_s", m->records / e, 2);
	}
	jw_object_end(w);
}
