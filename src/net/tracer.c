// SPDX-License-Identifier: MIT
/*
 * User side of bpf/tracer.bpf.c: every counter is per CPU in the kernel and
 * summed here, when asked, never per packet.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "common/array.h"
#include "bpf/tracer.h"
#include "tracer.skel.h"
#include "common/log.h"
#include "net/handover.h"
#include "net/tracer.h"

#define REASON_NAME_LEN 64

struct reason_name {
	uint32_t value;
	char name[REASON_NAME_LEN];
};

struct tracer {
	struct tracer_bpf *skel;
	int nr_cpus;
	char names[TRACER_MAX_REASONS][REASON_NAME_LEN];
	struct reason_name *extra; /* enumerators >= TRACER_MAX_REASONS */
	size_t nr_extra;
	char unknown[REASON_NAME_LEN];	     /* for tracer_reason_name() past the table */
	int adopted_links[TRACER_MAX_LINKS]; /* handed over: held, never attached by us */
	char adopted_names[TRACER_MAX_LINKS][64];
	unsigned int nr_adopted;
	bool senders; /* sender_drops counts (its size is 1 when not) */
};

static const char *strip_reason_prefix(const char *name)
{
	static const char *const prefixes[] = { "SKB_DROP_REASON_", "SKB_" };

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t n = strlen(prefixes[i]);

		if (!strncmp(name, prefixes[i], n) && name[n])
			return name + n;
	}
	return name;
}

static int add_extra_name(struct tracer *t, uint32_t value, const char *name)
{
	struct reason_name *e = realloc(t->extra, (t->nr_extra + 1) * sizeof(*e));

	if (!e)
		return -ENOMEM;
	t->extra = e;
	e[t->nr_extra].value = value;
	snprintf(e[t->nr_extra].name, REASON_NAME_LEN, "%s", name);
	t->nr_extra++;
	return 0;
}

/*
 * Names from the running kernel's BTF, not a table of ours: reasons are added
 * and renumbered between kernels. Without BTF the names stay REASON_<n>.
 */
static int load_reason_names(struct tracer *t)
{
	const struct btf_enum *e;
	const struct btf_type *type;
	struct btf *btf;
	int id, err = 0;

	for (int i = 0; i < TRACER_MAX_REASONS; i++)
		snprintf(t->names[i], REASON_NAME_LEN, "REASON_%d", i);

	btf = btf__load_vmlinux_btf();
	if (!btf) {
		pr_warn("no kernel BTF (%s): drop reasons shown as numbers\n", strerror(errno));
		return 0;
	}
	id = btf__find_by_name_kind(btf, "skb_drop_reason", BTF_KIND_ENUM);
	if (id < 0) {
		pr_warn("kernel BTF has no enum skb_drop_reason: reasons shown as numbers\n");
		goto out;
	}
	type = btf__type_by_id(btf, id);
	e = btf_enum(type);
	for (int i = 0; i < btf_vlen(type); i++, e++) {
		const char *name = strip_reason_prefix(btf__name_by_offset(btf, e->name_off));
		uint32_t value = (uint32_t)e->val;

		if (value < TRACER_MAX_REASONS)
			snprintf(t->names[value], REASON_NAME_LEN, "%s", name);
		else if ((err = add_extra_name(t, value, name)))
			break;
	}
out:
	btf__free(btf);
	return err;
}

const char *tracer_reason_name(const struct tracer *t, uint32_t reason)
{
	if (reason < TRACER_MAX_REASONS)
		return t->names[reason];
	for (size_t i = 0; i < t->nr_extra; i++)
		if (t->extra[i].value == reason)
			return t->extra[i].name;
	return "UNKNOWN";
}

int tracer_reason_value(const struct tracer *t, const char *name)
{
	for (int i = 0; i < TRACER_MAX_REASONS; i++)
		if (!strcmp(t->names[i], name))
			return i;
	return -1;
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	/* Closing a link fd detaches only if no other process holds it. */
	for (unsigned int i = 0; i < t->nr_adopted; i++)
		close(t->adopted_links[i]);
	tracer_bpf__destroy(t->skel);
	free(t->extra);
	free(t);
}

