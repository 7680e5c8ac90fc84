// SPDX-License-Identifier: MIT
/*
 * udpbalance: put syslogrx's SK_REUSEPORT balancer in front of another
 * receiver's SO_REUSEPORT group (syslog-ng, rsyslog, anything), without
 * restarting it.
 *
 * The group's sockets are found by inode (/proc/net/udp{,6} rows on the port,
 * /proc/PID/fd links), copied into this process with pidfd_getfd, placed in
 * the REUSEPORT_SOCKARRAY of src/net/balancer.c (slot i = socket i, verified by
 * cookie), and the program is attached to the group through one of them. The
 * copies are closed right after: a copy kept open would keep a socket alive
 * after its owner closed it. Detaching at exit borrows a socket again.
 *
 * The group must be taken whole or not at all: a socket left out of the map
 * would get no datagram from the program, a socket of another process or
 * another group could not be selected (the kernel falls back to its hash).
 *
 * Without CAP_BPF (or with --cbpf), random spreading needs no capability at
 * all, only the receiver's uid: a socket of ours joins the group (it takes the
 * last index, N), a classic BPF program for N sockets is attached through it
 * (net/cbpf_balancer.h), and it leaves again (the last leaving moves nobody).
 * The program stays with the group; no counters, nothing to detach at exit.
 */
#include <argp.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "common/clock.h"
#include "common/signals.h"
#include "common/array.h"
#include "net/balancer.h"
#include "net/cbpf_balancer.h"
#include "common/sockaddr.h"
#include "net/socket_group.h"
#include "common/json_writer.h"
#include "common/cli.h"
#include "common/log.h"
#include "net/libbpf_log.h"
#include "common/parse_num.h"
#include "net/proc_net.h"
#include "net/sockinfo.h"

#define COMM_LEN 64
#define MAX_FOREIGN 16 /* other processes named in a refusal */

static struct env {
	int pid;
	uint16_t port;
	enum balance_policy policy;
	bool policy_set;
	bool keep;
	bool cbpf;
} env; /* --interval, --count, --json, -v: cli_report */

const char *argp_program_version = "udpbalance 0.1";
static const char doc[] =
	"Spread the datagrams of another process's SO_REUSEPORT group evenly over its\n"
	"sockets with syslogrx's SK_REUSEPORT program (per datagram, not per flow).\n"
	"\n"
	"The whole group on the port must belong to PID, in one family and address.\n"
	"Needs CAP_BPF (load the program) and CAP_SYS_PTRACE (pidfd_getfd on PID);\n"
	"leastloaded also CAP_PERFMON (two tp_btf programs track each socket's queue).\n"
	"Steered counts are cumulative since udpbalance attached. On exit (SIGINT,\n"
	"SIGTERM, or when PID exits) the program is detached: the kernel's 4-tuple\n"
	"hash is back. With --keep it stays attached for as long as the group lives\n"
	"(not leastloaded: its queue tracking ends with udpbalance).\n"
	"\n"
	"Without CAP_BPF (or with --cbpf): random with no capability at all, as the\n"
	"receiver's own uid: a socket joins the group, attaches a classic BPF program\n"
	"for the group's N sockets, and leaves; the program stays with the group\n"
	"(no steered counts; while the receiver keeps its N sockets).\n"
	"\n"
	"USAGE: udpbalance --pid PID --port P --policy POLICY\n"
	"                  [--interval S]\n"
	"                  [--count K] [--json] [--keep] [-v]\n"
	"       udpbalance --pid PID --port P --cbpf [--json] [-v]\n"
	"\n"
	"EXAMPLES:\n"
	"    udpbalance --pid $(pidof syslog-ng) --port 514 --policy random\n"
	"    udpbalance -p 1234 -P 5514 --policy roundrobin --json --interval 5\n"
	"    udpbalance -p 1234 -P 5514 --policy leastloaded   # away from a socket that backs up\n"
	"    udpbalance -p 1234 -P 5514 --policy random --keep --count 1   # attach and leave\n"
	"    udpbalance -p $(pidof syslog-ng) -P 5514 --cbpf   # no capability, same uid\n";

enum { OPT_POLICY = 256, OPT_KEEP, OPT_CBPF };

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Process owning the SO_REUSEPORT group (required)", 0 },
	{ "port", 'P', "PORT", 0, "Local UDP port of the group (required)", 0 },
	/* --help names the policies first (help_filter) */
	{ "policy", OPT_POLICY, "POLICY", 0, "(required)", 0 },
	{ "keep", OPT_KEEP, NULL, 0, "Leave the program attached at exit", 0 },
	{ "cbpf", OPT_CBPF, NULL, 0,
	  "random by classic BPF: join, attach, leave; no capability (the receiver's uid)", 0 },
	{},
};

