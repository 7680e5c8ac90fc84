// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common/log.h"
#include "common/sockaddr.h"
#include "net/http_metrics.h"
#include "net/proc_net.h"
#include "rx/life/receiver.h"
#include "rx/report/check_config.h"
#include "rx/settings/config_check.h"
#include "rx/settings/config_print.h"
#include "rx/sink/registry.h"

static void say(const char *msg, void *ctx)
{
	unsigned int *problems = ctx;

	pr_err("%s\n", msg);
	(*problems)++;
}

/* --metrics and --health: addresses the endpoint would bind, and not one
 * address for both. */
static unsigned int check_endpoints(const struct config *c)
{
	const char *flags[] = { "--metrics", "--health" }, *args[] = { c->metrics, c->health };
	struct sockaddr_storage a[2];
	socklen_t alen[2];
	unsigned int problems = 0;
	bool ok[2] = { false, false };

	for (int i = 0; i < 2; i++) {
		if (!args[i][0])
			continue;
		ok[i] = !http_metrics_parse(args[i], &a[i], &alen[i]);
		if (!ok[i]) {
			pr_err("%s %s: expected ADDR:PORT or a port\n", flags[i], args[i]);
			problems++;
		}
	}
	if (ok[0] && ok[1] && alen[0] == alen[1] && !memcmp(&a[0], &a[1], alen[0])) {
		pr_err("--metrics %s and --health %s: the same address (--metrics serves "
		       "/healthz and /readyz too)\n",
		       c->metrics, c->health);
		problems++;
	}
	return problems;
}

struct port_taken {
	const struct listener_spec *l;
	struct sockaddr_storage want;
	bool found;
	char by[64];
	uint64_t inode;
};

/* A socket of this host already on the listener's port, on its address or
 * on a wildcard either side: the bind (or the reuseport group) would fail. */
static int find_taken(const struct udp_sock_row *row, void *ctx)
{
	struct port_taken *t = ctx;
	struct sockaddr_storage have;
	socklen_t len;

	if (parse_host_port(row->local, &have, &len) || !listener_addrs_overlap(&have, &t->want))
		return 0;
	t->found = true;
	t->inode = row->inode;
	snprintf(t->by, sizeof(t->by), "%s", row->local);
	return 1;
}

static unsigned int check_ports(const struct config *c)
{
	unsigned int problems = 0;

	for (unsigned int i = 0; i < c->nr_listeners; i++) {
		struct port_taken t = { .l = &c->listeners[i] };
		socklen_t len;

		if (parse_host_port(t.l->addr, &t.want, &len) || !sockaddr_port(&t.want))
			continue; /* the listener checks said so, or the kernel picks a port */
		proc_net_udp_for_each(find_taken, &t);
		if (t.found) {
			pr_err("--listen %s: port %u is taken by a socket on %s (inode %llu)\n",
			       t.l->addr, sockaddr_port(&t.want), t.by,
			       (unsigned long long)t.inode);
			problems++;
		}
	}
	return problems;
}

/* The user and the paths, checked as that user (rx/settings/paths_check.c):
 * what the receiver's start checks first. */
static unsigned int check_user_paths(const struct config *c)
{
	static struct receiver r;
	unsigned int refused = 0;

	memset(&r, 0, sizeof(r));
	shell_init(&r.shell);
	if (!shell_check_user_paths(&r.shell, c, &refused))
		return 0;
	return refused ? refused : 1; /* a wrong --user, or the check failed: one */
}

int check_config_run(struct config *c)
{
	unsigned int problems = 0;

	config_check_each(c, say, &problems); /* say() counts each */
	problems += sink_check(c);
	problems += check_endpoints(c);
	problems += check_ports(c);
	problems += check_user_paths(c);
	config_print(c, stdout);
	if (problems)
		pr_err("--check-config: %u problem(s); syslogrx would not start\n", problems);
	else
		pr_note("--check-config: the settings are good; nothing was bound\n");
	return problems ? 1 : 0;
}