/* A tracer with its object opened, not loaded: CPUs counted, names read. */
static struct tracer *tracer_new(void)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return NULL;
	t->nr_cpus = libbpf_num_possible_cpus();
	if (t->nr_cpus < 0) {
		err = t->nr_cpus;
		pr_warn("cannot count CPUs: %s\n", strerror(-err));
		goto fail;
	}
	err = load_reason_names(t);
	if (err)
		goto fail;
	t->skel = tracer_bpf__open();
	if (!t->skel) {
		err = -errno;
		pr_warn("failed to open the drops BPF object: %s\n", strerror(-err));
		goto fail;
	}
	return t;
fail:
	tracer_close(t);
	errno = -err;
	return NULL;
}

struct tracer *tracer_open(const struct tracer_opts *opts)
{
	struct tracer *t = tracer_new();
	int err;

	if (!t)
		return NULL;
	t->skel->rodata->filter_port = opts ? opts->port : 0;
	t->skel->rodata->filter_netns = opts ? opts->netns_ino : 0;
	bpf_program__set_autoload(t->skel->progs.on_sock_recv_length, opts && opts->count_reads);
	/* Off, the map is still there (one entry) so that a hand-over finds it. */
	t->senders = opts && opts->senders > 1;
	t->skel->rodata->count_senders = t->senders;
	err = bpf_map__set_max_entries(t->skel->maps.sender_drops, t->senders ? opts->senders : 1);
	if (err) {
		pr_warn("tracer: %u sender entries: %s\n", opts->senders, strerror(-err));
		goto fail;
	}

	err = tracer_bpf__load(t->skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			pr_warn("loading BPF needs CAP_BPF and CAP_PERFMON (or root): %s\n",
				strerror(-err));
		else
			pr_warn("failed to load the drops BPF programs: %s\n", strerror(-err));
		goto fail;
	}
	err = tracer_bpf__attach(t->skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			pr_warn("attaching tracepoints needs CAP_BPF and CAP_PERFMON (or root): %s\n",
				strerror(-err));
		else
			pr_warn("failed to attach the drops tracepoints: %s\n", strerror(-err));
		goto fail;
	}
	return t;
fail:
	tracer_close(t);
	errno = -err;
	return NULL;
}

int tracer_export(struct tracer *t, int (*fn)(int is_link, const char *name, int fd, void *ctx),
		  void *ctx)
{
	const struct bpf_object_skeleton *sk = t->skel->skeleton;
	struct bpf_map *map;
	int err;

	bpf_object__for_each_map(map, t->skel->obj)
	{
		if (bpf_map__fd(map) < 0)
			continue;
		err = fn(0, bpf_map__name(map), bpf_map__fd(map), ctx);
		if (err)
			return err;
	}
	for (unsigned int i = 0; i < t->nr_adopted; i++) {
		err = fn(1, t->adopted_names[i], t->adopted_links[i], ctx);
		if (err)
			return err;
	}
	for (int i = 0; i < sk->prog_cnt; i++) {
		struct bpf_link *l = *sk->progs[i].link;

		if (!l)
			continue;
		err = fn(1, sk->progs[i].name, bpf_link__fd(l), ctx);
		if (err)
			return err;
	}
	return 0;
}

struct tracer *tracer_adopt(const struct handover *h)
{
	const struct bpf_object_skeleton *sk;
	struct tracer *t = tracer_new();
	int err;

	if (!t)
		return NULL;
	/* The counters go on from where the old process left them: the same
	 * maps, the same attached programs; nothing is loaded or attached. */
	/* A process built without per-sender maps hands none over: its
	 * programs go on without them, and so do we. */
	if (handover_find(h, HANDOVER_MAP, "tracer", "sender_drops") < 0 ||
	    handover_find(h, HANDOVER_MAP, "tracer", "sender_stats") < 0) {
		bpf_map__set_autocreate(t->skel->maps.sender_drops, false);
		bpf_map__set_autocreate(t->skel->maps.sender_stats, false);
	}
	err = handover_reuse_maps(t->skel->obj, "tracer", h, t->skel->maps.rodata);
	if (err)
		goto fail;
	t->senders = bpf_map__autocreate(t->skel->maps.sender_drops) &&
		     bpf_map__max_entries(t->skel->maps.sender_drops) > 1;
	sk = t->skel->skeleton;
	for (int i = 0; i < sk->prog_cnt && i < TRACER_MAX_LINKS; i++) {
		int fd = handover_find(h, HANDOVER_LINK, "tracer", sk->progs[i].name);

		if (fd < 0 && *sk->progs[i].prog == t->skel->progs.on_sock_recv_length)
			continue; /* loaded only when asked */
		if (fd < 0) {
			pr_warn("hand-over: the tracer's %s is not attached\n", sk->progs[i].name);
			err = -ENOENT;
			goto fail;
		}
		t->adopted_links[t->nr_adopted] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (t->adopted_links[t->nr_adopted] < 0) {
			err = -errno;
			goto fail;
		}
		snprintf(t->adopted_names[t->nr_adopted++], sizeof(t->adopted_names[0]), "%s",
			 sk->progs[i].name);
	}
	return t;
fail:
	tracer_close(t);
	errno = -err;
	return NULL;
}

