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
#include "rx/settings/listeners.h"

/* The SC4S settings that apply to a UDP receiver, in the order applied
 * (after the SC4S_LISTEN_<NAME>_UDP_PORT ones, read apart). */
enum sc4s_key {
	K_SOCKETS,
	K_EBPF,
	K_EBPF_SOCKETS,
	K_RCVBUF,
	K_IW_USE,
	K_IW_SIZE,
	K_FETCH,
	K_TZ,
	K_NR,
};

static const char *const key_names[K_NR] = {
	[K_SOCKETS] = "SC4S_SOURCE_LISTEN_UDP_SOCKETS", [K_EBPF] = "SC4S_ENABLE_EBPF",
	[K_EBPF_SOCKETS] = "SC4S_EBPF_NO_SOCKETS",	[K_RCVBUF] = "SC4S_SOURCE_UDP_SO_RCVBUFF",
	[K_IW_USE] = "SC4S_SOURCE_UDP_IW_USE",		[K_IW_SIZE] = "SC4S_SOURCE_UDP_IW_SIZE",
	[K_FETCH] = "SC4S_SOURCE_UDP_FETCH_LIMIT",	[K_TZ] = "SC4S_DEFAULT_TIMEZONE",
};

/* syslogrx's most: CONFIG_MAX_BATCH (not included: env_file knows no config). */
#define FETCH_MAX 1024
/* SC4S's own arithmetic for the window: "up to approximately 1 KB" a message. */
/* SC4S's defaults for what the file leaves unset (its configuration page's
 * "Syslog Source Configuration" table): the DEFAULT listener on 514, 4
 * sockets per UDP port, so-rcvbuf 17039360. */
#define SC4S_DEFAULT_UDP_PORT "514"
#define SC4S_DEFAULT_SOCKETS "4"
#define SC4S_DEFAULT_RCVBUF "17039360"
#define SC4S_MSG_BYTES 1024ULL
#define DEFAULT_WINDOW_BYTES (64ULL << 20)

#define LISTEN_PREFIX "SC4S_LISTEN_"
#define UDP_SUFFIX "_UDP_PORT"

struct env_setting {
	bool set;
	char value[128];
	unsigned int line;
};

