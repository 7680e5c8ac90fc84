// SPDX-License-Identifier: MIT
/*
 * sysloggen: paced UDP syslog sender whose every message carries a run id, a
 * flow id and a sequence number (syslog/msgfmt.h), so a receiver can close
 * the books on each one (syslog/seqtrack.h). Optionally monitors the
 * receiver's process like Fluent Bit's performance tools.
 */
#include <argp.h>
#include <errno.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "common/signals.h"
#include "common/clock.h"
#include "common/json_writer.h"
#include "common/cli.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "syslog/msgfmt.h"
#include "gen/pacer.h"
#include "common/parse_num.h"
#include "gen/procmon.h"

#define SOURCES_MAX 4096
#define SLOT_MEM_MAX (1ULL << 30)

enum { OPT_PRI = 1000, OPT_HOST, OPT_SPIN, OPT_END_MARKERS, OPT_END_PAUSE };

static struct env {
	struct sockaddr_storage dst;
	socklen_t dst_len;
	const char *target;
	uint64_t rate;
	double duration;
	uint64_t count;
	bool rate_set, duration_set, count_set;
	uint64_t size;
	enum msgfmt_format format;
	uint32_t sources, threads;
	const char *profile;
	pid_t pid;
	bool json;
	char run_id[MSGFMT_RUN_MAX + 1];
	unsigned pri;
	char host[MSGFMT_HOST_MAX + 1];
	uint64_t spin_ns;
	uint32_t end_markers;  /* copies of each flow's end marker */
	uint64_t end_pause_ns; /* before each copy */
} env = {
	.size = 256,
	.format = MSGFMT_RFC3164,
	.sources = 1,
	.threads = 1,
	.pri = 13,
	.spin_ns = 20000,
	.end_markers = 3,
	.end_pause_ns = 50000000,
};

/* The plan every sender thread follows. */
static struct pace_seg segs[PACE_SEGS_MAX];
static uint64_t seg_off_ns[PACE_SEGS_MAX];
static int nsegs;
static uint64_t timeline_ns; /* sum of paced segments' lengths */
static uint64_t planned;     /* PACE_UNLIMITED for rate 0 + duration */
static uint64_t start_ns;

struct flow {
	uint32_t id;
	int fd;
	uint16_t src_port;
	struct msgfmt_params fmt;
	struct msgfmt_slot slots[PACE_BATCH_MAX];
	char *bufs;
	uint64_t next_seq;
	uint64_t quota; /* left in the current segment */
	uint64_t sent;
	uint64_t end_sent; /* end marker copies sent */
};

struct sender {
	pthread_t tid;
	uint32_t idx;
	struct flow **flows;
	uint32_t nflows, rr;
	struct mmsghdr msgs[PACE_BATCH_MAX];
	struct iovec iov[PACE_BATCH_MAX];
	_Atomic uint64_t sent __attribute__((aligned(64)));
	_Atomic uint64_t failed;
	_Atomic uint64_t lag; /* messages due and not yet sent */
	_Atomic bool done;
	uint64_t done_ns;
	uint64_t err_nobufs, err_connrefused, err_again, err_other;
	int fatal; /* negative errno */
};

static struct flow *flows;
static struct sender *senders;

const char *argp_program_version = "sysloggen 0.1";
static const char doc[] =
	"Paced UDP syslog sender with per-flow sequence numbers.\n"
	"\n"
	"USAGE: sysloggen --target HOST:PORT (--duration S | --count N | --profile P) [OPTION...]\n"
	"\n"
	"EXAMPLES:\n"
	"    sysloggen --target 127.0.0.1:5514 --rate 9000 --duration 3\n"
	"    sysloggen --target [::1]:5514 --rate 0 --count 1000000 --sources 4 --threads 2\n"
	"    sysloggen --target 127.0.0.1:5514 --profile 150000x30,0x10 --pid $(pidof syslogrx)\n"
	"    sysloggen --target 127.0.0.1:5514 --rate 50000 --duration 10 --json --format rfc5424\n";

