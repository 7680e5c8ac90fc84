// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include "common/caps.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "net/sysctl.h"
#include "rx/settings/preflight.h"

/* The listener the checks being added are for ("" = all); one thread. */
static const char *for_listener = "";

static struct preflight_check *add(struct preflight *p, const char *check, bool ok)
{
	struct preflight_check *c;

	if (p->n >= PREFLIGHT_MAX)
		return NULL;
	c = &p->checks[p->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->check, sizeof(c->check), "%s", check);
	snprintf(c->listener, sizeof(c->listener), "%s", for_listener);
	c->ok = ok;
	return c;
}

/* Fills message and fix, and prints the check: a warning when it failed. */
__attribute__((format(printf, 3, 4))) static void say(struct preflight_check *c, const char *fix,
						      const char *fmt, ...)
{
	char who[48] = "";
	va_list ap;

	if (!c)
		return;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
	snprintf(c->fix, sizeof(c->fix), "%s", c->ok ? "" : fix);
	if (c->listener[0])
		snprintf(who, sizeof(who), " (listener %s)", c->listener);
	if (c->ok)
		pr_info("pre-flight %s%s: ok: %s\n", c->check, who, c->message);
	else
		pr_warn("pre-flight %s%s: WARNING: %s; fix: %s\n", c->check, who, c->message,
			c->fix);
}

static void check_port(struct preflight *p, const char *listen)
{
	struct sockaddr_storage addr;
	socklen_t len;
	uint64_t start = 1024;
	unsigned int port;
	char fix[192];
	bool ok;

	if (parse_host_port(listen, &addr, &len))
		return; /* the bind will name the bad address */
	port = sockaddr_port(&addr);
	sysctl_read_u64("net.ipv4.ip_unprivileged_port_start", &start);
	if (!port || port >= start) {
		say(add(p, "port", true), "",
		    "port %u needs no privilege "
		    "(net.ipv4.ip_unprivileged_port_start = %llu)",
		    port, (unsigned long long)start);
		return;
	}
	ok = caps_have(CAP_NET_BIND_SERVICE);
	snprintf(fix, sizeof(fix),
		 "give syslogrx CAP_NET_BIND_SERVICE (systemd: AmbientCapabilities=), "
		 "or sysctl -w net.ipv4.ip_unprivileged_port_start=%u, or --listen a port >= %llu",
		 port, (unsigned long long)start);
	say(add(p, "port", ok), fix,
	    ok ? "port %u is privileged: CAP_NET_BIND_SERVICE is held" :
		 "port %u is below net.ipv4.ip_unprivileged_port_start (%llu) and "
		 "CAP_NET_BIND_SERVICE is missing: the bind will fail",
	    port, (unsigned long long)start);
}

static void check_window_memory(struct preflight *p, const struct config *cfg)
{
	uint64_t avail;
	char fix[192];
	bool ok;

	if (sys_mem_available(&avail))
		return;
	ok = cfg->window_bytes <= avail;
	snprintf(fix, sizeof(fix), "--window-bytes %lluM or less (MemAvailable / 2)",
		 (unsigned long long)(avail / 2 >> 20));
	say(add(p, "window_memory", ok), fix, "--window-bytes %llu %s MemAvailable (%llu bytes)%s",
	    (unsigned long long)cfg->window_bytes, ok ? "fits in" : "is more than",
	    (unsigned long long)avail,
	    ok ? "" : ": a full window would push the machine into swap or the OOM killer");
}

void preflight_before(struct preflight *p, const struct config *cfg)
{
	memset(p, 0, sizeof(*p));
	for (unsigned int k = 0; k < cfg->nr_listeners; k++) {
		for_listener = cfg->listener_names ? cfg->listeners[k].name : "";
		check_port(p, cfg->listeners[k].addr);
	}
	for_listener = "";
	check_window_memory(p, cfg);
}