struct env_read {
	struct env_map *m;
	struct env_setting k[K_NR];
	unsigned int default_off; /* line of an empty SC4S_LISTEN_DEFAULT_UDP_PORT, or 0 */
	/* SC4S_LISTEN_<NAME>_UDP_PORT, DEFAULT first, then in file order */
	unsigned int nr_ports;
	struct {
		char vendor[64]; /* NAME as written */
		struct env_setting s;
	} ports[ENV_PORTS_MAX];
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* SC4S_LISTEN_<NAME>_UDP_PORT: the last one of a name wins, as in a shell. */
static int collect_port(struct env_read *rd, const char *name, const char *value, unsigned int line,
			char *err, size_t errlen)
{
	size_t vl = strlen(name) - strlen(LISTEN_PREFIX) - strlen(UDP_SUFFIX);
	char vendor[64];
	unsigned int i;

	if (!vl || vl >= sizeof(vendor) || strlen(value) >= sizeof(rd->ports[0].s.value)) {
		snprintf(err, errlen, "%s: name or value too long", name);
		return -EINVAL;
	}
	memcpy(vendor, name + strlen(LISTEN_PREFIX), vl);
	vendor[vl] = '\0';
	/* An empty DEFAULT port: no default listener (the last one wins). */
	if (!strcmp(vendor, "DEFAULT"))
		rd->default_off = *value ? 0 : line;
	if (!strcmp(vendor, "DEFAULT") && !*value) {
		for (i = 0; i < rd->nr_ports && strcmp(rd->ports[i].vendor, vendor); i++)
			;
		if (i < rd->nr_ports)
			memmove(&rd->ports[i], &rd->ports[i + 1],
				(--rd->nr_ports - i) * sizeof(rd->ports[0]));
		return 0;
	}
	for (i = 0; i < rd->nr_ports; i++)
		if (!strcmp(rd->ports[i].vendor, vendor))
			break;
	if (i == rd->nr_ports) {
		if (rd->nr_ports == ENV_PORTS_MAX) {
			snprintf(err, errlen, "%s: more than %d SC4S_LISTEN_*_UDP_PORT settings",
				 name, ENV_PORTS_MAX);
			return -EINVAL;
		}
		rd->nr_ports++;
		/* DEFAULT is the first listener, wherever it is written. */
		if (!strcmp(vendor, "DEFAULT") && i) {
			memmove(&rd->ports[1], &rd->ports[0], i * sizeof(rd->ports[0]));
			i = 0;
		}
	}
	snprintf(rd->ports[i].vendor, sizeof(rd->ports[i].vendor), "%s", vendor);
	rd->ports[i].s.set = true;
	snprintf(rd->ports[i].s.value, sizeof(rd->ports[i].s.value), "%s", value);
	rd->ports[i].s.line = line;
	return 0;
}

/* A setting left out: by line (the first ENV_SKIP_MAX), and by name in
 * the summary's list, as long as it has room. */
static void skip(struct env_map *m, const char *name, unsigned int line, bool listener)
{
	size_t len = strlen(m->ignored);

	if (m->nr_skipped < ENV_SKIP_MAX) {
		snprintf(m->skipped[m->nr_skipped].name, sizeof(m->skipped[0].name), "%s", name);
		m->skipped[m->nr_skipped].line = line;
		m->skipped[m->nr_skipped].listener = listener;
	}
	m->nr_skipped++;
	if (len + strlen(name) + 3 < sizeof(m->ignored)) {
		snprintf(m->ignored + len, sizeof(m->ignored) - len, "%s%s", len ? ", " : "", name);
		m->nr_ignored++;
	}
}

static int collect(const char *name, const char *value, bool has_value, unsigned int line,
		   void *ctx, char *err, size_t errlen)
{
	struct env_read *rd = ctx;
	struct env_map *m = rd->m;

	if (!strncmp(name, LISTEN_PREFIX, strlen(LISTEN_PREFIX))) {
		if (ends_with(name, UDP_SUFFIX))
			return collect_port(rd, name, value, line, err, errlen);
		/* TCP, TLS, RFC 6587...: a listener syslogrx has no use for. */
		skip(m, name, line, true);
		return 0;
	}
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
	skip(m, name, line, false);
	return 0;
}

/* A warning about the setting on line `line`. */
__attribute__((format(printf, 3, 4))) static void warn(struct env_map *m, unsigned int line,
						       const char *fmt, ...)
{
	va_list ap;

	if (m->nr_warnings >= ENV_WARN_MAX)
		return;
	m->warning_line[m->nr_warnings] = line;
	va_start(ap, fmt);
	vsnprintf(m->warnings[m->nr_warnings++], sizeof(m->warnings[0]), fmt, ap);
	va_end(ap);
}

static struct env_mapping *row_of(struct env_read *rd, const char *name,
				  const struct env_setting *s)
{
	struct env_mapping *r = &rd->m->rows[rd->m->n++];

	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->value, sizeof(r->value), "%s", s->value);
	r->line = s->line;
	r->sc4s_default = !s->line;
	return r;
}

