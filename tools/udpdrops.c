// SPDX-License-Identifier: MIT
/*
 * udpdrops: every UDP drop, per socket and reason, with the owning process.
 *
 * The counts come from bpf/tracer.bpf.c (tracepoints, per-CPU maps) and start
 * when udpdrops starts; the rows come from /proc/net/udp{,6} of this network
 * namespace, joined to the counters by socket cookie, which we read from a
 * copy of the owner's fd (pidfd_getfd) closed right after.
 */
#include <argp.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/signals.h"
#include "common/array.h"
#include "common/clock.h"
#include "common/json_writer.h"
#include "common/cli.h"
#include "common/log.h"
#include "net/http_metrics.h"
#include "net/libbpf_log.h"
#include "common/parse_num.h"
#include "common/sockaddr.h"
#include "net/proc_net.h"
#include "net/sender_view.h"
#include "net/sockinfo.h"
#include "net/tracer.h"

#define COMM_LEN 64

/* --interval, --count, --json, -v: cli_report. */
static struct env {
	uint16_t port;	     /* 0 = any */
	int pid;	     /* 0 = any */
	const char *metrics; /* --metrics ADDR:PORT, NULL = none */
	uint32_t senders;    /* --senders: per-sender LRU entries, 0 = off */
	unsigned int top;    /* --senders-top */
} env = { .senders = 4096, .top = 20 };

const char *argp_program_version = "udpdrops 0.1";
static const char doc[] =
	"Count UDP drops per socket and reason, with the process owning each socket.\n"
	"\n"
	"Drops are counted from the moment udpdrops starts, in this network namespace.\n"
	"Needs CAP_BPF and CAP_PERFMON (tracing) and CAP_SYS_PTRACE (socket cookies).\n"
	"\n"
	"Drops are also counted per sender (source address) over every socket\n"
	"counted, in a table of --senders entries; the worst --senders-top are shown.\n"
	"\n"
	"USAGE: udpdrops [--port P] [--pid PID] [--interval S] [--count K] [--json]\n"
	"                [--metrics ADDR:PORT] [--senders N] [--senders-top N] [-v]\n"
	"\n"
	"EXAMPLES:\n"
	"    udpdrops                    # every UDP socket, a table each second\n"
	"    udpdrops -p 514 -i 5        # sockets on port 514, every 5 seconds\n"
	"    udpdrops --pid 1234         # sockets of process 1234\n"
	"    udpdrops -p 514 -j -c 10    # 10 JSON lines, one per second\n"
	"    udpdrops -p 514 --senders-top 5   # and the 5 senders losing the most\n";

enum { OPT_PID = 256, OPT_METRICS, OPT_SENDERS, OPT_SENDERS_TOP };