/* Per-CPU values come back as nr_cpus slots, each rounded up to 8 bytes. */
static size_t percpu_stride(size_t value_size)
{
	return (value_size + 7) & ~(size_t)7;
}

/* Keys per bpf_map_lookup_batch call: every map of a socket's counts fits
 * in one call (sockets x reasons), so a read costs the same few calls however
 * many keys it holds; the per-sender map, larger, is read in chunks of it. */
#define BATCH_KEYS 1024
/* The kernel's own "not supported" (not in the UAPI headers), as a kernel
 * without batch lookups for a map type answers. */
#define KERNEL_ENOTSUPP 524

/* One key at a time (kernels without batch lookups for the map type).
 * Entries are never deleted while we walk, so get_next_key cannot restart. */
static int walk_percpu_map_by_key(struct tracer *t, struct bpf_map *map,
				  int (*fn)(struct tracer *t, const void *key, const void *values,
					    void *ctx),
				  void *ctx)
{
	size_t key_size = bpf_map__key_size(map);
	size_t stride = percpu_stride(bpf_map__value_size(map));
	int fd = bpf_map__fd(map);
	void *prev = NULL, *key, *next, *values;
	int err = 0;

	key = calloc(2, key_size);
	values = calloc(t->nr_cpus, stride);
	if (!key || !values) {
		err = -ENOMEM;
		goto out;
	}
	next = (char *)key + key_size;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, values)) {
			if (errno == ENOENT)
				continue;
			err = -errno;
			goto out;
		}
		err = fn(t, key, values, ctx);
		if (err)
			goto out;
	}
	if (errno != ENOENT)
		err = -errno;
out:
	free(key);
	free(values);
	return err;
}

/*
 * Calls fn for every key of a per-CPU map with its nr_cpus values, read
 * BATCH_KEYS keys per system call. The walk goes bucket by bucket, so an LRU
 * eviction meanwhile can show a key twice or miss one, never loop; callers
 * that need each key once merge duplicates.
 */
static int walk_percpu_map(struct tracer *t, struct bpf_map *map,
			   int (*fn)(struct tracer *t, const void *key, const void *values,
				     void *ctx),
			   void *ctx)
{
	size_t key_size = bpf_map__key_size(map);
	size_t stride = percpu_stride(bpf_map__value_size(map)) * t->nr_cpus;
	uint32_t chunk = BATCH_KEYS, count;
	uint64_t in_batch = 0, out_batch = 0; /* the kernel's cursor (a bucket) */
	int fd = bpf_map__fd(map), err = 0, rc;
	char *keys, *values;
	bool first = true, done = false;

	keys = calloc(chunk, key_size);
	values = calloc(chunk, stride);
	if (!keys || !values) {
		err = -ENOMEM;
		goto out;
	}
	while (!done && !err) {
		count = chunk;
		rc = bpf_map_lookup_batch(fd, first ? NULL : &in_batch, &out_batch, keys, values,
					  &count, NULL);
		if (rc && errno == ENOENT) {
			done = true; /* the last keys came with it */
		} else if (rc && first &&
			   (errno == EINVAL || errno == EOPNOTSUPP || errno == KERNEL_ENOTSUPP)) {
			err = walk_percpu_map_by_key(t, map, fn, ctx);
			goto out;
		} else if (rc) {
			err = -errno; /* ENOSPC: a bucket longer than a chunk */
			break;
		}
		for (uint32_t i = 0; i < count && !err; i++)
			err = fn(t, keys + i * key_size, values + i * stride, ctx);
		in_batch = out_batch;
		first = false;
	}
out:
	free(keys);
	free(values);
	return err;
}

