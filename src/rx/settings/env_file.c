// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "common/log.h"
#include "common/parse_num.h"
#include "net/sysctl.h"
#include "rx/settings/config_file.h"
#include "rx/settings/env_file.h"

/* The SC4S settings that apply to a UDP receiver, in the order applied. */
enum sc4s_key {
	K_PORT,
	K_SOCKETS,
	K_EBPF,
	K_EBPF_SOCKETS,
	K_RCVBUF,
	K_IW_USE,
	K_IW_SIZE,
	K_FETCH,
	K_NR,
};

static const char *const key_names[K_NR] = {
	[K_PORT] = "SC4S_LISTEN_DEFAULT_UDP_PORT",
	[K_SOCKETS] = "SC4S_SOURCE_LISTEN_UDP_SOCKETS",
	[K_EBPF] = "SC4S_ENABLE_EBPF",
	[K_EBPF_SOCKETS] = "SC4S_EBPF_NO_SOCKETS",
	[K_RCVBUF] = "SC4S_SOURCE_UDP_SO_RCVBUFF",
	[K_IW_USE] = "SC4S_SOURCE_UDP_IW_USE",
	[K_IW_SIZE] = "SC4S_SOURCE_UDP_IW_SIZE",
	[K_FETCH] = "SC4S_SOURCE_UDP_FETCH_LIMIT",
};

/* syslogrx's most: CONFIG_MAX_BATCH (not included: env_file knows no config). */
#define FETCH_MAX 1024
/* SC4S's own arithmetic for the window: "up to approximately 1 KB" a message. */
#define SC4S_MSG_BYTES 1024ULL
#define DEFAULT_WINDOW_BYTES (64ULL << 20)

struct env_read {
	struct env_map *m;
	struct {
		bool set;
		char value[64];
		unsigned int line;
	} k[K_NR];
};

static int collect(const char *name, const char *value, bool has_value, unsigned int line,
		   void *ctx, char *err, size_t errlen)
{
	struct env_read *rd = ctx;
	struct env_map *m = rd->m;

	for (int i = 0; i < K_NR; i++) {
		if (strcmp(name, key_names[i]))
			continue;
		if (strlen(value) >= sizeof(rd->k[i].value)) {
			snprintf(err, errlen, "%s: value too long", name);
			return -EINVAL;
		}
		rd->k[i].set = true; /* the last one wins, as in a shell */
		snprintf(rd->k[i].value, sizeof(rd->k[i].value), "%s", value);
		rd->k[i].line = line;
		return 0;
	}
	/* Listed by name, as long as the line has room. */
	if (strlen(m->ignored) + strlen(name) + 3 < sizeof(m->ignored)) {
		size_t len = strlen(m->ignored);

		snprintf(m->ignored + len, sizeof(m->ignored) - len, "%s%s", len ? ", " : "", name);
		m->nr_ignored++;
	}
	return 0;
}

