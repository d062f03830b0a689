/*
 * aggdrain.c - drain the maps of `--aggregate kernel` (aggdrain.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "aggdrain.h"
#include "base.h"

/* Rows per lookup-and-delete batch. */
#define BATCH 1024

struct aggdrain {
	int counts_fd, stacks_fd, ncpu;
	uint32_t max_stacks;
	/* The cache: open addressing on the hash, cap a power of two at
	 * least twice max_stacks; st NULL is empty. */
	struct slot {
		uint64_t hash;
		struct agg_stack *st;
	} *slots;
	size_t cap, n;
	struct agg_key *keys;
	struct agg_val *vals;	/* BATCH x ncpu */
	uint64_t orphans;
	struct offcpu_agg_stats stats;
};

int aggdrain_new(int counts_fd, int stacks_fd, uint32_t max_stacks,
		 struct aggdrain **out)
{
	struct aggdrain *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->counts_fd = counts_fd;
	d->stacks_fd = stacks_fd;
	d->max_stacks = max_stacks ? max_stacks : 1;
	d->ncpu = libbpf_num_possible_cpus();
	if (d->ncpu <= 0)
		d->ncpu = 1;
	for (d->cap = 64; d->cap < 2 * (size_t)d->max_stacks; d->cap *= 2)
		;
	d->slots = calloc(d->cap, sizeof(*d->slots));
	d->keys = calloc(BATCH, sizeof(*d->keys));
	d->vals = calloc((size_t)BATCH * (size_t)d->ncpu, sizeof(*d->vals));
	if (!d->slots || !d->keys || !d->vals) {
		aggdrain_free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

static void cache_clear(struct aggdrain *d)
{
	for (size_t i = 0; i < d->cap; i++) {
		free(d->slots[i].st);
		d->slots[i].st = NULL;
	}
	d->n = 0;
}

/* The stack of @hash: cached, else read from the map and cached; NULL
 * when the map has it no more (or the cache is full: the map is cleared
 * before that can happen). */
static const struct agg_stack *stack_of(struct aggdrain *d, uint64_t hash)
{
	size_t j = (size_t)(hash * 0x9e3779b97f4a7c15ULL) & (d->cap - 1);
	struct agg_stack *st;

	while (d->slots[j].st) {
		if (d->slots[j].hash == hash)
			return d->slots[j].st;
		j = (j + 1) & (d->cap - 1);
	}
	if (d->n + 1 > d->cap / 2)
		return NULL;
	st = malloc(sizeof(*st));
	if (!st || bpf_map_lookup_elem(d->stacks_fd, &hash, st)) {
		free(st);
		return NULL;
	}
	d->slots[j].hash = hash;
	d->slots[j].st = st;
	d->n++;
	d->stats.stacks_read++;
	return st;
}

/* Hand rows [0, n) of the batch just read. */
static void hand(struct aggdrain *d, uint32_t n, offcpu_agg_fn fn,
		 void *ctx)
{
	const struct agg_stack *st;
	uint64_t count, weight;

	for (uint32_t i = 0; i < n; i++) {
		count = weight = 0;
		for (int c = 0; c < d->ncpu; c++) {
			count += d->vals[(size_t)i * d->ncpu + c].count;
			weight += d->vals[(size_t)i * d->ncpu + c].weight;
		}
		if (!count)
			continue;
		st = stack_of(d, d->keys[i].hash);
		if (!st) {
			d->orphans += count;
			continue;
		}
		d->stats.rows++;
		d->stats.events += count;
		fn(ctx, st, &d->keys[i], count, weight);
	}
}

/* Empty "agg_stacks" (its keys one by one: a batch would need a buffer
 * of every value) and the cache. */
static void clear_stacks(struct aggdrain *d)
{
	uint64_t key;

	/* (bounded: BPF may insert while this runs) */
	for (uint64_t i = 0; i < 2 * (uint64_t)d->max_stacks &&
	     bpf_map_get_next_key(d->stacks_fd, NULL, &key) == 0; i++)
		if (bpf_map_delete_elem(d->stacks_fd, &key) == 0)
			d->stats.stacks_cleared++;
	cache_clear(d);
	d->stats.clears++;
}

int aggdrain_run(struct aggdrain *d, uint64_t added, offcpu_agg_fn fn,
		 void *ctx)
{
	uint64_t token = 0, held;
	void *in = NULL;
	uint32_t n;
	int err, rows = 0;

	d->stats.drains++;
	for (;;) {
		n = BATCH;
		err = bpf_map_lookup_and_delete_batch(d->counts_fd, in, &token,
						      d->keys, d->vals, &n,
						      NULL);
		if (err && errno != ENOENT)
			return -errno;
		hand(d, n, fn, ctx);
		rows += (int)n;
		if (err)
			break;
		in = &token;
	}
	held = added - d->stats.stacks_cleared;
	if (held > d->stats.max_stacks)
		d->stats.max_stacks = held;
	if (held * 4 >= (uint64_t)d->max_stacks * 3)
		clear_stacks(d);
	return rows;
}

uint64_t aggdrain_orphans(const struct aggdrain *d)
{
	return d ? d->orphans : 0;
}

void aggdrain_stats(const struct aggdrain *d, struct offcpu_agg_stats *st)
{
	if (d)
		*st = d->stats;
	else
		memset(st, 0, sizeof(*st));
}

void aggdrain_free(struct aggdrain *d)
{
	if (!d)
		return;
	if (d->slots)
		cache_clear(d);
	free(d->slots);
	free(d->keys);
	free(d->vals);
	free(d);
}
