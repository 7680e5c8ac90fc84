// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/array.h"
#include "common/log.h"
#include "common/parse_num.h"
#include "net/handover.h"

#define HANDOVER_MAX_BYTES (16 << 20)

static const char *const kind_names[] = {
	[HANDOVER_SOCK] = "sock",
	[HANDOVER_MAP] = "map",
	[HANDOVER_LINK] = "link",
	[HANDOVER_TCP] = "tcp",
};

void handover_init(struct handover *h)
{
	memset(h, 0, sizeof(*h));
	h->ready_fd = -1;
	h->ledger_fd = -1;
}

void handover_free(struct handover *h)
{
	free(h->items);
	handover_init(h);
}

static uint64_t socket_cookie(int fd)
{
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);

	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len))
		return 0;
	return cookie;
}

uint64_t handover_bpf_id(int fd)
{
	struct bpf_link_info li = {};
	__u32 len = sizeof(li);

	/* One call answers for any BPF fd; every info layout (map, prog, link)
	 * starts with type and id. */
	if (bpf_obj_get_info_by_fd(fd, &li, &len))
		return 0;
	return li.id;
}

/* Map ids and link ids are counted apart: the fd's kind must match too. */
static bool is_bpf_kind(int fd, enum handover_kind kind)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strcmp(target, kind == HANDOVER_MAP ? "anon_inode:bpf-map" : "anon_inode:bpf_link");
}

static int grow(struct handover *h)
{
	return ARRAY_PUSH_ROOM(h->items, h->cap, h->n, 16);
}

int handover_add(struct handover *h, enum handover_kind kind, const char *owner, const char *name,
		 int fd, int slot)
{
	struct handover_item *it;
	int err = grow(h);

	if (err)
		return err;
	it = &h->items[h->n];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	snprintf(it->owner, sizeof(it->owner), "%s", owner ? owner : "-");
	snprintf(it->name, sizeof(it->name), "%s", name ? name : "-");
	it->fd = fd;
	it->slot = slot;
	it->id = kind == HANDOVER_SOCK || kind == HANDOVER_TCP ? socket_cookie(fd) :
								 handover_bpf_id(fd);
	if (!it->id)
		return -EBADF;
	h->n++;
	return 0;
}

int handover_to_memfd(const struct handover *h)
{
	int fd = memfd_create("syslogrx-handover", 0);
	FILE *f;

	if (fd < 0)
		return -errno;
	f = fdopen(dup(fd), "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	fprintf(f, "syslogrx-handover 1\nlisten %s\nthreads %u\nready %d\nledger %d\n", h->listen,
		h->threads, h->ready_fd, h->ledger_fd);
	for (unsigned int i = 0; i < h->n; i++) {
		const struct handover_item *it = &h->items[i];

		if (it->kind == HANDOVER_SOCK)
			fprintf(f, "sock %d %llu %d\n", it->fd, (unsigned long long)it->id,
				it->slot);
		else
			fprintf(f, "%s %s %s %d %llu\n", kind_names[it->kind], it->owner, it->name,
				it->fd, (unsigned long long)it->id);
	}
	if (fclose(f)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static int clear_cloexec(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC))
		return -errno;
	return 0;
}

int handover_inherit(const struct handover *h)
{
	int err = h->ready_fd >= 0 ? clear_cloexec(h->ready_fd) : 0;

	if (!err && h->ledger_fd >= 0)
		err = clear_cloexec(h->ledger_fd);
	for (unsigned int i = 0; i < h->n && !err; i++)
		err = clear_cloexec(h->items[i].fd);
	return err;
}

