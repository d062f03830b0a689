/*
 * merge.c - `sym merge IN... [-o OUT] [--normalize none|per-host|
 * per-second] [--spread]`: one profile out of several recordings, usually
 * of several hosts (design note 7 of PRODUCT.md; docs/views.md, "Merging
 * profiles").
 *
 * The unit of the merge is a *recording*: an input that is not itself a
 * merge is one recording, described by its header; an input that is a
 * merge brings its recordings (its `source` lines) along, and its stacks
 * keep theirs.  Every recording becomes a source of the output
 * (sym_prof_add_source()), so the merged file says what it is made of.
 *
 * Counts are never rescaled: a stack's COUNT is the number of samples
 * behind it in every mode, so the statistics of the views still count
 * real samples.  What the modes change is the weight:
 *
 *   none        weights added as they are (exactly, as 64-bit integers);
 *               for the weight unit `samples`, which counts samples of
 *               the input's own period, they are first rescaled to the
 *               first input's period (w * P_in / P_first, rounded).
 *   per-host    every host's weights are rescaled so that the host sums
 *               to exactly 10^12 (unit `host-ppt`): w * 10^12 / W_host in
 *               128-bit integers, rounded by largest remainder so that
 *               the sum is exact.  A host is a host name; recordings
 *               without one are each a host of their own.
 *   per-second  every recording's CPU time divided by its duration (unit
 *               `ns/s`, 10^9 = one core busy): w * 10^9 / duration for
 *               `ns`, count * period * 10^9 / duration for `samples`,
 *               w for inputs already in `ns/s`, rounded to nearest.
 *
 * Maps are renumbered: a map of one input is shared with a map of another
 * only when every field matches (kind, pid, range, offset, vaddr, flags,
 * build ID, path), so frames never change meaning.  Processes and threads
 * are those the stacks name; a PID or TID that two inputs both name keeps
 * the first input's comm (PIDs are per host).  Symbolized locations are
 * carried over; the output is symbolized on the fly (tools/symbolize.c)
 * when --server or --store is given, or when some inputs are symbolized
 * and others are not (a half-symbolized output would show the rest as
 * module+offset in every view).
 *
 * Exit status: 0, 1 (an input cannot be read or merged, the output
 * cannot be written: nothing is written then), 2 (usage).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "tools.h"
#include "base.h"

typedef unsigned __int128 u128;

#define PPT 1000000000000ULL		/* a host's total in host-ppt */
#define NS_PER_S 1000000000ULL

/* One recording of the merge: an input without sources, or one source
 * of an input that has them. */
struct rec {
	size_t input;		/* index into inputs */
	uint32_t in_source;	/* the input's source id; 0: the input */
	uint32_t out_source;	/* the output's source id */
	struct sym_prof_source src;	/* strings borrowed from the input */
	uint32_t host;		/* index of its host (per-host) */
	u128 total;		/* sum of its base weights */
};

/* A host (per-host): the total of its recordings' base weights. */
struct host {
	const char *name;	/* borrowed; NULL: a recording of its own */
	u128 total;
	const char *unit;	/* the weight unit of its recordings */
	uint64_t period;	/* their period; UINT64_MAX: several */
};

/* The maps of the output, found again by their fields. */
struct mapset {
	uint32_t *slots;	/* 0 empty, else output map id + 1 */
	size_t nslots;		/* a power of two */
};

struct merge {
	const struct merge_opts *o;
	struct sym_prof **in;
	const char *const *names;
	size_t nin;
	struct sym_prof *out;
	uint32_t **mapid;	/* per input: its map id -> output map id */
	struct rec *recs;
	size_t nrecs;
	struct host *hosts;
	size_t nhosts;
	struct mapset maps;
	uint64_t ref_period;	/* mode none, unit samples: the first's */
	bool periods_differ;	/* the inputs' header periods */
	bool rescale_samples;	/* mode none: periods of `samples` differ */
};

const char *const merge_mode_names[MERGE_NMODES] = {
	[MERGE_NONE] = "none",
	[MERGE_PER_HOST] = "per-host",
	[MERGE_PER_SECOND] = "per-second",
};

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

static uint64_t str_hash(uint64_t h, const char *s)
{
	if (!s)
		return mix(h, 0);
	for (; *s; s++)
		h = mix(h, (unsigned char)*s);
	return mix(h, 1);
}