static void check_rcvbuf(struct preflight *p, const struct config *cfg, uint64_t effective)
{
	uint64_t asked = cfg->rcvbuf, rmem_max = 0, rmem_default = 0;
	bool have_max = !sysctl_read_u64("net.core.rmem_max", &rmem_max);
	/* SO_RCVBUF(v) gives 2 x min(v, rmem_max): asking for an effective
	 * `asked` needs rmem_max >= asked / 2. */
	uint64_t need_max = (asked + 1) / 2;
	char fix[192];

	snprintf(fix, sizeof(fix),
		 "sysctl -w net.core.rmem_max=%llu, or give syslogrx "
		 "CAP_NET_ADMIN (SO_RCVBUFFORCE), or a smaller --rcvbuf",
		 (unsigned long long)need_max);
	if (!asked) {
		sysctl_read_u64("net.core.rmem_default", &rmem_default);
		say(add(p, "rcvbuf", true), "",
		    "no --rcvbuf: the kernel's default, %llu bytes "
		    "effective (net.core.rmem_default %llu)",
		    (unsigned long long)effective, (unsigned long long)rmem_default);
	} else if (effective + 2 < asked) { /* halving rounds an odd size down */
		say(add(p, "rcvbuf", false), fix,
		    "--rcvbuf %llu asked, %llu obtained: SO_RCVBUF "
		    "is capped at 2 x net.core.rmem_max (%llu) without CAP_NET_ADMIN",
		    (unsigned long long)asked, (unsigned long long)effective,
		    (unsigned long long)rmem_max);
	} else if (have_max && need_max > rmem_max) {
		say(add(p, "rcvbuf", true), "",
		    "--rcvbuf %llu obtained, above 2 x net.core.rmem_max "
		    "(%llu) thanks to CAP_NET_ADMIN; without it SO_RCVBUF would give %llu",
		    (unsigned long long)asked, (unsigned long long)rmem_max,
		    (unsigned long long)rmem_max * 2);
		/* A balancer's resize takes sockets from the pool bound now; the
		 * kernel's hash has no pool, so a grow opens sockets after the drop. */
		if (cfg->balance == BALANCE_HASH)
			say(add(p, "rcvbuf-grow", false), fix,
			    "with --balance hash a live grow (SIGHUP) opens its sockets after "
			    "the capability drop: they get %llu bytes, not %llu",
			    (unsigned long long)rmem_max * 2, (unsigned long long)asked);
	} else {
		say(add(p, "rcvbuf", true), "", "--rcvbuf %llu obtained (net.core.rmem_max %llu)",
		    (unsigned long long)asked, (unsigned long long)rmem_max);
	}
}

static void check_udp_mem(struct preflight *p, const struct socket_group *g, uint64_t total)
{
	uint64_t mem[3], page = sysconf(_SC_PAGESIZE), need, limit;
	char fix[192];
	bool ok;

	if (sysctl_read("net.ipv4.udp_mem", mem, 3) != 3)
		return;
	limit = mem[2] * page;
	ok = total <= limit;
	/* Room for our queues on top of what the limit already allows the
	 * machine's other UDP sockets; the three thresholds keep their ratios. */
	need = mem[2] + (total + page - 1) / page;
	snprintf(fix, sizeof(fix),
		 "sysctl -w net.ipv4.udp_mem=\"%llu %llu %llu\" (pages of %llu "
		 "bytes), or a smaller --rcvbuf or --sockets",
		 (unsigned long long)(mem[0] * need / mem[2]),
		 (unsigned long long)(mem[1] * need / mem[2]), (unsigned long long)need,
		 (unsigned long long)page);
	say(add(p, "udp_mem", ok), fix,
	    "%u sockets x rcvbuf can queue %llu bytes; net.ipv4.udp_mem "
	    "allows %llu pages (%llu bytes) for all UDP sockets of the machine%s",
	    g->n, (unsigned long long)total, (unsigned long long)mem[2], (unsigned long long)limit,
	    ok ? "" : ": past it the kernel drops with PROTO_MEM before any buffer is full");
}

void preflight_sockets(struct preflight *p, const struct config *cfg, const struct socket_group *g)
{
	uint64_t total = 0;

	if (!g->n)
		return;
	/* Each listener's smallest buffer (its sockets are bound apart). */
	for (unsigned int k = 0; k < cfg->nr_listeners; k++) {
		uint64_t smallest = UINT64_MAX;

		for (unsigned int i = 0; i < g->n; i++)
			if (g->socks[i].listener == k && (uint64_t)g->socks[i].rcvbuf < smallest)
				smallest = g->socks[i].rcvbuf;
		if (smallest == UINT64_MAX)
			continue;
		for_listener = cfg->listener_names ? cfg->listeners[k].name : "";
		check_rcvbuf(p, cfg, smallest);
	}
	for_listener = "";
	for (unsigned int i = 0; i < g->n; i++)
		total += g->socks[i].rcvbuf;
	check_udp_mem(p, g, total);
}

unsigned int preflight_warnings(const struct preflight *p)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < p->n; i++)
		n += !p->checks[i].ok;
	return n;
}
