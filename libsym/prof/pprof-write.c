/*
 * pprof-write.c - profiles to pprof's profile.proto:
 * sym_prof_write_pprof() (the mapping: pprof.h, docs/pprof.md).
 *
 * The writer builds the generated structs from the profile (string
 * table, mappings, one Location per unique frame, one Sample per stack,
 * the "#sym-*" comments for what pprof has no field for), packs them
 * and streams them through zlib's gzip to the file descriptor.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "pprof.h"
#include "base.h"

/* FNV-1a over @n bytes, continuing from @h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--) {
		h ^= *c++;
		h *= 0x100000001b3ULL;
	}
	return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

/*
 * The comments are built in a struct symi_buf capped at what a reader
 * takes (PPROF_MAX_INPUT bytes of protobuf): a longer one would make a
 * profile that no reader opens.
 */
#define COMMENT_CAP ((size_t)PPROF_MAX_INPUT)

/*
 * Append @s percent-encoded as docs/raw-format.md has it: bytes below
 * 0x21, above 0x7e and '%' as %XX; NULL and "" as "-", "-" as "%2D".
 * All or nothing, like every symi_buf append.
 */
static int add_pct(struct symi_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *c;
	size_t need, len;
	int err;

	if (!s || !*s)
		return symi_buf_addc(b, '-');
	if (strcmp(s, "-") == 0)
		return symi_buf_add_lit(b, "%2D");
	if (!symi_mul(strlen(s), 3, &need))
		return -E2BIG;
	err = symi_buf_grow(b, need);
	if (err)
		return err;
	len = b->len;
	for (c = (const unsigned char *)s; *c; c++) {
		if (*c < 0x21 || *c > 0x7e || *c == '%') {
			b->p[len++] = '%';
			b->p[len++] = hex[*c >> 4];
			b->p[len++] = hex[*c & 15];
		} else {
			b->p[len++] = (char)*c;
		}
	}
	symi_buf_setlen(b, len);
	return 0;
}

/*
 * Writer.
 */

/* The string table: v[0] is "", every string is owned (free()). */
struct strtab {
	char **v;
	size_t n, cap;
	uint32_t *hash;		/* index + 1; 0 is an empty slot */
	size_t hcap;		/* power of two, kept > 2 * n */
};

/*
 * Room for one more entry in the hash of a table of @n entries (the
 * strtab's or the loctab's: *@hash of *@hcap slots, index + 1, 0 empty):
 * when it would be half full, a new one twice the size (@first slots the
 * first time), filled with @hash_at(@tab, i) of each entry.
 * @return 0, -E2BIG (indexes no longer fit), -ENOMEM (*@hash unchanged)
 */
static int hash_room(uint32_t **hash, size_t *hcap, size_t n, size_t first,
		     uint64_t (*hash_at)(const void *tab, size_t i),
		     const void *tab)
{
	size_t ncap, i, h;
	uint32_t *nh;

	if (n >= UINT32_MAX - 1)
		return -E2BIG;
	if (2 * (n + 1) < *hcap)
		return 0;
	ncap = *hcap ? 2 * *hcap : first;
	nh = symi_calloc(ncap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		h = hash_at(tab, i) & (ncap - 1);
		while (nh[h])
			h = (h + 1) & (ncap - 1);
		nh[h] = (uint32_t)(i + 1);
	}
	free(*hash);
	*hash = nh;
	*hcap = ncap;
	return 0;
}

static uint64_t strtab_hash_at(const void *tab, size_t i)
{
	const struct strtab *t = tab;

	return fnv(FNV_INIT, t->v[i], strlen(t->v[i]));
}

/* Index of @s (NULL is ""), adding a copy when it is new. */
static int strtab_intern(struct strtab *t, const char *s, int64_t *idx)
{
	size_t len, h;
	int err;

	if (!s)
		s = "";
	err = hash_room(&t->hash, &t->hcap, t->n, 256, strtab_hash_at, t);
	if (err)
		return err;
	len = strlen(s);
	h = fnv(FNV_INIT, s, len) & (t->hcap - 1);
	while (t->hash[h]) {
		if (strcmp(t->v[t->hash[h] - 1], s) == 0) {
			*idx = t->hash[h] - 1;
			return 0;
		}
		h = (h + 1) & (t->hcap - 1);
	}
	err = symi_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
	if (err)
		return err;
	t->v[t->n] = symi_strdup(s);
	if (!t->v[t->n])
		return -ENOMEM;
	t->hash[h] = (uint32_t)(t->n + 1);
	*idx = (int64_t)t->n++;
	return 0;
}