static const struct argp_option opts[] = {
	{ "target", 't', "HOST:PORT", 0, "Destination: IPv4 a.b.c.d:port or [IPv6]:port", 0 },
	{ "rate", 'r', "MSGS_PER_S", 0,
	  "Messages per second over all flows (0 = as fast as possible)", 0 },
	{ "duration", 'd', "S", 0, "Seconds to send; with --rate sends exactly rate x S messages",
	  0 },
	{ "count", 'n', "N", 0, "Messages to send (exactly)", 0 },
	{ "size", 's', "BYTES", 0, "Exact datagram size (default 256)", 0 },
	{ "format", 'f', "FMT", 0, "rfc3164 (default) or rfc5424", 0 },
	{ "sources", 'S', "K", 0, "Source sockets (flows), each its own source port (default 1)",
	  0 },
	{ "threads", 'T', "T", 0, "Sender threads; flows are split across them (default 1)", 0 },
	{ "profile", 'P', "RATExSECS,...", 0, "Bursts, e.g. 150000x30,0x10 (rate 0 = silent)", 0 },
	{ "pid", 'p', "PID", 0, "Monitor this receiver process once a second", 0 },
	{ "json", 'j', NULL, 0, "JSON rows and summary on stdout, one object per line", 0 },
	{ "run-id", 'R', "ID", 0, "Run id in every message ([A-Za-z0-9._:-], <= 32)", 0 },
	{ "pri", OPT_PRI, "PRI", 0, "Syslog PRI value 0..191 (default 13, user.notice)", 0 },
	{ "host", OPT_HOST, "NAME", 0, "HOSTNAME field (default: gethostname)", 0 },
	{ "spin-us", OPT_SPIN, "US", 0, "Spin this long before each due time (default 20)", 0 },
	{ "end-markers", OPT_END_MARKERS, "K", 0,
	  "Copies of each flow's end marker (the count it sent), 0 = none (default 3)", 0 },
	{ "end-pause-ms", OPT_END_PAUSE, "MS", 0, "Pause before each end marker copy (default 50)",
	  0 },
	{ "verbose", 'v', NULL, 0, "Debug output", 0 },
	{},
};

/* HOST:PORT or [V6]:PORT, a port other than 0. */
static int parse_target(const char *s)
{
	if (parse_host_port(s, &env.dst, &env.dst_len) || !sockaddr_port(&env.dst))
		return -EINVAL;
	return 0;
}

static struct msgfmt_params fmt_params(uint32_t flow)
{
	return (struct msgfmt_params){
		.format = env.format,
		.pri = env.pri,
		.host = env.host,
		.app = "sysloggen",
		.pid = getpid(),
		.run = env.run_id,
		.flow = flow,
		.size = env.size,
	};
}

