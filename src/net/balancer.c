// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/array.h"
#include "net/balancer.h"
#include "net/handover.h"
#include "common/log.h"
#include "balancer.skel.h"

struct balancer {
	struct balancer_bpf *skel;
	enum balance_policy policy;
	unsigned int n;
	int ncpus;
	bool pressure;		       /* BALANCE_F_PRESSURE: leastloaded */
	struct bpf_link *enqueue_link; /* the pressure programs */
	struct bpf_link *dequeue_link;
	__u32 *live;   /* live_sockets in the kernel's .bss */
	void *bss_map; /* adopted: our own mapping of the .bss map */
	size_t bss_len;
};

#define POLICY_ROW(id, value, name, flags) { BALANCE_##id, name, flags },
static const struct {
	enum balance_policy policy;
	const char *name;
	unsigned int flags;
} policies[] = { BALANCE_POLICIES(POLICY_ROW) };
#undef POLICY_ROW

int balance_policy_from_name(const char *name, enum balance_policy *out)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(policies); i++) {
		if (!strcmp(name, policies[i].name)) {
			*out = policies[i].policy;
			return 0;
		}
	}
	return -EINVAL;
}

const char *balance_policy_name(enum balance_policy p)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(policies); i++)
		if (policies[i].policy == p)
			return policies[i].name;
	return "?";
}

unsigned int balance_policy_flags(enum balance_policy p)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(policies); i++)
		if (policies[i].policy == p)
			return policies[i].flags;
	return 0;
}

const char *balance_policy_needs(enum balance_policy p)
{
	return balance_policy_flags(p) & BALANCE_F_PRESSURE ? "CAP_BPF and CAP_PERFMON" : "CAP_BPF";
}

const char *balance_policy_list(char *buf, size_t len, const char *sep, const char *last,
				unsigned int with, unsigned int without)
{
	unsigned int n = 0, left = 0;
	size_t at = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(policies); i++)
		left += (policies[i].flags & with) == with && !(policies[i].flags & without);
	buf[0] = '\0';
	for (unsigned int i = 0; i < ARRAY_SIZE(policies) && at < len; i++) {
		if ((policies[i].flags & with) != with || (policies[i].flags & without))
			continue;
		at += snprintf(buf + at, len - at, "%s%s",
			       !n	     ? "" :
			       n + 1 == left ? last :
					       sep,
			       policies[i].name);
		n++;
	}
	return buf;
}

int balancer_probe(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = SK_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SK_REUSEPORT, "srx_probe", "GPL", insns,
			       ARRAY_SIZE(insns), NULL);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

struct balancer *balancer_open(enum balance_policy policy, unsigned int nr_sockets)
{
	char others[64];
	struct balancer *b;
	int err;

