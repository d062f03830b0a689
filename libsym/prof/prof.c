/*
 * prof.c - struct sym_prof: one profile in memory (header, mappings,
 * processes, threads and unique stacks), independent of any file format.
 * raw.c reads and writes it as docs/raw-format.md; pprof-read.c and
 * pprof-write.c as pprof.
 *
 * Invariants, which the writers rely on so that whatever a profile holds
 * can be written and read back unchanged:
 * - every string is NULL or non-empty and owned by the profile ("" passed
 *   in is stored as NULL, which the formats write as "-");
 * - maps have a known kind, start <= end, pid >= -1, and a build ID that
 *   is NULL or 2 to 128 lowercase hex digits of an even count;
 * - pids and tids of processes, threads and stacks are >= 0;
 * - each stack's frames name an existing map or SYM_PROF_NOMAP, and no two
 *   stacks have the same (pid, tid, flags, frames).
 *
 * Stacks are aggregated through an open-addressing hash table of stack
 * indexes (linear probing, at most half full) with each stack's 64-bit
 * hash kept beside it, so that a lookup compares frames only on a full
 * hash match and growing never rehashes frames.  Frames live in chunks
 * that never move (the stacks point into them), so adding an existing
 * stack allocates nothing and adding a new one allocates only when a
 * chunk or an array is full: O(1) amortized per add.
 *
 * Processes and threads are arrays in insertion order, indexed by pid or
 * tid through the same kind of hash table (struct idx).
 *
 * Sources (sym_prof_add_source()) are an array, ids 1 to n.  A stack's
 * source is part of its key; the sources of stacks are a second array
 * beside @stacks, allocated only once a stack with a source is added, so
 * a profile without them pays nothing.  A stack without a source hashes
 * as it did before sources existed.
 *
 * Value types (sym_prof_set_value_types()) are declared before the first
 * stack; the values of stack i are values[i * nvt .. i * nvt + nvt - 1],
 * an array beside @stacks that exists only when nvt > 0.
 *
 * Symbolization (sym_prof_set_location()) is a second table of the same
 * kind: locations keyed by (map, address, return flag), each with a
 * status and its lines in chunks that never move (so the lines handed out
 * stay valid when more are added; a replaced answer's old lines stay in
 * their chunk until the profile is freed).  Function names and file
 * names are interned in two string sets (struct strset), so a name is
 * kept once however many lines use it, and each string carries its index
 * in its set (struct istr), which the writers use to number `fn` and
 * `src` lines and pprof Functions without another hash lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "base.h"

/* Most unique stacks, mappings, processes and threads in one profile
 * (docs/raw-format.md, "Limits"). */
#define MAX_STACKS (1u << 24)
#define MAX_MAPS (1u << 20)
#define MAX_TASKS (1u << 22)
#define MAX_LOCS (1u << 26)
#define MAX_SOURCES (1u << 20)
#define MAX_STRS (1u << 24)

/* The stack flags a profile holds: the named ones and "unknown". */
#define STACK_FLAGS ((uint32_t)SYM_PROF_UNKNOWN_FLAG | \
		     ((1u << SYM_PROF_NFLAGS) - 1))

/* Elements per chunk of an arena (struct arena). */
#define CHUNK_MIN 256
#define CHUNK_MAX 65536

struct proc {
	int32_t pid, nspid;
	uint64_t pidns;
	char *comm;		/* free(); NULL when unknown */
};

struct thread {
	int32_t pid, tid;
	char *comm;		/* free(); NULL when unknown */
};

/* Elements that never move (frames, lines): chunks start small (a tiny
 * profile stays tiny) and double up to CHUNK_MAX elements; one request
 * (a stack's frames, a location's lines) always fits in one chunk. */
struct chunk {
	void *mem;		/* free(); cap elements */
	size_t used, cap;
};

struct arena {
	struct chunk *chunks;	/* free() */
	size_t n, cap;
};

/* An interned string: @s is what lines point to, @idx its index in its
 * set. */
struct istr {
	uint64_t hash;
	uint32_t idx;
	char s[];
};

/* A set of interned strings in insertion order, open addressing over
 * @v's indexes. */
struct strset {
	struct istr **v;	/* free() each and the array */
	size_t n, cap;
	uint32_t *slots;	/* 0 empty, else index + 1 */
	size_t nslots;		/* a power of two, or 0 */
};

/* A symbolized frame. */
struct loc {
	uint64_t addr;
	uint32_t map, fflags;	/* the key, with addr */
	uint32_t status, nlines;
	const struct sym_prof_line *lines;	/* in p->lines; NULL if none */
};

#define PROF_RECENT 64		/* recent[] slots, a power of 2 */

struct sym_prof {
	/* Strings are owned (free()), cast from const for the public view. */
	struct sym_prof_header h;
	char *release;		/* sym_prof_set_release(): free(), or NULL */

	/* Strings owned: free() build_id and path. */
	struct sym_prof_map *maps;
	size_t nmaps, capmaps;

	struct proc *procs;
	size_t nprocs, capprocs;
	struct symi_idx proc_idx;	/* pid -> procs index */

	struct thread *threads;
	size_t nthreads, capthreads;
	struct symi_idx thread_idx;	/* tid -> threads index */