/* --help: the policies that load a program, from their table (bpf/balancer.h). */
static char *help_filter(int key, const char *text, void *input)
{
	char names[128], *out;

	(void)input;
	if (key != OPT_POLICY || asprintf(&out, "%s %s",
					  balance_policy_list(names, sizeof(names), " | ", " | ", 0,
							      BALANCE_F_NO_PROGRAM),
					  text) < 0)
		return (char *)text;
	return out;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		env.pid = cli_pid(arg);
		break;
	case 'P':
		env.port = cli_port(arg);
		break;
	case OPT_POLICY:
		if (balance_policy_from_name(arg, &env.policy) ||
		    (balance_policy_flags(env.policy) & BALANCE_F_NO_PROGRAM)) {
			char expect[160], names[64], none[32];

			snprintf(expect, sizeof(expect), "%s (%s is what detaching gives)",
				 BALANCE_POLICY_LIST(names, 0, BALANCE_F_NO_PROGRAM),
				 BALANCE_POLICY_LIST(none, BALANCE_F_NO_PROGRAM, 0));
			cli_bad_value("--policy", arg, expect);
		}
		env.policy_set = true;
		break;
	case OPT_KEEP:
		env.keep = true;
		break;
	case OPT_CBPF:
		env.cbpf = true;
		break;
	case ARGP_KEY_ARG:
		fprintf(stderr, "udpbalance: unexpected argument '%s'\n", arg);
		exit(2);
	case ARGP_KEY_END:
		if (env.cbpf && env.policy_set &&
		    !(balance_policy_flags(env.policy) & BALANCE_F_CLASSIC)) {
			fprintf(stderr,
				"udpbalance: --cbpf spreads at random: --policy %s needs "
				"eBPF (CAP_BPF)\n",
				balance_policy_name(env.policy));
			exit(2);
		}
		if (env.cbpf && !env.policy_set) {
			env.policy = BALANCE_RANDOM;
			env.policy_set = true;
		}
		if (!env.pid || !env.port || !env.policy_set) {
			fprintf(stderr, "udpbalance: --pid, --port and --policy (or --cbpf) are "
					"required\n");
			argp_usage(state);
		}
		/* Left attached, leastloaded would steer on queue sizes frozen
		 * when udpbalance's tracepoint programs went away. */
		if (env.keep && (balance_policy_flags(env.policy) & BALANCE_F_PRESSURE)) {
			fprintf(stderr,
				"udpbalance: --keep cannot be used with --policy %s: "
				"its queue tracking ends when udpbalance exits\n",
				balance_policy_name(env.policy));
			exit(2);
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- the group -------------------------------------------------------------- */

struct member {
	struct udp_sock_row row;
	uint64_t cookie;
};

struct group {
	struct member *m;
	size_t n, cap;
	/* Sockets on the port that are not env.pid's: reasons to refuse. */
	int foreign_pid[MAX_FOREIGN];
	char foreign_comm[MAX_FOREIGN][COMM_LEN];
	size_t nr_foreign;
	size_t nr_orphans; /* no process holds them (kernel sockets, closing) */
	int err;
};

static void note_foreign(struct group *g, uint64_t inode)
{
	char comm[COMM_LEN];
	int pid;

	if (!inode || proc_socket_owner(inode, &pid, comm, sizeof(comm))) {
		g->nr_orphans++;
		return;
	}
	for (size_t i = 0; i < g->nr_foreign; i++)
		if (g->foreign_pid[i] == pid)
			return;
	if (g->nr_foreign < MAX_FOREIGN) {
		g->foreign_pid[g->nr_foreign] = pid;
		snprintf(g->foreign_comm[g->nr_foreign], COMM_LEN, "%s", comm);
		g->nr_foreign++;
	}
}

static int add_row(const struct udp_sock_row *r, void *ctx)
{
	struct group *g = ctx;
	int fd;

	if (r->port != env.port)
		return 0;
	fd = r->inode ? proc_pid_socket_fd(env.pid, r->inode) : -ENOENT;
	if (fd == -ESRCH || fd == -EACCES || fd == -EPERM)
		return fd; /* env.pid cannot be read at all: stop here */
	if (fd < 0) {
		note_foreign(g, r->inode);
		return 0;
	}
	if (ARRAY_PUSH_ROOM(g->m, g->cap, g->n, 16))
		return -ENOMEM;
	g->m[g->n++] = (struct member){ .row = *r };
	return 0;
}

static int cmp_member(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	return x->row.inode < y->row.inode ? -1 : x->row.inode > y->row.inode;
}

/* Sorted members without repeats (by inode); the new count. */
static size_t dedup_members(struct member *m, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!k || m[i].row.inode != m[k - 1].row.inode)
			m[k++] = m[i];
	return k;
}

/* Every socket on the port, split into env.pid's and the others'. */
static int group_scan(struct group *g)
{
	int err;

	g->n = g->nr_foreign = g->nr_orphans = 0;
	err = proc_net_udp_for_each(add_row, g);
	if (err == -ESRCH) {
		pr_warn("process %d does not exist\n", env.pid);
		return err;
	}
	if (err == -EACCES || err == -EPERM) {
		pr_warn("cannot read /proc/%d/fd: %s (%s)\n", env.pid, strerror(-err),
			env.cbpf ? "classic BPF needs no capability but the receiver's uid: run "
				   "as that user" :
				   "needs CAP_SYS_PTRACE, or root");
		return err;
	}
	if (err) {
		pr_warn("cannot read /proc/net/udp: %s\n", strerror(-err));
		return err;
	}
	array_sort(g->m, g->n, sizeof(g->m[0]), cmp_member);
	/* /proc/net/udp is read a page at a time: a socket another process
	 * binds or closes meanwhile moves the rows, and one of ours can come
	 * twice (the same socket in two slots: EBUSY). One each. */
	g->n = dedup_members(g->m, g->n);
	return 0;
}

/* Says why the group cannot be taken whole, or returns 0. */
static int group_check(const struct group *g)
{
	char comm[COMM_LEN] = "?";

	proc_pid_comm(env.pid, comm, sizeof(comm));
	if (g->nr_foreign) {
		fprintf(stderr,
			"udpbalance: refusing port %u: it also has sockets of other processes:",
			env.port);
		for (size_t i = 0; i < g->nr_foreign; i++)
			fprintf(stderr, "%s pid %d (%s)", i ? "," : "", g->foreign_pid[i],
				g->foreign_comm[i]);
		fprintf(stderr, "; the group must be taken whole, by one process (%d, %s)\n",
			env.pid, comm);
		return -EBUSY;
	}
	if (g->nr_orphans) {
		pr_warn("refusing port %u: %zu socket(s) on it belong to no process we can see "
			"(another PID namespace, or closing)\n",
			env.port, g->nr_orphans);
		return -EBUSY;
	}
	if (!g->n) {
		pr_warn("process %d (%s) has no UDP socket on port %u in this network namespace\n",
			env.pid, comm, env.port);
		return -ENOENT;
	}
	for (size_t i = 1; i < g->n; i++) {
		/*
		 * A reuseport group is one family and one local address: the
		 * kernel never groups an AF_INET socket with an AF_INET6 one. The
		 * sockarray would take both, but bpf_sk_select_reuseport() fails
		 * for a socket of another group (-EXDEV) or family
		 * (-EAFNOSUPPORT), so half the sockets would never be selected.
		 */
		if (g->m[i].row.family != g->m[0].row.family) {
			pr_warn("refusing port %u: process %d has both IPv4 (%s) and IPv6 (%s) sockets "
				"on it: two reuseport groups, and one program selects only within "
				"the group it is attached to\n",
				env.port, env.pid,
				g->m[0].row.family == AF_INET ? g->m[0].row.local :
								g->m[i].row.local,
				g->m[0].row.family == AF_INET ? g->m[i].row.local :
								g->m[0].row.local);
			return -EXDEV;
		}
		if (strcmp(g->m[i].row.local, g->m[0].row.local)) {
			pr_warn("refusing port %u: process %d has sockets on %s and on %s: "
				"two reuseport groups\n",
				env.port, env.pid, g->m[0].row.local, g->m[i].row.local);
			return -EXDEV;
		}
	}
	return 0;
}

static int borrow(uint64_t inode)
{
	int fd = proc_socket_borrow(env.pid, inode);

	if (fd == -EPERM || fd == -EACCES)
		pr_warn("pidfd_getfd on process %d: %s: needs CAP_SYS_PTRACE\n", env.pid,
			strerror(-fd));
	else if (fd < 0)
		pr_warn("cannot copy socket inode %llu from process %d: %s\n",
			(unsigned long long)inode, env.pid, strerror(-fd));
	return fd;
}

/* SO_REUSEPORT on every socket, and each one's cookie. */
static int check_socket(int fd, struct member *m)
{
	socklen_t len;
	int on = 0;

	len = sizeof(on);
	if (getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, &len))
		return -errno;
	if (!on) {
		pr_warn("refusing port %u: socket inode %llu (%s) of process %d has no "
			"SO_REUSEPORT: it is not in a reuseport group\n",
			env.port, (unsigned long long)m->row.inode, m->row.local, env.pid);
		return -EINVAL;
	}
	return sockinfo_cookie(fd, &m->cookie);
}

