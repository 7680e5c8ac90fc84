// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/array.h"
#include "common/log.h"
#include "net/fair_share.h"
#include "net/handover.h"
#include "fair_share.skel.h"

#ifndef SO_ATTACH_BPF
#define SO_ATTACH_BPF 50
#endif
#ifndef SO_DETACH_BPF
#define SO_DETACH_BPF 27 /* SO_DETACH_FILTER */
#endif

struct fair_share {
	struct fair_share_bpf *skel;
	int ncpus;
	struct fair_share_bpf__bss *bss; /* the filter's, mapped */
	void *bss_map;			 /* adopted: our own mapping of it */
	size_t bss_len;
};

/* The object opened, not loaded: 0 or -errno (fs freed by the caller). */
static int fs_new(struct fair_share **out)
{
	struct fair_share *fs = calloc(1, sizeof(*fs));

	*out = fs;
	if (!fs)
		return -ENOMEM;
	fs->ncpus = libbpf_num_possible_cpus();
	if (fs->ncpus < 0)
		return fs->ncpus;
	fs->skel = fair_share_bpf__open();
	return fs->skel ? 0 : -errno;
}

struct fair_share *fair_share_open(uint32_t max_senders)
{
	struct fair_share *fs;
	int err = fs_new(&fs);

	if (err)
		goto fail;
	err = bpf_map__set_max_entries(fs->skel->maps.buckets, max_senders);
	if (!err)
		err = fair_share_bpf__load(fs->skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			pr_warn("--fair-share: loading its socket filter needs CAP_BPF (or root); "
				"classic BPF keeps no state per sender\n");
		else
			pr_warn("--fair-share: loading its socket filter: %s\n", strerror(-err));
		goto fail;
	}
	fs->bss = fs->skel->bss;
	return fs;
fail:
	fair_share_close(fs);
	errno = -err;
	return NULL;
}

int fair_share_export(struct fair_share *fs, int (*fn)(const char *name, int fd, void *ctx),
		      void *ctx)
{
	return handover_export_maps(fs->skel->obj, fn, ctx);
}

struct fair_share *fair_share_adopt(const struct handover *h, const char *owner)
{
	struct fair_share *fs;
	int err = fs_new(&fs);

	if (err)
		goto fail;
	/* The old process's maps; the filter stays attached to the sockets.
	 * Nothing is loaded: no capability needed. */
	err = handover_reuse_maps(fs->skel->obj, owner, h, NULL);
	if (err)
		goto fail;
	fs->bss_map = handover_map_bss(fs->skel->maps.bss, &fs->bss_len, "fair-share filter");
	if (!fs->bss_map) {
		err = -errno;
		goto fail;
	}
	fs->bss = fs->bss_map;
	return fs;
fail:
	fair_share_close(fs);
	errno = -err;
	return NULL;
}

void fair_share_close(struct fair_share *fs)
{
	if (!fs)
		return;
	if (fs->bss_map)
		munmap(fs->bss_map, fs->bss_len);
	fair_share_bpf__destroy(fs->skel);
	free(fs);
}

int fair_share_set_prefix(struct fair_share *fs, const uint8_t addr[16], unsigned int prefixlen,
			  uint32_t weight)
{
	struct fair_share_prefix k = { .prefixlen = prefixlen };

	memcpy(k.addr, addr, sizeof(k.addr));
	return bpf_map__update_elem(fs->skel->maps.prefixes, &k, sizeof(k), &weight, sizeof(weight),
				    BPF_ANY);
}

int fair_share_attach(struct fair_share *fs, int fd)
{
	int prog = bpf_program__fd(fs->skel->progs.fair_share);

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &prog, sizeof(prog)) ? -errno : 0;
}

int fair_share_detach(int fd)
{
	int dummy = 0;

	if (setsockopt(fd, SOL_SOCKET, SO_DETACH_BPF, &dummy, sizeof(dummy)) && errno != ENOENT)
		return -errno;
	return 0;
}

