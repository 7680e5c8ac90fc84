// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/array.h"
#include "net/balancer.h"
#include "common/log.h"
#include "balancer.skel.h"

struct balancer {
	struct balancer_bpf *skel;
	enum balance_policy policy;
	unsigned int n;
	int ncpus;
	struct bpf_link *enqueue_link;	/* leastloaded: the pressure programs */
	struct bpf_link *dequeue_link;
};

static const char *const policy_names[] = {
	[BALANCE_HASH] = "hash",
	[BALANCE_RANDOM] = "random",
	[BALANCE_ROUNDROBIN] = "roundrobin",
	[BALANCE_LEASTLOADED] = "leastloaded",
};

int balance_policy_from_name(const char *name, enum balance_policy *out)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(policy_names); i++) {
		if (!strcmp(name, policy_names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *balance_policy_name(enum balance_policy p)
{
	return (unsigned int)p < ARRAY_SIZE(policy_names) ? policy_names[p] : "?";
}

struct balancer *balancer_open(enum balance_policy policy, unsigned int nr_sockets)
{
	struct balancer *b;
	int err;

	if (policy == BALANCE_HASH || nr_sockets == 0 || nr_sockets > REUSEPORT_MAX_SOCKETS) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->n = nr_sockets;
	b->policy = policy;
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
	bpf_program__set_autoload(b->skel->progs.pressure_enqueue, policy == BALANCE_LEASTLOADED);
	bpf_program__set_autoload(b->skel->progs.pressure_dequeue, policy == BALANCE_LEASTLOADED);
	err = balancer_bpf__load(b->skel);
	if (err) {
		if ((err == -EPERM || err == -EACCES) && policy == BALANCE_LEASTLOADED)
			pr_warn("--balance leastloaded needs CAP_BPF and CAP_PERFMON (its tp_btf "
				"programs track each socket's queue); random needs CAP_BPF only\n");
		else if (err == -EPERM || err == -EACCES)
			pr_warn("loading the SK_REUSEPORT program needs CAP_BPF (or root)\n");
		else
			pr_warn("loading the SK_REUSEPORT program failed: %s\n", strerror(-err));
		goto fail;
	}
	if (policy == BALANCE_LEASTLOADED) {
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
	balancer_bpf__destroy(b->skel);
	free(b);
}

int balancer_set_socket(struct balancer *b, unsigned int idx, int fd)
{
	__u64 value = fd;	/* an 8-byte map takes the fd as a __u64 */
	__u32 key = idx;

	if (idx >= b->n)
		return -EINVAL;
	if (bpf_map__update_elem(b->skel->maps.socks, &key, sizeof(key), &value, sizeof(value), BPF_ANY))
		return -errno;
	if (b->policy == BALANCE_LEASTLOADED) {
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
	if (b->policy != BALANCE_LEASTLOADED)
		return -ENOENT;
	for (__u32 slot = 0; slot < b->n; slot++) {
		__u32 v = 0;

		if (bpf_map__lookup_elem(b->skel->maps.queued, &slot, sizeof(slot), &v, sizeof(v), 0))
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
	for (__u32 i = 0; i < n; i++) {
		__u64 cookie = 0;

		if (bpf_map__lookup_elem(b->skel->maps.socks, &i, sizeof(i), &cookie, sizeof(cookie), 0)) {
			pr_warn("balancer slot %u is empty\n", i);
			return -ENOENT;
		}
		if (cookie != cookies[i]) {
			pr_warn("balancer slot %u holds socket cookie %llu, expected %llu\n",
				i, (unsigned long long)cookie, (unsigned long long)cookies[i]);
			return -EXDEV;
		}
	}
	return 0;
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