static uint64_t sum_u64(const struct tracer *t, const void *values, size_t stride)
{
	uint64_t sum = 0;

	for (int cpu = 0; cpu < t->nr_cpus; cpu++)
		sum += *(const uint64_t *)((const char *)values + cpu * stride);
	return sum;
}

/* The CPU with the highest mark gives both the mark and its rcvbuf. */
static void merge_info(const struct tracer *t, const void *values, struct tracer_sock_stats *s)
{
	size_t stride = percpu_stride(sizeof(struct drops_sock_info));

	for (int cpu = 0; cpu < t->nr_cpus; cpu++) {
		const struct drops_sock_info *v =
			(const void *)((const char *)values + cpu * stride);

		s->enqueue_failures += v->enqueue_failures;
		s->enqueue_failure_bytes += v->enqueue_failure_bytes;
		if (v->queue_hwm_bytes > s->queue_hwm_bytes) {
			s->queue_hwm_bytes = v->queue_hwm_bytes;
			s->rcvbuf = v->rcvbuf;
		}
	}
}

static void add_drop(struct tracer_sock_stats *s, uint32_t reason, uint64_t n)
{
	s->total += n;
	if (reason < TRACER_MAX_REASONS)
		s->by_reason[reason] += n;
}

/* ---- one socket ---------------------------------------------------------- */

struct read_one {
	uint64_t cookie;
	struct tracer_sock_stats *out;
};

static int read_one_drop(struct tracer *t, const void *key, const void *values, void *ctx)
{
	const struct drops_sock_key *k = key;
	struct read_one *r = ctx;

	if (k->cookie == r->cookie)
		add_drop(r->out, k->reason, sum_u64(t, values, sizeof(uint64_t)));
	return 0;
}

int tracer_read_socket(struct tracer *t, uint64_t cookie, struct tracer_sock_stats *out)
{
	struct read_one r = { .cookie = cookie, .out = out };
	void *values;
	int err = 0;

	memset(out, 0, sizeof(*out));
	values = calloc(t->nr_cpus, percpu_stride(sizeof(struct drops_sock_info)));
	if (!values)
		return -ENOMEM;
	if (!bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.sock_info), &cookie, values))
		merge_info(t, values, out);
	else if (errno != ENOENT)
		err = -errno;
	free(values);
	if (err)
		return err;
	return walk_percpu_map(t, t->skel->maps.sock_drops, read_one_drop, &r);
}

/* ---- every socket -------------------------------------------------------- */

/* Compact rows gathered from both maps, then sorted and merged by cookie. */
struct sock_row {
	uint64_t cookie;
	uint32_t reason; /* drop rows */
	uint32_t is_info;
	uint64_t count;		     /* drop rows */
	struct drops_sock_info info; /* info rows, already merged over CPUs */
};

struct row_vec {
	struct sock_row *v;
	size_t n, cap;
};

static struct sock_row *row_push(struct row_vec *rv)
{
	if (ARRAY_PUSH_ROOM(rv->v, rv->cap, rv->n, 64))
		return NULL;
	memset(&rv->v[rv->n], 0, sizeof(rv->v[0]));
	return &rv->v[rv->n++];
}

static int gather_drop(struct tracer *t, const void *key, const void *values, void *ctx)
{
	const struct drops_sock_key *k = key;
	struct sock_row *r = row_push(ctx);

	if (!r)
		return -ENOMEM;
	r->cookie = k->cookie;
	r->reason = k->reason;
	r->count = sum_u64(t, values, sizeof(uint64_t));
	return 0;
}

static int gather_info(struct tracer *t, const void *key, const void *values, void *ctx)
{
	struct tracer_sock_stats s = {};
	struct sock_row *r = row_push(ctx);

	if (!r)
		return -ENOMEM;
	merge_info(t, values, &s);
	r->cookie = *(const uint64_t *)key;
	r->is_info = 1;
	r->info.queue_hwm_bytes = s.queue_hwm_bytes;
	r->info.rcvbuf = s.rcvbuf;
	r->info.enqueue_failures = s.enqueue_failures;
	r->info.enqueue_failure_bytes = s.enqueue_failure_bytes;
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct sock_row *x = a, *y = b;

	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	return 0;
}

