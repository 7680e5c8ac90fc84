// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "rx/report/sender_cache.h"

struct sender_cache {
	pthread_mutex_t lock; /* held for a swap or a copy of the top rows */
	struct snapshot_senders ss;
};

int sender_cache_open(struct receiver *r)
{
	struct sender_cache *c;

	receiver_set_sender_cache(r, NULL); /* a supervisor's shared state may hold a dead one */
	if (!receiver_counts_senders(r))
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->ss.on = true;
	receiver_set_sender_cache(r, c);
	return 0;
}

void sender_cache_refresh(struct receiver *r)
{
	struct sender_cache *c = receiver_sender_cache(r);
	struct snapshot_senders fresh, old;
	int err;

	if (!c)
		return;
	err = snapshot_senders_take(r, &fresh);
	if (err) {
		pr_warn("the per-sender tables could not be read: %s\n", strerror(-err));
		return;
	}
	/* Only the top rows are shown; the rest are in the sums already. */
	if (fresh.view.n > fresh.top)
		fresh.view.n = fresh.top;
	pthread_mutex_lock(&c->lock);
	old = c->ss;
	c->ss = fresh;
	pthread_mutex_unlock(&c->lock);
	snapshot_senders_free(&old);
}

int sender_cache_read(struct receiver *r, struct snapshot_senders *ss)
{
	struct sender_cache *c = receiver_sender_cache(r);
	int err = 0;

	if (!c)
		return -ENOENT;
	pthread_mutex_lock(&c->lock);
	*ss = c->ss;
	memset(&ss->view, 0, sizeof(ss->view));
	for (size_t i = 0; i < c->ss.view.n && !err; i++) {
		const struct sender_row *row = &c->ss.view.rows[i];

		err = sender_view_add(&ss->view, row->addr, row->received, row->dropped);
		if (!err)
			ss->view.rows[i] = *row;
	}
	pthread_mutex_unlock(&c->lock);
	if (err)
		snapshot_senders_free(ss);
	return err;
}

void sender_cache_close(struct receiver *r)
{
	struct sender_cache *c = receiver_sender_cache(r);

	if (!c)
		return;
	receiver_set_sender_cache(r, NULL);
	snapshot_senders_free(&c->ss);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