	/* frames point into chunks; hashes[i] is the hash of stacks[i]. */
	struct sym_prof_stack *stacks;
	uint64_t *hashes;
	size_t nstacks, capstacks, caphashes;
	/* Open addressing: 0 is empty, else a stacks index + 1. */
	uint32_t *slots;
	size_t nslots;			/* a power of two, or 0 */
	/* The last stack each thread added (recent_slot()): 0 empty, else a
	 * stacks index + 1.  Stacks are only appended and each is unique,
	 * so a slot's stack, once compared equal, is the one the hash would
	 * find: a recorder whose threads block again where they did skips
	 * the hash (sym_prof_add_stack_values()). */
	uint32_t recent[PROF_RECENT];

	struct arena frames;		/* of struct sym_prof_frame */

	/* Strings owned: free() host and weight_unit; ids are index + 1. */
	struct sym_prof_source *sources;
	size_t nsources, capsources;
	/* Source of each stack (0: none); NULL while every stack has none,
	 * else it has at least nstacks elements. */
	uint32_t *stack_srcs;
	size_t capstack_srcs;

	/* Value types: free() each name and unit; @values holds nvt per
	 * stack (NULL while nvt is 0). */
	char *vt_names[SYM_PROF_MAX_VALUES], *vt_units[SYM_PROF_MAX_VALUES];
	uint32_t nvt;
	uint64_t *values;
	size_t capvalues;

	/* Symbolization. */
	bool symbolized;
	struct loc *locs;
	size_t nlocs, caplocs;
	uint32_t *loc_slots;		/* 0 empty, else locs index + 1 */
	size_t nloc_slots;		/* a power of two, or 0 */
	struct arena lines;		/* of struct sym_prof_line */
	struct strset strs[SYMI_PROF_NSETS];	/* functions, files */
};

/*
 * The index: u64 key -> u32 value, open addressing with linear probing.
 */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

void symi_idx_release(struct symi_idx *ix)
{
	free(ix->keys);
	free(ix->vals);
	memset(ix, 0, sizeof(*ix));
}

bool symi_idx_get(const struct symi_idx *ix, uint64_t key, uint32_t *val)
{
	size_t mask = ix->cap - 1;

	if (!ix->cap)
		return false;
	for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
		if (!ix->vals[i])
			return false;
		if (ix->keys[i] == key) {
			*val = ix->vals[i] - 1;
			return true;
		}
	}
}

/* Insert without growing; the key must be absent and a slot free. */
static void idx_put(struct symi_idx *ix, uint64_t key, uint32_t val)
{
	size_t mask = ix->cap - 1, i = mix64(key) & mask;

	while (ix->vals[i])
		i = (i + 1) & mask;
	ix->keys[i] = key;
	ix->vals[i] = val + 1;
	ix->n++;
}

int symi_idx_set(struct symi_idx *ix, uint64_t key, uint32_t val)
{
	size_t mask = ix->cap - 1;

	if (ix->cap) {
		for (size_t i = mix64(key) & mask; ix->vals[i];
		     i = (i + 1) & mask) {
			if (ix->keys[i] == key) {
				ix->vals[i] = val + 1;
				return 0;
			}
		}
	}
	if (val == UINT32_MAX)
		return -E2BIG;
	if ((ix->n + 1) * 2 > ix->cap) {
		struct symi_idx nx = { 0 };

		nx.cap = ix->cap ? ix->cap * 2 : 16;
		nx.keys = symi_calloc(nx.cap, sizeof(*nx.keys));
		nx.vals = symi_calloc(nx.cap, sizeof(*nx.vals));
		if (!nx.keys || !nx.vals) {
			symi_idx_release(&nx);
			return -ENOMEM;
		}
		for (size_t i = 0; i < ix->cap; i++)
			if (ix->vals[i])
				idx_put(&nx, ix->keys[i], ix->vals[i] - 1);
		symi_idx_release(ix);
		*ix = nx;
	}
	idx_put(ix, key, val);
	return 0;
}

/*
 * Strings.
 */

/* Copy @s into *dst: NULL and "" both give NULL.  0 or -ENOMEM. */
static int dup_str(const char *s, char **dst)
{
	*dst = NULL;
	if (!s || !*s)
		return 0;
	*dst = symi_strdup(s);
	return *dst ? 0 : -ENOMEM;
}

bool symi_prof_build_id_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') ||
		      (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n >= 2 && n <= 128 && n % 2 == 0;
}

/*
 * Arenas and string sets.
 */

/* Room for @n elements of @elem bytes in the last chunk, or a new one. */
static void *arena_alloc(struct arena *a, size_t n, size_t elem)
{
	struct chunk *c = a->n ? &a->chunks[a->n - 1] : NULL;
	size_t cap;

	if (c && c->cap - c->used >= n)
		goto take;
	cap = c ? c->cap * 2 : CHUNK_MIN;
	if (cap > CHUNK_MAX)
		cap = CHUNK_MAX;
	if (cap < n)
		cap = n;
	if (symi_grow((void **)&a->chunks, &a->cap, a->n + 1,
		      sizeof(*a->chunks)))
		return NULL;
	c = &a->chunks[a->n];
	c->mem = symi_malloc(cap * elem);
	if (!c->mem)
		return NULL;
	c->used = 0;
	c->cap = cap;
	a->n++;
take:
	c->used += n;
	return (char *)c->mem + (c->used - n) * elem;
}

