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
	memset(r->reason_drops, 0, sizeof(r->reason_drops));
	r->other_drops = dropped;
	r->shed = 0;
	return 0;
}

int sender_view_add_drops(struct sender_view *v, const uint8_t addr[16], uint32_t reason,
			  uint64_t count)
{
	int err = sender_view_add(v, addr, 0, count);

	if (!err) {
		struct sender_row *r = &v->rows[v->n - 1];

		r->reason[0] = reason;
		r->reason_drops[0] = count;
		r->other_drops = 0;
		if (v->shed_reason > 0 && reason == (uint32_t)v->shed_reason)
			r->shed = count;
	}
	return err;
}

static int add_drops(const uint8_t addr[16], uint32_t reason, uint64_t count, void *ctx)
{
	return sender_view_add_drops(ctx, addr, reason, count);
}

/* b's counts into a (the same address). */
static void merge_row(struct sender_row *a, const struct sender_row *b)
{
	a->received += b->received;
	a->dropped += b->dropped;
	a->other_drops += b->other_drops;
	a->shed += b->shed;
	for (int j = 0; j < SENDER_REASONS; j++) {
		int k;

		if (!b->reason_drops[j])
			continue;
		for (k = 0; k < SENDER_REASONS; k++)
			if (!a->reason_drops[k] || a->reason[k] == b->reason[j])
				break;
		if (k == SENDER_REASONS) {
			a->other_drops += b->reason_drops[j];
			continue;
		}
		a->reason[k] = b->reason[j];
		a->reason_drops[k] += b->reason_drops[j];
	}
}

int sender_view_add_tracer(struct sender_view *v, struct tracer *t,
			   struct tracer_sender_totals *totals)
{
	v->shed_reason = tracer_reason_value(t, "SOCKET_FILTER");
	return tracer_read_senders(t, totals, add_drops, v);
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
	array_sort(v->rows, v->n, sizeof(v->rows[0]), cmp_addr);
	for (size_t i = 0; i < v->n; i++) {
		if (w && !cmp_addr(&v->rows[w - 1], &v->rows[i])) {
			merge_row(&v->rows[w - 1], &v->rows[i]);
			continue;
		}
		v->rows[w++] = v->rows[i];
	}
	v->n = w;
	array_sort(v->rows, v->n, sizeof(v->rows[0]), cmp_worst);
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