/* Borrows every socket, fills the map, verifies it, attaches through one. */

/*
 * A socket leaves a REUSEPORT_SOCKARRAY only when the map is freed, after an
 * RCU grace period: right after a previous udpbalance exited, the slot update
 * says EBUSY for a moment. Wait up to a second before calling it taken.
 */
static int set_socket_waiting(struct balancer *b, unsigned int idx, int fd)
{
	int err;

	for (int tries = 0; tries < 100; tries++) {
		struct timespec ts = { 0, 10 * 1000000L };

		err = balancer_set_socket(b, idx, fd);
		if (err != -EBUSY)
			return err;
		nanosleep(&ts, NULL);
	}
	return err;
}

static int take_group(struct balancer *b, struct group *g)
{
	uint64_t *cookies;
	int *fds, err = 0;
	size_t i, opened = 0;

	fds = calloc(g->n, sizeof(*fds));
	cookies = calloc(g->n, sizeof(*cookies));
	if (!fds || !cookies) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->n; i++, opened++) {
		fds[i] = borrow(g->m[i].row.inode);
		if (fds[i] < 0) {
			err = fds[i];
			goto out;
		}
		err = check_socket(fds[i], &g->m[i]);
		if (err) {
			if (err != -EINVAL)
				pr_warn("socket inode %llu: %s\n",
					(unsigned long long)g->m[i].row.inode, strerror(-err));
			opened++;
			goto out;
		}
		cookies[i] = g->m[i].cookie;
	}
	for (i = 0; i < g->n; i++) {
		err = set_socket_waiting(b, i, fds[i]);
		if (err) {
			pr_warn("cannot put socket inode %llu in slot %zu: %s%s\n",
				(unsigned long long)g->m[i].row.inode, i, strerror(-err),
				err == -EBUSY ? " (it is in another REUSEPORT_SOCKARRAY: another "
						"udpbalance, or the receiver's own eBPF program)" :
						"");
			goto out;
		}
	}
	err = balancer_verify(b, cookies, g->n);
	if (err)
		goto out;
	err = balancer_attach(b, fds[0]);
	if (err)
		pr_warn("cannot attach to the group of %s: %s\n", g->m[0].row.local,
			strerror(-err));