static void arena_release(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->chunks[i].mem);
	free(a->chunks);
	memset(a, 0, sizeof(*a));
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return mix64(h);
}

static void strset_release(struct strset *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* Intern @s into @t: *out points to the kept copy.  0, -ENOMEM,
 * -E2BIG. */
static int strset_add(struct strset *t, const char *s, const char **out)
{
	uint64_t h = str_hash(s);
	size_t mask, i, len;
	struct istr *is;

	if (t->nslots) {
		mask = t->nslots - 1;
		for (i = h & mask; t->slots[i]; i = (i + 1) & mask) {
			is = t->v[t->slots[i] - 1];
			if (is->hash == h && !strcmp(is->s, s)) {
				*out = is->s;
				return 0;
			}
		}
	}
	if (t->n >= MAX_STRS)
		return -E2BIG;
	if ((t->n + 1) * 2 > t->nslots) {
		size_t n = t->nslots ? t->nslots * 2 : 64;
		uint32_t *slots = symi_calloc(n, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		mask = n - 1;
		for (size_t k = 0; k < t->n; k++) {
			for (i = t->v[k]->hash & mask; slots[i];
			     i = (i + 1) & mask)
				;
			slots[i] = (uint32_t)k + 1;
		}
		free(t->slots);
		t->slots = slots;
		t->nslots = n;
	}
	if (symi_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)))
		return -ENOMEM;
	len = strlen(s);
	is = symi_malloc(sizeof(*is) + len + 1);
	if (!is)
		return -ENOMEM;
	is->hash = h;
	is->idx = (uint32_t)t->n;
	memcpy(is->s, s, len + 1);
	mask = t->nslots - 1;
	for (i = h & mask; t->slots[i]; i = (i + 1) & mask)
		;
	t->slots[i] = (uint32_t)t->n + 1;
	t->v[t->n++] = is;
	*out = is->s;
	return 0;
}

/*
 * The profile.
 */