/* Turns the flags into segments; names the flag that does not fit. */
static void build_plan(struct argp_state *state)
{
	struct msgfmt_params p;
	uint64_t max_seq, min, max_size;
	int i;

	if (!env.target)
		argp_error(state, "--target is required");
	if (env.profile) {
		if (env.rate_set || env.duration_set || env.count_set)
			argp_error(
				state,
				"--profile: cannot be combined with --rate, --duration or --count");
		nsegs = pace_parse_profile(env.profile, segs, PACE_SEGS_MAX);
		if (nsegs < 0)
			argp_error(state, "--profile: invalid value '%s' (want RATExSECS,...)",
				   env.profile);
	} else {
		if (env.duration_set == env.count_set)
			argp_error(
				state,
				"--duration: give exactly one of --duration, --count or --profile");
		nsegs = 1;
		segs[0].rate = env.rate;
		segs[0].paced = env.rate > 0;
		if (env.duration_set) {
			segs[0].dur_ns = llround(env.duration * NSEC_PER_SEC);
			segs[0].count = env.rate ? (uint64_t)llround(env.rate * env.duration) :
						   PACE_UNLIMITED;
		} else {
			segs[0].count = env.count;
			segs[0].dur_ns = env.rate ? (uint64_t)((unsigned __int128)env.count *
							       NSEC_PER_SEC / env.rate) :
						    0;
		}
	}
	planned = 0;
	timeline_ns = 0;
	for (i = 0; i < nsegs; i++) {
		seg_off_ns[i] = timeline_ns;
		timeline_ns += segs[i].dur_ns;
		if (segs[i].count == PACE_UNLIMITED)
			planned = PACE_UNLIMITED;
		else if (planned != PACE_UNLIMITED)
			planned += segs[i].count;
	}
	if (env.threads > env.sources)
		argp_error(state, "--threads: %u threads need at least %u --sources", env.threads,
			   env.threads);
	if (!env.run_id[0])
		snprintf(env.run_id, sizeof(env.run_id), "%lx-%x", (unsigned long)time(NULL),
			 (unsigned)getpid());
	if (!env.host[0]) {
		if (gethostname(env.host, sizeof(env.host) - 1) ||
		    !msgfmt_token_valid(env.host, MSGFMT_HOST_MAX))
			strcpy(env.host, "-");
	}
	/* the widest number any flow can reach decides the smallest size */
	max_seq = planned == PACE_UNLIMITED ? UINT64_MAX : pace_split(planned, env.sources, 0);
	max_seq = max_seq ? max_seq - 1 : 0;
	p = fmt_params(env.sources - 1);
	min = msgfmt_min_size(&p, max_seq);
	if (env.end_markers && msgfmt_end_min_size(&p, max_seq + 1, env.end_markers) > min)
		min = msgfmt_end_min_size(&p, max_seq + 1, env.end_markers);
	max_size = env.dst.ss_family == AF_INET6 ? 65527 : 65507;
	if (env.size < min)
		argp_error(state,
			   "--size: %" PRIu64
			   " is too small for the header and marker, the minimum is %" PRIu64,
			   env.size, min);
	if (env.size > max_size)
		argp_error(state, "--size: %" PRIu64 " is above the UDP maximum of %" PRIu64,
			   env.size, max_size);
	if ((uint64_t)env.sources * PACE_BATCH_MAX * env.size > SLOT_MEM_MAX)
		argp_error(state,
			   "--sources: %u sources x %d buffers x %" PRIu64 " B is over 1 GiB",
			   env.sources, PACE_BATCH_MAX, env.size);
	if (env.pid && kill(env.pid, 0) && errno == ESRCH)
		argp_error(state, "--pid: no process %d", (int)env.pid);
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	uint64_t v;
	int err = 0;

	switch (key) {
	case 't':
		env.target = arg;
		if (parse_target(arg))
			argp_error(state,
				   "--target: invalid value '%s' (want a.b.c.d:port or [v6]:port)",
				   arg);
		break;
	case 'r':
		err = parse_u64(arg, 0, 100000000, &env.rate);
		env.rate_set = true;
		break;
	case 'd':
		err = parse_seconds(arg, 0.001, 86400 * 365, &env.duration);
		env.duration_set = true;
		break;
	case 'n':
		err = parse_u64(arg, 1, UINT64_MAX - 1, &env.count);
		env.count_set = true;
		break;
	case 's':
		err = parse_size(arg, 1, 65527, &env.size);
		break;
	case 'f':
		if (!strcmp(arg, "rfc3164"))
			env.format = MSGFMT_RFC3164;
		else if (!strcmp(arg, "rfc5424"))
			env.format = MSGFMT_RFC5424;
		else
			err = -EINVAL;
		break;
	case 'S':
		err = parse_u64(arg, 1, SOURCES_MAX, &v);
		env.sources = v;
		break;
	case 'T':
		err = parse_u64(arg, 1, 256, &v);
		env.threads = v;
		break;
	case 'P':
		env.profile = arg;
		break;
	case 'p':
		err = parse_u64(arg, 1, INT32_MAX, &v);
		env.pid = v;
		break;
	case 'j':
		env.json = true;
		break;
	case 'R':
		if (!msgfmt_run_valid(arg))
			argp_error(state, "--run-id: invalid value '%s' (1..32 of [A-Za-z0-9._:-])",
				   arg);
		strcpy(env.run_id, arg);
		break;
	case OPT_PRI:
		err = parse_u64(arg, 0, 191, &v);
		env.pri = v;
		break;
	case OPT_HOST:
		if (!msgfmt_token_valid(arg, MSGFMT_HOST_MAX))
			argp_error(state, "--host: invalid value '%s' (printable, no spaces)", arg);
		strcpy(env.host, arg);
		break;
	case OPT_SPIN:
		err = parse_u64(arg, 0, 1000000, &v);
		env.spin_ns = v * 1000;
		break;
	case OPT_END_MARKERS:
		err = parse_u64(arg, 0, 100, &v);
		env.end_markers = v;
		break;
	case OPT_END_PAUSE:
		err = parse_u64(arg, 0, 10000, &v);
		env.end_pause_ns = v * 1000000;
		break;
	case 'v':
		log_level = LOG_LEVEL_DEBUG;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		build_plan(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	if (err)
		argp_error(state, "--%s: invalid value '%s'", cli_option_name(opts, key), arg);
	return 0;
}

/* Sleeps to shortly before due, then spins: sleep wake-ups are tens of us
 * late, the spin is not. Sleeps in slices so a signal ends a long silence. */
static void wait_until(uint64_t due)
{
	struct timespec ts;
	uint64_t now = clock_ns(CLOCK_MONOTONIC), wake;

	while (!stop_requested && now + env.spin_ns < due) {
		wake = due - env.spin_ns;
		if (wake > now + NSEC_PER_SEC / 10)
			wake = now + NSEC_PER_SEC / 10;
		ts = ns_to_timespec(wake);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); /* EINTR: re-check */
		now = clock_ns(CLOCK_MONOTONIC);
	}
	while (!stop_requested && now < due) {
		__builtin_ia32_pause();
		now = clock_ns(CLOCK_MONOTONIC);
	}
}

static bool fatal_errno(int e)
{
	return e == EBADF || e == EFAULT || e == EINVAL || e == ENOTSOCK || e == EMSGSIZE ||
	       e == EAFNOSUPPORT || e == EDESTADDRREQ || e == EACCES;
}

/* Builds b datagrams of fl and sends them; a message that fails is counted
 * (by errno) and skipped, so its number shows as missing at the receiver. */
static int send_batch(struct sender *s, struct flow *fl, uint32_t b)
{
	int64_t sec = clock_ns(CLOCK_REALTIME_COARSE) / NSEC_PER_SEC;
	uint32_t i, off = 0;
	int r;

	for (i = 0; i < b; i++) {
		msgfmt_slot_fill(&fl->fmt, &fl->slots[i], fl->next_seq + i, sec);
		s->iov[i].iov_base = fl->slots[i].buf;
		s->iov[i].iov_len = env.size;
		s->msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &env.dst,
			.msg_namelen = env.dst_len,
			.msg_iov = &s->iov[i],
			.msg_iovlen = 1,
		};
	}
	while (off < b) {
		r = sendmmsg(fl->fd, s->msgs + off, b - off, 0);
		if (r > 0) {
			off += r;
			fl->sent += r;
			atomic_fetch_add_explicit(&s->sent, r, memory_order_relaxed);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && fatal_errno(errno))
			return -errno;
		if (r < 0 && errno == ENOBUFS)
			s->err_nobufs++;
		else if (r < 0 && errno == ECONNREFUSED)
			s->err_connrefused++;
		else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			s->err_again++;
		else
			s->err_other++;
		atomic_fetch_add_explicit(&s->failed, 1, memory_order_relaxed);
		off++;
	}
	fl->next_seq += b;
	return 0;
}