static uint64_t map_hash(const struct sym_prof_map *m)
{
	uint64_t h = mix(m->kind, (uint64_t)(uint32_t)m->pid);

	h = mix(mix(mix(mix(mix(h, m->flags), m->start), m->end), m->pgoff),
		m->vaddr);
	return str_hash(str_hash(h, m->build_id), m->path);
}

static bool map_eq(const struct sym_prof_map *a, const struct sym_prof_map *b)
{
	return a->kind == b->kind && a->pid == b->pid && a->flags == b->flags &&
	       a->start == b->start && a->end == b->end &&
	       a->pgoff == b->pgoff && a->vaddr == b->vaddr &&
	       same_str(a->build_id, b->build_id) && same_str(a->path, b->path);
}

/* The output's id of map @m: an equal one, or a new one. */
static int map_get(struct merge *g, const struct sym_prof_map *m,
		   uint32_t *id)
{
	size_t n = sym_prof_nmaps(g->out), mask, i;
	uint64_t h = map_hash(m);
	int err;

	if ((n + 1) * 2 > g->maps.nslots) {
		size_t ns = g->maps.nslots ? g->maps.nslots * 2 : 64;
		uint32_t *slots = calloc(ns, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (uint32_t k = 0; k < n; k++) {
			i = map_hash(sym_prof_map(g->out, k)) & (ns - 1);
			while (slots[i])
				i = (i + 1) & (ns - 1);
			slots[i] = k + 1;
		}
		free(g->maps.slots);
		g->maps.slots = slots;
		g->maps.nslots = ns;
	}
	mask = g->maps.nslots - 1;
	for (i = h & mask; g->maps.slots[i]; i = (i + 1) & mask) {
		if (map_eq(sym_prof_map(g->out, g->maps.slots[i] - 1), m)) {
			*id = g->maps.slots[i] - 1;
			return 0;
		}
	}
	err = sym_prof_add_map(g->out, m, id);
	if (!err)
		g->maps.slots[i] = *id + 1;
	return err;
}

/*
 * Recordings and hosts.
 */

static bool is_unit(const char *unit, const char *name)
{
	return unit && !strcmp(unit, name);
}

/* Index of the recording of stack @i of input @k; SIZE_MAX for a stack
 * of a merged input that has no source. */
static size_t rec_of(const struct merge *g, size_t k, size_t first,
		     size_t i)
{
	uint32_t s;

	if (!sym_prof_nsources(g->in[k]))
		return first;
	s = sym_prof_stack_source(g->in[k], i);
	return s ? first + s - 1 : SIZE_MAX;
}

/* The recordings of every input, and their sources in the output. */
static int collect_recs(struct merge *g, size_t *first)
{
	size_t n = 0;

	for (size_t k = 0; k < g->nin; k++)
		n += sym_prof_nsources(g->in[k]) ? sym_prof_nsources(g->in[k])
						 : 1;
	g->recs = calloc(n, sizeof(*g->recs));
	if (!g->recs)
		return -ENOMEM;
	for (size_t k = 0; k < g->nin; k++) {
		const struct sym_prof_header *h = sym_prof_header(g->in[k]);
		size_t ns = sym_prof_nsources(g->in[k]);

		first[k] = g->nrecs;
		if (!ns) {
			struct rec *r = &g->recs[g->nrecs++];

			r->input = k;
			r->src = (struct sym_prof_source){
				.host = h->host, .start_ns = h->start_ns,
				.duration_ns = h->duration_ns,
				.period = h->period,
				.weight_unit = h->weight_unit,
				.samples = h->samples, .lost = h->lost,
			};
			continue;
		}
		for (uint32_t s = 1; s <= ns; s++) {
			struct rec *r = &g->recs[g->nrecs++];

			r->input = k;
			r->in_source = s;
			r->src = *sym_prof_source(g->in[k], s);
		}
	}
	for (size_t i = 0; i < g->nrecs; i++) {
		int err = sym_prof_add_source(g->out, &g->recs[i].src,
					      &g->recs[i].out_source);

		if (err)
			return err;
	}
	return 0;
}

/*
 * Weights.  The input's header says the unit of its stacks' weights (a
 * merged input's sources keep their recordings' own units, which its
 * weights may no longer be in).
 */

/* round(a * b / c); -EOVERFLOW past 2^64 - 1. */
static int muldiv(uint64_t a, uint64_t b, u128 c, uint64_t *out)
{
	u128 p = (u128)a * b, q, r;

	if (!c)
		return -EDOM;
	q = p / c;
	r = p % c;
	if (r >= c - r)
		q++;
	if (q > UINT64_MAX)
		return -EOVERFLOW;
	*out = (uint64_t)q;
	return 0;
}

/* The weight per-host normalizes: the stack's weight, times the period
 * when a host's recordings count `samples` of different periods. */
static void base_weight(const struct merge *g, const struct rec *r,
			const struct sym_prof_stack *s, u128 *out)
{
	const struct host *h = &g->hosts[r->host];
	const struct sym_prof_header *ih = sym_prof_header(g->in[r->input]);

	*out = s->weight;
	if (h->period == UINT64_MAX && is_unit(ih->weight_unit, "samples"))
		*out *= ih->period;
}

/* Check the inputs' units for @mode, and find the hosts. */
static int plan(struct merge *g)
{
	const struct sym_prof_header *h0 = sym_prof_header(g->in[0]);

	switch (g->o->mode) {
	case MERGE_NONE:
		g->ref_period = h0->period;
		for (size_t k = 1; k < g->nin; k++) {
			const struct sym_prof_header *h =
				sym_prof_header(g->in[k]);

			if (!same_str(h->weight_unit, h0->weight_unit)) {
				tool_err("'%s' weighs its stacks in '%s' and "
					 "'%s' in '%s': a plain sum cannot add "
					 "them (try --normalize per-host)",
					 g->names[0], h0->weight_unit,
					 g->names[k], h->weight_unit);
				return -EINVAL;
			}
			if (h->period != h0->period &&
			    is_unit(h->weight_unit, "samples")) {
				if (!h->period || !h0->period) {
					tool_err("'%s': period 0: its samples "
						 "cannot be rescaled to '%s''s "
						 "period", h->period ?
						 g->names[0] : g->names[k],
						 h->period ? g->names[k] :
						 g->names[0]);
					return -EINVAL;
				}
				g->rescale_samples = true;
			}
		}
		return 0;
	case MERGE_PER_HOST:
		g->hosts = calloc(g->nrecs, sizeof(*g->hosts));
		if (!g->hosts)
			return -ENOMEM;
		for (size_t i = 0; i < g->nrecs; i++) {
			struct rec *r = &g->recs[i];
			const struct sym_prof_header *ih =
				sym_prof_header(g->in[r->input]);
			size_t j = 0;

			if (r->src.host)
				for (j = 0; j < g->nhosts; j++)
					if (same_str(g->hosts[j].name,
						     r->src.host))
						break;
			if (!r->src.host || j == g->nhosts) {
				j = g->nhosts++;
				g->hosts[j] = (struct host){
					.name = r->src.host,
					.unit = ih->weight_unit,
					.period = ih->period,
				};
			} else if (!same_str(g->hosts[j].unit,
					     ih->weight_unit)) {
				tool_err("host '%s': '%s' weighs its stacks in "
					 "'%s', another input of the host in "
					 "'%s': they cannot be added",
					 r->src.host, g->names[r->input],
					 ih->weight_unit, g->hosts[j].unit);
				return -EINVAL;
			} else if (g->hosts[j].period != ih->period) {
				g->hosts[j].period = UINT64_MAX;
			}
			r->host = (uint32_t)j;
		}
		return 0;
	case MERGE_PER_SECOND:
		for (size_t i = 0; i < g->nrecs; i++) {
			const struct rec *r = &g->recs[i];
			const char *unit =
				sym_prof_header(g->in[r->input])->weight_unit;
			const char *what = g->names[r->input];

			if (!is_unit(unit, "ns") && !is_unit(unit, "samples") &&
			    !is_unit(unit, "ns/s")) {
				tool_err("'%s' weighs its stacks in '%s', not "
					 "time: per-second needs 'ns' or "
					 "'samples' (of a period in ns)", what,
					 unit);
				return -EINVAL;
			}
			if (!is_unit(unit, "ns/s") && !r->src.duration_ns) {
				tool_err("'%s'%s%s%s: no duration: per-second "
					 "needs it", what,
					 r->in_source ? " (host '" : "",
					 r->in_source ? (r->src.host ?
							 r->src.host : "-") :
							"",
					 r->in_source ? "')" : "");
				return -EINVAL;
			}
		}
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * A merge made without --spread has stacks that belong to no recording:
 * they can be added as they are (none), or kept when their weights are
 * per-second already, but not normalized by host or duration.
 */
static int check_unsourced(const struct merge *g)
{
	for (size_t k = 0; k < g->nin && g->o->mode != MERGE_NONE; k++) {
		const struct sym_prof *in = g->in[k];
		size_t n = sym_prof_nsources(in) ? sym_prof_nstacks(in) : 0;

		if (g->o->mode == MERGE_PER_SECOND &&
		    is_unit(sym_prof_header(in)->weight_unit, "ns/s"))
			continue;
		for (size_t i = 0; i < n; i++) {
			if (sym_prof_stack_source(in, i))
				continue;
			tool_err("'%s' is a merge without --spread: its "
				 "stacks cannot be told apart by recording "
				 "to normalize them (merge it with "
				 "--normalize none, or merge its inputs "
				 "again)", g->names[k]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Per-host: every host's total base weight. */
static int host_totals(struct merge *g, const size_t *first)
{
	for (size_t k = 0; k < g->nin; k++) {
		size_t n = sym_prof_nstacks(g->in[k]);

		for (size_t i = 0; i < n; i++) {
			size_t ri = rec_of(g, k, first[k], i);
			const struct sym_prof_stack *s =
				sym_prof_stack(g->in[k], i);
			struct host *h;
			u128 b;

			base_weight(g, &g->recs[ri], s, &b);
			h = &g->hosts[g->recs[ri].host];
			if (h->total + b < h->total)
				return -EOVERFLOW;
			h->total += b;
			g->recs[ri].total += b;
		}
	}
	return 0;
}

/*
 * Per-host rounding: the weights of one host, w * 10^12 / W_host, are
 * rounded down and the shortfall (fewer units than stacks) goes one unit
 * each to the largest remainders, so that the host sums to exactly 10^12.
 * The remainders are kept per stack of every input (all hosts at once).
 */
struct share {
	size_t input, stack;
	uint32_t host;
	uint64_t w;		/* rounded down */
	u128 rem;		/* remainder, against the host's total */
};

static int cmp_share(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->rem != y->rem)
		return x->rem > y->rem ? -1 : 1;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_pos(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int per_host_weights(struct merge *g, const size_t *first,
			    struct share **out)
{
	size_t n = 0, at = 0;
	struct share *v;
	uint64_t *sum;

	for (size_t k = 0; k < g->nin; k++)
		n += sym_prof_nstacks(g->in[k]);
	v = calloc(n ? n : 1, sizeof(*v));
	sum = calloc(g->nhosts ? g->nhosts : 1, sizeof(*sum));
	if (!v || !sum) {
		free(v);
		free(sum);
		return -ENOMEM;
	}
	for (size_t k = 0; k < g->nin; k++) {
		size_t ns = sym_prof_nstacks(g->in[k]);

		for (size_t i = 0; i < ns; i++) {
			const struct rec *r =
				&g->recs[rec_of(g, k, first[k], i)];
			const struct host *h = &g->hosts[r->host];
			struct share *e = &v[at++];
			u128 b, p;

			base_weight(g, r, sym_prof_stack(g->in[k], i), &b);
			/* b <= W_host, so b * 10^12 / W_host <= 10^12; b
			 * may pass 2^64 (period times weight), but b * 10^12
			 * does not pass 2^128 unless b does 2^88. */
			if (b >> 88) {
				free(v);
				free(sum);
				return -EOVERFLOW;
			}
			p = b * PPT;
			*e = (struct share){ .input = k, .stack = i,
					     .host = r->host };
			if (h->total) {
				e->w = (uint64_t)(p / h->total);
				e->rem = p % h->total;
			}
			sum[r->host] += e->w;
		}
	}
	qsort(v, n, sizeof(*v), cmp_share);
	for (size_t i = 0; i < n;) {
		uint32_t h = v[i].host;
		uint64_t need = g->hosts[h].total ? PPT - sum[h] : 0;

		for (; i < n && v[i].host == h; i++) {
			if (need && v[i].rem) {
				v[i].w++;
				need--;
			}
		}
	}
	qsort(v, n, sizeof(*v), cmp_pos);
	free(sum);
	*out = v;
	return 0;
}

/* The weight of stack @s of recording @r in the output (modes none and
 * per-second). */
static int out_weight(const struct merge *g, const struct rec *r,
		      const struct sym_prof_stack *s, uint64_t *w)
{
	const struct sym_prof_header *ih = sym_prof_header(g->in[r->input]);
	uint64_t cpu;
	int err;

	switch (g->o->mode) {
	case MERGE_NONE:
		if (g->rescale_samples && is_unit(ih->weight_unit, "samples") &&
		    ih->period != g->ref_period)
			return muldiv(s->weight, ih->period, g->ref_period, w);
		*w = s->weight;
		return 0;
	case MERGE_PER_SECOND:
		if (is_unit(ih->weight_unit, "ns/s")) {
			*w = s->weight;
			return 0;
		}
		if (is_unit(ih->weight_unit, "ns")) {
			cpu = s->weight;
		} else if (__builtin_mul_overflow(s->count, ih->period, &cpu)) {
			return -EOVERFLOW;
		}
		err = muldiv(cpu, NS_PER_S, r->src.duration_ns, w);
		return err;
	default:
		return -EINVAL;
	}
}

/*
 * Everything else of the output.
 */

static void merged_header(struct merge *g, struct sym_prof_header *h)
{
	const struct sym_prof_header *h0 = sym_prof_header(g->in[0]);
	int64_t first = 0, last = 0;
	bool starts = true;
	uint64_t maxdur = 0;

	*h = (struct sym_prof_header){
		.host = h0->host, .tool = "sym-merge",
		.tool_version = SYM_VERSION, .event = h0->event,
		.mode = h0->mode, .frequency = h0->frequency,
		.period = h0->period, .weight_unit = h0->weight_unit,
		.pidns = h0->pidns,
	};
	for (size_t k = 0; k < g->nin; k++) {
		const struct sym_prof_header *x = sym_prof_header(g->in[k]);
		int64_t end;

		if (!same_str(h->host, x->host))
			h->host = NULL;
		if (!same_str(h->event, x->event))
			h->event = NULL;
		if (!same_str(h->mode, x->mode))
			h->mode = NULL;
		if (h->frequency != x->frequency)
			h->frequency = 0;
		if (h->pidns != x->pidns)
			h->pidns = 0;
		if (x->period != h0->period)
			g->periods_differ = true;
		/* Sums saturate: the counts are informative only. */
#define ADD(f)                                                             \
		do {                                                       \
			if (__builtin_add_overflow(h->f, x->f, &h->f))     \
				h->f = UINT64_MAX;                         \
		} while (0)
		ADD(samples);
		ADD(lost);
		ADD(throttled);
		ADD(dropped);
		for (int i = 0; i < SYM_PROF_NFLAGS; i++)
			ADD(flagged[i]);
#undef ADD
		if (x->duration_ns > maxdur)
			maxdur = x->duration_ns;
		if (!x->start_ns ||
		    __builtin_add_overflow(x->start_ns,
					   (int64_t)(x->duration_ns > INT64_MAX ?
						     INT64_MAX :
						     x->duration_ns),
					   &end)) {
			starts = false;
			continue;
		}
		if (!first || x->start_ns < first)
			first = x->start_ns;
		if (end > last)
			last = end;
	}
	h->start_ns = starts ? first : 0;
	h->duration_ns = starts ? (uint64_t)(last - first) : maxdur;
	if (g->o->mode == MERGE_PER_HOST)
		h->weight_unit = "host-ppt";
	else if (g->o->mode == MERGE_PER_SECOND)
		h->weight_unit = "ns/s";
}

/* The process and thread of stack @s of input @k, unless the output has
 * them already (the first input that names a PID or TID wins). */
static int copy_task(struct merge *g, size_t k, const struct sym_prof_stack *s)
{
	const struct sym_prof *in = g->in[k];
	uint64_t pidns, opidns;
	int32_t nspid, onspid;
	const char *comm;
	int err = 0;

	if (s->pid) {
		comm = sym_prof_process(in, s->pid, &pidns, &nspid);
		if ((comm || pidns || nspid) &&
		    !sym_prof_process(g->out, s->pid, &opidns, &onspid) &&
		    !opidns && !onspid)
			err = sym_prof_add_process(g->out, s->pid, pidns, nspid,
						   comm);
	}
	if (!err && s->tid) {
		comm = sym_prof_thread(in, s->tid);
		if (comm && !sym_prof_thread(g->out, s->tid))
			err = sym_prof_add_thread(g->out, s->pid, s->tid, comm);
	}
	return err;
}

/* The locations of input @k, on the output's maps; an `ok` answer is not
 * replaced by another input's failure. */
static int copy_locations(struct merge *g, size_t k)
{
	const struct sym_prof *in = g->in[k];
	size_t n = sym_prof_nlocations(in);

	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_line *lines;
		struct sym_prof_frame f;
		uint32_t st, have;
		size_t nl;
		int err;

		sym_prof_location_at(in, i, &f, &st, &lines, &nl);
		if (f.map != SYM_PROF_NOMAP)
			f.map = g->mapid[k][f.map];
		if (st != SYM_PROF_LOC_OK &&
		    !sym_prof_location(g->out, &f, &have, NULL, NULL) &&
		    have == SYM_PROF_LOC_OK)
			continue;
		err = sym_prof_set_location(g->out, &f, st, lines, nl);
		if (err)
			return err;
	}
	return 0;
}

static int add_stacks(struct merge *g, size_t k, size_t first,
		      const struct share *shares, struct sym_prof_frame *fr)
{
	const struct sym_prof *in = g->in[k];
	size_t n = sym_prof_nstacks(in);

	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_stack *s = sym_prof_stack(in, i);
		struct sym_prof_stack t = *s;
		size_t ri = rec_of(g, k, first, i);
		uint32_t src = 0;
		int err = 0;

		for (uint32_t j = 0; j < s->nframes; j++) {
			fr[j] = s->frames[j];
			if (fr[j].map != SYM_PROF_NOMAP)
				fr[j].map = g->mapid[k][fr[j].map];
		}
		t.frames = fr;
		/* A stack of no recording comes only in mode none, or
		 * per-second with weights in ns/s already
		 * (check_unsourced()): out_weight() needs no duration. */
		if (g->o->mode == MERGE_PER_HOST)
			t.weight = shares[i].w;
		else if (ri != SIZE_MAX)
			err = out_weight(g, &g->recs[ri], s, &t.weight);
		else
			err = out_weight(g, &(struct rec){ .input = k }, s,
					 &t.weight);
		if (err)
			return err;
		if (g->o->spread && ri != SIZE_MAX)
			src = g->recs[ri].out_source;
		err = copy_task(g, k, s);
		if (!err)
			err = sym_prof_add_stack_values(
				g->out, &t, src,
				sym_prof_nvalue_types(g->out) ?
				sym_prof_stack_values(in, i) : NULL);
		if (err)
			return err;
	}
	return 0;
}

/* The inputs' kernel release when they all say the same, else NULL. */
static const char *merged_release(const struct merge *g)
{
	const char *rel = sym_prof_release(g->in[0]);

	for (size_t k = 1; k < g->nin; k++)
		if (!same_str(rel, sym_prof_release(g->in[k])))
			return NULL;
	return rel;
}

/*
 * The header's period, the nominal weight of one sample: the inputs'
 * when they agree (mode none), the first input's when `samples` were
 * rescaled to it, else the mean weight of a sample in the output; and
 * the kernel release the inputs agree on.
 */
static int finish_header(struct merge *g, struct sym_prof_header *h)
{
	size_t n = sym_prof_nstacks(g->out);
	u128 w = 0, c = 0;
	int err = sym_prof_set_release(g->out, merged_release(g));

	if (err)
		return err;
	if (g->o->mode == MERGE_NONE &&
	    (!g->periods_differ || g->rescale_samples))
		return sym_prof_set_header(g->out, h);
	for (size_t i = 0; i < n; i++) {
		w += sym_prof_stack(g->out, i)->weight;
		c += sym_prof_stack(g->out, i)->count;
	}
	w = c ? (w + c / 2) / c : 0;
	h->period = w > UINT64_MAX ? UINT64_MAX : (uint64_t)w;
	return sym_prof_set_header(g->out, h);
}

/*
 * Value types (docs/raw-format.md, "Value types"): kept, and added as
 * they are in every mode (they are estimates in their own units, which
 * no normalization rescales), when every input has the same ones in the
 * same order; otherwise left out, with a warning.
 */
static int merge_value_types(struct merge *g)
{
	const struct sym_prof *a = g->in[0];
	uint32_t nv = sym_prof_nvalue_types(a);
	const char *names[SYM_PROF_MAX_VALUES], *units[SYM_PROF_MAX_VALUES];

	for (size_t k = 1; k < g->nin; k++) {
		const struct sym_prof *b = g->in[k];
		bool same = sym_prof_nvalue_types(b) == nv;

		for (uint32_t j = 0; same && j < nv; j++) {
			const char *ua, *ub;

			same = !strcmp(sym_prof_value_type(a, j, &ua),
				       sym_prof_value_type(b, j, &ub)) &&
			       !strcmp(ua, ub);
		}
		if (!same) {
			if (nv || sym_prof_nvalue_types(b))
				tool_err("warning: '%s' and '%s' have "
					 "different value types: the merge "
					 "has none", g->names[0], g->names[k]);
			return 0;
		}
	}
	for (uint32_t j = 0; j < nv; j++)
		names[j] = sym_prof_value_type(a, j, &units[j]);
	return sym_prof_set_value_types(g->out, names, units, nv);
}

int merge_profiles(struct sym_prof **in, const char *const *names, size_t n,
		   const struct merge_opts *o, struct sym_prof **out)
{
	struct merge g = { .o = o, .in = in, .names = names, .nin = n };
	struct sym_prof_header h;
	struct share *shares = NULL;
	struct sym_prof_frame *fr = NULL;
	size_t *first = NULL, at = 0;
	int err;

	*out = NULL;
	if (!n || o->mode >= MERGE_NMODES)
		return -EINVAL;
	first = calloc(n, sizeof(*first));
	g.mapid = calloc(n, sizeof(*g.mapid));
	fr = malloc(SYM_PROF_MAX_FRAMES * sizeof(*fr));
	err = first && g.mapid && fr ? sym_prof_new(&g.out) : -ENOMEM;
	if (!err)
		err = merge_value_types(&g);
	if (err)
		goto out;
	err = collect_recs(&g, first);
	if (!err)
		err = plan(&g);
	if (!err)
		err = check_unsourced(&g);
	if (err)
		goto out;
	merged_header(&g, &h);
	if (o->mode == MERGE_PER_HOST) {
		err = host_totals(&g, first);
		if (err)
			goto out;
	}
	for (size_t k = 0; k < n; k++) {
		size_t nm = sym_prof_nmaps(in[k]);

		g.mapid[k] = calloc(nm ? nm : 1, sizeof(**g.mapid));
		if (!g.mapid[k]) {
			err = -ENOMEM;
			goto out;
		}
		for (uint32_t i = 0; i < nm; i++) {
			err = map_get(&g, sym_prof_map(in[k], i),
				      &g.mapid[k][i]);
			if (err)
				goto out;
		}
	}
	if (o->mode == MERGE_PER_HOST) {
		err = per_host_weights(&g, first, &shares);
		if (err)
			goto out;
	}
	for (size_t k = 0; k < n; k++) {
		err = copy_locations(&g, k);
		if (!err)
			err = add_stacks(&g, k, first[k],
					 shares ? shares + at : NULL, fr);
		if (err)
			goto out;
		at += sym_prof_nstacks(in[k]);
	}
	err = finish_header(&g, &h);
	if (err)
		goto out;
	*out = g.out;
	g.out = NULL;
out:
	if (err == -EOVERFLOW)
		tool_err("a merged count or weight passes 2^64 - 1");
	else if (err == -ENOMEM)
		tool_err("out of memory");
	else if (err == -E2BIG)
		tool_err("the merged profile passes a limit of the raw format "
			 "(2^20 maps or sources, 2^24 unique stacks)");
	sym_prof_free(g.out);
	for (size_t k = 0; g.mapid && k < n; k++)
		free(g.mapid[k]);
	free(g.mapid);
	free(g.recs);
	free(g.hosts);
	free(g.maps.slots);
	free(shares);
	free(first);
	free(fr);
	return err;
}

/*
 * The command.
 */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym merge IN... [-o OUT] [--normalize MODE] [--spread]\n"
		"                 [--server URL | --store DIR] [-q|-v]\n\n"
		"Merge profiles (raw, symbolized raw or pprof), usually of "
		"several hosts,\ninto one raw profile that keeps a 'source' "
		"line per recording.\nSample counts are always the real "
		"samples; --normalize changes the weights:\n\n"
		"  -n, --normalize none        a plain sum: where does the "
		"fleet's sampled time\n"
		"                              go, big hosts counting "
		"more (the default)\n"
		"      --normalize per-host    every host weighs the same "
		"(weight unit host-ppt:\n"
		"                              each host sums to 10^12): "
		"what does the typical\n"
		"                              host spend its time on?\n"
		"      --normalize per-second  CPU time over each "
		"recording's duration (weight\n"
		"                              unit ns/s, 10^9 = one core "
		"busy): how many cores\n"
		"                              does each function keep "
		"busy, fleet-wide?\n"
		"  -s, --spread                keep each recording's stacks "
		"apart, so that\n"
		"                              `sym report` shows a "
		"function's min/median/max\n"
		"                              share across hosts\n"
		"  -o, --output OUT            write OUT atomically; default "
		"stdout\n"
		"      --server URL, --store DIR, --wait-ms MS, --kallsyms FILE\n"
		"                              symbolize the output (as sym "
		"symbolize); also\n"
		"                              done, with the default store, "
		"when some inputs\n"
		"                              are symbolized and others "
		"are not\n"
		"  -q, --quiet                 no symbolization summary\n"
		"  -v, --verbose               its table of modules too\n"
		"  -h, --help                  this text\n\n"
		"With equal periods a plain sum is exact.  Weights in the "
		"unit 'samples'\nof different periods are rescaled to the "
		"first input's period; weights\nin 'ns' add as they are.  "
		"Read a normalized merge with --value weight.\nIN may be - "
		"for stdin (once).  See docs/views.md, \"Merging profiles\".\n");
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "normalize", required_argument, NULL, 'n' },
		{ "spread", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		TOOL_SYMBOLIZE_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct tool_symbolize_opts so = { .wait_ms = 30000 };
	struct merge_opts mo = { .mode = MERGE_NONE };
	struct sym_prof **in = NULL, *out = NULL;
	const char *dst = NULL;
	size_t n, nsym = 0, stdin_n = 0;
	int c, rc = TOOL_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "o:n:sqvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			dst = optarg;
			break;
		case 'n':
			if (merge_parse_mode(optarg, &mo.mode)) {
				tool_err("unknown --normalize '%s' (none, "
					 "per-host or per-second)", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 's':
			mo.spread = true;
			break;
		case 'q':
			so.quiet = true;
			break;
		case 'v':
			so.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			rc = tool_symbolize_getopt(c, optarg, &so);
			if (rc > 0)
				break;
			if (!rc)
				usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (so.server && so.store_dir) {
		tool_err("--server and --store exclude each other");
		return TOOL_EXIT_USAGE;
	}
	n = (size_t)(argc - optind);
	for (size_t k = 0; k < n; k++)
		stdin_n += !strcmp(argv[optind + k], "-");
	if (stdin_n > 1) {
		tool_err("stdin ('-') can be read only once");
		return TOOL_EXIT_USAGE;
	}
	in = calloc(n, sizeof(*in));
	if (!in) {
		tool_err("out of memory");
		return TOOL_EXIT_FAIL;
	}
	rc = TOOL_EXIT_FAIL;
	for (size_t k = 0; k < n; k++) {
		if (tool_prof_read(argv[optind + k], &in[k]))
			goto out;
		nsym += sym_prof_symbolized(in[k]) != 0;
	}
	if (merge_profiles(in, (const char *const *)argv + optind, n, &mo,
			   &out))
		goto out;
	if ((so.server || so.store_dir || (nsym && nsym < n)) &&
	    tool_prof_symbolize(out, &so))
		goto out;
	if (!tool_prof_write(out, false, dst))
		rc = TOOL_EXIT_OK;
out:
	for (size_t k = 0; k < n; k++)
		sym_prof_free(in[k]);
	free(in);
	sym_prof_free(out);
	return rc;
}

int merge_parse_mode(const char *s, enum merge_mode *out)
{
	for (int m = 0; m < MERGE_NMODES; m++) {
		if (!strcmp(s, merge_mode_names[m])) {
			*out = (enum merge_mode)m;
			return 0;
		}
	}
	return -EINVAL;
}