out:
	for (i = 0; fds && i < opened; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(cookies);
	return err;
}

/* Detaches through any socket of the group still there. */
static int release_group(const struct group *g)
{
	for (size_t i = 0; i < g->n; i++) {
		int fd = proc_socket_borrow(env.pid, g->m[i].row.inode);
		int err;

		if (fd < 0)
			continue;
		err = balancer_detach(fd);
		close(fd);
		if (err && err != -ENOENT) {
			pr_warn("cannot detach from %s: %s\n", g->m[i].row.local, strerror(-err));
			return err;
		}
		pr_info("detached: the kernel's hash is back on %s\n", g->m[i].row.local);
		return 0;
	}
	pr_info("the group's sockets are gone: nothing to detach\n");
	return 0;
}

/* ---- classic BPF: join, attach, leave ------------------------------------------- */

static int count_port_rows(const struct udp_sock_row *r, void *ctx)
{
	if (r->port == env.port)
		++*(size_t *)ctx;
	return 0;
}

/* What reached our socket in the moment between its bind and the program:
 * the kernel's hash may pick it as one of N + 1. Read and counted, so that
 * nothing is lost uncounted; the receiver never sees them. */
static void drain_joiner(int fd, uint64_t *received, uint64_t *drops)
{
	char buf[1];

	*received = 0;
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC) >= 0)
		++*received;
	if (sockinfo_meminfo(fd, drops, NULL))
		*drops = 0;
}