	if ((balance_policy_flags(policy) & BALANCE_F_NO_PROGRAM) || nr_sockets == 0 ||
	    nr_sockets > REUSEPORT_MAX_SOCKETS) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->n = nr_sockets;
	b->policy = policy;
	b->pressure = balance_policy_flags(policy) & BALANCE_F_PRESSURE;
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus < 0) {
		err = b->ncpus;
		goto fail;
	}
	b->skel = balancer_bpf__open();
	if (!b->skel) {
		err = -errno;
		goto fail;
	}
	b->skel->rodata->nr_sockets = nr_sockets;
	b->skel->rodata->policy = policy;
	err = bpf_map__set_max_entries(b->skel->maps.socks, nr_sockets);
	if (!err)
		err = bpf_map__set_max_entries(b->skel->maps.counters, nr_sockets + 1);
	if (!err)
		err = bpf_map__set_max_entries(b->skel->maps.queued, nr_sockets);
	if (err)
		goto fail;
	/* The pressure programs are tracing programs (CAP_PERFMON): only
	 * leastloaded loads them, so random and roundrobin need CAP_BPF alone. */
	bpf_program__set_autoload(b->skel->progs.pressure_enqueue, b->pressure);
	bpf_program__set_autoload(b->skel->progs.pressure_dequeue, b->pressure);
	err = balancer_bpf__load(b->skel);
	if (err) {
		if ((err == -EPERM || err == -EACCES) && b->pressure)
			pr_warn("--balance %s needs CAP_BPF and CAP_PERFMON (its tp_btf "
				"programs track each socket's queue); %s needs CAP_BPF only\n",
				balance_policy_name(policy),
				BALANCE_POLICY_LIST(others, BALANCE_F_CLASSIC, 0));
		else if (err == -EPERM || err == -EACCES)
			pr_warn("loading the SK_REUSEPORT program needs CAP_BPF (or root)\n");
		else
			pr_warn("loading the SK_REUSEPORT program failed: %s\n", strerror(-err));
		goto fail;
	}
	if (b->pressure) {
		b->enqueue_link = bpf_program__attach(b->skel->progs.pressure_enqueue);
		if (!b->enqueue_link) {
			err = -errno;
			pr_warn("attaching tp_btf/sk_data_ready: %s (needs CAP_PERFMON)\n",
				strerror(-err));
			goto fail;
		}
		b->dequeue_link = bpf_program__attach(b->skel->progs.pressure_dequeue);
		if (!b->dequeue_link) {
			err = -errno;
			pr_warn("attaching tp_btf/sock_recv_length: %s (needs CAP_PERFMON)\n",
				strerror(-err));
			goto fail;
		}
	}
	b->live = &b->skel->bss->live_sockets;
	return b;
fail:
	balancer_close(b);
	errno = -err;
	return NULL;
}

void balancer_close(struct balancer *b)
{
	if (!b)
		return;
	bpf_link__destroy(b->dequeue_link);
	bpf_link__destroy(b->enqueue_link);
	if (b->bss_map)
		munmap(b->bss_map, b->bss_len);
	balancer_bpf__destroy(b->skel);
	free(b);
}

int balancer_export(struct balancer *b, int (*fn)(const char *name, int fd, void *ctx), void *ctx)
{
	return handover_export_maps(b->skel->obj, fn, ctx);
}

struct balancer *balancer_adopt(const struct handover *h)
{
	return balancer_adopt_as(h, "balancer");
}

struct balancer *balancer_adopt_as(const struct handover *h, const char *owner)
{
	struct balancer *b = calloc(1, sizeof(*b));
	int err = 0;

	if (!b)
		return NULL;
	b->ncpus = libbpf_num_possible_cpus();
	b->skel = balancer_bpf__open();
	if (b->ncpus < 0 || !b->skel) {
		err = b->ncpus < 0 ? b->ncpus : -errno;
		goto fail;
	}
	/* The maps are the old process's, not new ones: nothing is loaded (that
	 * would need CAP_BPF, long dropped), the program stays attached. */
	err = handover_reuse_maps(b->skel->obj, owner, h, b->skel->maps.rodata);
	if (err)
		goto fail;
	b->n = bpf_map__max_entries(b->skel->maps.socks);
	b->bss_map = handover_map_bss(b->skel->maps.bss, &b->bss_len, "balancer");
	if (!b->bss_map) {
		err = -errno;
		goto fail;
	}
	b->live = (__u32 *)((char *)b->bss_map +
			    ((char *)&b->skel->bss->live_sockets - (char *)b->skel->bss));
	return b;
fail:
	balancer_close(b);
	errno = -err;
	return NULL;
}

unsigned int balancer_get_live(const struct balancer *b)
{
	return __atomic_load_n(b->live, __ATOMIC_ACQUIRE);
}

int balancer_set_socket(struct balancer *b, unsigned int idx, int fd)
{
	__u64 value = fd; /* an 8-byte map takes the fd as a __u64 */
	__u32 key = idx;

	if (idx >= b->n)
		return -EINVAL;
	if (bpf_map__update_elem(b->skel->maps.socks, &key, sizeof(key), &value, sizeof(value),
				 BPF_ANY))
		return -errno;
	if (b->pressure) {
		/* The socket's own storage names its slot for the pressure programs. */
		struct balancer_slot slot = { .slot = idx };

		if (bpf_map__update_elem(b->skel->maps.slot_of, &fd, sizeof(fd), &slot,
					 sizeof(slot), BPF_ANY))
			return -errno;
	}
	return 0;
}