static struct env_mapping *row(struct env_read *rd, enum sc4s_key k)
{
	return row_of(rd, key_names[k], &rd->k[k]);
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

/* "FILE:LINE", or "FILE" for a setting the file leaves to SC4S's default. */
static const char *where(char *buf, size_t len, const char *path, unsigned int line)
{
	if (line)
		snprintf(buf, len, "%s:%u", path, line);
	else
		snprintf(buf, len, "%s", path);
	return buf;
}

/* Hands flag=value over and notes it in r; errors name file, line, setting. */
static int give(struct emit_ctx *e, struct env_mapping *r, const char *flag, const char *value)
{
	char msg[384], at[320];
	int ret;

	snprintf(r->flag, sizeof(r->flag), "--%s", flag);
	snprintf(r->became, sizeof(r->became), "%s", value);
	msg[0] = '\0';
	ret = e->emit(flag, value, e->ctx, msg, sizeof(msg));
	if (ret)
		snprintf(e->err, e->errlen, "--env-file %s: %s=%s: %s",
			 where(at, sizeof(at), e->path, r->line), r->name, r->value,
			 msg[0] ? msg : "invalid");
	return ret;
}

static int bad(struct emit_ctx *e, struct env_mapping *r, const char *what)
{
	char at[320];

	snprintf(e->err, e->errlen, "--env-file %s: %s=%s: expected %s",
		 where(at, sizeof(at), e->path, r->line), r->name, r->value, what);
	return -EINVAL;
}

/* SC4S_LISTEN_<NAME>_UDP_PORT=P[,P...]: a listener per port on every
 * address, as SC4S listens. Named after the vendor in lowercase
 * (cisco_asa), NAME_PORT each for a list; left unnamed when the file has
 * just one DEFAULT port, so that records stay as one --listen writes them. */
static int map_ports(struct env_read *rd, struct emit_ctx *e)
{
	bool named = rd->nr_ports > 1 || strchr(rd->ports[0].s.value, ',') ||
		     strcmp(rd->ports[0].vendor, "DEFAULT");
	char name[64], arg[128], list[128], at[320];
	static bool taken[65536]; /* ports mapped so far: one listener each */
	uint64_t port;
	int ret;

	memset(taken, 0, sizeof(taken));
	for (unsigned int i = 0; i < rd->nr_ports; i++) {
		struct env_mapping *r = row_of(rd, "", &rd->ports[i].s);
		bool several = strchr(r->value, ',') != NULL;
		char *save = NULL, *tok;
		size_t used = 0;

		snprintf(r->name, sizeof(r->name), "%s%s%s", LISTEN_PREFIX, rd->ports[i].vendor,
			 UDP_SUFFIX);
		snprintf(r->flag, sizeof(r->flag), "--listen");
		snprintf(list, sizeof(list), "%s", r->value);
		for (size_t k = 0; rd->ports[i].vendor[k] && k + 1 < sizeof(name); k++) {
			char ch = rd->ports[i].vendor[k];

			name[k] = ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
			name[k + 1] = '\0';
		}
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char lname[96];
			char msg[384] = "";

			if (parse_u64(tok, 1, 65535, &port))
				return bad(e, r, "a port from 1 to 65535, or a comma list of them");
			if (taken[port])
				return bad(
					e, r,
					rd->ports[0].s.line ?
						"a port no other SC4S_LISTEN_*_UDP_PORT has" :
						"a port no other SC4S_LISTEN_*_UDP_PORT has (the "
						"DEFAULT listener, unset, has SC4S's 514)");
			taken[port] = true;
			snprintf(lname, sizeof(lname), several ? "%s_%llu" : "%s", name,
				 (unsigned long long)port);
			if (named && !listener_name_valid(lname))
				return bad(e, r,
					   "a NAME of A-Z, 0-9 and _ that makes a listener name of "
					   "at most 32 characters");
			if (named)
				snprintf(arg, sizeof(arg), "%s=0.0.0.0:%llu", lname,
					 (unsigned long long)port);
			else
				snprintf(arg, sizeof(arg), "0.0.0.0:%llu",
					 (unsigned long long)port);
			ret = e->emit("listen", arg, e->ctx, msg, sizeof(msg));
			if (ret) {
				snprintf(e->err, e->errlen, "--env-file %s: %s=%s: %s",
					 where(at, sizeof(at), e->path, r->line), r->name, r->value,
					 msg[0] ? msg : "invalid");
				return ret;
			}
			if (used < sizeof(r->became))
				used += snprintf(r->became + used, sizeof(r->became) - used, "%s%s",
						 used ? ", " : "", arg);
		}
		if (!used)
			return bad(e, r, "a port from 1 to 65535, or a comma list of them");
	}
	return 0;
}

/* SC4S_SOURCE_LISTEN_UDP_SOCKETS, SC4S_ENABLE_EBPF, SC4S_EBPF_NO_SOCKETS:
 * the socket group and how datagrams are spread over it. */
static int map_sockets(struct env_read *rd, struct emit_ctx *e)
{
	struct env_mapping *r;
	uint64_t v, sockets = 0;
	bool yes;
	int ret;

	r = row(rd, K_SOCKETS);
	if ((ret = give(e, r, "sockets", r->value)))
		return ret;
	parse_u64(r->value, 1, UINT32_MAX, &sockets);
	if (rd->k[K_EBPF].set) {
		r = row(rd, K_EBPF);
		if (parse_yes(r->value, &yes))
			return bad(e, r, "yes or no");
		/* SC4S's eBPF program spreads datagrams at random; without it the
		 * kernel's hash puts each flow on one socket. */
		if ((ret = give(e, r, "balance", yes ? "random" : "hash")))
			return ret;
	}
	if (rd->k[K_EBPF_SOCKETS].set) {
		r = row(rd, K_EBPF_SOCKETS);
		if (parse_u64(r->value, 1, UINT32_MAX, &v))
			return bad(e, r, "a number of sockets");
		snprintf(r->became, sizeof(r->became),
			 "no flag: syslogrx's balancer always covers all --sockets");
		if (v != sockets)
			warn(rd->m, r->line,
			     "%s=%llu but %s=%llu%s: SC4S's eBPF program would pick among %llu "
			     "sockets of a group of %llu: %s",
			     key_names[K_EBPF_SOCKETS], (unsigned long long)v, key_names[K_SOCKETS],
			     (unsigned long long)sockets,
			     rd->k[K_SOCKETS].line ? "" : " (SC4S's default)",
			     (unsigned long long)v, (unsigned long long)sockets,
			     v > sockets ? "datagrams aimed at the missing ones fall back to the "
					   "kernel's hash, silently" :
					   "the other sockets never receive, silently");
	}
	return 0;
}