int sym_prof_new(struct sym_prof **out)
{
	if (!out)
		return -EINVAL;
	*out = symi_calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void header_release(struct sym_prof_header *h)
{
	free((char *)h->host);
	free((char *)h->tool);
	free((char *)h->tool_version);
	free((char *)h->event);
	free((char *)h->mode);
	free((char *)h->weight_unit);
	memset(h, 0, sizeof(*h));
}

void sym_prof_free(struct sym_prof *p)
{
	if (!p)
		return;
	header_release(&p->h);
	free(p->release);
	for (size_t i = 0; i < p->nmaps; i++) {
		free((char *)p->maps[i].build_id);
		free((char *)p->maps[i].path);
	}
	free(p->maps);
	for (size_t i = 0; i < p->nprocs; i++)
		free(p->procs[i].comm);
	free(p->procs);
	symi_idx_release(&p->proc_idx);
	for (size_t i = 0; i < p->nthreads; i++)
		free(p->threads[i].comm);
	free(p->threads);
	symi_idx_release(&p->thread_idx);
	free(p->stacks);
	free(p->hashes);
	free(p->slots);
	arena_release(&p->frames);
	for (size_t i = 0; i < p->nsources; i++) {
		free((char *)p->sources[i].host);
		free((char *)p->sources[i].weight_unit);
	}
	free(p->sources);
	free(p->stack_srcs);
	for (uint32_t k = 0; k < p->nvt; k++) {
		free(p->vt_names[k]);
		free(p->vt_units[k]);
	}
	free(p->values);
	free(p->locs);
	free(p->loc_slots);
	arena_release(&p->lines);
	for (int k = 0; k < SYMI_PROF_NSETS; k++)
		strset_release(&p->strs[k]);
	free(p);
}

int sym_prof_set_header(struct sym_prof *p, const struct sym_prof_header *h)
{
	struct sym_prof_header n;
	char *s[6] = { NULL };
	int err = 0;

	if (!p || !h)
		return -EINVAL;
	n = *h;
	if ((err = dup_str(h->host, &s[0])) ||
	    (err = dup_str(h->tool, &s[1])) ||
	    (err = dup_str(h->tool_version, &s[2])) ||
	    (err = dup_str(h->event, &s[3])) ||
	    (err = dup_str(h->mode, &s[4])) ||
	    (err = dup_str(h->weight_unit, &s[5]))) {
		for (size_t i = 0; i < 6; i++)
			free(s[i]);
		return err;
	}
	n.host = s[0];
	n.tool = s[1];
	n.tool_version = s[2];
	n.event = s[3];
	n.mode = s[4];
	n.weight_unit = s[5];
	header_release(&p->h);
	p->h = n;
	return 0;
}

const struct sym_prof_header *sym_prof_header(const struct sym_prof *p)
{
	return p ? &p->h : NULL;
}

int sym_prof_set_release(struct sym_prof *p, const char *release)
{
	char *s = NULL;
	int err;

	if (!p)
		return -EINVAL;
	err = dup_str(release, &s);
	if (err)
		return err;
	free(p->release);
	p->release = s;
	return 0;
}

const char *sym_prof_release(const struct sym_prof *p)
{
	return p ? p->release : NULL;
}

int sym_prof_add_map(struct sym_prof *p, const struct sym_prof_map *m,
		     uint32_t *id)
{
	struct sym_prof_map n;
	char *bid = NULL, *path = NULL;
	int err;

	if (!p || !m)
		return -EINVAL;
	n = *m;
	if (m->kind > SYM_PROF_MAP_ANON || m->start > m->end || m->pid < -1 ||
	    (m->flags & ~(uint32_t)SYM_PROF_MAP_FLAGS_ALL) ||
	    (m->build_id && *m->build_id &&
	     !symi_prof_build_id_ok(m->build_id)))
		return -EINVAL;
	if (p->nmaps >= MAX_MAPS)
		return -E2BIG;
	err = symi_grow((void **)&p->maps, &p->capmaps, p->nmaps + 1,
			sizeof(*p->maps));
	if (err)
		return err;
	if ((err = dup_str(m->build_id, &bid)) ||
	    (err = dup_str(m->path, &path))) {
		free(bid);
		return err;
	}
	n.id = (uint32_t)p->nmaps;
	n.build_id = bid;
	n.path = path;
	p->maps[p->nmaps++] = n;
	if (id)
		*id = n.id;
	return 0;
}

int sym_prof_add_process(struct sym_prof *p, int32_t pid, uint64_t pidns,
			 int32_t nspid, const char *comm)
{
	char *c = NULL;
	uint32_t i;
	int err;

	if (!p || pid < 0 || nspid < 0)
		return -EINVAL;
	err = dup_str(comm, &c);
	if (err)
		return err;
	if (symi_idx_get(&p->proc_idx, (uint64_t)pid, &i)) {
		free(p->procs[i].comm);
	} else {
		err = p->nprocs >= MAX_TASKS ? -E2BIG :
		      symi_grow((void **)&p->procs, &p->capprocs,
				p->nprocs + 1, sizeof(*p->procs));
		if (!err)
			err = symi_idx_set(&p->proc_idx, (uint64_t)pid,
					   (uint32_t)p->nprocs);
		if (err) {
			free(c);
			return err;
		}
		i = (uint32_t)p->nprocs++;
	}
	p->procs[i] = (struct proc){ .pid = pid, .nspid = nspid,
				     .pidns = pidns, .comm = c };
	return 0;
}

int sym_prof_add_thread(struct sym_prof *p, int32_t pid, int32_t tid,
			const char *comm)
{
	char *c = NULL;
	uint32_t i;
	int err;

	if (!p || pid < 0 || tid < 0)
		return -EINVAL;
	err = dup_str(comm, &c);
	if (err)
		return err;
	if (symi_idx_get(&p->thread_idx, (uint64_t)tid, &i)) {
		free(p->threads[i].comm);
	} else {
		err = p->nthreads >= MAX_TASKS ? -E2BIG :
		      symi_grow((void **)&p->threads, &p->capthreads,
				p->nthreads + 1, sizeof(*p->threads));
		if (!err)
			err = symi_idx_set(&p->thread_idx, (uint64_t)tid,
					   (uint32_t)p->nthreads);
		if (err) {
			free(c);
			return err;
		}
		i = (uint32_t)p->nthreads++;
	}
	p->threads[i] = (struct thread){ .pid = pid, .tid = tid, .comm = c };
	return 0;
}

/*
 * Stacks.
 */

static uint64_t stack_hash(const struct sym_prof_stack *s, uint32_t source)
{
	uint64_t h = mix64(((uint64_t)(uint32_t)s->pid << 32 |
			    (uint32_t)s->tid) ^ 0x9e3779b97f4a7c15ULL);

	h = mix64(h ^ ((uint64_t)s->flags << 32 | s->nframes));
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct sym_prof_frame *f = &s->frames[i];

		h = (h ^ f->addr) * 0x9e3779b97f4a7c15ULL;
		h = (h << 29 | h >> 35) ^ ((uint64_t)f->map << 32 | f->flags);
		h *= 0xbf58476d1ce4e5b9ULL;
	}
	if (source)
		h = mix64(h ^ ((uint64_t)source << 17 | 1));
	return mix64(h);
}

/* (Frames have no padding: equal fields are equal bytes.) */
_Static_assert(sizeof(struct sym_prof_frame) == 2 * sizeof(uint64_t),
	       "struct sym_prof_frame has padding");

static bool stack_eq(const struct sym_prof_stack *a,
		     const struct sym_prof_stack *b)
{
	if (a->pid != b->pid || a->tid != b->tid || a->flags != b->flags ||
	    a->nframes != b->nframes)
		return false;
	return a->nframes == 0 ||
	       memcmp(a->frames, b->frames,
		      a->nframes * sizeof(*a->frames)) == 0;
}

/* Room for @n stack sources; the first allocation zeroes the sources of
 * the stacks before it (none). */
static int grow_stack_srcs(struct sym_prof *p, size_t n)
{
	size_t old = p->stack_srcs ? p->capstack_srcs : 0;
	int err;

	err = symi_grow((void **)&p->stack_srcs, &p->capstack_srcs, n,
			sizeof(*p->stack_srcs));
	if (!err && !old)
		memset(p->stack_srcs, 0,
		       p->capstack_srcs * sizeof(*p->stack_srcs));
	return err;
}