static void strtab_release(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* The location table: one entry per unique (map, addr, flags). */
struct loc_key {
	uint64_t addr;		/* the frame's address, as in the profile */
	uint32_t map;		/* map id or SYM_PROF_NOMAP */
	uint32_t flags;		/* SYM_PROF_FRAME_RETURN or 0 */
};

struct loctab {
	struct loc_key *keys;	/* keys[i] is location id i + 1 */
	size_t n, cap;
	uint32_t *hash;		/* index + 1; 0 is an empty slot */
	size_t hcap;
};

static uint64_t loc_hash(const struct loc_key *k)
{
	uint64_t h = fnv(FNV_INIT, &k->addr, sizeof(k->addr));

	h = fnv(h, &k->map, sizeof(k->map));
	return fnv(h, &k->flags, sizeof(k->flags));
}

static uint64_t loctab_hash_at(const void *tab, size_t i)
{
	const struct loctab *t = tab;

	return loc_hash(&t->keys[i]);
}

/* Location id (1-based) of @k, adding it when it is new. */
static int loctab_id(struct loctab *t, const struct loc_key *k, uint64_t *id)
{
	const struct loc_key *e;
	size_t h;
	int err;

	err = hash_room(&t->hash, &t->hcap, t->n, 1024, loctab_hash_at, t);
	if (err)
		return err;
	h = loc_hash(k) & (t->hcap - 1);
	while (t->hash[h]) {
		e = &t->keys[t->hash[h] - 1];
		if (e->addr == k->addr && e->map == k->map &&
		    e->flags == k->flags) {
			*id = t->hash[h];
			return 0;
		}
		h = (h + 1) & (t->hcap - 1);
	}
	err = symi_grow((void **)&t->keys, &t->cap, t->n + 1,
			sizeof(*t->keys));
	if (err)
		return err;
	t->keys[t->n] = *k;
	t->hash[h] = (uint32_t)(t->n + 1);
	*id = ++t->n;
	return 0;
}

/* Everything one sym_prof_write_pprof() call builds; freed at once. */
struct enc {
	const struct sym_prof *p;
	const struct sym_prof_header *h;
	struct strtab st;
	struct loctab lt;
	PbProfile prof;
	/* [samples/count, weight, value types...] */
	PbValueType vt[2 + SYM_PROF_MAX_VALUES];
	PbValueType *vtp[2 + SYM_PROF_MAX_VALUES], period_type;
	PbMapping *maps, **mapp;
	PbLocation *locs, **locp;
	PbSample *samples, **samplep;
	uint64_t *loc_ids;	/* the samples' location ids, one array */
	int64_t *values;	/* the samples' values, one array */
	PbLabel *labels, **labelp; /* up to 3 per sample */
	int64_t *comments;
	size_t ncomments, capcomments;

	/* Symbolized profiles: one Function per (name, file) of the
	 * lines, keyed by their indexes in the profile's string sets. */
	PbFunction *funcs, **funcp;
	size_t nfuncs, capfuncs;
	struct symi_idx func_ids;	/* key -> funcs index */
	PbLine *lines, **linep;		/* every location's, one array */
	size_t nlines;
	uint8_t *loc_status;	/* per location: status + 1, 0 for none */
	uint8_t *loc_symtab;	/* per location: outermost line symtab */
};

static void enc_release(struct enc *e)
{
	strtab_release(&e->st);
	free(e->lt.keys);
	free(e->lt.hash);
	free(e->maps);
	free(e->mapp);
	free(e->locs);
	free(e->locp);
	free(e->samples);
	free(e->samplep);
	free(e->loc_ids);
	free(e->values);
	free(e->labels);
	free(e->labelp);
	free(e->comments);
	free(e->funcs);
	free(e->funcp);
	symi_idx_release(&e->func_ids);
	free(e->lines);
	free(e->linep);
	free(e->loc_status);
	free(e->loc_symtab);
}

/* Add @b's string as a comment, unless @err (of building it) is set;
 * either way @b is emptied for the next one.  Returns the error. */
static int enc_comment(struct enc *e, struct symi_buf *b, int err)
{
	int64_t idx;

	if (!err)
		err = strtab_intern(&e->st, symi_buf_str(b), &idx);
	if (!err)
		err = symi_grow((void **)&e->comments, &e->capcomments,
				e->ncomments + 1, sizeof(*e->comments));
	if (!err)
		e->comments[e->ncomments++] = idx;
	symi_buf_reset(b);
	return err;
}

static bool weight_is_count(const struct sym_prof *p)
{
	size_t i, n = sym_prof_nstacks(p);

	for (i = 0; i < n; i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);

		if (s->weight != s->count)
			return false;
	}
	return true;
}

