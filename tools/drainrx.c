// SPDX-License-Identifier: MIT
/*
 * drainrx: the benchmarks' reference receiver. Drains N SO_REUSEPORT UDP
 * sockets (one thread each, recvmmsg batches), counts exactly, bins arrivals
 * in time from the first one, and optionally accounts sequence markers
 * (seqtrack, one tracker per socket: a flow stays on one socket because the
 * kernel's reuseport hash is per 4-tuple).
 *
 * With --write FILE it is the limit of writing instead: each batch goes into
 * FILE with one writev (every datagram as it came, then a newline), and
 * nothing else is done to it, so a receiver writing a file is measured
 * against what the copy into the page cache costs by itself.
 */
#include <argp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "common/signals.h"
#include "common/clock.h"
#include "common/json_writer.h"
#include "common/cli.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "common/parse_num.h"
#include "common/no_follow.h"
#include "common/iov_advance.h"
#include "net/sockinfo.h"
#include "syslog/seqtrack.h"

#define BATCH 64
#define DGRAM_MAX 65536
#define SOCKETS_MAX 64

enum { OPT_RCVBUF = 1000, OPT_IDLE, OPT_BIN, OPT_SEQ, OPT_WRITE };

static struct env {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	const char *listen;
	const char *write;
	uint32_t sockets;
	double duration, idle;
	uint64_t rcvbuf;
	uint64_t bin_ms;
	bool json, seq;
} env = {
	.sockets = 1,
	.duration = 10,
	.rcvbuf = 64 << 20,
	.bin_ms = 10,
};

struct rx {
	pthread_t tid;
	int fd;
	uint64_t received, bytes;
	uint64_t *bins;
	struct seqtrack *st;
	int err, werr; /* recvmmsg's, writev's */
	char *bufs;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct iovec wiov[2 * BATCH]; /* --write: datagram, newline, ... */
} __attribute__((aligned(64)));

static struct rx *rxs;
static int out_fd = -1;
static uint64_t nbins, start_ns;
static _Atomic uint64_t t0_ns, last_ns;

const char *argp_program_version = "drainrx 0.1";
static const char doc[] =
	"Drain-only UDP receiver that counts every datagram, per socket and per time bin.\n"
	"\n"
	"USAGE: drainrx --listen ADDR:PORT [--sockets N] [--duration S] [--idle S] [--json]\n"
	"               [--write FILE]\n"
	"\n"
	"EXAMPLES:\n"
	"    drainrx --listen 127.0.0.1:5514 --duration 10 --json\n"
	"    drainrx --listen [::1]:5514 --sockets 2 --duration 30 --idle 2 --seq\n"
	"    drainrx --listen 127.0.0.1:5514 --write /var/tmp/drain.log --json\n";

static const struct argp_option opts[] = {
	{ "listen", 'l', "ADDR:PORT", 0, "Address to bind: a.b.c.d:port or [v6]:port", 0 },
	{ "sockets", 'n', "N", 0, "SO_REUSEPORT sockets, one thread each (default 1)", 0 },
	{ "duration", 'd', "S", 0, "Stop after S seconds (default 10)", 0 },
	{ "idle", OPT_IDLE, "S", 0, "Also stop S seconds after the last datagram (once one came)",
	  0 },
	{ "rcvbuf", OPT_RCVBUF, "SIZE", 0, "SO_RCVBUFFORCE per socket (default 64M)", 0 },
	{ "bin-ms", OPT_BIN, "MS", 0, "Time bin in ms, a divisor of 1000 (default 10)", 0 },
	{ "seq", OPT_SEQ, NULL, 0, "Account sequence markers (seqtrack)", 0 },
	{ "write", OPT_WRITE, "FILE", 0,
	  "Also write each batch into FILE with one writev: every datagram, a newline after each",
	  0 },
	{ "json", 'j', NULL, 0, "One JSON object on stdout", 0 },
	{},
};