static const struct argp_option opts[] = {
	{ "port", 'p', "PORT", 0, "Only sockets on this local port (and no-socket drops to it)",
	  0 },
	{ "pid", OPT_PID, "PID", 0, "Only sockets held by this process", 0 },
	{ "metrics", OPT_METRICS, "ADDR:PORT", 0,
	  "Serve the last report as Prometheus metrics at http://ADDR:PORT/metrics (a port alone: 127.0.0.1)",
	  0 },
	{ "senders", OPT_SENDERS, "N", 0,
	  "Count drops per source address in an LRU table of N senders; 0 = off (default 4096)",
	  0 },
	{ "senders-top", OPT_SENDERS_TOP, "N", 0,
	  "Senders shown, most drops first; the rest are one total (default 20)", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		env.port = cli_port(arg);
		break;
	case OPT_PID:
		env.pid = cli_pid(arg);
		break;
	case OPT_METRICS:
		env.metrics = arg;
		break;
	case OPT_SENDERS: {
		uint64_t v;

		if (parse_u64(arg, 0, 1U << 20, &v) || (v && v < 16))
			cli_bad_value("--senders", arg, "0 (off) or a number from 16 to 1048576");
		env.senders = v;
		break;
	}
	case OPT_SENDERS_TOP: {
		uint64_t v;

		if (parse_u64(arg, 1, 1000, &v))
			cli_bad_value("--senders-top", arg, "a number from 1 to 1000");
		env.top = v;
		break;
	}
	case ARGP_KEY_ARG:
		fprintf(stderr, "udpdrops: unexpected argument '%s'\n", arg);
		exit(2);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- sockets and their owners ------------------------------------------- */

/* What we learnt about a socket inode; kept while the socket exists. */
struct owner {
	uint64_t inode;
	int pid; /* 0: no owner found (or not env.pid's) */
	int fd;	 /* its fd number in pid */
	bool have_cookie;
	uint64_t cookie;
	char comm[COMM_LEN];
	bool seen; /* in this interval's rows */
};

static struct owner *owners;
static size_t nr_owners;

/* One row of a report; owner data copied, as `owners` may move. */
struct view {
	struct udp_sock_row row;
	int pid; /* 0: unknown */
	char comm[COMM_LEN];
	bool have_cookie;
	uint64_t cookie;
	int64_t rcvbuf; /* SO_RCVBUF, -1: unknown */
	bool traced;	/* the tracer has seen this socket */
	struct tracer_sock_stats stats;
};

struct no_socket_drop {
	uint16_t port;
	uint32_t reason;
	uint64_t count;
};

struct cookie_set {
	uint64_t *v; /* sorted ascending */
	size_t n, cap;
};

struct report {
	double time;
	struct cookie_set unmatched, unmatched_before; /* cookies with no row */
	struct view *v;
	size_t n, cap;
	struct view **by_cookie; /* views with a cookie, in cookie order */
	size_t nr_by_cookie;
	struct no_socket_drop *ns;
	size_t nr_ns, cap_ns;
	/* --senders: drops per source address over every socket counted */
	bool have_senders;
	struct sender_view senders; /* worst first */
	struct tracer_sender_totals sender_totals;
	uint64_t senders_evicted, sender_drops_evicted; /* entries, their drops */
};

static struct owner *owner_find(uint64_t inode)
{
	for (size_t i = 0; i < nr_owners; i++)
		if (owners[i].inode == inode)
			return &owners[i];
	return NULL;
}

/* Finds who holds the socket: env.pid if it does, else the first holder. */
static void owner_resolve(struct owner *o)
{
	int fd, pid;

	o->pid = 0;
	if (!o->inode)
		return; /* a kernel socket: no file, no owner */
	if (env.pid) {
		pid = env.pid;
	} else if (proc_socket_owner(o->inode, &pid, NULL, 0)) {
		return;
	}
	fd = proc_pid_socket_fd(pid, o->inode);
	if (fd < 0 || proc_pid_comm(pid, o->comm, sizeof(o->comm)))
		return;
	o->pid = pid;
	o->fd = fd;
}

/*
 * A short-lived copy of the socket's fd, finding the owner again (once) if
 * the cached one has let go of it. -1 if there is none. A socket found with
 * no owner is not looked for again: each look is a walk of all of /proc.
 */
static int owner_borrow(struct owner *o, bool resolved)
{
	int fd = -1;

	if (!o->pid)
		return -1;
	fd = proc_pid_fd_borrow(o->pid, o->fd, o->inode);
	if (fd < 0 && !resolved) {
		owner_resolve(o);
		if (o->pid)
			fd = proc_pid_fd_borrow(o->pid, o->fd, o->inode);
	}
	if (fd < 0 && o->pid)
		pr_debug("cannot borrow fd %d of pid %d: %s\n", o->fd, o->pid, strerror(-fd));
	return fd < 0 ? -1 : fd;
}

/* The cached owner of inode, or a new entry (resolved now, *resolved set). */
static struct owner *owner_get(uint64_t inode, bool *resolved)
{
	struct owner *o = inode ? owner_find(inode) : NULL;

	*resolved = false;
	if (o)
		return o;
	o = realloc(owners, (nr_owners + 1) * sizeof(*o));
	if (!o)
		return NULL;
	owners = o;
	o = &owners[nr_owners++];
	memset(o, 0, sizeof(*o));
	o->inode = inode;
	owner_resolve(o);
	*resolved = true;
	return o;
}

/* Forgets sockets that left /proc/net/udp: their inode number may be reused. */
static void owners_prune(void)
{
	size_t j = 0;

	for (size_t i = 0; i < nr_owners; i++) {
		if (owners[i].seen && owners[i].inode) {
			owners[i].seen = false;
			owners[j++] = owners[i];
		}
	}
	nr_owners = j;
}

static struct view *view_push(struct report *rep)
{
	if (ARRAY_PUSH_ROOM(rep->v, rep->cap, rep->n, 32))
		return NULL;
	memset(&rep->v[rep->n], 0, sizeof(rep->v[0]));
	return &rep->v[rep->n++];
}

/* Cookie (once per socket) and SO_RCVBUF (every report) of a borrowed fd. */
static void read_borrowed(int fd, struct owner *o, struct view *v)
{
	uint64_t cookie;
	int val;

	if (!o->have_cookie && !sockinfo_cookie(fd, &cookie)) {
		o->cookie = cookie;
		o->have_cookie = true;
	}
	if (!sockinfo_rcvbuf(fd, &val))
		v->rcvbuf = val;
}

static int add_row(const struct udp_sock_row *r, void *ctx)
{
	struct report *rep = ctx;
	struct owner *o;
	struct view *v;
	bool resolved;
	int fd;

	if (env.port && r->port != env.port)
		return 0;
	o = owner_get(r->inode, &resolved);
	if (!o)
		return -ENOMEM;
	o->seen = true;
	fd = owner_borrow(o, resolved);
	if (env.pid && !o->pid) {
		if (fd >= 0)
			close(fd);
		return 0; /* not a socket of env.pid */
	}
	v = view_push(rep);
	if (!v) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	v->row = *r;
	v->rcvbuf = -1;
	if (fd >= 0) {
		read_borrowed(fd, o, v);
		close(fd); /* a copy kept open would keep the socket alive */
	}
	v->pid = o->pid;
	snprintf(v->comm, sizeof(v->comm), "%s", o->comm);
	v->have_cookie = o->have_cookie;
	v->cookie = o->cookie;
	return 0;
}

static int cmp_view(const void *a, const void *b)
{
	const struct view *x = a, *y = b;
	int c;

	if (x->row.port != y->row.port)
		return x->row.port < y->row.port ? -1 : 1;
	if (x->row.family != y->row.family)
		return x->row.family < y->row.family ? -1 : 1;
	c = strcmp(x->row.local, y->row.local);
	if (c)
		return c;
	return x->row.inode < y->row.inode ? -1 : x->row.inode > y->row.inode;
}

static int cmp_by_cookie(const void *a, const void *b)
{
	uint64_t x = (*(struct view *const *)a)->cookie;
	uint64_t y = (*(struct view *const *)b)->cookie;

	return x < y ? -1 : x > y;
}

static int take_stats(uint64_t cookie, const struct tracer_sock_stats *s, void *ctx)
{
	struct report *rep = ctx;
	size_t lo = 0, hi = rep->nr_by_cookie;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct view *v = rep->by_cookie[mid];

		if (v->cookie == cookie) {
			v->stats = *s;
			v->traced = true;
			return 0;
		}
		if (v->cookie < cookie)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Not in our rows: gone, or not shown. Walked in order: stays sorted. */
	if (ARRAY_PUSH_ROOM(rep->unmatched.v, rep->unmatched.cap, rep->unmatched.n, 64))
		return -ENOMEM;
	rep->unmatched.v[rep->unmatched.n++] = cookie;
	return 0;
}

/*
 * Counters of sockets with no row in two reports running are dropped from the
 * maps, which would otherwise fill with closed sockets. Two, not one: a socket
 * created between our /proc read and our counter read has no row yet.
 */
static int forget_gone(struct tracer *t, struct report *rep)
{
	struct cookie_set *now = &rep->unmatched, *before = &rep->unmatched_before;
	struct cookie_set tmp;
	uint64_t *gone;
	size_t n = 0, kept = 0;
	int err;

	gone = malloc((now->n ? now->n : 1) * sizeof(*gone));
	if (!gone)
		return -ENOMEM;
	for (size_t i = 0; i < now->n; i++) {
		if (array_has_u64(before->v, before->n, now->v[i]))
			gone[n++] = now->v[i];
		else
			now->v[kept++] = now->v[i]; /* in place: kept <= i */
	}
	now->n = kept;
	err = tracer_forget_sockets(t, gone, n);
	if (err)
		pr_warn("cannot delete counters of closed sockets: %s\n", strerror(-err));
	free(gone);
	/* The first-time unmatched wait one more report. */
	tmp = *before;
	*before = *now;
	*now = tmp;
	now->n = 0;
	return 0; /* a failed delete costs map room only: keep reporting */
}

static int take_no_socket(uint16_t port, uint32_t reason, uint64_t count, void *ctx)
{
	struct report *rep = ctx;

	if (ARRAY_PUSH_ROOM(rep->ns, rep->cap_ns, rep->nr_ns, 16))
		return -ENOMEM;
	rep->ns[rep->nr_ns++] = (struct no_socket_drop){ port, reason, count };
	return 0;
}

static int cmp_no_socket(const void *a, const void *b)
{
	const struct no_socket_drop *x = a, *y = b;

	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->reason < y->reason ? -1 : x->reason > y->reason;
}

/* Per sender: the table, then its totals (read after, so at least as new),
 * from one read of the map. */
static int collect_senders(struct tracer *t, struct report *rep)
{
	const struct tracer_sender_totals *tt = &rep->sender_totals;
	int err;

	rep->senders.n = 0;
	rep->have_senders = false;
	if (!env.senders)
		return 0;
	err = sender_view_add_tracer(&rep->senders, t, &rep->sender_totals);
	if (err) {
		pr_warn("cannot read the per-sender drops: %s\n", strerror(-err));
		return err;
	}
	sender_view_finish(&rep->senders);
	rep->senders_evicted = tt->inserts > tt->entries ? tt->inserts - tt->entries : 0;
	rep->sender_drops_evicted = tt->attributed > tt->in_table ? tt->attributed - tt->in_table :
								    0;
	rep->have_senders = true;
	return 0;
}

/* Rows first, counters second: a socket's counts are then at least as new as
 * its row, and a socket created in between simply waits for the next report. */
static int collect(struct tracer *t, struct report *rep)
{
	int err;

	/* The report's time is when its reading began: everything before is in. */
	rep->time = clock_ns(CLOCK_REALTIME) / 1e9;
	rep->n = rep->nr_by_cookie = rep->nr_ns = rep->unmatched.n = 0;
	err = proc_net_udp_for_each(add_row, rep);
	if (err) {
		pr_warn("cannot read /proc/net/udp: %s\n", strerror(-err));
		return err;
	}
	owners_prune();
	array_sort(rep->v, rep->n, sizeof(rep->v[0]), cmp_view);

	free(rep->by_cookie);
	rep->by_cookie = calloc(rep->n ? rep->n : 1, sizeof(rep->by_cookie[0]));
	if (!rep->by_cookie)
		return -ENOMEM;
	for (size_t i = 0; i < rep->n; i++)
		if (rep->v[i].have_cookie)
			rep->by_cookie[rep->nr_by_cookie++] = &rep->v[i];
	array_sort(rep->by_cookie, rep->nr_by_cookie, sizeof(rep->by_cookie[0]), cmp_by_cookie);

	err = tracer_for_each_socket(t, take_stats, rep);
	if (!err)
		err = forget_gone(t, rep);
	if (!err)
		err = tracer_for_each_no_socket(t, take_no_socket, rep);
	if (err) {
		pr_warn("cannot read the drop counters: %s\n", strerror(-err));
		return err;
	}
	array_sort(rep->ns, rep->nr_ns, sizeof(rep->ns[0]), cmp_no_socket);
	return collect_senders(t, rep);
}

/* SO_RCVBUF of the socket, else the sk_rcvbuf the tracer saw, else unknown. */
static int64_t view_rcvbuf(const struct view *v)
{
	if (v->rcvbuf >= 0)
		return v->rcvbuf;
	if (v->traced && v->stats.rcvbuf)
		return (int64_t)v->stats.rcvbuf;
	return -1;
}

/* ---- output -------------------------------------------------------------- */

/* "senders": the top by drops, the rest, what the LRU evicted. The drops of
 * every socket counted = rows + rest + evicted.dropped + unattributed. */
static void json_senders(struct json_writer *w, struct tracer *t, const struct report *rep)
{
	size_t top = env.top < rep->senders.n ? env.top : rep->senders.n;
	const struct tracer_sender_totals *tt = &rep->sender_totals;
	char addr[INET6_ADDRSTRLEN];
	uint64_t rest_rx, rest_drop;

	if (!rep->have_senders) {
		jw_null(w, "senders");
		return;
	}
	jw_object_begin(w, "senders");
	jw_u64(w, "table_size", tt->max_entries);
	jw_u64(w, "tracked", rep->senders.n);
	jw_u64(w, "dropped", tt->attributed + tt->unattributed);
	jw_array_begin(w, "rows");
	for (size_t i = 0; i < top; i++) {
		const struct sender_row *row = &rep->senders.rows[i];

		format_addr16(row->addr, addr, sizeof(addr));
		jw_object_begin(w, NULL);
		jw_string(w, "address", addr);
		jw_u64(w, "dropped", row->dropped);
		jw_object_begin(w, "reasons");
		for (int k = 0; k < SENDER_REASONS; k++)
			if (row->reason_drops[k])
				jw_u64(w, tracer_reason_name(t, row->reason[k]),
				       row->reason_drops[k]);
		if (row->other_drops)
			jw_u64(w, "OTHER", row->other_drops);
		jw_object_end(w);
		jw_object_end(w);
	}
	jw_array_end(w);
	sender_view_sum(&rep->senders, top, &rest_rx, &rest_drop);
	jw_object_begin(w, "rest");
	jw_u64(w, "senders", rep->senders.n - top);
	jw_u64(w, "dropped", rest_drop);
	jw_object_end(w);
	jw_object_begin(w, "evicted");
	jw_u64(w, "entries", rep->senders_evicted);
	jw_u64(w, "dropped", rep->sender_drops_evicted);
	jw_object_end(w);
	jw_u64(w, "unattributed", tt->unattributed);
	jw_bool(w, "complete",
		!rep->senders_evicted && !rep->sender_drops_evicted && !tt->unattributed);
	jw_object_end(w);
}

static void print_json(struct tracer *t, const struct report *rep)
{
	struct json_writer w;
	int64_t rcvbuf;

	jw_init(&w, stdout, false);
	jw_object_begin(&w, NULL);
	jw_double(&w, "time", rep->time, 6);
	jw_array_begin(&w, "sockets");
	for (size_t i = 0; i < rep->n; i++) {
		const struct view *v = &rep->v[i];

		jw_object_begin(&w, NULL);
		if (v->pid) {
			jw_i64(&w, "pid", v->pid);
			jw_string(&w, "comm", v->comm);
		} else {
			jw_null(&w, "pid");
			jw_null(&w, "comm");
		}
		jw_string(&w, "local", v->row.local);
		jw_u64(&w, "inode", v->row.inode);
		if (v->have_cookie)
			jw_u64(&w, "cookie", v->cookie);
		else
			jw_null(&w, "cookie");
		rcvbuf = view_rcvbuf(v);
		if (rcvbuf >= 0)
			jw_i64(&w, "rcvbuf", rcvbuf);
		else
			jw_null(&w, "rcvbuf");
		jw_u64(&w, "queued", v->row.rx_queue);
		if (!v->have_cookie) {
			/* Without a cookie its counters are unknown, not zero. */
			jw_null(&w, "queue_hwm_bytes");
			jw_null(&w, "enqueue_failures");
			jw_null(&w, "drops");
			jw_object_end(&w);
			continue;
		}
		jw_u64(&w, "queue_hwm_bytes", v->stats.queue_hwm_bytes);
		jw_u64(&w, "enqueue_failures", v->stats.enqueue_failures);
		jw_object_begin(&w, "drops");
		jw_u64(&w, "total", v->stats.total);
		for (uint32_t r = 0; r < TRACER_MAX_REASONS; r++)
			if (v->stats.by_reason[r])
				jw_u64(&w, tracer_reason_name(t, r), v->stats.by_reason[r]);
		jw_object_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);

	jw_object_begin(&w, "no_socket");
	for (size_t i = 0; i < rep->nr_ns;) {
		uint16_t port = rep->ns[i].port;
		char key[8];

		snprintf(key, sizeof(key), "%u", port);
		jw_object_begin(&w, key);
		for (; i < rep->nr_ns && rep->ns[i].port == port; i++)
			jw_u64(&w, tracer_reason_name(t, rep->ns[i].reason), rep->ns[i].count);
		jw_object_end(&w);
	}
	jw_object_end(&w);
	jw_u64(&w, "map_full", tracer_map_full(t));
	json_senders(&w, t, rep);
	jw_object_end(&w);
	jw_finish(&w);
}

static void print_reasons(struct tracer *t, const struct tracer_sock_stats *s)
{
	bool first = true;

	for (uint32_t r = 0; r < TRACER_MAX_REASONS; r++) {
		if (!s->by_reason[r])
			continue;
		printf("%s%s:%llu", first ? "" : ",", tracer_reason_name(t, r),
		       (unsigned long long)s->by_reason[r]);
		first = false;
	}
	if (first)
		printf("-");
}

/* The worst senders under the sockets, then what is not in their rows. */
static void print_senders(const struct report *rep)
{
	size_t top = env.top < rep->senders.n ? env.top : rep->senders.n;
	const struct tracer_sender_totals *tt = &rep->sender_totals;
	char addr[INET6_ADDRSTRLEN];
	uint64_t rest_rx, rest_drop;

	if (!rep->have_senders || !rep->senders.n)
		return;
	printf("%-40s %9s\n", "SENDER", "DROPS");
	for (size_t i = 0; i < top; i++) {
		format_addr16(rep->senders.rows[i].addr, addr, sizeof(addr));
		printf("%-40s %9llu\n", addr, (unsigned long long)rep->senders.rows[i].dropped);
	}
	sender_view_sum(&rep->senders, top, &rest_rx, &rest_drop);
	if (top < rep->senders.n)
		printf("%zu other senders %*s %9llu\n", rep->senders.n - top, 24, "",
		       (unsigned long long)rest_drop);
	if (rep->senders_evicted || rep->sender_drops_evicted || tt->unattributed)
		printf("not in the rows: %llu drops of %llu evicted senders (table of %u), "
		       "%llu with no source address\n",
		       (unsigned long long)rep->sender_drops_evicted,
		       (unsigned long long)rep->senders_evicted, tt->max_entries,
		       (unsigned long long)tt->unattributed);
}

static void print_table(struct tracer *t, const struct report *rep)
{
	time_t now = (time_t)rep->time;
	char when[32], num[32];
	uint64_t lost;
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("%s  UDP sockets: %zu; DROPS counted since udpdrops started\n", when, rep->n);
	printf("%-7s %-15s %-30s %-10s %-8s %9s %9s %9s %9s  %s\n", "PID", "COMM", "LOCAL", "INODE",
	       "COOKIE", "RCVBUF", "QUEUED", "HWM", "DROPS", "REASONS");
	for (size_t i = 0; i < rep->n; i++) {
		const struct view *v = &rep->v[i];
		int64_t rcvbuf = view_rcvbuf(v);

		if (v->pid)
			printf("%-7d %-15.15s ", v->pid, v->comm);
		else
			printf("%-7s %-15s ", "-", "-");
		printf("%-30s %-10llu ", v->row.local, (unsigned long long)v->row.inode);
		if (v->have_cookie)
			snprintf(num, sizeof(num), "%llu", (unsigned long long)v->cookie);
		else
			snprintf(num, sizeof(num), "-");
		printf("%-8s ", num);
		if (rcvbuf >= 0)
			printf("%9lld ", (long long)rcvbuf);
		else
			printf("%9s ", "-");
		printf("%9llu ", (unsigned long long)v->row.rx_queue);
		if (!v->have_cookie) {
			printf("%9s %9s  -\n", "-", "-");
			continue;
		}
		printf("%9llu %9llu  ", (unsigned long long)v->stats.queue_hwm_bytes,
		       (unsigned long long)v->stats.total);
		print_reasons(t, &v->stats);
		printf("\n");
	}
	for (size_t i = 0; i < rep->nr_ns;) {
		uint16_t port = rep->ns[i].port;
		bool first = true;

		printf("no socket, port %u: ", port);
		for (; i < rep->nr_ns && rep->ns[i].port == port; i++) {
			printf("%s%s:%llu", first ? "" : ",",
			       tracer_reason_name(t, rep->ns[i].reason),
			       (unsigned long long)rep->ns[i].count);
			first = false;
		}
		printf("\n");
	}
	print_senders(rep);
	lost = tracer_map_full(t);
	if (lost)
		printf("WARNING: %llu counts lost, a counter map was full\n",
		       (unsigned long long)lost);
	printf("\n");
	fflush(stdout);
}

/* ---- --metrics ----------------------------------------------------------- */

/* The last report as exposition text: rendered by the main loop after each
 * report, copied out by a scrape on the HTTP thread. */
static struct {
	pthread_mutex_t lock;
	char *text;
	size_t len;
} published = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void socket_labels(struct prom_labels *l, const struct view *v)
{
	prom_labels_init(l);
	if (v->pid)
		prom_label_u64(l, "pid", v->pid);
	else
		prom_label(l, "pid", "");
	prom_label(l, "comm", v->comm);
	prom_label(l, "local", v->row.local);
	prom_label_u64(l, "inode", v->row.inode);
}

/* One family of one sample per socket with a cookie (the tracer's counts) or
 * per socket (what /proc and SO_RCVBUF say). */
static void per_socket(struct prom_text *p, const struct report *rep, const char *name,
		       enum prom_type type, const char *help, bool need_cookie,
		       uint64_t (*get)(const struct view *v, bool *have))
{
	struct prom_labels l;
	bool have;
	uint64_t val;

	prom_family(p, name, type, help);
	for (size_t i = 0; i < rep->n; i++) {
		const struct view *v = &rep->v[i];

		if (need_cookie && !v->have_cookie)
			continue; /* its counters are unknown, not zero */
		have = true;
		val = get(v, &have);
		if (!have)
			continue;
		socket_labels(&l, v);
		prom_u64(p, name, &l, val);
	}
}

static uint64_t get_queued(const struct view *v, bool *have)
{
	return v->row.rx_queue;
}

static uint64_t get_rcvbuf(const struct view *v, bool *have)
{
	int64_t r = view_rcvbuf(v);

	*have = r >= 0;
	return r;
}

static uint64_t get_hwm(const struct view *v, bool *have)
{
	return v->stats.queue_hwm_bytes;
}

static uint64_t get_enqueue_failures(const struct view *v, bool *have)
{
	return v->stats.enqueue_failures;
}

/* The top --senders-top only: a fixed number of series, whatever addresses
 * a sender forges; the rest, evicted and unattributed drops as one total. */
static void render_senders(const struct report *rep, struct prom_text *p)
{
	size_t top = env.top < rep->senders.n ? env.top : rep->senders.n;
	char addr[INET6_ADDRSTRLEN];
	uint64_t rest_rx, rest_drop;
	struct prom_labels l;

	prom_family(p, "udpdrops_sender_drops_total", PROM_COUNTER,
		    "Datagrams from a sender the kernel dropped, the top senders by drops.");
	for (size_t i = 0; i < top; i++) {
		format_addr16(rep->senders.rows[i].addr, addr, sizeof(addr));
		prom_labels_init(&l);
		prom_label(&l, "sender", addr);
		prom_u64(p, "udpdrops_sender_drops_total", &l, rep->senders.rows[i].dropped);
	}
	sender_view_sum(&rep->senders, top, &rest_rx, &rest_drop);
	prom_family(p, "udpdrops_senders_rest_drops_total", PROM_COUNTER,
		    "Drops of senders outside the top, evicted and unattributed included.");
	prom_u64(p, "udpdrops_senders_rest_drops_total", NULL,
		 rest_drop + rep->sender_drops_evicted + rep->sender_totals.unattributed);
	prom_family(p, "udpdrops_senders_evicted_total", PROM_COUNTER,
		    "Per-sender entries the LRU table gave to another sender.");
	prom_u64(p, "udpdrops_senders_evicted_total", NULL, rep->senders_evicted);
}

static void render_metrics(struct tracer *t, const struct report *rep, struct prom_text *p)
{
	struct prom_labels l;
	char port[8];

	prom_family(p, "udpdrops_build_info", PROM_GAUGE, "Always 1; the version as a label.");
	prom_labels_init(&l);
	prom_label(&l, "version", strrchr(argp_program_version, ' ') + 1);
	prom_u64(p, "udpdrops_build_info", &l, 1);
	prom_family(p, "udpdrops_report_timestamp_seconds", PROM_GAUGE,
		    "When the report these numbers come from began (Unix time).");
	prom_double(p, "udpdrops_report_timestamp_seconds", NULL, rep->time);
	per_socket(p, rep, "udpdrops_socket_queued_bytes", PROM_GAUGE,
		   "Bytes in the socket's receive queue (/proc/net/udp rx_queue).", false,
		   get_queued);
	per_socket(p, rep, "udpdrops_socket_rcvbuf_bytes", PROM_GAUGE,
		   "Effective receive buffer of the socket.", false, get_rcvbuf);
	per_socket(p, rep, "udpdrops_socket_queue_hwm_bytes", PROM_GAUGE,
		   "Most bytes queued on the socket, seen at enqueue, since udpdrops started.",
		   true, get_hwm);
	per_socket(p, rep, "udpdrops_socket_enqueue_failures_total", PROM_COUNTER,
		   "udp_fail_queue_rcv_skb events of the socket (a cross-check of the drops).",
		   true, get_enqueue_failures);
	prom_family(
		p, "udpdrops_socket_drops_total", PROM_COUNTER,
		"Datagrams the kernel dropped for the socket since udpdrops started, per reason.");
	for (size_t i = 0; i < rep->n; i++) {
		const struct view *v = &rep->v[i];

		if (!v->have_cookie)
			continue;
		for (uint32_t r = 0; r < TRACER_MAX_REASONS; r++) {
			if (!v->stats.by_reason[r])
				continue;
			socket_labels(&l, v);
			prom_label(&l, "reason", tracer_reason_name(t, r));
			prom_u64(p, "udpdrops_socket_drops_total", &l, v->stats.by_reason[r]);
		}
	}
	prom_family(
		p, "udpdrops_no_socket_drops_total", PROM_COUNTER,
		"UDP datagrams dropped with no socket to take them, per destination port and reason.");
	for (size_t i = 0; i < rep->nr_ns; i++) {
		prom_labels_init(&l);
		snprintf(port, sizeof(port), "%u", rep->ns[i].port);
		prom_label(&l, "port", port);
		prom_label(&l, "reason", tracer_reason_name(t, rep->ns[i].reason));
		prom_u64(p, "udpdrops_no_socket_drops_total", &l, rep->ns[i].count);
	}
	prom_family(p, "udpdrops_map_full_total", PROM_COUNTER,
		    "Drop counts lost because a tracer map was full.");
	prom_u64(p, "udpdrops_map_full_total", NULL, tracer_map_full(t));
	if (rep->have_senders)
		render_senders(rep, p);
}

static void publish_metrics(struct tracer *t, const struct report *rep)
{
	struct prom_text p;
	size_t len = 0;
	char *text, *old;

	prom_text_init(&p);
	render_metrics(t, rep, &p);
	text = prom_text_take(&p, &len);
	if (!text) {
		pr_warn("--metrics: the report could not be rendered: %s\n", strerror(-p.error));
		return;
	}
	pthread_mutex_lock(&published.lock);
	old = published.text;
	published.text = text;
	published.len = len;
	pthread_mutex_unlock(&published.lock);
	free(old);
}

static int fill_metrics(struct prom_text *p, void *ctx)
{
	pthread_mutex_lock(&published.lock);
	if (published.text)
		prom_raw(p, published.text, published.len);
	pthread_mutex_unlock(&published.lock);
	return 0;
}

/* ---- main ---------------------------------------------------------------- */

/* Sleeps `seconds`, waking early only to exit. */
static void sleep_interval(double seconds)
{
	struct timespec left = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (time_t)seconds) * 1e9),
	};

	while (!stop_requested && nanosleep(&left, &left) && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	static const struct argp_child children[] = { { &cli_report_argp, 0, NULL, 0 }, {} };
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = doc,
		.children = children,
	};
	struct tracer_opts topts = {};
	struct report rep = {};
	struct tracer *t = NULL;
	struct http_metrics *metrics = NULL;
	struct stat st;
	int err;

	log_prog = "udpdrops";
	argp_err_exit_status = 2;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	if (cli_report.verbose)
		log_level = LOG_LEVEL_DEBUG;
	log_setup_libbpf();

	/* /proc/net/udp shows this namespace only: count this one only. */
	if (stat("/proc/self/ns/net", &st)) {
		pr_warn("cannot stat /proc/self/ns/net: %s\n", strerror(errno));
		return 1;
	}
	topts.port = env.port;
	topts.netns_ino = st.st_ino;
	topts.senders = env.senders;

	if (signals_install(0))
		return 1;
	if (env.metrics) {
		metrics = http_metrics_open("--metrics", env.metrics);
		if (!metrics)
			return errno == EINVAL ? 2 : 1;
	}
	t = tracer_open(&topts);
	if (!t) {
		/* tracer_open has said why (and which capabilities on EPERM). */
		http_metrics_close(metrics);
		return 1;
	}
	if (metrics) {
		/* A first report at once: a scrape never finds nothing. */
		err = collect(t, &rep);
		if (!err) {
			publish_metrics(t, &rep);
			err = http_metrics_start(metrics, fill_metrics, NULL);
		}
		if (err)
			goto cleanup;
	}
	/* The tracepoints are attached: every drop from now on is counted. */
	fprintf(stderr, "udpdrops: ready, tracing UDP drops%s; Ctrl-C to end\n",
		cli_report.json ? "" : " (DROPS count from now)");
	if (metrics)
		fprintf(stderr, "udpdrops: metrics on http://%s/metrics\n",
			http_metrics_address(metrics));

	for (uint64_t n = 0; !stop_requested && (!cli_report.count || n < cli_report.count); n++) {
		sleep_interval(cli_report.interval);
		if (stop_requested)
			break;
		err = collect(t, &rep);
		if (err)
			goto cleanup;
		if (metrics)
			publish_metrics(t, &rep);
		if (cli_report.json)
			print_json(t, &rep);
		else
			print_table(t, &rep);
	}
	err = 0;
cleanup:
	http_metrics_close(metrics); /* stops the HTTP thread before the text it copies goes */
	free(published.text);
	tracer_close(t);
	free(rep.v);
	free(rep.by_cookie);
	free(rep.ns);
	sender_view_free(&rep.senders);
	free(rep.unmatched.v);
	free(rep.unmatched_before.v);
	free(owners);
	return err ? 1 : 0;
}
