/*
 * report_spread.c - per-host shares of functions (report_spread.h).
 *
 * Values are summed exactly (128-bit) per (name, host) in an open
 * addressing table keyed by name << 32 | host, per name over all hosts
 * (the pooled value) in arrays indexed by name id, and per host.  A stack
 * adds its value to the total of each distinct name in it once (a stamp
 * per name id says which stack saw it last) and to the self of its leaf.
 * Shares are computed only for the rows asked for: O(top x hosts).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "report_spread.h"
#include "base.h"

typedef unsigned __int128 u128;

#define MAX_HOSTS (1u << 20)

/* Per (name, host): the self and total values. */
struct cell {
	u128 self, total;
};

struct spread {
	/* Hosts: names (free(), NULL unknown) and totals. */
	char **hname;
	u128 *htotal;
	size_t nhosts, caphosts;

	/* Per name id: pooled self and total, and the last stack seen. */
	u128 *self, *total;
	uint64_t *stamp;
	size_t nnames;		/* ids 0 to nnames - 1 have room */
	uint64_t nstack;	/* stacks added, for the stamps */
	u128 grand;		/* all values */

	/* (name << 32 | host) -> cells index + 1. */
	uint64_t *keys;
	uint32_t *slots;
	size_t nslots, ncells, capcells;
	struct cell *cells;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* tool_grow() (from 16), zeroing the new elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t old = *cap;
	int err = tool_grow(arr, cap, need, elem, 16);

	if (!err && *cap > old)
		memset((char *)*arr + old * elem, 0, (*cap - old) * elem);
	return err;
}

int spread_new(struct spread **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void spread_free(struct spread *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nhosts; i++)
		free(s->hname[i]);
	free(s->hname);
	free(s->htotal);
	free(s->self);
	free(s->total);
	free(s->stamp);
	free(s->keys);
	free(s->slots);
	free(s->cells);
	free(s);
}

int spread_host(struct spread *s, const char *name, uint32_t *host)
{
	size_t cap = s->caphosts;
	char *copy = NULL;
	int err;

	if (name) {
		for (size_t i = 0; i < s->nhosts; i++) {
			if (s->hname[i] && !strcmp(s->hname[i], name)) {
				*host = (uint32_t)i;
				return 0;
			}
		}
		copy = strdup(name);
		if (!copy)
			return -ENOMEM;
	}
	if (s->nhosts >= MAX_HOSTS) {
		free(copy);
		return -E2BIG;
	}
	err = grow((void **)&s->hname, &cap, s->nhosts + 1,
		   sizeof(*s->hname));
	if (!err) {
		cap = s->caphosts;
		err = grow((void **)&s->htotal, &cap, s->nhosts + 1,
			   sizeof(*s->htotal));
	}
	if (err) {
		free(copy);
		return err;
	}
	s->caphosts = cap;
	s->hname[s->nhosts] = copy;
	*host = (uint32_t)s->nhosts++;
	return 0;
}

size_t spread_nhosts(const struct spread *s)
{
	return s->nhosts;
}

const char *spread_host_name(const struct spread *s, uint32_t h)
{
	return h < s->nhosts && s->hname[h] ? s->hname[h] : "-";
}

/* The cell of (@name, @host), made when absent. */
static struct cell *cell_get(struct spread *s, uint32_t name, uint32_t host)
{
	uint64_t key = (uint64_t)name << 32 | host;
	size_t mask, i;

	if ((s->ncells + 1) * 2 > s->nslots) {
		size_t n = s->nslots ? s->nslots * 2 : 256;
		uint64_t *keys = calloc(n, sizeof(*keys));
		uint32_t *slots = calloc(n, sizeof(*slots));

		if (!keys || !slots) {
			free(keys);
			free(slots);
			return NULL;
		}
		for (size_t k = 0; k < s->nslots; k++) {
			if (!s->slots[k])
				continue;
			for (i = mix64(s->keys[k]) & (n - 1); slots[i];
			     i = (i + 1) & (n - 1))
				;
			keys[i] = s->keys[k];
			slots[i] = s->slots[k];
		}
		free(s->keys);
		free(s->slots);
		s->keys = keys;
		s->slots = slots;
		s->nslots = n;
	}
	mask = s->nslots - 1;
	for (i = mix64(key) & mask; s->slots[i]; i = (i + 1) & mask)
		if (s->keys[i] == key)
			return &s->cells[s->slots[i] - 1];
	if (s->ncells >= UINT32_MAX - 1 ||
	    grow((void **)&s->cells, &s->capcells, s->ncells + 1,
		 sizeof(*s->cells)))
		return NULL;
	s->keys[i] = key;
	s->slots[i] = (uint32_t)++s->ncells;
	return &s->cells[s->ncells - 1];
}

/* Room for name id @id in the per-name arrays. */
static int names_room(struct spread *s, uint32_t id)
{
	size_t cap = s->nnames;
	int err;

	if (id < s->nnames)
		return 0;
	err = grow((void **)&s->self, &cap, (size_t)id + 1, sizeof(*s->self));
	cap = s->nnames;
	if (!err)
		err = grow((void **)&s->total, &cap, (size_t)id + 1,
			   sizeof(*s->total));
	cap = s->nnames;
	if (!err)
		err = grow((void **)&s->stamp, &cap, (size_t)id + 1,
			   sizeof(*s->stamp));
	if (!err)
		s->nnames = cap;
	return err;
}

