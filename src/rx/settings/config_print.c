// SPDX-License-Identifier: MIT
#include <string.h>
#include "net/balancer.h"
#include "rx/settings/config_print.h"
#include "rx/settings/output_routes.h"

static void str(FILE *f, const char *name, const char *v)
{
	if (v[0])
		fprintf(f, "%s = %s\n", name, v);
}

static void flag(FILE *f, const char *name, bool on)
{
	if (on)
		fprintf(f, "%s\n", name);
}

static void num(FILE *f, const char *name, unsigned long long v)
{
	fprintf(f, "%s = %llu\n", name, v);
}

static void print_input(const struct config *c, FILE *f)
{
	for (unsigned int i = 0; i < c->nr_listeners; i++) {
		const struct listener_spec *l = &c->listeners[i];

		if (l->named)
			fprintf(f, "listen = %s=%s\n", l->name, l->addr);
		else
			fprintf(f, "listen = %s\n", l->addr);
	}
	num(f, "sockets", c->sockets);
	num(f, "threads", c->threads);
	if (c->max_sockets > c->sockets)
		num(f, "max-sockets", c->max_sockets);
	fprintf(f, "balance = %s\n", balance_policy_name(c->balance));
	if (c->rcvbuf)
		num(f, "rcvbuf", c->rcvbuf);
	else
		fprintf(f, "# rcvbuf: the kernel's default (net.core.rmem_default)\n");
	num(f, "batch", c->batch);
	num(f, "window", c->window);
	num(f, "window-bytes", c->window_bytes);
	flag(f, "supervise", c->supervise);
	flag(f, "no-trace", !c->trace);
	num(f, "senders", c->senders);
	num(f, "senders-top", c->senders_top);
	flag(f, "sequences", c->sequences);
}

static void print_output(const struct config *c, FILE *f)
{
	char out[PATH_MAX + 16];

	fprintf(f, "output = %s\n", config_output_name(c, out, sizeof(out)));
	output_routes_print(c, f);
	fprintf(f, "format = %s\n", format_name(c->format));
	str(f, "timezone", c->timezone);
	flag(f, "no-escape-control", !c->escape_control);
	flag(f, "json-raw", c->json_raw);
	if (c->ordered)
		num(f, "ordered", c->ordered_hold_ms);
	if (c->output_rate)
		num(f, "output-rate", c->output_rate);
	outputs_print(c, f);
	if (c->disk_buffer[0]) {
		str(f, "disk-buffer", c->disk_buffer);
		num(f, "disk-buffer-size", c->disk_buffer_size);
		fprintf(f, "disk-buffer-mode = %s\n", c->disk_buffer_mode ? "reliable" : "spill");
		num(f, "disk-buffer-sync", c->disk_buffer_sync_ms);
	}
}

void config_print(const struct config *c, FILE *f)
{
	if (c->config_file[0])
		fprintf(f, "# config file: %s\n", c->config_file);
	if (c->env_file[0])
		fprintf(f, "# env-file: %s (mapped above; the lines below include it)\n",
			c->env_file);
	print_input(c, f);
	print_output(c, f);
	str(f, "summary", c->summary);
	if (c->stats_interval > 0)
		fprintf(f, "stats-interval = %g\n", c->stats_interval);
	if (c->duration > 0)
		fprintf(f, "duration = %g\n", c->duration);
	str(f, "metrics", c->metrics);
	str(f, "health", c->health);
	str(f, "user", c->user);
	fflush(f);
}