static int join_attach_leave(const struct group *g, const char *why)
{
	struct sockaddr_storage addr;
	uint64_t received = 0, drops = 0;
	size_t rows = 0;
	socklen_t len;
	int fd, one = 1, err = 0;

	if (parse_host_port(g->m[0].row.local, &addr, &len)) {
		pr_warn("cannot parse the group's address %s\n", g->m[0].row.local);
		return -EINVAL;
	}
	fd = socket(addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) {
		err = -errno;
		pr_warn("socket: %s\n", strerror(-err));
		goto out;
	}
	if (bind(fd, (struct sockaddr *)&addr, len)) {
		err = -errno;
		/* A reuseport group takes sockets of its own uid only. */
		pr_warn("joining the group on %s: %s%s\n", g->m[0].row.local, strerror(-err),
			err == -EADDRINUSE ? " (only a socket of the receiver's uid, "
					     "with SO_REUSEPORT, may join its group: run as "
					     "that user)" :
					     "");
		goto out;
	}
	/* The group must be the N we counted plus us, nobody else's. */
	err = proc_net_udp_for_each(count_port_rows, &rows);
	if (!err && rows != g->n + 1) {
		pr_warn("the group on %s changed while joining it (%zu sockets, expected %zu): "
			"nothing attached\n",
			g->m[0].row.local, rows, g->n + 1);
		err = -EAGAIN;
	}
	/* Ours is index N: a program for N sockets never picks it. */
	if (!err)
		err = cbpf_balancer_attach(fd, g->n);
	if (err) {
		if (err != -EAGAIN)
			pr_warn("attaching the classic BPF program: %s\n", strerror(-err));
		goto out;
	}
	/* After a grace period no lookup is still on the way to our socket. */
	if (socket_group_rcu_grace_period())
		usleep(200 * 1000);
	drain_joiner(fd, &received, &drops);
out:
	if (fd >= 0)
		close(fd); /* leaves the group: it was last, nobody moves */
	if (err)
		return err;
	if (cli_report.json) {
		struct json_writer w;

		jw_init(&w, stdout, false);
		jw_object_begin(&w, NULL);
		jw_string(&w, "policy", "random");
		jw_string(&w, "runs", "classic BPF");
		jw_string(&w, "why", why);
		jw_u64(&w, "pid", env.pid);
		jw_string(&w, "local", g->m[0].row.local);
		jw_u64(&w, "sockets", g->n);
		jw_u64(&w, "joining_socket_received", received);
		jw_u64(&w, "joining_socket_drops", drops);
		jw_object_end(&w);
		jw_finish(&w);
		fflush(stdout);
	}
	pr_info("attached: random by classic BPF (%s) over %zu sockets of pid %d on %s; it stays "
		"with the group while the receiver keeps %zu sockets\n",
		why, g->n, env.pid, g->m[0].row.local, g->n);
	pr_info("the joining socket took %llu datagram(s) and dropped %llu before the program "
		"ran: counted here, not delivered to the receiver\n",
		(unsigned long long)received, (unsigned long long)drops);
	return 0;
}

/* ---- reports ------------------------------------------------------------------ */