int tracer_for_each_socket(struct tracer *t,
			   int (*fn)(uint64_t cookie, const struct tracer_sock_stats *s, void *ctx),
			   void *ctx)
{
	struct row_vec rv = {};
	struct tracer_sock_stats *s;
	size_t i = 0;
	int err;

	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = walk_percpu_map(t, t->skel->maps.sock_drops, gather_drop, &rv);
	if (!err)
		err = walk_percpu_map(t, t->skel->maps.sock_info, gather_info, &rv);
	if (err)
		goto out;
	array_sort(rv.v, rv.n, sizeof(rv.v[0]), cmp_row);

	while (i < rv.n) {
		uint64_t cookie = rv.v[i].cookie;

		memset(s, 0, sizeof(*s));
		for (; i < rv.n && rv.v[i].cookie == cookie; i++) {
			const struct sock_row *r = &rv.v[i];

			if (r->is_info) {
				s->queue_hwm_bytes = r->info.queue_hwm_bytes;
				s->rcvbuf = r->info.rcvbuf;
				s->enqueue_failures = r->info.enqueue_failures;
				s->enqueue_failure_bytes = r->info.enqueue_failure_bytes;
			} else {
				add_drop(s, r->reason, r->count);
			}
		}
		err = fn(cookie, s, ctx);
		if (err)
			break;
	}
out:
	free(rv.v);
	free(s);
	return err;
}

/* ---- forgetting -------------------------------------------------------- */

struct forget {
	const uint64_t *cookies;
	size_t n;
	struct drops_sock_key *keys; /* sock_drops keys to delete */
	size_t nr_keys, cap_keys;
};

static int note_forgotten(struct tracer *t, const void *key, const void *values, void *ctx)
{
	const struct drops_sock_key *k = key;
	struct forget *f = ctx;

	if (!array_has_u64(f->cookies, f->n, k->cookie))
		return 0;
	if (ARRAY_PUSH_ROOM(f->keys, f->cap_keys, f->nr_keys, 16))
		return -ENOMEM;
	f->keys[f->nr_keys++] = *k;
	return 0;
}

int tracer_forget_sockets(struct tracer *t, const uint64_t *cookies, size_t n)
{
	int drops_fd = bpf_map__fd(t->skel->maps.sock_drops);
	int info_fd = bpf_map__fd(t->skel->maps.sock_info);
	struct forget f = { .cookies = cookies, .n = n };
	int err;

	if (!n)
		return 0;
	/* Keys first, deletes after: deleting under get_next_key restarts it. */
	err = walk_percpu_map(t, t->skel->maps.sock_drops, note_forgotten, &f);
	for (size_t i = 0; !err && i < f.nr_keys; i++)
		if (bpf_map_delete_elem(drops_fd, &f.keys[i]) && errno != ENOENT)
			err = -errno;
	for (size_t i = 0; !err && i < n; i++)
		if (bpf_map_delete_elem(info_fd, &cookies[i]) && errno != ENOENT)
			err = -errno;
	free(f.keys);
	return err;
}

/* ---- no socket ----------------------------------------------------------- */

struct no_socket_walk {
	int (*fn)(uint16_t port, uint32_t reason, uint64_t count, void *ctx);
	void *ctx;
};

static int visit_port(struct tracer *t, const void *key, const void *values, void *ctx)
{
	const struct drops_port_key *k = key;
	struct no_socket_walk *w = ctx;
	uint64_t n = sum_u64(t, values, sizeof(uint64_t));

	return n ? w->fn((uint16_t)k->port, k->reason, n, w->ctx) : 0;
}

int tracer_for_each_no_socket(struct tracer *t,
			      int (*fn)(uint16_t port, uint32_t reason, uint64_t count, void *ctx),
			      void *ctx)
{
	struct no_socket_walk w = { .fn = fn, .ctx = ctx };

	return walk_percpu_map(t, t->skel->maps.port_drops, visit_port, &w);
}

int tracer_socket_reads(struct tracer *t, uint64_t cookie, uint64_t *reads)
{
	uint64_t *values = calloc(t->nr_cpus, sizeof(*values));
	int err = 0;

	if (!values)
		return -ENOMEM;
	*reads = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.sock_reads), &cookie, values))
		err = errno == ENOENT ? 0 : -errno; /* never read yet */
	else
		*reads = sum_u64(t, values, sizeof(uint64_t));
	free(values);
	return err;
}

/* ---- senders ----------------------------------------------------------- */

struct sender_row {
	struct drops_sender_key key;
	uint64_t count;
};

struct sender_vec {
	struct sender_row *v;
	size_t n, cap, most; /* most: a bound on the walk (LRU restarts) */
};

