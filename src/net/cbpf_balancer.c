// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "common/array.h"
#include "net/cbpf_balancer.h"

int cbpf_balancer_build(unsigned int n, struct sock_filter prog[CBPF_BALANCER_LEN])
{
	if (n == 0)
		return -EINVAL;
	/* A = a fresh random u32 (get_random_u32), A %= n, return A. */
	prog[0] =
		(struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_RANDOM);
	prog[1] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, n);
	prog[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_A, 0);
	return 0;
}

int cbpf_balancer_attach(int fd, unsigned int n)
{
	struct sock_filter prog[CBPF_BALANCER_LEN];
	struct sock_fprog fprog = { .len = CBPF_BALANCER_LEN, .filter = prog };
	int err = cbpf_balancer_build(n, prog);

	if (err)
		return err;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fprog, sizeof(fprog)))
		return -errno;
	return 0;
}

int cbpf_order_join(struct cbpf_order *o, unsigned int id)
{
	if (ARRAY_PUSH_ROOM(o->id, o->cap, o->nr, 8))
		return -ENOMEM;
	o->id[o->nr++] = id;
	return 0;
}

int cbpf_order_index(const struct cbpf_order *o, unsigned int id)
{
	for (unsigned int k = 0; k < o->nr; k++)
		if (o->id[k] == id)
			return (int)k;
	return -ENOENT;
}

int cbpf_order_leave(struct cbpf_order *o, unsigned int id)
{
	int k = cbpf_order_index(o, id);

	if (k < 0)
		return k;
	/* reuseport_detach_sock: socks[i] = socks[num_socks - 1]. */
	o->id[k] = o->id[--o->nr];
	return k;
}

void cbpf_order_free(struct cbpf_order *o)
{
	free(o->id);
	o->id = NULL;
	o->nr = o->cap = 0;
}