/* SC4S_SOURCE_UDP_SO_RCVBUFF: syslog-ng's so-rcvbuf, and what the kernel
 * caps it at. */
static int map_rcvbuf(struct env_read *rd, struct emit_ctx *e)
{
	struct env_mapping *r;
	uint64_t v, rmem_max = 0;
	char buf[64];
	int ret;

	{
		r = row(rd, K_RCVBUF);
		if (!strcmp(r->value, "-1")) {
			snprintf(r->became, sizeof(r->became),
				 "no --rcvbuf: the kernel's default (net.core.rmem_default)");
		} else {
			if (parse_u64(r->value, 1, 1ULL << 29, &v))
				return bad(e, r, "bytes from 1 to 536870912, or -1");
			/* syslog-ng's so-rcvbuf(N) is SO_RCVBUF N: the kernel doubles it. */
			snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v * 2);
			if ((ret = give(e, r, "rcvbuf", buf)))
				return ret;
			if (!sysctl_read_u64("net.core.rmem_max", &rmem_max) && v > rmem_max)
				warn(rd->m, r->line,
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
	return 0;
}

/* SC4S_SOURCE_UDP_IW_USE, _IW_SIZE, _FETCH_LIMIT: the input window and the
 * fetch limit. */
static int map_window(struct env_read *rd, struct emit_ctx *e)
{
	struct env_mapping *r;
	bool iw_use = false;
	uint64_t v;
	char buf[64];
	int ret;

	if (rd->k[K_IW_USE].set) {
		r = row(rd, K_IW_USE);
		if (parse_yes(r->value, &iw_use))
			return bad(e, r, "yes or no");
		snprintf(r->became, sizeof(r->became),
			 "no flag: syslogrx always has an input "
			 "window (--window, --window-bytes)%s",
			 iw_use ? "" : "; SC4S drops IW_SIZE and FETCH_LIMIT without it");
	}
	if (rd->k[K_IW_SIZE].set) {
		r = row(rd, K_IW_SIZE);
		if (parse_u64(r->value, 1, 100000000ULL, &v))
			return bad(e, r, "messages from 1 to 100000000");
		if ((ret = give(e, r, "window", r->value)))
			return ret;
		if (v * SC4S_MSG_BYTES > DEFAULT_WINDOW_BYTES) {
			/* The window also bounds bytes: let it hold what SC4S counts on. */
			snprintf(buf, sizeof(buf), "%llu",
				 (unsigned long long)(v * SC4S_MSG_BYTES));
			ret = e->emit("window-bytes", buf, e->ctx, e->err, e->errlen);
			if (ret)
				return bad(e, r, "a window that fits in --window-bytes' 64G");
			snprintf(r->became + strlen(r->became),
				 sizeof(r->became) - strlen(r->became),
				 " (and --window-bytes %s: 1 KB a message, as SC4S counts)", buf);
		}
		if (!iw_use)
			warn(rd->m, r->line,
			     "%s is set without %s=yes: SC4S's template leaves it out and "
			     "syslog-ng keeps its default window, silently; syslogrx applies it",
			     key_names[K_IW_SIZE], key_names[K_IW_USE]);
	}
	if (rd->k[K_FETCH].set) {
		r = row(rd, K_FETCH);
		if (parse_u64(r->value, 1, UINT32_MAX, &v))
			return bad(e, r, "a number of messages");
		snprintf(buf, sizeof(buf), "%llu",
			 (unsigned long long)(v > FETCH_MAX ? FETCH_MAX : v));
		if ((ret = give(e, r, "batch", buf)))
			return ret;
		if (v > FETCH_MAX)
			snprintf(r->became + strlen(r->became),
				 sizeof(r->became) - strlen(r->became), " (syslogrx's most)");
		if (!iw_use)
			warn(rd->m, r->line,
			     "%s is set without %s=yes: SC4S's template leaves it out, "
			     "silently; syslogrx applies it as --batch",
			     key_names[K_FETCH], key_names[K_IW_USE]);
	}
	return 0;
}

/* SC4S_DEFAULT_TIMEZONE: the zone of stamps without one, as --timezone. */
static int map_timezone(struct env_read *rd, struct emit_ctx *e)
{
	if (!rd->k[K_TZ].set)
		return 0;
	return give(e, row(rd, K_TZ), "timezone", rd->k[K_TZ].value);
}

/* What SC4S does with what the file leaves unset: its DEFAULT listener
 * (unless the file empties it), its socket count and receive buffer. Line 0
 * marks a default: the report says so instead of citing a line. */
static void sc4s_defaults(struct env_read *rd)
{
	static const struct {
		enum sc4s_key k;
		const char *value;
	} dflt[] = { { K_SOCKETS, SC4S_DEFAULT_SOCKETS }, { K_RCVBUF, SC4S_DEFAULT_RCVBUF } };
	bool has_default = false;

	for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++)
		if (!rd->k[dflt[i].k].set) {
			rd->k[dflt[i].k].set = true;
			snprintf(rd->k[dflt[i].k].value, sizeof(rd->k[0].value), "%s",
				 dflt[i].value);
			rd->k[dflt[i].k].line = 0;
		}
	for (unsigned int i = 0; i < rd->nr_ports; i++)
		has_default |= !strcmp(rd->ports[i].vendor, "DEFAULT");
	if (has_default || rd->default_off || rd->nr_ports == ENV_PORTS_MAX)
		return;
	memmove(&rd->ports[1], &rd->ports[0], rd->nr_ports * sizeof(rd->ports[0]));
	rd->nr_ports++;
	memset(&rd->ports[0], 0, sizeof(rd->ports[0]));
	snprintf(rd->ports[0].vendor, sizeof(rd->ports[0].vendor), "DEFAULT");
	rd->ports[0].s.set = true;
	snprintf(rd->ports[0].s.value, sizeof(rd->ports[0].s.value), SC4S_DEFAULT_UDP_PORT);
}

int env_file_apply(const char *path, env_emit_fn emit, void *ctx, struct env_map *out, char *err,
		   size_t errlen)
{
	struct emit_ctx e = { path, emit, ctx, err, errlen };
	static struct env_read rd; /* large; one parse at a time */
	char msg[384];
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&rd, 0, sizeof(rd));
	rd.m = out;
	ret = config_file_read(path, collect, &rd, msg, sizeof(msg));
	if (ret) {
		snprintf(err, errlen, "--env-file %s", msg);
		return ret;
	}
	sc4s_defaults(&rd);
	if (rd.default_off) {
		struct env_setting off = { .set = true, .line = rd.default_off };
		struct env_mapping *r = row_of(&rd, "SC4S_LISTEN_DEFAULT_UDP_PORT", &off);

		snprintf(r->became, sizeof(r->became),
			 "no flag: no default listener (SC4S's 514 left out)");
	}
	if (rd.nr_ports && (ret = map_ports(&rd, &e)))
		return ret;
	if ((ret = map_sockets(&rd, &e)) || (ret = map_rcvbuf(&rd, &e)) ||
	    (ret = map_window(&rd, &e)) || (ret = map_timezone(&rd, &e)))
		return ret;
	return 0;
}