/* Next flow of this sender with messages left in the segment. */
static struct flow *next_flow(struct sender *s)
{
	for (uint32_t k = 0; k < s->nflows; k++) {
		struct flow *fl = s->flows[(s->rr + k) % s->nflows];

		if (fl->quota) {
			s->rr = (s->rr + k + 1) % s->nflows;
			return fl;
		}
	}
	return NULL;
}

static int run_segment(struct sender *s, const struct pace_seg *seg, uint64_t seg_start)
{
	uint64_t n = 0, j = 0, now, ndue;
	uint32_t batch, b, i;
	struct flow *fl;
	int err;

	for (i = 0; i < s->nflows; i++) {
		fl = s->flows[i];
		fl->quota = pace_split(seg->count, env.sources, fl->id);
		n = fl->quota == PACE_UNLIMITED || n == PACE_UNLIMITED ? PACE_UNLIMITED :
									 n + fl->quota;
	}
	batch = pace_batch(n, seg->dur_ns, seg->paced);
	if (!seg->paced)
		wait_until(seg_start);
	while (j < n && !stop_requested) {
		b = batch;
		if (seg->paced) {
			wait_until(seg_start + pace_due_ns(j, n, seg->dur_ns));
			now = clock_ns(CLOCK_MONOTONIC);
			ndue = now > seg_start ? pace_due_by(now - seg_start, n, seg->dur_ns) - j :
						 1;
			/* behind schedule: catch up in bigger batches, never ahead of it */
			if (ndue > b)
				b = ndue > PACE_BATCH_MAX ? PACE_BATCH_MAX : ndue;
			atomic_store_explicit(&s->lag, ndue > b ? ndue - b : 0,
					      memory_order_relaxed);
		} else if (n == PACE_UNLIMITED &&
			   clock_ns(CLOCK_MONOTONIC) >= seg_start + seg->dur_ns) {
			break;
		}
		if (n != PACE_UNLIMITED && b > n - j)
			b = n - j;
		fl = next_flow(s);
		if (!fl)
			break;
		if (fl->quota != PACE_UNLIMITED) {
			if (b > fl->quota)
				b = fl->quota;
			fl->quota -= b;
		}
		err = send_batch(s, fl, b);
		if (err)
			return err;
		j += b;
	}
	atomic_store_explicit(&s->lag, 0, memory_order_relaxed);
	return 0;
}

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	/* timer slack is 50 us by default: too coarse for a 4.5k/s schedule */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (int k = 0; k < nsegs && !stop_requested; k++) {
		s->fatal = run_segment(s, &segs[k], start_ns + seg_off_ns[k]);
		if (s->fatal) {
			stop_requested = 1;
			break;
		}
	}
	s->done_ns = clock_ns(CLOCK_MONOTONIC);
	atomic_store_explicit(&s->done, true, memory_order_release);
	return NULL;
}