/* Double the slot table (or make the first one) and re-insert. */
static int grow_slots(struct sym_prof *p)
{
	size_t n = p->nslots ? p->nslots * 2 : 64, mask = n - 1;
	uint32_t *slots = symi_calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t s = 0; s < p->nstacks; s++) {
		size_t i = p->hashes[s] & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = (uint32_t)s + 1;
	}
	free(p->slots);
	p->slots = slots;
	p->nslots = n;
	return 0;
}

static uint32_t source_of(const struct sym_prof *p, size_t i)
{
	return p->stack_srcs ? p->stack_srcs[i] : 0;
}

int sym_prof_add_stack(struct sym_prof *p, const struct sym_prof_stack *s)
{
	return sym_prof_add_stack_from(p, s, 0);
}

int sym_prof_add_stack_from(struct sym_prof *p, const struct sym_prof_stack *s,
			    uint32_t source)
{
	return sym_prof_add_stack_values(p, s, source, NULL);
}

/* Add @v (nvt values, or NULL for zeros) to the values of stack @i;
 * -EOVERFLOW leaves them unchanged. */
static int add_values(struct sym_prof *p, size_t i, const uint64_t *v)
{
	uint64_t *t, sum[SYM_PROF_MAX_VALUES];

	if (!v || !p->nvt)
		return 0;
	t = p->values + i * p->nvt;
	for (uint32_t k = 0; k < p->nvt; k++)
		if (__builtin_add_overflow(t[k], v[k], &sum[k]))
			return -EOVERFLOW;
	memcpy(t, sum, p->nvt * sizeof(*t));
	return 0;
}

/* Add @s's count, weight and @values to stack @i, which equals @s. */
static int add_to(struct sym_prof *p, size_t i, const struct sym_prof_stack *s,
		  const uint64_t *values)
{
	struct sym_prof_stack *t = &p->stacks[i];
	uint64_t count, weight;
	int err;

	if (__builtin_add_overflow(t->count, s->count, &count) ||
	    __builtin_add_overflow(t->weight, s->weight, &weight))
		return -EOVERFLOW;
	err = add_values(p, i, values);
	if (err)
		return err;
	t->count = count;
	t->weight = weight;
	return 0;
}

static uint32_t *recent_slot(struct sym_prof *p, const struct sym_prof_stack *s)
{
	uint64_t k = ((uint64_t)(uint32_t)s->pid << 32 | (uint32_t)s->tid) *
		     0x9e3779b97f4a7c15ULL;

	return &p->recent[k >> 58 & (PROF_RECENT - 1)];
}

int sym_prof_add_stack_values(struct sym_prof *p,
			      const struct sym_prof_stack *s, uint32_t source,
			      const uint64_t *values)
{
	struct sym_prof_stack *t;
	struct sym_prof_frame *fr = NULL;
	uint32_t *recent;
	uint64_t h;
	size_t mask, i;
	int err;

	if (!p || !s)
		return -EINVAL;
	if (s->nframes > SYM_PROF_MAX_FRAMES)
		return -E2BIG;
	if (s->pid < 0 || s->tid < 0 || (s->nframes && !s->frames) ||
	    (s->flags & ~STACK_FLAGS) || source > p->nsources)
		return -EINVAL;
	/* A stack equal to a recent one passed the frames' checks below
	 * when it was added, and still does (maps are only added). */
	recent = recent_slot(p, s);
	if (*recent && source_of(p, *recent - 1) == source &&
	    stack_eq(&p->stacks[*recent - 1], s))
		return add_to(p, *recent - 1, s, values);
	for (uint32_t k = 0; k < s->nframes; k++)
		if ((s->frames[k].map != SYM_PROF_NOMAP &&
		     s->frames[k].map >= p->nmaps) ||
		    (s->frames[k].flags & ~(uint32_t)SYM_PROF_FRAME_RETURN))
			return -EINVAL;
	h = stack_hash(s, source);
	if (p->nslots) {
		mask = p->nslots - 1;
		for (i = h & mask; p->slots[i]; i = (i + 1) & mask) {
			t = &p->stacks[p->slots[i] - 1];
			if (p->hashes[p->slots[i] - 1] != h ||
			    source_of(p, p->slots[i] - 1) != source ||
			    !stack_eq(t, s))
				continue;
			*recent = p->slots[i];
			return add_to(p, p->slots[i] - 1, s, values);
		}
	}
	if (p->nstacks >= MAX_STACKS)
		return -E2BIG;
	/* Everything that can fail comes before the stack is counted. */
	if ((p->nstacks + 1) * 2 > p->nslots) {
		err = grow_slots(p);
		if (err)
			return err;
	}
	err = symi_grow((void **)&p->stacks, &p->capstacks, p->nstacks + 1,
			sizeof(*p->stacks));
	if (!err)
		err = symi_grow((void **)&p->hashes, &p->caphashes,
				p->nstacks + 1, sizeof(*p->hashes));
	if (!err && (p->stack_srcs || source))
		err = grow_stack_srcs(p, p->nstacks + 1);
	if (!err && p->nvt)
		err = symi_grow((void **)&p->values, &p->capvalues,
				(p->nstacks + 1) * p->nvt, sizeof(*p->values));
	if (err)
		return err;
	if (s->nframes) {
		fr = arena_alloc(&p->frames, s->nframes, sizeof(*fr));
		if (!fr)
			return -ENOMEM;
		memcpy(fr, s->frames, s->nframes * sizeof(*fr));
	}
	t = &p->stacks[p->nstacks];
	*t = *s;
	t->frames = fr;
	p->hashes[p->nstacks] = h;
	if (p->stack_srcs)
		p->stack_srcs[p->nstacks] = source;
	if (p->nvt) {
		uint64_t *v = p->values + p->nstacks * p->nvt;

		if (values)
			memcpy(v, values, p->nvt * sizeof(*v));
		else
			memset(v, 0, p->nvt * sizeof(*v));
	}
	mask = p->nslots - 1;
	for (i = h & mask; p->slots[i]; i = (i + 1) & mask)
		;
	p->slots[i] = (uint32_t)++p->nstacks;
	*recent = p->slots[i];
	return 0;
}