void env_file_report(const struct env_map *m, const char *path)
{
	char at[320];

	for (unsigned int i = 0; i < m->n; i++) {
		const struct env_mapping *r = &m->rows[i];

		if (r->sc4s_default)
			snprintf(at, sizeof(at), "%s: %s unset, SC4S's default %s", path, r->name,
				 r->value);
		else
			snprintf(at, sizeof(at), "%s:%u: %s=%s", path, r->line, r->name, r->value);
		pr_note("--env-file %s -> %s%s%s%s%s\n", at, r->flag, r->flag[0] ? " " : "",
			r->became, r->overridden_by[0] ? " (overridden by the " : "",
			r->overridden_by[0] ?
				(!strcmp(r->overridden_by, "config") ? "--config file)" :
								       "command line)") :
				"");
	}
	for (unsigned int i = 0; i < m->nr_skipped && i < ENV_SKIP_MAX; i++)
		pr_note("--env-file %s:%u: %s ignored (%s)\n", path, m->skipped[i].line,
			m->skipped[i].name,
			m->skipped[i].listener ? "not a UDP listener" : "not for a UDP receiver");
	if (m->nr_skipped > ENV_SKIP_MAX)
		pr_note("--env-file %s:%u: and %u more settings after it ignored\n", path,
			m->skipped[ENV_SKIP_MAX - 1].line, m->nr_skipped - ENV_SKIP_MAX);
	for (unsigned int i = 0; i < m->nr_warnings; i++)
		pr_warn("--env-file %s: WARNING: %s\n",
			where(at, sizeof(at), path, m->warning_line[i]), m->warnings[i]);
}
