// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/array.h"
#include "net/sender_view.h"

int sender_view_add(struct sender_view *v, const uint8_t addr[16], uint64_t received,
		    uint64_t dropped)
{
	struct sender_row *r;

	if (ARRAY_PUSH_ROOM(v->rows, v->cap, v->n, 64))
		return -ENOMEM;
	r = &v->rows[v->n++];
	memcpy(r->addr, addr, sizeof(r->addr));
	r->received = received;
	r->dropped = dropped;
	return 0;
}

static int add_drops(const uint8_t addr[16], uint32_t reason, uint64_t count, void *ctx)
{
	(void)reason;
	return sender_view_add(ctx, addr, 0, count);
}

int sender_view_add_tracer(struct sender_view *v, struct tracer *t)
{
	return tracer_for_each_sender(t, add_drops, v);
}

static int cmp_addr(const void *a, const void *b)
{
	return memcmp(((const struct sender_row *)a)->addr, ((const struct sender_row *)b)->addr,
		      16);
}

static int cmp_worst(const void *a, const void *b)
{
	const struct sender_row *x = a, *y = b;

	if (x->dropped != y->dropped)
		return x->dropped > y->dropped ? -1 : 1;
	if (x->received != y->received)
		return x->received > y->received ? -1 : 1;
	return cmp_addr(a, b);
}

void sender_view_finish(struct sender_view *v)
{
	size_t w = 0;

	if (!v->n)
		return;
	qsort(v->rows, v->n, sizeof(v->rows[0]), cmp_addr);
	for (size_t i = 0; i < v->n; i++) {
		if (w && !cmp_addr(&v->rows[w - 1], &v->rows[i])) {
			v->rows[w - 1].received += v->rows[i].received;
			v->rows[w - 1].dropped += v->rows[i].dropped;
			continue;
		}
		v->rows[w++] = v->rows[i];
	}
	v->n = w;
	qsort(v->rows, v->n, sizeof(v->rows[0]), cmp_worst);
}

void sender_view_sum(const struct sender_view *v, size_t from, uint64_t *received,
		     uint64_t *dropped)
{
	*received = 0;
	*dropped = 0;
	for (size_t i = from; i < v->n; i++) {
		*received += v->rows[i].received;
		*dropped += v->rows[i].dropped;
	}
}

void sender_view_free(struct sender_view *v)
{
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

double sender_loss_ratio(uint64_t received, uint64_t dropped)
{
	return received + dropped ? (double)dropped / (double)(received + dropped) : 0.0;
}