size_t sym_prof_nmaps(const struct sym_prof *p)
{
	return p ? p->nmaps : 0;
}

const struct sym_prof_map *sym_prof_map(const struct sym_prof *p, uint32_t id)
{
	return p && id < p->nmaps ? &p->maps[id] : NULL;
}

size_t sym_prof_nstacks(const struct sym_prof *p)
{
	return p ? p->nstacks : 0;
}

const struct sym_prof_stack *sym_prof_stack(const struct sym_prof *p,
					    size_t i)
{
	return p && i < p->nstacks ? &p->stacks[i] : NULL;
}

uint32_t sym_prof_stack_source(const struct sym_prof *p, size_t i)
{
	return p && i < p->nstacks ? source_of(p, i) : 0;
}

/* A value type's name or unit: 1 to 64 bytes of [A-Za-z0-9_.-]. */
static bool vt_word_ok(const char *s)
{
	size_t n = 0;

	if (!s)
		return false;
	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') ||
		      (s[n] >= 'A' && s[n] <= 'Z') ||
		      (s[n] >= '0' && s[n] <= '9') || s[n] == '_' ||
		      s[n] == '.' || s[n] == '-'))
			return false;
	return n >= 1 && n <= 64;
}

int sym_prof_set_value_types(struct sym_prof *p, const char *const *names,
			     const char *const *units, uint32_t n)
{
	char *nm[SYM_PROF_MAX_VALUES] = { 0 }, *un[SYM_PROF_MAX_VALUES] = { 0 };
	uint32_t k;
	int err = 0;

	if (!p || (n && (!names || !units)))
		return -EINVAL;
	if (n > SYM_PROF_MAX_VALUES)
		return -E2BIG;
	if (p->nstacks || p->nvt)
		return -EBUSY;
	for (k = 0; k < n; k++) {
		if (!vt_word_ok(names[k]) || !vt_word_ok(units[k]))
			return -EINVAL;
		for (uint32_t j = 0; j < k; j++)
			if (strcmp(names[j], names[k]) == 0)
				return -EINVAL;
	}
	for (k = 0; k < n; k++) {
		nm[k] = symi_strdup(names[k]);
		un[k] = symi_strdup(units[k]);
		if (!nm[k] || !un[k]) {
			err = -ENOMEM;
			goto out;
		}
	}
	memcpy(p->vt_names, nm, sizeof(nm));
	memcpy(p->vt_units, un, sizeof(un));
	p->nvt = n;
	return 0;
out:
	for (k = 0; k < n; k++) {
		free(nm[k]);
		free(un[k]);
	}
	return err;
}

uint32_t sym_prof_nvalue_types(const struct sym_prof *p)
{
	return p ? p->nvt : 0;
}

const char *sym_prof_value_type(const struct sym_prof *p, uint32_t i,
				const char **unit)
{
	bool ok = p && i < p->nvt;

	if (unit)
		*unit = ok ? p->vt_units[i] : NULL;
	return ok ? p->vt_names[i] : NULL;
}

int sym_prof_value_index(const struct sym_prof *p, const char *name)
{
	if (!p || !name)
		return -EINVAL;
	for (uint32_t k = 0; k < p->nvt; k++)
		if (strcmp(p->vt_names[k], name) == 0)
			return (int)k;
	return -SYM_E_NOTFOUND;
}

const uint64_t *sym_prof_stack_values(const struct sym_prof *p, size_t i)
{
	return p && p->nvt && i < p->nstacks ? p->values + i * p->nvt : NULL;
}

int sym_prof_add_source(struct sym_prof *p, const struct sym_prof_source *s,
			uint32_t *id)
{
	struct sym_prof_source n;
	char *host = NULL, *unit = NULL;
	int err;

	if (!p || !s)
		return -EINVAL;
	n = *s;
	if (p->nsources >= MAX_SOURCES)
		return -E2BIG;
	err = symi_grow((void **)&p->sources, &p->capsources,
			p->nsources + 1, sizeof(*p->sources));
	if (err)
		return err;
	if ((err = dup_str(s->host, &host)) ||
	    (err = dup_str(s->weight_unit, &unit))) {
		free(host);
		return err;
	}
	n.id = (uint32_t)p->nsources + 1;
	n.host = host;
	n.weight_unit = unit;
	p->sources[p->nsources++] = n;
	if (id)
		*id = n.id;
	return 0;
}

