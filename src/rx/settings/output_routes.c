// SPDX-License-Identifier: MIT
/* --output LISTENER=SPEC: which listener's messages go to which output. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common/redact.h"
#include "rx/settings/config.h"
#include "rx/settings/output_routes.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return EINVAL;                      \
	} while (0)

void output_routes_reset(struct config *c)
{
	c->nr_routes = 0;
	c->output_unnamed = false;
	/* compared bytewise by a SIGHUP re-read (config_restart.c) */
	memset(c->routes, 0, sizeof(c->routes));
}

int output_routes_parse(struct config *c, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '='), *spec, *karg;
	const struct output_def *d;
	struct output_route *rt;
	char name[LISTENER_NAME_MAX + 1];
	size_t nl = eq ? (size_t)(eq - arg) : 0;

	/* A listener's name has no ':' nor '/': "file:/a=b" is a file. */
	if (!eq || nl >= sizeof(name))
		return -1;
	memcpy(name, arg, nl);
	name[nl] = '\0';
	if (!listener_name_valid(name))
		return -1;
	spec = eq + 1;
	d = output_match(spec, &karg);
	if (!d || strlen(karg) >= sizeof(rt->arg)) {
		char shown[ROUTE_ARG_MAX];

		FAIL("--output %s=%s: expected LISTENER=null, stdout, file:PATH, tcp:HOST:PORT or "
		     "tls:HOST:PORT",
		     name, redact_url(shown, sizeof(shown), spec));
	}
	for (unsigned int i = 0; i < c->nr_routes; i++)
		if (!strcmp(c->routes[i].listener, name))
			FAIL("--output %s=%s: listener %s has an output already (one output per "
			     "listener)",
			     name, spec, name);
	if (c->nr_routes == CONFIG_MAX_ROUTES)
		FAIL("--output %s=%s: at most %d outputs with a LISTENER name", name, spec,
		     CONFIG_MAX_ROUTES);
	rt = &c->routes[c->nr_routes++];
	snprintf(rt->listener, sizeof(rt->listener), "%s", name);
	rt->kind = d->kind;
	snprintf(rt->arg, sizeof(rt->arg), "%s", karg);
	return 0;
}

static bool listener_routed(const struct config *c, const char *name)
{
	for (unsigned int i = 0; i < c->nr_routes; i++)
		if (!strcmp(c->routes[i].listener, name))
			return true;
	return false;
}

/* Settings that keep one state for the one output there was. */
static int check_beside(const struct config *c, char *err, size_t errlen)
{
	/* Each named output's disk buffer is DIR/LISTENER, beside DIR's own
	 * files (the unnamed output's): a name that is one of them cannot be. */
	for (unsigned int i = 0; c->disk_buffer[0] && i < c->nr_routes; i++) {
		const char *name = c->routes[i].listener;

		if (!outputs[c->routes[i].kind]->network) {
			char shown[ROUTE_ARG_MAX + 16];

			FAIL("--output %s=%s and --disk-buffer: a disk buffer needs a tcp, tls "
			     "or otlp output (what a file takes is not held back)",
			     name, output_route_name(c, i, shown, sizeof(shown)));
		}
		if (!strcmp(name, "lock") || !strcmp(name, "cursor"))
			FAIL("--output %s=... and --disk-buffer %s: the output's disk buffer "
			     "would be %s/%s, a file of the unnamed output's (rename the "
			     "listener)",
			     name, c->disk_buffer, c->disk_buffer, name);
		if (strlen(c->disk_buffer) + 1 + strlen(name) >= sizeof(c->disk_buffer))
			FAIL("--output %s=... and --disk-buffer %s: %s/%s is too long a path", name,
			     c->disk_buffer, c->disk_buffer, name);
	}
	if (c->ordered)
		FAIL("--output %s=... and --ordered cannot be used together: the merge is one "
		     "stream into one output",
		     c->routes[0].listener);
	if (c->sequences)
		FAIL("--output %s=... and --sequences cannot be used together yet: the sequence "
		     "accounting follows one output",
		     c->routes[0].listener);
	return 0;
}

int config_check_routes(struct config *c, char *err, size_t errlen)
{
	char left[256] = "";
	size_t n = 0;

	if (!c->nr_routes)
		return 0;
	for (unsigned int i = 0; i < c->nr_routes; i++) {
		const struct output_route *rt = &c->routes[i];
		const struct output_def *d = outputs[rt->kind];
		bool known = false;

		for (unsigned int k = 0; k < c->nr_listeners && !known; k++)
			known = !strcmp(c->listeners[k].name, rt->listener);
		if (!known) {
			char shown[ROUTE_ARG_MAX + 16];

			FAIL("--output %s=%s: no listener is named %s (--listen NAME=ADDR:PORT, or "
			     "the env-file's)",
			     rt->listener, output_route_name(c, i, shown, sizeof(shown)),
			     rt->listener);
		}
		if (d->acknowledges)
			FAIL("--output %s=%s:...: a %s output cannot be one of several yet (its flags "
			     "and numbers are one set): use null, stdout, file, tcp or tls",
			     rt->listener, d->name, d->name);
	}
	if (check_beside(c, err, errlen))
		return EINVAL;
	for (unsigned int k = 0; k < c->nr_listeners; k++)
		if (!listener_routed(c, c->listeners[k].name) && n < sizeof(left))
			n += snprintf(left + n, sizeof(left) - n, "%s%s", n ? ", " : "",
				      c->listeners[k].name);
	if (n && !c->output_unnamed)
		FAIL("--output %s=...: listener(s) %s have no output: add an --output without "
		     "LISTENER= for them (--output null discards them, counted)",
		     c->routes[0].listener, left);
	if (!n && !c->output_unnamed) {
		/* Nothing goes to it: no destination to open. */
		c->output = OUTPUT_NULL;
		c->output_arg[0] = '\0';
	}
	return 0;
}

const char *output_route_name(const struct config *c, unsigned int i, char *buf, size_t len)
{
	const struct output_route *rt = &c->routes[i];
	char shown[ROUTE_ARG_MAX];

	snprintf(buf, len, "%s%s%s", outputs[rt->kind]->name, rt->arg[0] ? ":" : "",
		 redact_url(shown, sizeof(shown), rt->arg));
	return buf;
}

void output_routes_print(const struct config *c, FILE *f)
{
	char name[ROUTE_ARG_MAX + 16];

	for (unsigned int i = 0; i < c->nr_routes; i++)
		fprintf(f, "output = %s=%s\n", c->routes[i].listener,
			output_route_name(c, i, name, sizeof(name)));
}

void output_route_apply(struct config *c, unsigned int i)
{
	c->output = c->routes[i].kind;
	snprintf(c->output_arg, sizeof(c->output_arg), "%s", c->routes[i].arg);
	/* its own disk buffer: DIR/LISTENER (checked to fit) */
	if (c->disk_buffer[0]) {
		size_t n = strlen(c->disk_buffer);

		snprintf(c->disk_buffer + n, sizeof(c->disk_buffer) - n, "/%s",
			 c->routes[i].listener);
	}
	c->nr_routes = 0;
}