int fair_share_read(struct fair_share *fs, int (*fn)(const struct fair_share_row *row, void *ctx),
		    void *ctx)
{
	int map = bpf_map__fd(fs->skel->maps.buckets);
	struct fair_share_key key, next;
	struct fair_share_sender v;
	struct timespec ts;
	uint64_t now;
	void *prev = NULL;
	int err;

	/* The filter's clock: bpf_ktime_get_ns() is CLOCK_MONOTONIC. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	while (!bpf_map_get_next_key(map, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map, &key, &v))
			continue; /* evicted meanwhile */
		struct fair_share_row row = { .seen = v.seen, .shed = v.shed, .weight = v.weight };

		memcpy(row.addr, key.addr, sizeof(row.addr));
		/* The window the filter last closed, or, for a sender that has
		 * sent for less than one, its count so far as a rate. */
		if (now - v.win_start < FAIR_SHARE_WINDOW_NS) {
			row.rate = v.last_rate > v.win_count ? v.last_rate : v.win_count;
			row.active = true;
		} else if (now - v.win_start < 2 * FAIR_SHARE_WINDOW_NS) {
			row.rate = v.win_count;
			row.active = v.win_count > 0;
		}
		err = fn(&row, ctx);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}

int fair_share_stats(struct fair_share *fs, uint64_t *stats)
{
	uint64_t *v = calloc(fs->ncpus, sizeof(*v));
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < FAIR_SHARE_NR && !err; k++) {
		stats[k] = 0;
		err = bpf_map__lookup_elem(fs->skel->maps.stats, &k, sizeof(k), v,
					   sizeof(*v) * fs->ncpus, 0);
		for (int c = 0; !err && c < fs->ncpus; c++)
			stats[k] += v[c];
	}
	free(v);
	return err;
}

void fair_share_get(struct fair_share *fs, bool *on, double *level)
{
	uint64_t interval = __atomic_load_n(&fs->bss->level_interval_ns, __ATOMIC_ACQUIRE);

	*on = __atomic_load_n(&fs->bss->pressure, __ATOMIC_ACQUIRE) && interval;
	*level = interval ? 1e9 / interval : 0;
}

void fair_share_set(struct fair_share *fs, bool on, double level)
{
	uint64_t interval = 0;

	/* Protected senders alone past the capacity leave a level of 0: the
	 * others then get one datagram a second, not an unshaped pass. */
	if (on)
		interval = level < 1 ? 1000000000ULL : level < 1e9 ? (uint64_t)(1e9 / level) : 1;
	/* The interval first: a filter that sees pressure sees its level. */
	__atomic_store_n(&fs->bss->level_interval_ns, interval, __ATOMIC_RELEASE);
	__atomic_store_n(&fs->bss->pressure, on ? 1 : 0, __ATOMIC_RELEASE);
}

struct by_need {
	double need; /* rate / weight: the level that satisfies it */
	uint64_t rate;
	uint32_t weight;
};

static int cmp_need(const void *a, const void *b)
{
	double x = ((const struct by_need *)a)->need, y = ((const struct by_need *)b)->need;

	return x < y ? -1 : x > y;
}

double fair_share_level(const uint64_t *rate, const uint32_t *weight, unsigned int n,
			double capacity)
{
	struct by_need *s = calloc(n ? n : 1, sizeof(*s));
	double left = capacity, weights = 0, level = 0;
	unsigned int m = 0;

	if (!s)
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		if (!weight[i]) {
			left -= (double)rate[i]; /* protected: served first */
			continue;
		}
		s[m++] = (struct by_need){ (double)rate[i] / weight[i], rate[i], weight[i] };
		weights += weight[i];
	}
	array_sort(s, m, sizeof(*s), cmp_need);
	if (left < 0)
		left = 0;
	for (unsigned int i = 0; i < m; i++) {
		/* Everyone from i on wants more than s[i].need: can all have it? */
		if (s[i].need * weights > left) {
			level = left / weights;
			free(s);
			return level;
		}
		left -= (double)s[i].rate;
		weights -= s[i].weight;
		level = s[i].need;
	}
	free(s);
	return level;
}