static int open_flow(struct flow *fl, uint32_t id)
{
	struct sockaddr_storage local = { .ss_family = env.dst.ss_family };
	socklen_t len = env.dst_len;
	int sndbuf = 4 << 20;

	fl->id = id;
	fl->fmt = fmt_params(id);
	fl->fd = socket(env.dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fl->fd < 0)
		return -errno;
	/* unconnected on purpose: a connected socket gets ECONNREFUSED from
	 * ICMP errors; bound now so the source port is known up front */
	if (setsockopt(fl->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) &&
	    setsockopt(fl->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)))
		pr_debug("flow %u: SO_SNDBUF: %s\n", id, strerror(errno));
	if (bind(fl->fd, (struct sockaddr *)&local, len) ||
	    getsockname(fl->fd, (struct sockaddr *)&local, &len))
		return -errno;
	fl->src_port = ntohs(local.ss_family == AF_INET6 ?
				     ((struct sockaddr_in6 *)&local)->sin6_port :
				     ((struct sockaddr_in *)&local)->sin_port);
	fl->bufs = malloc((size_t)PACE_BATCH_MAX * env.size);
	if (!fl->bufs)
		return -ENOMEM;
	for (int i = 0; i < PACE_BATCH_MAX; i++)
		msgfmt_slot_init(&fl->slots[i], fl->bufs + (size_t)i * env.size);
	return 0;
}

/* Closes every flow's books: after the last message, K copies of an end
 * marker saying how many the flow sent, each after a pause so the receiver's
 * queue has room again (one drop cannot hide the count). Not part of the
 * paced run: neither in "sent" nor in the rate. */
static void send_end_markers(void)
{
	int64_t sec = clock_ns(CLOCK_REALTIME) / NSEC_PER_SEC;
	char *buf = malloc(env.size);
	struct timespec ts = ns_to_timespec(env.end_pause_ns);

	if (!buf) {
		pr_warn("end markers: out of memory\n");
		return;
	}
	for (uint32_t k = 0; k < env.end_markers; k++) {
		nanosleep(&ts, NULL);
		for (uint32_t i = 0; i < env.sources; i++) {
			struct flow *fl = &flows[i];

			if (msgfmt_render_end(&fl->fmt, buf, fl->sent, env.end_markers, sec)) {
				pr_warn("flow %u: end marker does not fit in %" PRIu64 " B\n", i,
					env.size);
				continue;
			}
			if (sendto(fl->fd, buf, env.size, 0, (struct sockaddr *)&env.dst,
				   env.dst_len) < 0)
				pr_warn("flow %u: end marker: %s\n", i, strerror(errno));
			else
				fl->end_sent++;
		}
	}
	free(buf);
}

