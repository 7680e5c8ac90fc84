// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/clock.h"
#include "common/sd_notify.h"
#include "rx/path/diskbuf.h"
#include "rx/report/health.h"

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

void health_init(struct health *h, struct receiver *r)
{
	uint64_t now = mono_ns();

	memset(h, 0, sizeof(*h));
	h->r = r;
	h->main_beat_ns = now;
	h->written_ns = now;
}

void health_tick(struct health *h)
{
	uint64_t now = mono_ns();
	struct output_counts c;
	struct diskbuf_stats d;

	STORE(h->main_beat_ns, now);
	if (receiver_output_counts(h->r, &c) && c.written != LOAD(h->written)) {
		STORE(h->written, c.written);
		STORE(h->written_ns, now);
	}
	if (receiver_disk_stats(h->r, &d) && d.dropped_msgs != LOAD(h->dropped)) {
		STORE(h->dropped, d.dropped_msgs);
		STORE(h->dropped_ns, now);
	}
}

struct text {
	char *buf;
	size_t len, used;
};

static void say(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->used + 1 >= t->len) /* full, or no text wanted (len 0) */
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->used += (size_t)n < t->len - t->used ? (size_t)n : t->len - t->used - 1;
}

static double ago_s(uint64_t now, uint64_t then)
{
	return now > then ? (double)(now - then) / 1e9 : 0.0;
}

/* healthz: 0, or the number of threads that stopped turning (said in t). */
static unsigned int stuck_threads(struct health *h, uint64_t now, struct text *t)
{
	unsigned int stuck = 0;
	double age = ago_s(now, LOAD(h->main_beat_ns));

	if (age >= HEALTH_STALL_S) {
		say(t, "main thread: no turn of its loop for %.1f s\n", age);
		stuck++;
	}
	for (unsigned int i = 0; i < receiver_workers_started(h->r); i++) {
		age = ago_s(now, receiver_worker_beat_ns(h->r, i));
		if (age >= HEALTH_STALL_S) {
			say(t, "worker %u: no turn of its loop for %.1f s\n", i, age);
			stuck++;
		}
	}
	return stuck;
}

/* readyz: true when ready; else why, in t. */
static bool ready(struct health *h, uint64_t now, struct text *t)
{
	double idle = ago_s(now, LOAD(h->written_ns));
	struct diskbuf_stats d;
	const char *stalled, *down;

	if (receiver_stopping(h->r)) {
		say(t, "stopping\n");
		return false;
	}
	if (!receiver_running(h->r)) {
		say(t, "starting\n");
		return false;
	}
	if (!receiver_sockets_bound(h->r)) {
		say(t, "no socket bound\n");
		return false;
	}
	stalled = receiver_output_stalled(h->r);
	if (stalled) {
		say(t,
		    "%s is stalled: connected, its destination has taken nothing for "
		    "--stall-timeout; reconnecting\n",
		    stalled);
		return false;
	}
	if (idle < READY_STALL_S)
		return true;
	if (receiver_disk_stats(h->r, &d)) {
		if (d.bytes >= d.max_bytes || ago_s(now, LOAD(h->dropped_ns)) < READY_STALL_S) {
			say(t,
			    "the output has written nothing for %.1f s and the disk buffer is full "
			    "(%llu of %llu bytes): what arrives is dropped\n",
			    idle, (unsigned long long)d.bytes, (unsigned long long)d.max_bytes);
			return false;
		}
		/* Still ready (nothing is lost while the buffer has room: keep
		 * sending here), but the answer says what it is riding out. */
		if (receiver_output_down(h->r))
			say(t,
			    "ready: %s cannot reach its destination; the disk buffer takes "
			    "what arrives (%llu of %llu bytes)\n",
			    receiver_output_down(h->r), (unsigned long long)d.bytes,
			    (unsigned long long)d.max_bytes);
	} else if (receiver_window_full(h->r)) {
		say(t,
		    "the output has written nothing for %.1f s and the input window is full: "
		    "the kernel's queues fill and will drop\n",
		    idle);
		return false;
	} else if ((down = receiver_output_down(h->r))) {
		/* Ready while the window has room (nothing is lost yet), and
		 * said, as with a disk buffer: output_up 0 is the figure. */
		say(t,
		    "ready: %s cannot reach its destination; the input window holds what "
		    "arrives until it is full\n",
		    down);
	}
	return true;
}

bool health_alive(struct health *h)
{
	struct text none = { NULL, 0, 0 }; /* say() writes nothing */
	bool alive;

	receiver_report_lock(h->r);
	alive = !stuck_threads(h, mono_ns(), &none);
	receiver_report_unlock(h->r);
	return alive;
}

void health_watchdog(struct health *h)
{
	const char *usec = getenv("WATCHDOG_USEC");
	uint64_t now = mono_ns();

	if (!h->watchdog_ns) { /* first call: WatchdogSec= asked, or never */
		h->watchdog_ns = usec && sd_notify_enabled() ? strtoull(usec, NULL, 10) * 1000 : 0;
		if (!h->watchdog_ns)
			h->watchdog_ns = UINT64_MAX;
	}
	if (h->watchdog_ns == UINT64_MAX || now - h->pinged_ns < h->watchdog_ns / 2)
		return;
	h->pinged_ns = now;
	/* A stuck thread: no ping, and systemd restarts us at WatchdogSec. */
	if (health_alive(h))
		sd_notify_fd("WATCHDOG=1", -1);
}

unsigned int health_answer(bool readyz, char *buf, size_t len, void *ctx)
{
	struct health *h = ctx;
	struct text t = { buf, len, 0 };
	uint64_t now = mono_ns();
	bool ok;

	buf[0] = '\0';
	/* The workers and the group stay put while a resize holds this. */
	receiver_report_lock(h->r);
	ok = readyz ? ready(h, now, &t) : !stuck_threads(h, now, &t);
	receiver_report_unlock(h->r);
	if (ok && !t.used) /* a ready that rides out an outage said so itself */
		say(&t, readyz ? "ready\n" : "ok\n");
	return ok ? 200 : 503;
}