/* HOST:PORT or [V6]:PORT, a port other than 0. */
static int parse_addr(const char *s)
{
	if (parse_host_port(s, &env.addr, &env.addr_len) || !sockaddr_port(&env.addr))
		return -EINVAL;
	return 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	uint64_t v;
	int err = 0;

	switch (key) {
	case 'l':
		env.listen = arg;
		err = parse_addr(arg);
		break;
	case 'n':
		err = parse_u64(arg, 1, SOCKETS_MAX, &v);
		env.sockets = v;
		break;
	case 'd':
		err = parse_seconds(arg, 0.01, 86400, &env.duration);
		break;
	case OPT_IDLE:
		err = parse_seconds(arg, 0.01, 86400, &env.idle);
		break;
	case OPT_RCVBUF:
		err = parse_size(arg, 4096, 1ULL << 31, &env.rcvbuf);
		break;
	case OPT_BIN:
		err = parse_u64(arg, 1, 1000, &env.bin_ms);
		if (!err && 1000 % env.bin_ms)
			err = -EINVAL;
		break;
	case OPT_SEQ:
		env.seq = true;
		break;
	case OPT_WRITE:
		env.write = arg;
		if (!*arg)
			err = -EINVAL;
		break;
	case 'j':
		env.json = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!env.listen)
			argp_error(state, "--listen is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	if (err)
		argp_error(state, "--%s: invalid value '%s'", cli_option_name(opts, key), arg);
	return 0;
}

static int open_socket(struct rx *r)
{
	struct timeval tv = { .tv_usec = 50000 }; /* wake to see the stop flag */
	int one = 1, rcvbuf = env.rcvbuf;

	r->fd = socket(env.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (r->fd < 0)
		return -errno;
	if (setsockopt(r->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	if (setsockopt(r->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf))) {
		if (errno != EPERM)
			return -errno;
		pr_warn("SO_RCVBUFFORCE needs CAP_NET_ADMIN; using SO_RCVBUF (capped by rmem_max)\n");
		if (setsockopt(r->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
			return -errno;
	}
	if (bind(r->fd, (struct sockaddr *)&env.addr, env.addr_len))
		return -errno;
	r->bufs = malloc((size_t)BATCH * DGRAM_MAX);
	r->bins = calloc(nbins, sizeof(*r->bins));
	if (!r->bufs || !r->bins)
		return -ENOMEM;
	if (env.seq && !(r->st = seqtrack_new()))
		return -errno;
	for (int i = 0; i < BATCH; i++) {
		r->iov[i].iov_base = r->bufs + (size_t)i * DGRAM_MAX;
		r->iov[i].iov_len = DGRAM_MAX;
		r->msgs[i].msg_hdr.msg_iov = &r->iov[i];
		r->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return 0;
}

static void account(struct rx *r, int n)
{
	uint64_t now = mono_ns(), t0 = atomic_load(&t0_ns), zero = 0, bin;

	if (!t0) {
		atomic_compare_exchange_strong(&t0_ns, &zero, now);
		t0 = atomic_load(&t0_ns);
	}
	atomic_store_explicit(&last_ns, now, memory_order_relaxed);
	bin = now > t0 ? (now - t0) / (env.bin_ms * 1000000) : 0;
	if (bin >= nbins)
		bin = nbins - 1;
	r->bins[bin] += n;
	r->received += n;
	for (int i = 0; i < n; i++) {
		r->bytes += r->msgs[i].msg_len;
		if (r->st)
			seqtrack_observe(r->st, r->iov[i].iov_base, r->msgs[i].msg_len);
	}
}

/* The batch's n datagrams, each followed by a newline, with one writev;
 * a short write (a full disk's last bytes) goes on from where it stopped. */
static int write_batch(struct rx *r, int n)
{
	static const char nl = '\n';
	struct iovec *v = r->wiov;
	int cnt = 2 * n;
	ssize_t w;

	for (int i = 0; i < n; i++) {
		v[2 * i].iov_base = r->iov[i].iov_base;
		v[2 * i].iov_len = r->msgs[i].msg_len;
		v[2 * i + 1].iov_base = (void *)&nl;
		v[2 * i + 1].iov_len = 1;
	}
	while (cnt) {
		w = writev(out_fd, v, cnt);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) /* every pair holds a newline: 0 bytes is no progress */
			return w < 0 ? -errno : -EIO;
		iov_advance(&v, &cnt, w);
	}
	return 0;
}

/* A batch read: counted, and written with --write. */
static void take(struct rx *r, int n)
{
	int err;

	account(r, n);
	if (out_fd >= 0 && !r->werr && (err = write_batch(r, n))) {
		r->werr = err;
		stop_requested = 1;
	}
}

static void *rx_main(void *arg)
{
	struct rx *r = arg;
	int n;

	while (!stop_requested) {
		n = recvmmsg(r->fd, r->msgs, BATCH, MSG_WAITFORONE, NULL);
		if (n > 0) {
			take(r, n);
		} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			r->err = -errno;
			stop_requested = 1;
		}
	}
	/* what was queued at the stop arrived in time: count it too (bounded:
	 * a sender that keeps going cannot hold us past one second) */
	for (uint64_t until = mono_ns() + NSEC_PER_SEC; !r->err && mono_ns() < until;) {
		n = recvmmsg(r->fd, r->msgs, BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		take(r, n);
	}
	return NULL;
}

static int print_flow(const struct seqtrack_flow_stats *f, void *ctx)
{
	struct json_writer *w = ctx;

	if (!w) {
		printf("  flow %s/%u%s: received %" PRIu64 ", missing %" PRIu64
		       ", duplicates %" PRIu64 ", reordered %" PRIu64 ", max seq %" PRIu64 "\n",
		       f->run, f->flow, f->kind == SEQTRACK_LOGGEN ? " (loggen)" : "", f->received,
		       f->missing, f->duplicates, f->reordered, f->max_seq);
		return 0;
	}
	jw_object_begin(w, NULL);
	jw_string(w, "kind", f->kind == SEQTRACK_LOGGEN ? "loggen" : "sysloggen");
	jw_string(w, "run", f->run);
	jw_u64(w, "flow", f->flow);
	jw_u64(w, "received", f->received);
	jw_u64(w, "missing", f->missing);
	jw_u64(w, "duplicates", f->duplicates);
	jw_u64(w, "reordered", f->reordered);
	jw_u64(w, "untracked", f->untracked);
	jw_u64(w, "max_seq", f->max_seq);
	jw_bool(w, "closed", f->closed);
	if (f->closed)
		jw_u64(w, "sent", f->sent);
	else
		jw_null(w, "sent");
	jw_u64(w, "end_markers", f->end_markers);
	jw_object_end(w);
	return 0;
}

static void report(uint64_t end_ns)
{
	uint64_t total = 0, bytes = 0, last_bin = 0, per_sec = 1000 / env.bin_ms;
	uint64_t t0 = atomic_load(&t0_ns), last = atomic_load(&last_ns), *bins;
	struct seqtrack_totals st = {}, one;
	struct json_writer w;
	uint32_t i;

	bins = calloc(nbins, sizeof(*bins));
	for (i = 0; i < env.sockets; i++) {
		total += rxs[i].received;
		bytes += rxs[i].bytes;
		for (uint64_t b = 0; b < nbins && bins; b++)
			bins[b] += rxs[i].bins[b];
		if (rxs[i].st) {
			seqtrack_totals(rxs[i].st, &one);
			st.sequenced += one.sequenced;
			st.unsequenced += one.unsequenced;
			st.received += one.received;
			st.missing += one.missing;
			st.duplicates += one.duplicates;
			st.reordered += one.reordered;
			st.untracked += one.untracked;
			st.flows += one.flows;
			st.end_markers += one.end_markers;
			st.end_markers_lost += one.end_markers_lost;
			st.flows_closed += one.flows_closed;
		}
	}
	for (uint64_t b = 0; b < nbins && bins; b++)
		if (bins[b])
			last_bin = b + 1;
	if (!env.json) {
		printf("received %" PRIu64 " datagrams, %" PRIu64
		       " bytes on %u socket(s) in %.3f s\n",
		       total, bytes, env.sockets, (end_ns - start_ns) / 1e9);
		if (t0)
			printf("arrivals span %.6f s\n", (last - t0) / 1e9);
		for (uint64_t s = 0; s * per_sec < last_bin && bins; s++) {
			uint64_t n = 0;

			for (uint64_t b = s * per_sec; b < (s + 1) * per_sec && b < nbins; b++)
				n += bins[b];
			printf("  second %" PRIu64 ": %" PRIu64 "\n", s + 1, n);
		}
		if (env.seq) {
			printf("sequenced %" PRIu64 ", unsequenced %" PRIu64 ", received %" PRIu64
			       ", missing %" PRIu64 ", duplicates %" PRIu64 ", reordered %" PRIu64
			       "\n",
			       st.sequenced, st.unsequenced, st.received, st.missing, st.duplicates,
			       st.reordered);
			for (i = 0; i < env.sockets; i++)
				seqtrack_for_each_flow(rxs[i].st, print_flow, NULL);
		}
		free(bins);
		return;
	}
	jw_init(&w, stdout, false);
	jw_object_begin(&w, NULL);
	jw_string(&w, "listen", env.listen);
	if (env.write)
		jw_string(&w, "write", env.write);
	jw_u64(&w, "sockets", env.sockets);
	jw_u64(&w, "received", total);
	jw_u64(&w, "bytes", bytes);
	jw_double(&w, "elapsed_s", (end_ns - start_ns) / 1e9, 3);
	if (t0) {
		jw_double(&w, "first_arrival_s", (t0 - start_ns) / 1e9, 6);
		jw_double(&w, "span_s", (last - t0) / 1e9, 6);
	}
	jw_array_begin(&w, "per_socket");
	for (i = 0; i < env.sockets; i++) {
		uint64_t d;

		if (sockinfo_meminfo(rxs[i].fd, &d, NULL))
			d = UINT64_MAX;

		jw_object_begin(&w, NULL);
		jw_u64(&w, "received", rxs[i].received);
		if (d != UINT64_MAX)
			jw_u64(&w, "drops", d);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_u64(&w, "bin_ms", env.bin_ms);
	jw_array_begin(&w, "bins");
	for (uint64_t b = 0; b < last_bin; b++)
		jw_u64(&w, NULL, bins[b]);
	jw_array_end(&w);
	jw_array_begin(&w, "per_second");
	for (uint64_t s = 0; s * per_sec < last_bin; s++) {
		uint64_t n = 0;

		for (uint64_t b = s * per_sec; b < (s + 1) * per_sec && b < nbins; b++)
			n += bins[b];
		jw_u64(&w, NULL, n);
	}
	jw_array_end(&w);
	if (env.seq) {
		jw_object_begin(&w, "seq");
		jw_u64(&w, "sequenced", st.sequenced);
		jw_u64(&w, "unsequenced", st.unsequenced);
		jw_u64(&w, "received", st.received);
		jw_u64(&w, "missing", st.missing);
		jw_u64(&w, "duplicates", st.duplicates);
		jw_u64(&w, "reordered", st.reordered);
		jw_u64(&w, "untracked", st.untracked);
		jw_u64(&w, "flows", st.flows);
		jw_u64(&w, "flows_closed", st.flows_closed);
		jw_u64(&w, "end_markers", st.end_markers);
		jw_u64(&w, "end_markers_lost", st.end_markers_lost);
		jw_array_begin(&w, "per_flow");
		for (i = 0; i < env.sockets; i++)
			seqtrack_for_each_flow(rxs[i].st, print_flow, &w);
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_object_end(&w);
	jw_finish(&w);
	free(bins);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	uint64_t end, idle_ns;
	uint32_t i, started = 0;
	int err = 0;

	log_prog = "drainrx";
	argp_err_exit_status = 2;
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	if (signals_install(0))
		return 1;
	nbins = (uint64_t)(env.duration * 1000 / env.bin_ms) + 2;
	rxs = aligned_alloc(64, sizeof(*rxs) * env.sockets);
	if (!rxs) {
		pr_warn("out of memory\n");
		return 1;
	}
	memset(rxs, 0, sizeof(*rxs) * env.sockets);
	if (env.write) {
		/* O_APPEND: each socket's thread appends its batches whole */
		out_fd = open_own_file(env.write, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
		if (out_fd < 0) {
			pr_warn("--write %s: %s\n", env.write, no_follow_strerror(-out_fd));
			return 1;
		}
	}
	for (i = 0; i < env.sockets; i++) {
		err = open_socket(&rxs[i]);
		if (err) {
			pr_warn("socket %u on %s: %s\n", i, env.listen, strerror(-err));
			return 1;
		}
	}
	start_ns = mono_ns();
	for (i = 0; i < env.sockets; i++, started++) {
		err = pthread_create(&rxs[i].tid, NULL, rx_main, &rxs[i]);
		if (err) {
			pr_warn("pthread_create: %s\n", strerror(err));
			stop_requested = 1;
			break;
		}
	}
	end = start_ns + (uint64_t)(env.duration * NSEC_PER_SEC);
	idle_ns = env.idle * NSEC_PER_SEC;
	while (!stop_requested) {
		uint64_t now = mono_ns(), last = atomic_load(&last_ns);
		struct timespec ts = { .tv_nsec = 10000000 };

		if (now >= end || (idle_ns && last && now >= last + idle_ns))
			break;
		nanosleep(&ts, NULL);
	}
	stop_requested = 1;
	end = mono_ns();
	for (i = 0; i < started; i++) {
		pthread_join(rxs[i].tid, NULL);
		if (rxs[i].err && !err) {
			pr_warn("recvmmsg: %s\n", strerror(-rxs[i].err));
			err = rxs[i].err;
		}
		if (rxs[i].werr && !err) {
			pr_warn("--write %s: writev: %s\n", env.write, strerror(-rxs[i].werr));
			err = rxs[i].werr;
		}
	}
	report(end);
	return err ? 1 : 0;
}