/* ---- per-second report and summary (main thread) ---------------------------- */

struct report {
	struct json_writer jw;
	struct procmon mon;
	bool monitoring;
	uint64_t prev_total, prev_ns, end_ns;
	unsigned tick;
	uint64_t late_seconds;
};

static uint64_t total_sent(void)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < env.threads; i++)
		n += atomic_load_explicit(&senders[i].sent, memory_order_relaxed);
	return n;
}

static uint64_t total_lag(void)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < env.threads; i++)
		n += atomic_load_explicit(&senders[i].lag, memory_order_relaxed);
	return n;
}

/* True when every sender is done; *last gets the latest finish time. */
static bool all_done(uint64_t *last)
{
	*last = 0;
	for (uint32_t i = 0; i < env.threads; i++) {
		if (!atomic_load_explicit(&senders[i].done, memory_order_acquire))
			return false;
		if (senders[i].done_ns > *last)
			*last = senders[i].done_ns;
	}
	return true;
}

/* Target rate of the paced segment running at offset t, 0 if unpaced/silent. */
static uint64_t rate_at(uint64_t t)
{
	for (int k = 0; k < nsegs; k++)
		if (t >= seg_off_ns[k] && t < seg_off_ns[k] + segs[k].dur_ns)
			return segs[k].paced ? segs[k].rate : 0;
	return 0;
}

static void report_init(struct report *rep)
{
	memset(rep, 0, sizeof(*rep));
	jw_init(&rep->jw, stdout, false);
	if (env.pid) {
		/* the first interval starts with the run */
		int err = procmon_init(&rep->mon, env.pid, start_ns);

		if (err)
			pr_warn("--pid %d: cannot read /proc/%d/stat: %s (monitor off)\n",
				(int)env.pid, (int)env.pid, strerror(-err));
		else
			rep->monitoring = true;
	}
	if (env.json)
		return;
	if (rep->monitoring)
		procmon_print_header(stderr);
	else
		fprintf(stderr, "  second         sent       rate/s     cumulative\n");
}

static void report_row(struct report *rep, uint64_t t0, uint64_t t1)
{
	uint64_t total = total_sent(), d = total - rep->prev_total, lag = total_lag();
	uint64_t target = rate_at(t0 - start_ns);
	double secs = (t1 - t0) / 1e9, rate = secs > 0 ? d / secs : 0;
	struct procmon_row mr;

	rep->prev_total = total;
	if (rep->monitoring)
		procmon_sample(&rep->mon, t1, d, &mr);
	if (target && lag > target / 100 + PACE_BATCH_MAX) {
		rep->late_seconds++;
		pr_warn("cannot keep up: %" PRIu64
			" messages behind schedule in second %u (target %" PRIu64
			"/s, achieved %.0f/s)\n",
			lag, rep->tick, target, rate);
	}
	if (env.json) {
		jw_object_begin(&rep->jw, NULL);
		jw_string(&rep->jw, "type", "second");
		jw_u64(&rep->jw, "second", rep->tick);
		jw_double(&rep->jw, "secs", secs, 3);
		jw_u64(&rep->jw, "sent", d);
		jw_double(&rep->jw, "rate", rate, 1);
		jw_u64(&rep->jw, "cumulative", total);
		jw_u64(&rep->jw, "behind", lag);
		if (rep->monitoring)
			procmon_json_row(&rep->jw, "receiver", &mr);
		jw_object_end(&rep->jw);
		jw_finish(&rep->jw);
		fflush(stdout);
	} else if (rep->monitoring) {
		procmon_print_row(stderr, &mr);
	} else {
		fprintf(stderr, "%8u %12" PRIu64 " %12.1f %14" PRIu64 "\n", rep->tick, d, rate,
			total);
	}
}

/* Rows at every whole second from the common start, then a last partial one
 * when the run ends: when every sender is done and the timeline (silent
 * segments included) has passed. */