size_t sym_prof_nsources(const struct sym_prof *p)
{
	return p ? p->nsources : 0;
}

const struct sym_prof_source *sym_prof_source(const struct sym_prof *p,
					      uint32_t id)
{
	return p && id && id <= p->nsources ? &p->sources[id - 1] : NULL;
}

const char *sym_prof_process(const struct sym_prof *p, int32_t pid,
			     uint64_t *pidns, int32_t *nspid)
{
	uint32_t i;

	if (!p || pid < 0 ||
	    !symi_idx_get(&p->proc_idx, (uint64_t)pid, &i)) {
		if (pidns)
			*pidns = 0;
		if (nspid)
			*nspid = 0;
		return NULL;
	}
	if (pidns)
		*pidns = p->procs[i].pidns;
	if (nspid)
		*nspid = p->procs[i].nspid;
	return p->procs[i].comm;
}

const char *sym_prof_thread(const struct sym_prof *p, int32_t tid)
{
	uint32_t i;

	if (!p || tid < 0 ||
	    !symi_idx_get(&p->thread_idx, (uint64_t)tid, &i))
		return NULL;
	return p->threads[i].comm;
}

size_t symi_prof_nprocs(const struct sym_prof *p)
{
	return p->nprocs;
}

const char *symi_prof_proc_at(const struct sym_prof *p, size_t i,
			      int32_t *pid, uint64_t *pidns, int32_t *nspid)
{
	*pid = p->procs[i].pid;
	*pidns = p->procs[i].pidns;
	*nspid = p->procs[i].nspid;
	return p->procs[i].comm;
}

size_t symi_prof_nthreads(const struct sym_prof *p)
{
	return p->nthreads;
}

const char *symi_prof_thread_at(const struct sym_prof *p, size_t i,
				int32_t *pid, int32_t *tid)
{
	*pid = p->threads[i].pid;
	*tid = p->threads[i].tid;
	return p->threads[i].comm;
}

int symi_prof_set_map_flags(struct sym_prof *p, uint32_t id, uint32_t flags)
{
	if (id >= p->nmaps || (flags & ~(uint32_t)SYM_PROF_MAP_FLAGS_ALL))
		return -EINVAL;
	p->maps[id].flags = flags;
	return 0;
}

int sym_prof_set_map_flags(struct sym_prof *p, uint32_t id, uint32_t flags)
{
	return p ? symi_prof_set_map_flags(p, id, flags) : -EINVAL;
}

/*
 * Symbolization.
 */

const char *const symi_prof_flag_names[SYM_PROF_NFLAGS] = {
	"truncated", "badreturn", "leaf", "unwind", "kernel",
};

const char *const symi_prof_kind_names[SYMI_PROF_NKINDS] = {
	[SYM_PROF_MAP_FILE] = "file",
	[SYM_PROF_MAP_VDSO] = "vdso",
	[SYM_PROF_MAP_KERNEL] = "kernel",
	[SYM_PROF_MAP_ANON] = "anon",
};

int symi_prof_flag_bit(const char *name)
{
	for (int i = 0; i < SYM_PROF_NFLAGS; i++)
		if (!strcmp(name, symi_prof_flag_names[i]))
			return i;
	return -1;
}

int symi_prof_kind(const char *name)
{
	for (int i = 0; i < SYMI_PROF_NKINDS; i++)
		if (!strcmp(name, symi_prof_kind_names[i]))
			return i;
	return -1;
}

const char *const symi_prof_status_names[SYM_PROF_LOC_NSTATUS] = {
	[SYM_PROF_LOC_OK] = "ok",
	[SYM_PROF_LOC_NOSYMBOL] = "nosymbol",
	[SYM_PROF_LOC_MISSING] = "missing",
	[SYM_PROF_LOC_NOBUILDID] = "nobuildid",
	[SYM_PROF_LOC_UNMAPPED] = "unmapped",
	[SYM_PROF_LOC_ERROR] = "error",
};

static uint64_t loc_hash(uint32_t map, uint32_t fflags, uint64_t addr)
{
	return mix64(addr * 0x9e3779b97f4a7c15ULL ^
		     ((uint64_t)map << 1 | (fflags & 1)));
}

/* Index of the location of @f in p->locs, or -1. */
static int64_t loc_find(const struct sym_prof *p,
			const struct sym_prof_frame *f)
{
	size_t mask, i;

	if (!p->nloc_slots)
		return -1;
	mask = p->nloc_slots - 1;
	for (i = loc_hash(f->map, f->flags, f->addr) & mask; p->loc_slots[i];
	     i = (i + 1) & mask) {
		const struct loc *l = &p->locs[p->loc_slots[i] - 1];

		if (l->addr == f->addr && l->map == f->map &&
		    l->fflags == f->flags)
			return p->loc_slots[i] - 1;
	}
	return -1;
}

static int grow_loc_slots(struct sym_prof *p)
{
	size_t n = p->nloc_slots ? p->nloc_slots * 2 : 64, mask = n - 1;
	uint32_t *slots = symi_calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t k = 0; k < p->nlocs; k++) {
		const struct loc *l = &p->locs[k];
		size_t i = loc_hash(l->map, l->fflags, l->addr) & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = (uint32_t)k + 1;
	}
	free(p->loc_slots);
	p->loc_slots = slots;
	p->nloc_slots = n;
	return 0;
}