int balancer_read_queued(struct balancer *b, uint64_t *queued)
{
	if (!b->pressure)
		return -ENOENT;
	for (__u32 slot = 0; slot < b->n; slot++) {
		__u32 v = 0;

		if (bpf_map__lookup_elem(b->skel->maps.queued, &slot, sizeof(slot), &v, sizeof(v),
					 0))
			return -errno;
		queued[slot] = v;
	}
	return 0;
}

int balancer_verify(struct balancer *b, const uint64_t *cookies, unsigned int n)
{
	if (n != b->n) {
		pr_warn("the group has %u sockets but the map has %u slots\n", n, b->n);
		return -EXDEV;
	}
	return balancer_verify_live(b, cookies, n);
}

int balancer_verify_live(struct balancer *b, const uint64_t *cookies, unsigned int live)
{
	if (live > b->n) {
		pr_warn("%u sockets in selection but the map has %u slots\n", live, b->n);
		return -EXDEV;
	}
	for (__u32 i = 0; i < b->n; i++) {
		__u64 cookie = 0;
		int err = bpf_map__lookup_elem(b->skel->maps.socks, &i, sizeof(i), &cookie,
					       sizeof(cookie), 0) ?
				  -errno :
				  0;

		if (i >= live) {
			/* Out of selection: a slot still filled could be picked by a
			 * program that read the old live count. */
			if (err != -ENOENT) {
				pr_warn("balancer slot %u is out of selection but not empty\n", i);
				return -EEXIST;
			}
			continue;
		}
		if (err) {
			pr_warn("balancer slot %u is empty\n", i);
			return -ENOENT;
		}
		if (cookie != cookies[i]) {
			pr_warn("balancer slot %u holds socket cookie %llu, expected %llu\n", i,
				(unsigned long long)cookie, (unsigned long long)cookies[i]);
			return -EXDEV;
		}
	}
	return 0;
}

int balancer_slot_cookie(struct balancer *b, unsigned int idx, uint64_t *cookie)
{
	__u32 key = idx;
	__u64 v = 0;

	if (bpf_map__lookup_elem(b->skel->maps.socks, &key, sizeof(key), &v, sizeof(v), 0))
		return -errno;
	*cookie = v;
	return 0;
}

int balancer_clear_socket(struct balancer *b, unsigned int idx)
{
	__u32 key = idx;

	if (idx >= b->n)
		return -EINVAL;
	if (bpf_map__delete_elem(b->skel->maps.socks, &key, sizeof(key), 0) && errno != ENOENT)
		return -errno;
	return 0;
}

void balancer_set_live(struct balancer *b, unsigned int live)
{
	/* One aligned 32-bit store: a program run sees the old or the new value. */
	__atomic_store_n(b->live, live, __ATOMIC_RELEASE);
}

unsigned int balancer_slots(const struct balancer *b)
{
	return b->n;
}

int balancer_attach(struct balancer *b, int fd)
{
	int prog_fd = bpf_program__fd(b->skel->progs.select_socket);

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &prog_fd, sizeof(prog_fd)))
		return -errno;
	return 0;
}

int balancer_detach(int fd)
{
	int dummy = 0;

	if (setsockopt(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &dummy, sizeof(dummy)))
		return -errno;
	return 0;
}

int balancer_read(struct balancer *b, uint64_t *steered, uint64_t *failures)
{
	__u64 *percpu = calloc(b->ncpus, sizeof(__u64));
	int err = 0;

	if (!percpu)
		return -ENOMEM;
	for (__u32 slot = 0; slot <= b->n; slot++) {
		uint64_t sum = 0;

		if (bpf_map__lookup_elem(b->skel->maps.counters, &slot, sizeof(slot), percpu,
					 sizeof(__u64) * b->ncpus, 0)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < b->ncpus; c++)
			sum += percpu[c];
		if (slot < b->n)
			steered[slot] = sum;
		else
			*failures = sum;
	}
	free(percpu);
	return err;
}