static int gather_sender(struct tracer *t, const void *key, const void *values, void *ctx)
{
	struct sender_vec *sv = ctx;

	/* An eviction under get_next_key restarts the walk from the first key:
	 * past twice the map's size we stop, duplicates are merged below. */
	if (sv->n >= sv->most)
		return 1;
	if (ARRAY_PUSH_ROOM(sv->v, sv->cap, sv->n, 256))
		return -ENOMEM;
	memcpy(&sv->v[sv->n].key, key, sizeof(sv->v[0].key));
	sv->v[sv->n++].count = sum_u64(t, values, sizeof(uint64_t));
	return 0;
}

static int cmp_sender_row(const void *a, const void *b)
{
	return memcmp(&((const struct sender_row *)a)->key, &((const struct sender_row *)b)->key,
		      sizeof(struct drops_sender_key));
}

/* Every key once, in key order: rows into *sv (freed by the caller). */
static int read_senders(struct tracer *t, struct sender_vec *sv)
{
	size_t w = 0;
	int err;

	if (!t->senders)
		return -ENOENT;
	sv->most = 2 * (size_t)bpf_map__max_entries(t->skel->maps.sender_drops);
	err = walk_percpu_map(t, t->skel->maps.sender_drops, gather_sender, sv);
	if (err < 0)
		return err;
	array_sort(sv->v, sv->n, sizeof(sv->v[0]), cmp_sender_row);
	for (size_t i = 0; i < sv->n; i++) {
		if (w && !cmp_sender_row(&sv->v[w - 1], &sv->v[i]))
			continue; /* the same key seen twice: the later read is as good */
		sv->v[w++] = sv->v[i];
	}
	sv->n = w;
	return 0;
}

/* out's sums from the stats map, and its entries from rows already read. */
static void sender_totals(struct tracer *t, const struct sender_vec *sv,
			  struct tracer_sender_totals *out)
{
	int fd = bpf_map__fd(t->skel->maps.sender_stats);
	uint64_t sums[DROPS_SENDERS_NR] = {}, *values;

	values = calloc(t->nr_cpus, sizeof(*values));
	for (uint32_t slot = 0; values && slot < DROPS_SENDERS_NR; slot++)
		if (!bpf_map_lookup_elem(fd, &slot, values))
			sums[slot] = sum_u64(t, values, sizeof(uint64_t));
	free(values);
	out->max_entries = bpf_map__max_entries(t->skel->maps.sender_drops);
	out->attributed = sums[DROPS_SENDERS_ATTRIBUTED];
	out->inserts = sums[DROPS_SENDERS_INSERTS];
	out->unattributed = sums[DROPS_SENDERS_UNATTRIBUTED];
	for (size_t i = 0; i < sv->n; i++) {
		out->entries++;
		out->in_table += sv->v[i].count;
	}
}

int tracer_read_senders(struct tracer *t, struct tracer_sender_totals *out,
			int (*fn)(const uint8_t addr[16], uint32_t reason, uint64_t count,
				  void *ctx),
			void *ctx)
{
	struct sender_vec sv = {};
	int err;

	if (out)
		memset(out, 0, sizeof(*out));
	err = read_senders(t, &sv);
	if (!err && out)
		sender_totals(t, &sv, out);
	for (size_t i = 0; !err && fn && i < sv.n; i++)
		if (sv.v[i].count)
			err = fn(sv.v[i].key.addr, sv.v[i].key.reason, sv.v[i].count, ctx);
	free(sv.v);
	return err;
}

int tracer_for_each_sender(struct tracer *t,
			   int (*fn)(const uint8_t addr[16], uint32_t reason, uint64_t count,
				     void *ctx),
			   void *ctx)
{
	return tracer_read_senders(t, NULL, fn, ctx);
}

int tracer_sender_totals(struct tracer *t, struct tracer_sender_totals *out)
{
	return tracer_read_senders(t, out, NULL, NULL);
}

uint64_t tracer_map_full(struct tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.map_full);
	uint64_t total = 0;
	uint64_t *values;

	values = calloc(t->nr_cpus, sizeof(*values));
	if (!values)
		return 0;
	for (uint32_t slot = 0; slot < DROPS_MAP_NR; slot++)
		if (!bpf_map_lookup_elem(fd, &slot, values))
			total += sum_u64(t, values, sizeof(uint64_t));
	free(values);
	return total;
}