int symi_prof_intern(struct sym_prof *p, int set, const char *s,
		     const char **out)
{
	*out = NULL;
	if (!s || !*s)
		return 0;
	return strset_add(&p->strs[set], s, out);
}

size_t symi_prof_nstrs(const struct sym_prof *p, int set)
{
	return p->strs[set].n;
}

uint32_t symi_prof_str_idx(const char *s)
{
	return ((const struct istr *)(s - offsetof(struct istr, s)))->idx;
}

void symi_prof_set_symbolized(struct sym_prof *p)
{
	p->symbolized = true;
}

int sym_prof_set_location(struct sym_prof *p, const struct sym_prof_frame *f,
			  uint32_t status, const struct sym_prof_line *lines,
			  size_t n)
{
	struct sym_prof_line *copy = NULL;
	int64_t at;
	int err;

	if (!p || !f || (f->map != SYM_PROF_NOMAP && f->map >= p->nmaps) ||
	    (f->flags & ~(uint32_t)SYM_PROF_FRAME_RETURN) ||
	    status >= SYM_PROF_LOC_NSTATUS ||
	    (status == SYM_PROF_LOC_OK) != (n > 0) || (n && !lines))
		return -EINVAL;
	if (n > SYM_PROF_MAX_LINES)
		return -E2BIG;
	/* A line is inlined or named from the symbol table (which names
	 * only the outermost function), not both. */
	for (size_t i = 0; i < n; i++)
		if ((lines[i].flags & ~(uint32_t)(SYM_PROF_LINE_INLINED |
						  SYM_PROF_LINE_SYMTAB)) ||
		    (lines[i].flags & SYM_PROF_LINE_INLINED &&
		     lines[i].flags & SYM_PROF_LINE_SYMTAB))
			return -EINVAL;
	at = loc_find(p, f);
	if (at < 0) {
		if (p->nlocs >= MAX_LOCS)
			return -E2BIG;
		if ((p->nlocs + 1) * 2 > p->nloc_slots) {
			err = grow_loc_slots(p);
			if (err)
				return err;
		}
		err = symi_grow((void **)&p->locs, &p->caplocs, p->nlocs + 1,
				sizeof(*p->locs));
		if (err)
			return err;
	}
	if (n) {
		/* Strings interned but left unused by a failure later on
		 * are harmless: the writers write only the ones in use. */
		copy = arena_alloc(&p->lines, n, sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			copy[i] = lines[i];
			err = symi_prof_intern(p, SYMI_PROF_FUNCS,
					       lines[i].function,
					       &copy[i].function);
			if (!err)
				err = symi_prof_intern(p, SYMI_PROF_FILES,
						       lines[i].file,
						       &copy[i].file);
			if (err)
				return err;
		}
	}
	if (at < 0) {
		size_t mask = p->nloc_slots - 1, i;

		at = (int64_t)p->nlocs++;
		p->locs[at] = (struct loc){ .addr = f->addr, .map = f->map,
					    .fflags = f->flags };
		for (i = loc_hash(f->map, f->flags, f->addr) & mask;
		     p->loc_slots[i]; i = (i + 1) & mask)
			;
		p->loc_slots[i] = (uint32_t)at + 1;
	}
	p->locs[at].status = status;
	p->locs[at].nlines = (uint32_t)n;
	p->locs[at].lines = copy;
	p->symbolized = true;
	return 0;
}

static void loc_out(const struct loc *l, uint32_t *status,
		    const struct sym_prof_line **lines, size_t *n)
{
	if (status)
		*status = l ? l->status : 0;
	if (lines)
		*lines = l ? l->lines : NULL;
	if (n)
		*n = l ? l->nlines : 0;
}

int sym_prof_location(const struct sym_prof *p,
		      const struct sym_prof_frame *f, uint32_t *status,
		      const struct sym_prof_line **lines, size_t *n)
{
	int64_t at = p && f ? loc_find(p, f) : -1;

	loc_out(at < 0 ? NULL : &p->locs[at], status, lines, n);
	if (!p || !f)
		return -EINVAL;
	return at < 0 ? -SYM_E_NOTFOUND : 0;
}

int sym_prof_symbolized(const struct sym_prof *p)
{
	return p ? p->symbolized : 0;
}

size_t sym_prof_nlocations(const struct sym_prof *p)
{
	return p ? p->nlocs : 0;
}

int sym_prof_location_at(const struct sym_prof *p, size_t i,
			 struct sym_prof_frame *f, uint32_t *status,
			 const struct sym_prof_line **lines, size_t *n)
{
	const struct loc *l = p && i < p->nlocs ? &p->locs[i] : NULL;

	if (f)
		*f = l ? (struct sym_prof_frame){ .addr = l->addr,
						  .map = l->map,
						  .flags = l->fflags } :
			 (struct sym_prof_frame){ 0 };
	loc_out(l, status, lines, n);
	if (!p)
		return -EINVAL;
	return l ? 0 : -SYM_E_NOTFOUND;
}