/* Sample types and the period. */
static int enc_types(struct enc *e)
{
	const struct sym_prof_header *h = e->h;
	const char *wu = h->weight_unit ? h->weight_unit : "ns";
	const char *type, *unit;
	uint32_t nvt = sym_prof_nvalue_types(e->p);
	size_t n = 1;
	int err;

	/* The weight's type: "cpu" but for wall-clock profiles, in pprof's
	 * units. */
	type = h->event && strcmp(h->event, "wall") == 0 ? "wall" : "cpu";
	if (strcmp(wu, "ns") == 0) {
		unit = "nanoseconds";
	} else if (strcmp(wu, "samples") == 0) {
		type = "weight";	/* "samples" is the count's */
		unit = "count";
	} else {
		type = "weight";
		unit = wu;
	}
	e->vt[0] = (PbValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	e->vt[1] = (PbValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	err = strtab_intern(&e->st, "samples", &e->vt[0].type);
	if (!err)
		err = strtab_intern(&e->st, "count", &e->vt[0].unit);
	/* [samples/count] alone when the weight says nothing more and no
	 * value types follow (they are columns 2 and after). */
	if (!err && (nvt || !(strcmp(wu, "samples") == 0 &&
			      weight_is_count(e->p)))) {
		err = strtab_intern(&e->st, type, &e->vt[1].type);
		if (!err)
			err = strtab_intern(&e->st, unit, &e->vt[1].unit);
		n = 2;
	}
	for (uint32_t k = 0; k < nvt && !err; k++, n++) {
		const char *vunit, *vname = sym_prof_value_type(e->p, k, &vunit);

		e->vt[n] = (PbValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		err = strtab_intern(&e->st, vname, &e->vt[n].type);
		if (!err)
			err = strtab_intern(&e->st, vunit, &e->vt[n].unit);
	}
	if (err)
		return err;
	for (size_t k = 0; k < n; k++)
		e->vtp[k] = &e->vt[k];
	e->prof.n_sample_type = n;
	e->prof.sample_type = e->vtp;
	/* The weight's type; pprof's default index is the last column. */
	e->period_type = e->vt[n > 1 ? 1 : 0];
	e->prof.period_type = &e->period_type;
	if (h->period > INT64_MAX)
		return -ERANGE;
	e->prof.period = (int64_t)h->period;
	e->prof.time_nanos = h->start_ns;
	e->prof.duration_nanos = h->duration_ns > INT64_MAX ?
		INT64_MAX : (int64_t)h->duration_ns;
	return 0;
}

static int enc_mappings(struct enc *e)
{
	size_t i, n = sym_prof_nmaps(e->p);
	int err;

	if (!n)
		return 0;
	e->maps = symi_calloc(n, sizeof(*e->maps));
	e->mapp = symi_calloc(n, sizeof(*e->mapp));
	if (!e->maps || !e->mapp)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct sym_prof_map *m = sym_prof_map(e->p, (uint32_t)i);
		PbMapping *pm = &e->maps[i];

		*pm = (PbMapping)PERFTOOLS__PROFILES__MAPPING__INIT;
		pm->id = i + 1;
		pm->memory_start = m->start;
		pm->memory_limit = m->end;
		pm->file_offset = m->pgoff;
		err = strtab_intern(&e->st, m->path, &pm->filename);
		if (!err)
			err = strtab_intern(&e->st, m->build_id, &pm->build_id);
		if (err)
			return err;
		e->mapp[i] = pm;
	}
	e->prof.n_mapping = n;
	e->prof.mapping = e->mapp;
	return 0;
}

/* "truncated,leaf" for @flags (SYM_PROF_UNKNOWN_FLAG is "unknown"). */
static int flags_str(uint32_t flags, struct symi_buf *b)
{
	const char *sep = "";
	int i, err = 0;

	for (i = 0; i < SYM_PROF_NFLAGS && !err; i++) {
		if (flags & (1u << i)) {
			err = symi_buf_addf(b, "%s%s", sep,
					    symi_prof_flag_names[i]);
			sep = ",";
		}
	}
	if (!err && (flags & SYM_PROF_UNKNOWN_FLAG))
		err = symi_buf_addf(b, "%sunknown", sep);
	return err;
}

/* Append label @key (@num, or the string @str) as label *@n of the
 * profile's label arrays, and count it. */
static int enc_label(struct enc *e, size_t *n, const char *key, int64_t num,
		     const char *str)
{
	PbLabel *l = &e->labels[*n];
	int err;

	*l = (PbLabel)PERFTOOLS__PROFILES__LABEL__INIT;
	err = strtab_intern(&e->st, key, &l->key);
	if (!err && str)
		err = strtab_intern(&e->st, str, &l->str);
	if (err)
		return err;
	l->num = num;
	e->labelp[(*n)++] = l;
	return 0;
}

static int enc_samples(struct enc *e)
{
	size_t i, j, n = sym_prof_nstacks(e->p), nframes = 0, nlabels = 0;
	size_t nv = e->prof.n_sample_type, total;
	int err;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		nframes += sym_prof_stack(e->p, i)->nframes;
	e->samples = symi_calloc(n, sizeof(*e->samples));
	e->samplep = symi_calloc(n, sizeof(*e->samplep));
	e->loc_ids = symi_calloc(nframes ? nframes : 1, sizeof(*e->loc_ids));
	e->values = symi_calloc(n, nv * sizeof(*e->values));
	e->labels = symi_calloc(n, 3 * sizeof(*e->labels));
	e->labelp = symi_calloc(n, 3 * sizeof(*e->labelp));
	if (!e->samples || !e->samplep || !e->loc_ids || !e->values ||
	    !e->labels || !e->labelp)
		return -ENOMEM;
	total = 0;
	for (i = 0; i < n; i++) {
		const struct sym_prof_stack *s = sym_prof_stack(e->p, i);
		PbSample *ps = &e->samples[i];
		size_t first = nlabels;

		*ps = (PbSample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		if (s->count > INT64_MAX || s->weight > INT64_MAX)
			return -ERANGE;
		ps->location_id = &e->loc_ids[total];
		ps->n_location_id = s->nframes;
		for (j = 0; j < s->nframes; j++) {
			struct loc_key k = {
				.addr = s->frames[j].addr,
				.map = s->frames[j].map,
				.flags = s->frames[j].flags &
					 SYM_PROF_FRAME_RETURN,
			};

			if (k.map != SYM_PROF_NOMAP &&
			    k.map >= sym_prof_nmaps(e->p))
				return -EINVAL;
			err = loctab_id(&e->lt, &k, &e->loc_ids[total++]);
			if (err)
				return err;
		}
		ps->value = &e->values[i * nv];
		ps->n_value = nv;
		ps->value[0] = (int64_t)s->count;
		if (nv > 1)
			ps->value[1] = (int64_t)s->weight;
		for (j = 2; j < nv; j++) {
			uint64_t v = sym_prof_stack_values(e->p, i)[j - 2];

			if (v > INT64_MAX)
				return -ERANGE;
			ps->value[j] = (int64_t)v;
		}
		ps->label = &e->labelp[nlabels];
		if (s->pid) {
			err = enc_label(e, &nlabels, "pid", s->pid, NULL);
			if (err)
				return err;
		}
		if (s->tid) {
			err = enc_label(e, &nlabels, "tid", s->tid, NULL);
			if (err)
				return err;
		}
		if (s->flags) {
			struct symi_buf b = SYMI_BUF_INIT(COMMENT_CAP);

			err = flags_str(s->flags, &b);
			if (!err)
				err = enc_label(e, &nlabels, "sym_flags", 0,
						symi_buf_str(&b));
			symi_buf_release(&b);
			if (err)
				return err;
		}
		ps->n_label = nlabels - first;
		e->samplep[i] = ps;
	}
	e->prof.n_sample = n;
	e->prof.sample = e->samplep;
	return 0;
}

/* The Function id of (@name, @file), added when new. */
static int enc_function(struct enc *e, const char *name, const char *file,
			uint64_t *id)
{
	uint64_t key = (uint64_t)(name ? symi_prof_str_idx(name) + 1 : 0)
			       << 32 |
		       (file ? symi_prof_str_idx(file) + 1 : 0);
	PbFunction *f;
	uint32_t i;
	int err;

	if (symi_idx_get(&e->func_ids, key, &i)) {
		*id = i + 1;
		return 0;
	}
	err = symi_grow((void **)&e->funcs, &e->capfuncs, e->nfuncs + 1,
			sizeof(*e->funcs));
	if (!err)
		err = symi_idx_set(&e->func_ids, key, (uint32_t)e->nfuncs);
	if (err)
		return err;
	f = &e->funcs[e->nfuncs];
	*f = (PbFunction)PERFTOOLS__PROFILES__FUNCTION__INIT;
	f->id = ++e->nfuncs;
	/* No linkage names in the model: the system name is the name. */
	err = strtab_intern(&e->st, name, &f->name);
	if (!err)
		f->system_name = f->name;
	if (!err)
		err = strtab_intern(&e->st, file, &f->filename);
	*id = f->id;
	return err;
}

/*
 * Location @i + 1 from its key: an address and a mapping, and in a
 * symbolized profile the lines of an ok location (innermost inlined
 * function first, as profile.proto orders them; a Function per (name,
 * file)) and the mapping's has_* flags.  Locations are keyed by (map,
 * address, return flag), so a return address and an exact PC at the same
 * address keep their own lines (the call's line for the first).  Other
 * statuses, and outermost lines named from the symbol table, go into
 * "#sym-loc" and "#sym-symtab" comments (enc_comments()).
 */
static int enc_location(struct enc *e, size_t i, PbLocation *loc)
{
	const struct loc_key *k = &e->lt.keys[i];
	struct sym_prof_frame f = { .addr = k->addr, .map = k->map,
				    .flags = k->flags };
	const struct sym_prof_line *lines;
	const struct sym_prof_map *m;
	PbMapping *pm = NULL;
	uint32_t status;
	size_t n, j;
	int err;

	*loc = (PbLocation)PERFTOOLS__PROFILES__LOCATION__INIT;
	loc->id = i + 1;
	if (k->map == SYM_PROF_NOMAP) {
		loc->address = k->addr;
	} else {
		m = sym_prof_map(e->p, k->map);
		pm = &e->maps[k->map];
		loc->mapping_id = (uint64_t)k->map + 1;
		/* Runtime address; wraps like the recorder's pc - start +
		 * vaddr. */
		loc->address = k->addr - m->vaddr + m->start;
	}
	/* loc_status is there when the profile is symbolized. */
	if (!e->loc_status ||
	    sym_prof_location(e->p, &f, &status, &lines, &n) != 0)
		return 0;
	e->loc_status[i] = (uint8_t)(status + 1);
	if (!n)
		return 0;
	loc->line = &e->linep[e->nlines];
	loc->n_line = n;
	for (j = 0; j < n; j++) {
		PbLine *l = &e->lines[e->nlines];

		*l = (PbLine)PERFTOOLS__PROFILES__LINE__INIT;
		err = enc_function(e, lines[j].function, lines[j].file,
				   &l->function_id);
		if (err)
			return err;
		l->line = lines[j].line;
		l->column = lines[j].column;
		e->linep[e->nlines++] = l;
		if (pm) {
			pm->has_filenames |= lines[j].file != NULL;
			pm->has_line_numbers |= lines[j].line != 0;
		}
	}
	if (lines[n - 1].flags & SYM_PROF_LINE_SYMTAB)
		e->loc_symtab[i] = 1;
	if (pm) {
		pm->has_functions = true;
		pm->has_inline_frames |= n > 1;
	}
	return 0;
}

/* Room for the lines of every location, when the profile is
 * symbolized. */
static int enc_lines_alloc(struct enc *e)
{
	size_t i, total = 0, n;

	e->loc_status = symi_calloc(e->lt.n, 1);
	e->loc_symtab = symi_calloc(e->lt.n, 1);
	if (!e->loc_status || !e->loc_symtab)
		return -ENOMEM;
	for (i = 0; i < e->lt.n; i++) {
		struct sym_prof_frame f = { .addr = e->lt.keys[i].addr,
					    .map = e->lt.keys[i].map,
					    .flags = e->lt.keys[i].flags };

		if (sym_prof_location(e->p, &f, NULL, NULL, &n) == 0)
			total += n;
	}
	e->lines = symi_calloc(total ? total : 1, sizeof(*e->lines));
	e->linep = symi_calloc(total ? total : 1, sizeof(*e->linep));
	return e->lines && e->linep ? 0 : -ENOMEM;
}

static int enc_locations(struct enc *e)
{
	size_t i, n = e->lt.n;
	int err;

	if (!n)
		return 0;
	e->locs = symi_calloc(n, sizeof(*e->locs));
	e->locp = symi_calloc(n, sizeof(*e->locp));
	if (!e->locs || !e->locp)
		return -ENOMEM;
	if (sym_prof_symbolized(e->p)) {
		err = enc_lines_alloc(e);
		if (err)
			return err;
	}
	for (i = 0; i < n; i++) {
		err = enc_location(e, i, &e->locs[i]);
		if (err)
			return err;
		e->locp[i] = &e->locs[i];
	}
	e->prof.n_location = n;
	e->prof.location = e->locp;
	if (e->nfuncs) {
		e->funcp = symi_calloc(e->nfuncs, sizeof(*e->funcp));
		if (!e->funcp)
			return -ENOMEM;
		for (i = 0; i < e->nfuncs; i++)
			e->funcp[i] = &e->funcs[i];
		e->prof.n_function = e->nfuncs;
		e->prof.function = e->funcp;
	}
	return 0;
}

/* The sym-process and sym-thread comments, in the model's order. */
static int enc_tasks(struct enc *e)
{
	struct symi_buf b = SYMI_BUF_INIT(COMMENT_CAP);
	size_t i, n;
	int err = 0;

	n = symi_prof_nprocs(e->p);
	for (i = 0; i < n && !err; i++) {
		uint64_t pidns = 0;
		int32_t pid = 0, nspid = 0;
		const char *comm;

		comm = symi_prof_proc_at(e->p, i, &pid, &pidns, &nspid);
		err = symi_buf_addf(&b, "#sym-process %d %llu %d ", pid,
				    (unsigned long long)pidns, nspid);
		if (!err)
			err = add_pct(&b, comm);
		err = enc_comment(e, &b, err);
	}
	n = symi_prof_nthreads(e->p);
	for (i = 0; i < n && !err; i++) {
		int32_t pid = 0, tid = 0;
		const char *comm;

		comm = symi_prof_thread_at(e->p, i, &pid, &tid);
		err = symi_buf_addf(&b, "#sym-thread %d %d ", pid, tid);
		if (!err)
			err = add_pct(&b, comm);
		err = enc_comment(e, &b, err);
	}
	symi_buf_release(&b);
	return err;
}

static int enc_header_comment(struct enc *e, const char *key, uint64_t v)
{
	struct symi_buf b = SYMI_BUF_INIT(COMMENT_CAP);
	int err;

	err = symi_buf_addf(&b, "#sym-header %s %llu", key,
			    (unsigned long long)v);
	err = enc_comment(e, &b, err);
	symi_buf_release(&b);
	return err;
}

/* "#sym-header KEY " and @v percent-encoded, as a comment. */
static int enc_header_str(struct enc *e, struct symi_buf *b, const char *key,
			  const char *v)
{
	int err = symi_buf_addf(b, "#sym-header %s ", key);

	if (!err)
		err = add_pct(b, v);
	return enc_comment(e, b, err);
}

/*
 * "KW ID ID ..." comments, each about PC_COMMENT_MAX bytes at most, listing
 * the locations i (ids i + 1) with sel[i] == @val; none when there are
 * none.
 */
static int enc_id_list(struct enc *e, const char *kw, const uint8_t *sel,
		       uint8_t val)
{
	struct symi_buf b = SYMI_BUF_INIT(COMMENT_CAP);
	size_t i;
	int err = 0;

	for (i = 0; i < e->lt.n && !err; i++) {
		if (sel[i] != val)
			continue;
		if (b.len == 0)
			err = symi_buf_addstr(&b, kw);
		if (!err)
			err = symi_buf_addf(&b, " %zu", i + 1);
		if (err || b.len >= PC_COMMENT_MAX)
			err = enc_comment(e, &b, err);
	}
	if (!err && b.len)
		err = enc_comment(e, &b, 0);
	symi_buf_release(&b);
	return err;
}

/*
 * The locations where pprof's rule (the leaf is an exact PC, every other
 * frame a return address) is wrong: "#sym-pc" lists exact PCs that occur
 * above the leaf, "#sym-ret" return addresses that occur as a leaf (a
 * location is one (map, address, flag), so its flag is the same wherever
 * it occurs).  Usually both lists are empty.
 */
static int enc_exceptions(struct enc *e)
{
	uint8_t *pos;		/* bit 0: seen as a leaf, bit 1: above */
	size_t i, j;
	int err;

	if (!e->lt.n)
		return 0;
	pos = symi_calloc(e->lt.n, 1);
	if (!pos)
		return -ENOMEM;
	for (i = 0; i < e->prof.n_sample; i++)
		for (j = 0; j < e->samples[i].n_location_id; j++)
			pos[e->samples[i].location_id[j] - 1] |= j ? 2 : 1;
	/* 4: an exception, for enc_id_list(). */
	for (i = 0; i < e->lt.n; i++)
		if (!(e->lt.keys[i].flags & SYM_PROF_FRAME_RETURN) &&
		    (pos[i] & 2))
			pos[i] = 4;
	err = enc_id_list(e, "#sym-pc", pos, 4);
	for (i = 0; i < e->lt.n; i++)
		pos[i] = (e->lt.keys[i].flags & SYM_PROF_FRAME_RETURN) &&
			 (pos[i] & 1) ? 4 : 0;
	if (!err)
		err = enc_id_list(e, "#sym-ret", pos, 4);
	free(pos);
	return err;
}

/*
 * What Locations cannot say about a symbolized profile: that it is one
 * ("#sym-symbolized 1", also without any location), the locations that
 * did not resolve, by status ("#sym-loc missing 3 4 ..."), and those
 * whose outermost line is named from the symbol table ("#sym-symtab").
 */
static int enc_sym_comments(struct enc *e)
{
	struct symi_buf b = SYMI_BUF_INIT(COMMENT_CAP);
	char kw[32];
	uint8_t st;
	int err;

	if (!sym_prof_symbolized(e->p))
		return 0;
	err = symi_buf_add_lit(&b, "#sym-symbolized 1");
	err = enc_comment(e, &b, err);
	symi_buf_release(&b);
	for (st = 1; !err && e->loc_status && st < SYM_PROF_LOC_NSTATUS;
	     st++) {
		snprintf(kw, sizeof(kw), "#sym-loc %s",
			 symi_prof_status_names[st]);
		err = enc_id_list(e, kw, e->loc_status, st + 1);
	}
	if (!err && e->loc_symtab)
		err = enc_id_list(e, "#sym-symtab", e->loc_symtab, 1);
	return err;
}

/* " source=S" of a map's SYM_PROF_MAP_SRC_* flag, "" without one. */
static const char *map_source(const struct sym_prof_map *m)
{
	if (m->flags & SYM_PROF_MAP_SRC_DWARF)
		return " source=dwarf";
	if (m->flags & SYM_PROF_MAP_SRC_GOPCLNTAB)
		return " source=gopclntab";
	if (m->flags & SYM_PROF_MAP_SRC_SYMTAB)
		return " source=symtab";
	if (m->flags & SYM_PROF_MAP_SRC_KALLSYMS)
		return " source=kallsyms";
	return "";
}

/* Everything pprof has no field for, as "#sym-*" comments ('#': pprof
 * leaves them out of its reports' legends; -comments shows them). */
static int enc_comments(struct enc *e)
{
	const struct sym_prof_header *h = e->h;
	struct symi_buf b = SYMI_BUF_INIT(COMMENT_CAP);
	size_t i, n;
	int err;

	err = symi_buf_addf(&b, "#sym-pprof %d locations=%zu crc=%08x",
			    SYM_PPROF_VERSION, e->prof.n_location,
			    locations_crc(e->prof.location,
					  e->prof.n_location));
	err = enc_comment(e, &b, err);
	if (err)
		goto out;

	err = enc_header_str(e, &b, "host", h->host);
	if (!err) {
		/* "tool NAME VERSION": two strings. */
		err = symi_buf_add_lit(&b, "#sym-header tool ");
		if (!err)
			err = add_pct(&b, h->tool);
		if (!err)
			err = symi_buf_addc(&b, ' ');
		if (!err)
			err = add_pct(&b, h->tool_version);
		err = enc_comment(e, &b, err);
	}
	err = err ? err : enc_header_str(e, &b, "event", h->event);
	err = err ? err : enc_header_str(e, &b, "mode", h->mode);
	err = err ? err : enc_header_str(e, &b, "weight-unit",
					 h->weight_unit);
	err = err ? err : enc_header_comment(e, "frequency", h->frequency);
	err = err ? err : enc_header_comment(e, "period", h->period);
	err = err ? err : enc_header_comment(e, "duration-ns", h->duration_ns);
	err = err ? err : enc_header_comment(e, "samples", h->samples);
	err = err ? err : enc_header_comment(e, "lost", h->lost);
	err = err ? err : enc_header_comment(e, "throttled", h->throttled);
	err = err ? err : enc_header_comment(e, "dropped", h->dropped);
	err = err ? err : enc_header_comment(e, "pidns", h->pidns);
	err = err ? err : enc_header_str(e, &b, "release",
						 sym_prof_release(e->p));
	for (i = 0; !err && i < SYM_PROF_NFLAGS; i++) {
		err = symi_buf_addf(&b, "#sym-header flagged %s %llu",
				    symi_prof_flag_names[i],
				    (unsigned long long)h->flagged[i]);
		err = enc_comment(e, &b, err);
	}
	if (err)
		goto out;

	n = sym_prof_nmaps(e->p);
	for (i = 0; i < n; i++) {
		const struct sym_prof_map *m = sym_prof_map(e->p, (uint32_t)i);

		err = symi_buf_addf(&b, "#sym-map %zu start=%llx limit=%llx "
				    "offset=%llx vaddr=%llx kind=%s pid=%d%s%s%s%s",
				    i + 1, (unsigned long long)m->start,
				    (unsigned long long)m->end,
				    (unsigned long long)m->pgoff,
				    (unsigned long long)m->vaddr,
				    m->kind < SYMI_PROF_NKINDS ?
				    symi_prof_kind_names[m->kind] : "anon",
				    m->pid,
				    m->flags & SYM_PROF_MAP_VADDR_GUESSED ?
				    " vaddr-guessed" : "",
				    m->flags & SYM_PROF_MAP_PERFMAP ?
				    " perf-map" : "",
				    m->flags & SYM_PROF_MAP_PERFMAP_STALE ?
				    " perf-map-stale" : "", map_source(m));
		err = enc_comment(e, &b, err);
		if (err)
			goto out;
	}
	err = enc_tasks(e);
	if (err)
		goto out;

	err = enc_exceptions(e);
	if (!err)
		err = enc_sym_comments(e);
out:
	symi_buf_release(&b);
	if (!err) {
		e->prof.n_comment = e->ncomments;
		e->prof.comment = e->comments;
	}
	return err;
}

/* A ProtobufCBuffer that gzips what protobuf-c packs into it straight
 * to a file descriptor, through a staging buffer (protobuf-c appends
 * a few bytes at a time). */
struct gz_out {
	ProtobufCBuffer base;
	z_stream zs;
	int fd;
	int err;		/* sticky: -errno or -ENOMEM */
	size_t nstage;
	unsigned char stage[1 << 16];
	unsigned char out[1 << 16];
};

/* Deflate the staged bytes with @flush; write what comes out. */
static void gz_deflate(struct gz_out *g, int flush)
{
	int zr;

	if (g->err)
		return;
	g->zs.next_in = g->stage;
	g->zs.avail_in = (uInt)g->nstage;
	do {
		g->zs.next_out = g->out;
		g->zs.avail_out = sizeof(g->out);
		zr = deflate(&g->zs, flush);
		if (zr == Z_STREAM_ERROR) {
			g->err = -EINVAL;
			return;
		}
		g->err = symi_write_all(g->fd, g->out,
				   sizeof(g->out) - g->zs.avail_out);
		if (g->err)
			return;
	} while (g->zs.avail_out == 0 ||
		 (flush == Z_FINISH && zr != Z_STREAM_END));
	g->nstage = 0;
}

static void gz_append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
	struct gz_out *g = (struct gz_out *)buf;
	size_t n;

	while (len && !g->err) {
		n = sizeof(g->stage) - g->nstage;
		if (n > len)
			n = len;
		memcpy(g->stage + g->nstage, data, n);
		g->nstage += n;
		data += n;
		len -= n;
		if (g->nstage == sizeof(g->stage))
			gz_deflate(g, Z_NO_FLUSH);
	}
}

static int write_gzip(const PbProfile *prof, int fd)
{
	struct gz_out *g = symi_calloc(1, sizeof(*g));
	int err;

	if (!g)
		return -ENOMEM;
	g->base.append = gz_append;
	g->fd = fd;
	/* 16 + MAX_WBITS: a gzip header and trailer, as pprof expects.
	 * Level 1: deflate is most of the writer's time, and level 6 makes
	 * unsymbolized profiles (mostly addresses) only ~7% smaller for 2.5x
	 * the time. */
	if (deflateInit2(&g->zs, Z_BEST_SPEED, Z_DEFLATED,
			 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	perftools__profiles__profile__pack_to_buffer(prof, &g->base);
	gz_deflate(g, Z_FINISH);
	err = g->err;
	deflateEnd(&g->zs);
	free(g);
	return err;
}

int sym_prof_write_pprof(const struct sym_prof *p, int fd)
{
	struct enc e;
	int64_t idx;
	int err;

	if (!p)
		return -EINVAL;
	memset(&e, 0, sizeof(e));
	e.p = p;
	e.h = sym_prof_header(p);
	e.prof = (PbProfile)PERFTOOLS__PROFILES__PROFILE__INIT;
	err = strtab_intern(&e.st, "", &idx);	/* string_table[0] */
	if (!err)
		err = enc_types(&e);
	if (!err)
		err = enc_mappings(&e);
	if (!err)
		err = enc_samples(&e);
	if (!err)
		err = enc_locations(&e);
	if (!err)
		err = enc_comments(&e);
	if (err)
		goto out;
	e.prof.n_string_table = e.st.n;
	e.prof.string_table = e.st.v;
	err = write_gzip(&e.prof, fd);
out:
	enc_release(&e);
	return err;
}