static int report(struct balancer *b, const struct group *g, uint64_t *steered, uint64_t *last,
		  bool final)
{
	uint64_t failures = 0, total = 0;
	double now;
	int err;

	err = balancer_read(b, steered, &failures);
	if (err) {
		pr_warn("cannot read the steered counters: %s\n", strerror(-err));
		return err;
	}
	now = clock_ns(CLOCK_REALTIME) / 1e9;
	if (cli_report.json) {
		struct json_writer w;

		jw_init(&w, stdout, false);
		jw_object_begin(&w, NULL);
		jw_double(&w, "time", now, 6);
		jw_array_begin(&w, "sockets");
		for (size_t i = 0; i < g->n; i++) {
			jw_object_begin(&w, NULL);
			jw_u64(&w, "inode", g->m[i].row.inode);
			jw_u64(&w, "cookie", g->m[i].cookie);
			jw_u64(&w, "steered", steered[i]);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_u64(&w, "selection_failures", failures);
		jw_bool(&w, "final", final);
		jw_object_end(&w);
		jw_finish(&w);
	} else {
		char when[16];
		time_t t = (time_t)now;
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
		for (size_t i = 0; i < g->n; i++)
			total += steered[i] - last[i];
		printf("%s  %s %zu sockets on %s%s: %llu steered this interval, "
		       "%llu selection failures in all\n",
		       when, balance_policy_name(env.policy), g->n, g->m[0].row.local,
		       final ? " (final)" : "", (unsigned long long)total,
		       (unsigned long long)failures);
		printf("  %-10s %-12s %14s %12s %7s\n", "INODE", "COOKIE", "STEERED", "INTERVAL",
		       "SHARE");
		for (size_t i = 0; i < g->n; i++) {
			uint64_t d = steered[i] - last[i];

			printf("  %-10llu %-12llu %14llu %12llu %6.1f%%\n",
			       (unsigned long long)g->m[i].row.inode,
			       (unsigned long long)g->m[i].cookie, (unsigned long long)steered[i],
			       (unsigned long long)d, total ? 100.0 * d / total : 0.0);
		}
	}
	fflush(stdout);
	memcpy(last, steered, g->n * sizeof(*last));
	return 0;
}

/* Waits one interval; returns 1 when env.pid has exited, 0 otherwise. */
static int wait_interval(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int ms = (int)(cli_report.interval * 1000 + 0.5);
	int r;

	r = poll(&pfd, 1, ms > 0 ? ms : 1);
	if (r < 0 && errno != EINTR)
		pr_warn("poll: %s\n", strerror(errno));
	return r > 0 && (pfd.revents & POLLIN);
}

int main(int argc, char **argv)
{
	static const struct argp_child children[] = { { &cli_report_argp, 0, NULL, 0 }, {} };
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = doc,
		.children = children,
		.help_filter = help_filter,
	};
	struct group g = {};
	struct balancer *b = NULL;
	uint64_t *steered = NULL, *last = NULL, reports = 0;
	int err, pidfd = -1;
	bool gone = false;
	char why[160] = "--cbpf";

	log_prog = "udpbalance";
	argp_err_exit_status = 2;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	if (cli_report.verbose)
		log_level = LOG_LEVEL_DEBUG;
	else
		log_level = LOG_LEVEL_INFO;
	log_setup_libbpf();

	if (signals_install(0))
		return 1;
	/* Opened first: the pid cannot be reused under us from here on. */
	pidfd = syscall(SYS_pidfd_open, env.pid, 0);
	if (pidfd < 0) {
		err = -errno;
		pr_warn("pidfd_open(%d): %s\n", env.pid, strerror(errno));
		goto cleanup;
	}
	if (!env.cbpf) {
		int probe = balancer_probe();

		if (probe && (balance_policy_flags(env.policy) & BALANCE_F_CLASSIC)) {
			snprintf(why, sizeof(why),
				 "no CAP_BPF: loading an SK_REUSEPORT program: %s",
				 strerror(-probe));
			env.cbpf = true;
		} else if (probe) {
			pr_warn("--policy %s needs eBPF: %s (loading an SK_REUSEPORT program: %s); "
				"random works without it (classic BPF)\n",
				balance_policy_name(env.policy), balance_policy_needs(env.policy),
				strerror(-probe));
			err = probe;
			goto cleanup;
		}
	}
	err = group_scan(&g);
	if (!err)
		err = group_check(&g);
	if (err)
		goto cleanup;

	if (env.cbpf) {
		err = join_attach_leave(&g, why);
		goto cleanup;
	}
	b = balancer_open(env.policy, g.n);
	if (!b) {
		err = -errno;
		if (err != -EPERM && err != -EACCES)
			pr_warn("cannot load the balancer for %zu sockets: %s\n", g.n,
				strerror(errno));
		goto cleanup;
	}
	err = take_group(b, &g);
	if (err)
		goto cleanup;
	pr_info("attached: %s over %zu sockets of pid %d on %s\n", balance_policy_name(env.policy),
		g.n, env.pid, g.m[0].row.local);

	steered = calloc(g.n, sizeof(*steered));
	last = calloc(g.n, sizeof(*last));
	if (!steered || !last) {
		err = -ENOMEM;
		goto detach;
	}
	while (!stop_requested) {
		if (wait_interval(pidfd)) {
			pr_info("process %d exited\n", env.pid);
			gone = true;
			break;
		}
		if (stop_requested)
			break;
		err = report(b, &g, steered, last, false);
		if (err)
			goto detach;
		if (cli_report.count && ++reports >= cli_report.count)
			break;
	}
	/* The last counts, read before detaching: what the program steered. */
	err = report(b, &g, steered, last, true);
detach:
	if (!env.keep && !gone) {
		int derr = release_group(&g);

		if (!err)
			err = derr;
	} else if (env.keep && !gone) {
		pr_info("left attached (--keep): the program lives as long as the group\n");
	}
cleanup:
	balancer_close(b);
	free(steered);
	free(last);
	free(g.m);
	if (pidfd >= 0)
		close(pidfd);
	return err ? 1 : 0;
}
