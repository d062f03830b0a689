/*
 * foldmap.c - folded stacks added up in a hash map (foldmap.h).
 *
 * Open addressing with linear probing over a power-of-two table of slots
 * (hash, entry index), at most 70% full; entries live in an array in the
 * order they were first added, their stacks in chunks of an arena (4 KiB,
 * doubling up to 1 MiB; a longer stack gets a chunk of its own).  The hash reads 8 bytes at a
 * time: stacks are long (hundreds of bytes) and every sample hashes one.
 * It is not keyed: a profile crafted to collide would only be slow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "foldmap.h"
#include "banned.h"

#define CHUNK_SIZE (1u << 20)
#define CHUNK_FIRST (2u << 10)
#define EMPTY SIZE_MAX

struct slot {
	uint64_t hash;
	size_t idx;	/* into entries, or EMPTY */
};

struct chunk {
	struct chunk *next;
	size_t used, size;
	char data[];
};

struct fold_map {
	struct slot *slots;
	size_t nslots;		/* power of two, or 0 */
	struct fold_entry *entries;
	size_t n, cap;
	uint64_t total;
	struct chunk *chunks;	/* newest first */
	/* fold_map_add()'s joined stack */
	char *join;
	size_t join_cap;
};

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	while (n >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		p += 8;
		n -= 8;
	}
	if (n) {
		w = 0;
		memcpy(&w, p, n);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

int fold_map_new(struct fold_map **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void fold_map_free(struct fold_map *m)
{
	struct chunk *c, *next;

	if (!m)
		return;
	for (c = m->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(m->slots);
	free(m->entries);
	free(m->join);
	free(m);
}

/* A copy of @s (+ NUL) in the arena. */
static char *arena_copy(struct fold_map *m, const char *s, size_t len)
{
	struct chunk *c = m->chunks;
	char *p;

	if (len >= SIZE_MAX - sizeof(*c) - 1)
		return NULL;
	if (!c || c->size - c->used < len + 1) {
		/* 4 KiB first, doubling to CHUNK_SIZE: small maps stay small. */
		size_t size = c ? c->size : CHUNK_FIRST;

		size = size >= CHUNK_SIZE / 2 ? CHUNK_SIZE : size * 2;
		if (len + 1 > size)
			size = len + 1;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = size;
		if (size > CHUNK_SIZE && m->chunks) {
			/* Keep filling the current chunk after this one. */
			c->next = m->chunks->next;
			m->chunks->next = c;
		} else {
			c->next = m->chunks;
			m->chunks = c;
		}
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

static int grow_slots(struct fold_map *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 64, i, j;
	struct slot *s;

	if (n > SIZE_MAX / sizeof(*s))
		return -ENOMEM;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		s[i].idx = EMPTY;
	for (i = 0; i < m->nslots; i++) {
		if (m->slots[i].idx == EMPTY)
			continue;
		for (j = m->slots[i].hash & (n - 1); s[j].idx != EMPTY;
		     j = (j + 1) & (n - 1))
			;
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->nslots = n;
	return 0;
}

int fold_map_add_stack(struct fold_map *m, const char *stack, size_t len,
		       uint64_t count)
{
	uint64_t h = hash_bytes(stack, len);
	struct fold_entry *e;
	size_t j;
	int err;

	if (m->total > UINT64_MAX - count)
		return -ERANGE;
	/* Grow at 70% full, so a probe ends soon on an empty slot. */
	if (m->n + 1 > m->nslots / 10 * 7) {
		err = grow_slots(m);
		if (err)
			return err;
	}
	for (j = h & (m->nslots - 1); m->slots[j].idx != EMPTY;
	     j = (j + 1) & (m->nslots - 1)) {
		if (m->slots[j].hash != h)
			continue;
		e = &m->entries[m->slots[j].idx];
		if (e->len == len && memcmp(e->stack, stack, len) == 0) {
			if (e->count > UINT64_MAX - count)
				return -ERANGE;
			e->count += count;
			m->total += count;
			return 0;
		}
	}
	if (tool_grow(&m->entries, &m->cap, m->n + 1, sizeof(*e), 32))
		return -ENOMEM;
	e = &m->entries[m->n];
	e->stack = arena_copy(m, stack, len);
	if (!e->stack)
		return -ENOMEM;
	e->len = len;
	e->count = count;
	m->slots[j].hash = h;
	m->slots[j].idx = m->n++;
	m->total += count;
	return 0;
}

int fold_map_add(struct fold_map *m, const char *const *frames, size_t n,
		 uint64_t count)
{
	size_t len = 0, i, l, at;

	if (n == 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		l = strlen(frames[i]);
		if (l > SIZE_MAX - len - 1)
			return -ENOMEM;
		len += l + 1;		/* ';' or the final NUL */
	}
	if (tool_grow(&m->join, &m->join_cap, len, 1, 256))
		return -ENOMEM;
	for (i = 0, at = 0; i < n; i++) {
		l = strlen(frames[i]);
		memcpy(m->join + at, frames[i], l);
		at += l;
		m->join[at++] = i + 1 < n ? ';' : '\0';
	}
	return fold_map_add_stack(m, m->join, len - 1, count);
}

size_t fold_map_size(const struct fold_map *m)
{
	return m->n;
}

uint64_t fold_map_total(const struct fold_map *m)
{
	return m->total;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct fold_entry *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->stack, y->stack, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

int fold_map_sorted(const struct fold_map *m, struct fold_entry **out,
		    size_t *n)
{
	struct fold_entry *e = NULL;

	*out = NULL;
	*n = 0;
	if (!m->n)
		return 0;
	e = malloc(m->n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	memcpy(e, m->entries, m->n * sizeof(*e));
	qsort(e, m->n, sizeof(*e), cmp_entry);
	*out = e;
	*n = m->n;
	return 0;
}

int fold_map_write(const struct fold_map *m, FILE *f)
{
	struct fold_entry *e = NULL;
	size_t n = 0, i;
	int err;

	err = fold_map_sorted(m, &e, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (fwrite(e[i].stack, 1, e[i].len, f) != e[i].len ||
		    fprintf(f, " %llu\n", (unsigned long long)e[i].count) < 0) {
			err = -EIO;
			break;
		}
	}
	free(e);
	return err;
}