__attribute__((format(printf, 2, 3))) static void warn(struct env_map *m, const char *fmt, ...)
{
	va_list ap;

	if (m->nr_warnings >= ENV_WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(m->warnings[m->nr_warnings++], sizeof(m->warnings[0]), fmt, ap);
	va_end(ap);
}

static struct env_mapping *row(struct env_read *rd, enum sc4s_key k)
{
	struct env_mapping *r = &rd->m->rows[rd->m->n++];

	snprintf(r->name, sizeof(r->name), "%s", key_names[k]);
	snprintf(r->value, sizeof(r->value), "%s", rd->k[k].value);
	r->line = rd->k[k].line;
	return r;
}

/* yes/no as SC4S writes them (and true/false, 1/0). */
static int parse_yes(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

struct emit_ctx {
	const char *path;
	env_emit_fn emit;
	void *ctx;
	char *err;
	size_t errlen;
};

/* Hands flag=value over and notes it in r; errors name file, line, setting. */
static int give(struct emit_ctx *e, struct env_mapping *r, const char *flag, const char *value)
{
	char msg[384];
	int ret;

	snprintf(r->flag, sizeof(r->flag), "--%s", flag);
	snprintf(r->became, sizeof(r->became), "%s", value);
	msg[0] = '\0';
	ret = e->emit(flag, value, e->ctx, msg, sizeof(msg));
	if (ret)
		snprintf(e->err, e->errlen, "%s:%u: %s=%s: %s", e->path, r->line, r->name, r->value,
			 msg[0] ? msg : "invalid");
	return ret;
}

static int bad(struct emit_ctx *e, struct env_mapping *r, const char *what)
{
	snprintf(e->err, e->errlen, "%s:%u: %s=%s: expected %s", e->path, r->line, r->name,
		 r->value, what);
	return -EINVAL;
}

int env_file_apply(const char *path, env_emit_fn emit, void *ctx, struct env_map *out, char *err,
		   size_t errlen)
{
	struct emit_ctx e = { path, emit, ctx, err, errlen };
	struct env_read rd = { .m = out };
	struct env_mapping *r;
	uint64_t v, sockets = 1, rmem_max = 0;
	bool iw_use = false, yes;
	char buf[64];
	int ret;

	memset(out, 0, sizeof(*out));
	ret = config_file_read(path, collect, &rd, err, errlen);
	if (ret)
		return ret;

	if (rd.k[K_PORT].set) {
		r = row(&rd, K_PORT);
		if (parse_u64(r->value, 1, 65535, &v))
			return bad(&e, r, "a port from 1 to 65535");
		/* SC4S listens on every address. */
		snprintf(buf, sizeof(buf), "0.0.0.0:%llu", (unsigned long long)v);
		if ((ret = give(&e, r, "listen", buf)))
			return ret;
	}
	if (rd.k[K_SOCKETS].set) {
		r = row(&rd, K_SOCKETS);
		if ((ret = give(&e, r, "sockets", r->value)))
			return ret;
		parse_u64(r->value, 1, UINT32_MAX, &sockets);
	}
	if (rd.k[K_EBPF].set) {
		r = row(&rd, K_EBPF);
		if (parse_yes(r->value, &yes))
			return bad(&e, r, "yes or no");
		/* SC4S's eBPF program spreads datagrams at random; without it the
		 * kernel's hash puts each flow on one socket. */
		if ((ret = give(&e, r, "balance", yes ? "random" : "hash")))
			return ret;
	}
	if (rd.k[K_EBPF_SOCKETS].set) {
		r = row(&rd, K_EBPF_SOCKETS);
		if (parse_u64(r->value, 1, UINT32_MAX, &v))
			return bad(&e, r, "a number of sockets");
		snprintf(r->became, sizeof(r->became),
			 "no flag: syslogrx's balancer always covers all --sockets");
		if (v != sockets)
			warn(out,
			     "%s=%llu but %s=%llu%s: SC4S's eBPF program would pick among %llu "
			     "sockets of a group of %llu: %s",
			     key_names[K_EBPF_SOCKETS], (unsigned long long)v, key_names[K_SOCKETS],
			     (unsigned long long)sockets,
			     rd.k[K_SOCKETS].set ? "" : " (SC4S's default)", (unsigned long long)v,
			     (unsigned long long)sockets,
			     v > sockets ? "datagrams aimed at the missing ones fall back to the "
					   "kernel's hash, silently" :
					   "the other sockets never receive, silently");
	}
	if (rd.k[K_RCVBUF].set) {
		r = row(&rd, K_RCVBUF);
		if (!strcmp(r->value, "-1")) {
			snprintf(r->became, sizeof(r->became),
				 "no --rcvbuf: the kernel's default (net.core.rmem_default)");
		} else {
			if (parse_u64(r->value, 1, 1ULL << 29, &v))
				return bad(&e, r, "bytes from 1 to 536870912, or -1");
			/* syslog-ng's so-rcvbuf(N) is SO_RCVBUF N: the kernel doubles it. */
			snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v * 2);
			if ((ret = give(&e, r, "rcvbuf", buf)))
				return ret;
			if (!sysctl_read_u64("net.core.rmem_max", &rmem_max) && v > rmem_max)
				warn(out,
				     "%s=%llu is above net.core.rmem_max (%llu): SC4S's syslog-ng "
				     "would get %llu bytes (2 x rmem_max), not %llu, silently; syslogrx "
				     "asks for --rcvbuf %llu with SO_RCVBUFFORCE (CAP_NET_ADMIN); fix "
				     "for SC4S: sysctl -w net.core.rmem_max=%llu",
				     key_names[K_RCVBUF], (unsigned long long)v,
				     (unsigned long long)rmem_max, (unsigned long long)rmem_max * 2,
				     (unsigned long long)v * 2, (unsigned long long)v * 2,
				     (unsigned long long)v);
		}
	}
	if (rd.k[K_IW_USE].set) {
		r = row(&rd, K_IW_USE);
		if (parse_yes(r->value, &iw_use))
			return bad(&e, r, "yes or no");
		snprintf(r->became, sizeof(r->became),
			 "no flag: syslogrx always has an input "
			 "window (--window, --window-bytes)%s",
			 iw_use ? "" : "; SC4S drops IW_SIZE and FETCH_LIMIT without it");
	}
	if (rd.k[K_IW_SIZE].set) {
		r = row(&rd, K_IW_SIZE);
		if (parse_u64(r->value, 1, 100000000ULL, &v))
			return bad(&e, r, "messages from 1 to 100000000");
		if ((ret = give(&e, r, "window", r->value)))
			return ret;
		if (v * SC4S_MSG_BYTES > DEFAULT_WINDOW_BYTES) {
			/* The window also bounds bytes: let it hold what SC4S counts on. */
			snprintf(buf, sizeof(buf), "%llu",
				 (unsigned long long)(v * SC4S_MSG_BYTES));
			ret = e.emit("window-bytes", buf, e.ctx, err, errlen);
			if (ret)
				return bad(&e, r, "a window that fits in --window-bytes' 64G");
			snprintf(r->became + strlen(r->became),
				 sizeof(r->became) - strlen(r->became),
				 " (and --window-bytes %s: 1 KB a message, as SC4S counts)", buf);
		}
		if (!iw_use)
			warn(out,
			     "%s is set without %s=yes: SC4S's template leaves it out and "
			     "syslog-ng keeps its default window, silently; syslogrx applies it",
			     key_names[K_IW_SIZE], key_names[K_IW_USE]);
	}
	if (rd.k[K_FETCH].set) {
		r = row(&rd, K_FETCH);
		if (parse_u64(r->value, 1, UINT32_MAX, &v))
			return bad(&e, r, "a number of messages");
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)(v > FETCH_MAX ? FETCH_MAX : v));
		if ((ret = give(&e, r, "batch", buf)))
			return ret;
		if (v > FETCH_MAX)
			snprintf(r->became + strlen(r->became),
				 sizeof(r->became) - strlen(r->became), " (syslogrx's most)");
		if (!iw_use)
			warn(out,
			     "%s is set without %s=yes: SC4S's template leaves it out, "
			     "silently; syslogrx applies it as --batch",
			     key_names[K_FETCH], key_names[K_IW_USE]);
	}
	return 0;
}

void env_file_report(const struct env_map *m, const char *path)
{
	for (unsigned int i = 0; i < m->n; i++) {
		const struct env_mapping *r = &m->rows[i];

		fprintf(stderr, "syslogrx: --env-file %s:%u: %s=%s -> %s%s%s%s%s\n", path, r->line,
			r->name, r->value, r->flag, r->flag[0] ? " " : "", r->became,
			r->overridden_by[0] ? " (overridden by the " : "",
			r->overridden_by[0] ?
				(!strcmp(r->overridden_by, "config") ? "--config file)" :
								       "command line)") :
				"");
	}
	if (m->nr_ignored)
		fprintf(stderr, "syslogrx: --env-file %s: ignored (not for a UDP receiver): %s\n",
			path, m->ignored);
	for (unsigned int i = 0; i < m->nr_warnings; i++)
		pr_warn("--env-file %s: WARNING: %s\n", path, m->warnings[i]);
	fprintf(stderr, "syslogrx: --env-file %s: precedence: env-file < --config < command line\n",
		path);
}