int spread_add(struct spread *s, uint32_t h, const uint32_t *frames,
	       uint32_t n, uint64_t value)
{
	int err;

	if (h >= s->nhosts)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (!frames[i])
			return -EINVAL;
		err = names_room(s, frames[i]);
		if (err)
			return err;
	}
	/* Cells first: a failure then leaves the sums untouched. */
	for (uint32_t i = 0; i < n; i++)
		if (!cell_get(s, frames[i], h))
			return -ENOMEM;
	s->nstack++;
	s->htotal[h] += value;
	s->grand += value;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = frames[i];

		if (s->stamp[id] == s->nstack)
			continue;
		s->stamp[id] = s->nstack;
		s->total[id] += value;
		cell_get(s, id, h)->total += value;
	}
	if (n) {
		s->self[frames[n - 1]] += value;
		cell_get(s, frames[n - 1], h)->self += value;
	}
	return 0;
}

static double ratio(u128 a, u128 b)
{
	return b ? (double)a / (double)b : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Order of rows: larger pooled value first, then smaller id. */
struct cand {
	u128 v;
	uint32_t id;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Find the cell of (@name, @host) without making it. */
static const struct cell *cell_find(const struct spread *s, uint32_t name,
				    uint32_t host)
{
	uint64_t key = (uint64_t)name << 32 | host;
	size_t mask, i;

	if (!s->nslots)
		return NULL;
	mask = s->nslots - 1;
	for (i = mix64(key) & mask; s->slots[i]; i = (i + 1) & mask)
		if (s->keys[i] == key)
			return &s->cells[s->slots[i] - 1];
	return NULL;
}

int spread_rows(const struct spread *s, bool total, size_t top,
		struct spread_row **rows, size_t *n)
{
	const u128 *pool = total ? s->total : s->self;
	struct cand *c = NULL;
	struct spread_row *r = NULL;
	double *sh = NULL;
	size_t nc = 0, nr;
	int err = -ENOMEM;

	*rows = NULL;
	*n = 0;
	c = malloc((s->nnames ? s->nnames : 1) * sizeof(*c));
	sh = malloc((s->nhosts ? s->nhosts : 1) * sizeof(*sh));
	if (!c || !sh)
		goto out;
	for (uint32_t id = 1; id < s->nnames; id++)
		if (pool[id])
			c[nc++] = (struct cand){ .v = pool[id], .id = id };
	qsort(c, nc, sizeof(*c), cmp_cand);
	nr = nc < top ? nc : top;
	err = 0;
	if (!nr)
		goto out;
	r = calloc(nr, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct spread_row *row = &r[i];
		size_t k = 0;

		row->name = c[i].id;
		row->pooled = ratio(c[i].v, s->grand);
		for (uint32_t h = 0; h < s->nhosts; h++) {
			const struct cell *cl = cell_find(s, c[i].id, h);
			u128 v = cl ? (total ? cl->total : cl->self) : 0;

			if (!s->htotal[h])
				continue;
			sh[k] = ratio(v, s->htotal[h]);
			row->present += v > 0;
			if (!k || sh[k] > row->max) {
				row->max = sh[k];
				row->max_host = h;
			}
			k++;
		}
		if (!k)
			continue;
		qsort(sh, k, sizeof(*sh), cmp_double);
		row->min = sh[0];
		row->median = k % 2 ? sh[k / 2] : (sh[k / 2 - 1] + sh[k / 2]) / 2;
	}
	*rows = r;
	*n = nr;
out:
	free(c);
	free(sh);
	return err;
}

int spread_print(const struct spread *s, FILE *f, size_t top,
		 const char *unit, bool explain, spread_name_fn name,
		 void *ctx)
{
	size_t hosts = 0;
	int err = 0;

	for (size_t h = 0; h < s->nhosts; h++)
		hosts += s->htotal[h] != 0;
	if (hosts < 2)
		return 0;
	fprintf(f, "\nSpread over %zu hosts", hosts);
	if (explain)
		fprintf(f, ": each host's share of its own %s; a host\n"
			   "without the function counts 0 (pooled: the share "
			   "above)", unit);
	fprintf(f, ":\n");
	for (int t = 0; t < 2 && !err; t++) {
		struct spread_row *r;
		size_t n;

		err = spread_rows(s, t == 1, top, &r, &n);
		if (err)
			break;
		fprintf(f, "\n%8s %8s %8s %8s  %-12s %5s  %s\n",
			t ? "total" : "self", "min", "median", "max",
			"max on", "hosts", "function");
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%7.2f%% %7.2f%% %7.2f%% %7.2f%%  %-12s "
				   "%5u  %s\n",
				100 * r[i].pooled, 100 * r[i].min,
				100 * r[i].median, 100 * r[i].max,
				spread_host_name(s, r[i].max_host),
				r[i].present, name(ctx, r[i].name));
		free(r);
	}
	return err;
}