static void report_loop(struct report *rep)
{
	uint64_t now, next, done_ns, end;
	struct timespec ts;

	rep->prev_ns = start_ns;
	rep->tick = 1;
	for (;;) {
		now = clock_ns(CLOCK_MONOTONIC);
		next = start_ns + rep->tick * NSEC_PER_SEC;
		end = UINT64_MAX;
		if (all_done(&done_ns)) {
			end = done_ns > start_ns + timeline_ns ? done_ns : start_ns + timeline_ns;
			if (stop_requested && end > now)
				end = now;
		}
		if (now >= next && next <= end) {
			report_row(rep, rep->prev_ns, next);
			rep->prev_ns = next;
			rep->tick++;
			continue;
		}
		if (now >= end) {
			if (end > rep->prev_ns + NSEC_PER_SEC / 1000 ||
			    total_sent() != rep->prev_total)
				report_row(rep, rep->prev_ns, end > rep->prev_ns ? end : now);
			rep->end_ns = end;
			return;
		}
		next = next < end ? next : end;
		if (next > now + NSEC_PER_SEC / 100)
			next = now + NSEC_PER_SEC / 100;
		ts = ns_to_timespec(next);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

static int report_summary(struct report *rep)
{
	uint64_t sent = 0, failed = 0, nobufs = 0, refused = 0, again = 0, other = 0, ends = 0;
	double dur = (rep->end_ns - start_ns) / 1e9, achieved;
	const char *fmt = env.format == MSGFMT_RFC5424 ? "rfc5424" : "rfc3164";
	bool single = !env.profile && segs[0].paced;
	struct json_writer *w = &rep->jw;
	int fatal = 0;

	for (uint32_t i = 0; i < env.threads; i++) {
		struct sender *s = &senders[i];

		sent += s->sent;
		failed += s->failed;
		nobufs += s->err_nobufs;
		refused += s->err_connrefused;
		again += s->err_again;
		other += s->err_other;
		if (s->fatal && !fatal)
			fatal = s->fatal;
	}
	for (uint32_t i = 0; i < env.sources; i++)
		ends += flows[i].end_sent;
	achieved = dur > 0 ? sent / dur : 0;
	if (fatal)
		pr_warn("sendmmsg: %s\n", strerror(-fatal));
	if (failed)
		pr_warn("%" PRIu64 " messages not sent (ENOBUFS %" PRIu64 ", ECONNREFUSED %" PRIu64
			", EAGAIN %" PRIu64 ", other %" PRIu64
			"); their numbers are gaps at the receiver\n",
			failed, nobufs, refused, again, other);
	if (env.json) {
		jw_object_begin(w, NULL);
		jw_string(w, "type", "summary");
		jw_string(w, "run_id", env.run_id);
		jw_string(w, "target", env.target);
		jw_string(w, "format", fmt);
		jw_u64(w, "size", env.size);
		jw_u64(w, "sources", env.sources);
		jw_u64(w, "threads", env.threads);
		if (single)
			jw_u64(w, "target_rate", segs[0].rate);
		else
			jw_null(w, "target_rate");
		if (env.profile)
			jw_string(w, "profile", env.profile);
		if (planned == PACE_UNLIMITED)
			jw_null(w, "planned");
		else
			jw_u64(w, "planned", planned);
		/* sent: the sequenced messages; datagrams adds the end markers */
		jw_u64(w, "sent", sent);
		jw_u64(w, "end_markers", ends);
		jw_u64(w, "datagrams", sent + ends);
		jw_u64(w, "failed", failed);
		jw_object_begin(w, "errors");
		jw_u64(w, "ENOBUFS", nobufs);
		jw_u64(w, "ECONNREFUSED", refused);
		jw_u64(w, "EAGAIN", again);
		jw_u64(w, "other", other);
		jw_object_end(w);
		jw_double(w, "duration_s", dur, 4);
		jw_double(w, "achieved_rate", achieved, 1);
		jw_u64(w, "late_seconds", rep->late_seconds);
		jw_bool(w, "interrupted", stop_requested && !fatal);
		jw_array_begin(w, "flows");
		for (uint32_t i = 0; i < env.sources; i++) {
			jw_object_begin(w, NULL);
			jw_u64(w, "flow", flows[i].id);
			jw_u64(w, "src_port", flows[i].src_port);
			jw_u64(w, "sent", flows[i].sent);
			jw_u64(w, "next_seq", flows[i].next_seq);
			jw_u64(w, "end_markers", flows[i].end_sent);
			jw_object_end(w);
		}
		jw_array_end(w);
		if (rep->monitoring)
			procmon_json_summary(w, "receiver", &rep->mon);
		jw_object_end(w);
		jw_finish(w);
		fflush(stdout);
		return fatal;
	}
	if (rep->monitoring)
		procmon_print_summary(stderr, &rep->mon);
	fprintf(stderr, "\nsysloggen summary (run %s)\n", env.run_id);
	fprintf(stderr, "  target        : %s, %s, %" PRIu64 " B, %u source(s), %u thread(s)\n",
		env.target, fmt, env.size, env.sources, env.threads);
	if (env.profile)
		fprintf(stderr, "  target rate   : profile %s\n", env.profile);
	else if (single)
		fprintf(stderr, "  target rate   : %" PRIu64 " msgs/s\n", segs[0].rate);
	else
		fprintf(stderr, "  target rate   : as fast as possible\n");
	if (planned == PACE_UNLIMITED)
		fprintf(stderr, "  planned       : as many as fit in the duration\n");
	else
		fprintf(stderr, "  planned       : %" PRIu64 "\n", planned);
	fprintf(stderr, "  sent          : %" PRIu64 "\n", sent);
	fprintf(stderr, "  end markers   : %" PRIu64 " (%u per flow; datagrams %" PRIu64 ")\n",
		ends, env.end_markers, sent + ends);
	fprintf(stderr,
		"  send errors   : %" PRIu64 " (ENOBUFS %" PRIu64 ", ECONNREFUSED %" PRIu64
		", EAGAIN %" PRIu64 ", other %" PRIu64 ")\n",
		failed, nobufs, refused, again, other);
	fprintf(stderr, "  duration      : %.4f s\n", dur);
	fprintf(stderr, "  achieved rate : %.1f msgs/s\n", achieved);
	fprintf(stderr, "  late seconds  : %" PRIu64 "\n", rep->late_seconds);
	if (stop_requested && !fatal)
		fprintf(stderr, "  interrupted   : yes\n");
	return fatal;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	struct report rep;
	uint32_t i;
	int err;

	log_prog = "sysloggen";
	argp_err_exit_status = 2;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	if (signals_install(0))
		return 1;
	flows = calloc(env.sources, sizeof(*flows));
	senders = aligned_alloc(64, ((sizeof(*senders) * env.threads + 63) / 64) * 64);
	if (!flows || !senders) {
		pr_warn("out of memory\n");
		return 1;
	}
	memset(senders, 0, sizeof(*senders) * env.threads);
	for (i = 0; i < env.sources; i++) {
		err = open_flow(&flows[i], i);
		if (err) {
			pr_warn("source socket %u: %s\n", i, strerror(-err));
			return 1;
		}
	}
	/* flow f goes to sender f mod T */
	for (i = 0; i < env.threads; i++) {
		senders[i].idx = i;
		senders[i].flows = calloc(env.sources / env.threads + 1, sizeof(struct flow *));
		if (!senders[i].flows) {
			pr_warn("out of memory\n");
			return 1;
		}
	}
	for (i = 0; i < env.sources; i++) {
		struct sender *s = &senders[i % env.threads];

		s->flows[s->nflows++] = &flows[i];
	}
	start_ns = clock_ns(CLOCK_MONOTONIC) + NSEC_PER_SEC / 50; /* all threads start together */
	report_init(&rep);
	for (i = 0; i < env.threads; i++) {
		err = pthread_create(&senders[i].tid, NULL, sender_main, &senders[i]);
		if (err) {
			pr_warn("pthread_create: %s\n", strerror(err));
			stop_requested = 1;
			env.threads = i;
			break;
		}
	}
	report_loop(&rep);
	for (i = 0; i < env.threads; i++)
		pthread_join(senders[i].tid, NULL);
	send_end_markers();
	return report_summary(&rep) || err ? 1 : 0;
}