/* The fd is what the text says it is: the same socket, map or link. */
static int check_item(const struct handover_item *it)
{
	uint64_t id;
	int type = 0;
	socklen_t len = sizeof(type);

	if (it->kind == HANDOVER_SOCK) {
		if (getsockopt(it->fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_DGRAM) {
			pr_warn("hand-over: fd %d is not a UDP socket\n", it->fd);
			return -EBADF;
		}
		id = socket_cookie(it->fd);
	} else if (it->kind == HANDOVER_TCP) {
		int listening = 0;

		len = sizeof(listening);
		if (getsockopt(it->fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM ||
		    getsockopt(it->fd, SOL_SOCKET, SO_ACCEPTCONN, &listening,
			       &(socklen_t){ sizeof(listening) }) ||
		    !listening) {
			pr_warn("hand-over: fd %d is not a listening TCP socket\n", it->fd);
			return -EBADF;
		}
		id = socket_cookie(it->fd);
	} else {
		if (!is_bpf_kind(it->fd, it->kind)) {
			pr_warn("hand-over: fd %d is not a BPF %s\n", it->fd, kind_names[it->kind]);
			return -EBADF;
		}
		id = handover_bpf_id(it->fd);
	}
	if (id != it->id) {
		pr_warn("hand-over: fd %d (%s %s %s) is %s %llu, expected %llu\n", it->fd,
			kind_names[it->kind], it->owner, it->name,
			it->kind == HANDOVER_SOCK || it->kind == HANDOVER_TCP ? "socket cookie" :
										"BPF object id",
			(unsigned long long)id, (unsigned long long)it->id);
		return -EXDEV;
	}
	return 0;
}

/* map, link or tcp (the kinds named by OWNER and NAME). */
static bool parse_kind(const char *kind, enum handover_kind *out)
{
	for (int k = HANDOVER_MAP; k <= HANDOVER_TCP; k++)
		if (!strcmp(kind, kind_names[k])) {
			*out = k;
			return true;
		}
	return false;
}

static int parse_line(struct handover *h, char *line)
{
	char kind[8], owner[16], name[HANDOVER_NAME_LEN];
	unsigned long long id;
	struct handover_item *it;
	int fd, slot, err;

	if (sscanf(line, "listen %79s", h->listen) == 1)
		return 0;
	if (sscanf(line, "threads %u", &h->threads) == 1)
		return 0;
	if (sscanf(line, "ready %d", &h->ready_fd) == 1)
		return 0;
	if (sscanf(line, "ledger %d", &h->ledger_fd) == 1)
		return 0;
	err = grow(h);
	if (err)
		return err;
	it = &h->items[h->n];
	memset(it, 0, sizeof(*it));
	if (sscanf(line, "sock %d %llu %d", &fd, &id, &slot) == 3) {
		it->kind = HANDOVER_SOCK;
		it->slot = slot;
	} else if (sscanf(line, "%7s %15s %47s %d %llu", kind, owner, name, &fd, &id) == 5 &&
		   parse_kind(kind, &it->kind)) {
		snprintf(it->owner, sizeof(it->owner), "%s", owner);
		snprintf(it->name, sizeof(it->name), "%s", name);
	} else {
		pr_warn("hand-over: cannot parse '%s'\n", line);
		return -EINVAL;
	}
	it->fd = fd;
	it->id = id;
	h->n++;
	return 0;
}

int handover_receive(struct handover *h)
{
	const char *env = getenv(HANDOVER_ENV);
	char *text, *line, *save = NULL;
	uint64_t v;
	ssize_t n;
	int memfd, err = 0;

	handover_init(h);
	if (!env)
		return 0;
	if (parse_u64(env, 0, INT32_MAX, &v)) {
		pr_warn("hand-over: $%s=%s is not an fd\n", HANDOVER_ENV, env);
		return -EINVAL;
	}
	memfd = (int)v;
	/* Our own children must not take it for theirs. */
	unsetenv(HANDOVER_ENV);
	text = calloc(1, HANDOVER_MAX_BYTES + 1);
	if (!text)
		return -ENOMEM;
	n = pread(memfd, text, HANDOVER_MAX_BYTES, 0);
	close(memfd);
	if (n <= 0 || strncmp(text, "syslogrx-handover 1\n", 20)) {
		pr_warn("hand-over: fd %d does not hold a hand-over\n", memfd);
		free(text);
		return -EINVAL;
	}
	for (line = strtok_r(text + 20, "\n", &save); line && !err;
	     line = strtok_r(NULL, "\n", &save))
		err = parse_line(h, line);
	free(text);
	for (unsigned int i = 0; i < h->n && !err; i++)
		err = check_item(&h->items[i]);
	if (!err && (!h->listen[0] || !h->threads)) {
		pr_warn("hand-over: no listen or threads line\n");
		err = -EINVAL;
	}
	if (err) {
		handover_free(h);
		return err;
	}
	return 1;
}

void handover_fdname(const struct handover_item *it, char *buf, size_t len)
{
	if (it->kind == HANDOVER_SOCK && it->slot >= HANDOVER_LISTENER_SLOTS)
		snprintf(buf, len, "srx-sock-%llu-l%d", (unsigned long long)it->id,
			 it->slot / HANDOVER_LISTENER_SLOTS);
	else if (it->kind == HANDOVER_SOCK)
		snprintf(buf, len, "srx-sock-%llu", (unsigned long long)it->id);
	else
		snprintf(buf, len, "srx-%s-%s-%llu-%s", kind_names[it->kind], it->owner,
			 (unsigned long long)it->id, it->name);
}

static int parse_fdname(struct handover_item *it, const char *name)
{
	char kind[8], owner[16];
	unsigned long long id;
	unsigned int lis;
	int n = 0;

	memset(it, 0, sizeof(*it));
	if (sscanf(name, "srx-sock-%llu%n", &id, &n) == 1 && !name[n]) {
		it->kind = HANDOVER_SOCK;
		it->slot = -2;
	} else if (sscanf(name, "srx-sock-%llu-l%u%n", &id, &lis, &n) == 2 && !name[n] && lis &&
		   lis < 64) {
		it->kind = HANDOVER_SOCK; /* another listener's: its map says its slot */
		it->slot = -2;
		it->listener = lis;
	} else if (sscanf(name, "srx-%7[a-z]-%15[a-z0-9]-%llu-%n", kind, owner, &id, &n) == 3 &&
		   n && parse_kind(kind, &it->kind)) {
		snprintf(it->owner, sizeof(it->owner), "%s", owner);
		snprintf(it->name, sizeof(it->name), "%s", name + n);
	} else {
		return -EINVAL;
	}
	it->id = id;
	return 0;
}

int handover_from_listen_fds(struct handover *h)
{
	const char *fds = getenv("LISTEN_FDS"), *pid = getenv("LISTEN_PID");
	const char *names = getenv("LISTEN_FDNAMES");
	char *copy, *name, *save = NULL;
	uint64_t n, p;
	int err = 0;

	handover_init(h);
	if (!fds || !pid || parse_u64(pid, 1, INT32_MAX, &p) || (pid_t)p != getpid())
		return 0;
	if (parse_u64(fds, 0, 65536, &n) || !names) {
		pr_warn("LISTEN_FDS=%s: expected a count and $LISTEN_FDNAMES\n", fds);
		return -EINVAL;
	}
	copy = strdup(names);
	if (!copy)
		return -ENOMEM;
	for (name = strtok_r(copy, ":", &save); name && !err; name = strtok_r(NULL, ":", &save)) {
		if (h->n >= n) {
			err = -EINVAL;
			break;
		}
		err = grow(h);
		if (!err && parse_fdname(&h->items[h->n], name)) {
			pr_warn("fd store: '%s' is not one of ours\n", name);
			err = -EINVAL;
		}
		if (!err) {
			h->items[h->n].fd = 3 + h->n;
			h->n++;
		}
	}
	free(copy);
	if (!err && h->n != n) {
		pr_warn("LISTEN_FDS=%llu but %u names\n", (unsigned long long)n, h->n);
		err = -EINVAL;
	}
	for (unsigned int i = 0; i < h->n && !err; i++)
		err = check_item(&h->items[i]);
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDNAMES");
	if (err) {
		handover_free(h);
		return err;
	}
	h->from_fdstore = true;
	return 1;
}

int handover_find(const struct handover *h, enum handover_kind kind, const char *owner,
		  const char *name)
{
	for (unsigned int i = 0; i < h->n; i++)
		if (h->items[i].kind == kind && !strcmp(h->items[i].owner, owner) &&
		    !strcmp(h->items[i].name, name))
			return h->items[i].fd;
	return -ENOENT;
}

int handover_reuse_maps(struct bpf_object *obj, const char *owner, const struct handover *h,
			const struct bpf_map *optional)
{
	struct bpf_map *map;
	int err;

	bpf_object__for_each_map(map, obj)
	{
		int fd = handover_find(h, HANDOVER_MAP, owner, bpf_map__name(map));

		if (!bpf_map__autocreate(map))
			continue;
		if (fd < 0) {
			if (map == optional)
				continue;
			pr_warn("hand-over: no %s map %s\n", owner, bpf_map__name(map));
			return -ENOENT;
		}
		err = bpf_map__reuse_fd(map, fd);
		if (err) {
			pr_warn("hand-over: %s map %s: %s\n", owner, bpf_map__name(map),
				strerror(-err));
			return err;
		}
	}
	return 0;
}

int handover_export_maps(struct bpf_object *obj, int (*fn)(const char *name, int fd, void *ctx),
			 void *ctx)
{
	struct bpf_map *map;
	int err;

	bpf_object__for_each_map(map, obj)
	{
		if (bpf_map__fd(map) < 0)
			continue;
		err = fn(bpf_map__name(map), bpf_map__fd(map), ctx);
		if (err)
			return err;
	}
	return 0;
}

void *handover_map_bss(const struct bpf_map *bss, size_t *len, const char *what)
{
	size_t page = getpagesize();
	void *p;

	*len = (bpf_map__value_size(bss) + page - 1) / page * page;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(bss), 0);
	if (p == MAP_FAILED) {
		int err = errno;

		pr_warn("hand-over: mapping the %s's .bss: %s\n", what, strerror(err));
		errno = err;
		return NULL;
	}
	return p;
}
