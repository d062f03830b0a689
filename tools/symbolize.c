/*
 * symbolize.c - `sym symbolize IN [-o OUT] [--server URL | --store DIR]`,
 * and tool_prof_symbolize(), which the views share to symbolize their
 * input on the fly (docs/raw-format.md, "The symbolized form").
 *
 * The work, for one profile:
 *
 *  1. Every unique frame (map, address, return flag) of the stacks is
 *     collected once, with the samples of the stacks it occurs in.
 *     Frames that already have an `ok` location are kept as they are.
 *  2. A frame outside any map, or in an anonymous map, is `unmapped`; in
 *     a map without a build ID, `nobuildid`.  The others are grouped by
 *     the build ID of their map: maps of several processes with one
 *     build ID make one group.
 *  3. Per group, one batch of lookup addresses: the frame's address for
 *     an exact PC, address - 1 for a return address (so that the call's
 *     line comes out), sorted and deduplicated.  The batch goes to symd
 *     (POST /v1/symbolize/<id>, in requests of at most BATCH_MAX
 *     addresses; a build ID still pending is asked again until the
 *     --wait-ms deadline) or to the local store (sym_store_lookup(); when
 *     the store has no table, a file with that build ID on this host, a
 *     map's path or /usr/lib/debug/.build-id/, is converted into the
 *     store under its conversion lock as `sym addr2line` does, or the
 *     files the store holds are, with sym_store_convert(); with
 *     $DEBUGINFOD_URLS set, the debug file of a build ID that has no
 *     file here, or only one without DWARF, is fetched into the store
 *     first).
 *     Kernel frames are looked up in a kallsyms snapshot (kallsyms.h:
 *     --kallsyms, or IN.kallsyms beside the input) when its build ID is
 *     the kernel map's, else in /proc/kallsyms when the kernel map's
 *     build ID is the running kernel's; vDSO frames in this process's
 *     own vDSO when the build IDs match; else they go the same way as
 *     the rest.
 *  4. Each answer becomes the location of every frame with that lookup
 *     address (sym_prof_set_location()): the inline chain innermost
 *     first, names demangled, `nosymbol` when nothing covers the
 *     address; a group that has no answer gets `missing` or `error` with
 *     the reason, for the summary.
 *  5. A summary on stderr: per module, the frames and the share of them
 *     resolved, the module's share of all frame samples (each occurrence
 *     of a frame in a stack counts the stack's samples) and how much of
 *     it resolved, and why the rest did not.
 *
 * Nothing is lost: unresolved frames keep their map and address, and the
 * views print them as module+0xoffset.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "client.h"
#include "agent/procmaps.h"
#include "agent/vdso.h"
#include "kallsyms.h"
#include "tools.h"
#include "base.h"

/* Most addresses in one request to symd (its --max-addresses is 100000
 * by default). */
#define BATCH_MAX 50000

/* How long to wait for another process converting the same build ID. */
#define LOCK_WAIT_MS (10 * 60 * 1000)

/* Seconds without progress before symd is given up on, beyond the
 * wait. */
#define SERVER_STALL 20

/* Not yet resolved (enum sym_prof_loc_status has no such value). */
#define ST_NONE UINT32_MAX

/* A unique frame of the profile. */
struct ent {
	struct sym_prof_frame f;
	uint64_t lookup;	/* f.addr, or f.addr - 1 for a return */
	uint64_t samples;	/* of every occurrence, saturating */
	uint32_t row;		/* summary row */
	uint32_t status;	/* enum sym_prof_loc_status, or ST_NONE */
};

/* A row of the summary: one build ID, or one path without a build ID. */
struct row {
	const struct sym_prof_map *map;	/* the first; NULL: no map */
	uint64_t frames, samples;
	uint64_t st_frames[SYM_PROF_LOC_NSTATUS];
	uint64_t st_samples[SYM_PROF_LOC_NSTATUS];
	char reason[256];	/* why missing or error; "" */
	char source[16];	/* what answered: sym_table_source_name(),
				 * "kallsyms"; "" for nothing (yet) */
};

/* The frames of one build ID. */
struct group {
	const char *build_id;	/* borrowed from the profile */
	uint32_t row;
	uint32_t *ents;		/* free(); sorted by lookup address */
	size_t n, cap;
	uint64_t *addrs;	/* free(); the unique lookup addresses */
	size_t *first;		/* free(); addrs[k]'s first in ents, + end */
	size_t naddrs;
	bool fetched;		/* from_debuginfod() tried */
	bool ktried;		/* find_kernel_file() tried: */
	char *kfile;		/* free(); what it found, or NULL */
};

struct sctx {
	struct sym_prof *p;
	const struct tool_symbolize_opts *o;

	struct ent *ents;	/* free() */
	size_t nents, capents;
	uint32_t *slots;	/* 0 empty, else ents index + 1; free() */
	size_t nslots;

	struct row *rows;	/* free() */
	size_t nrows;
	uint32_t *map_row;	/* per map; free() */

	struct group *groups;	/* free() each's arrays and the array */
	size_t ngroups;

	struct client *client;	/* --server; client_free() */
	struct sym_store *store;	/* sym_store_close(); NULL without */
	char store_path[4096];
	bool store_rdonly;

	char kernel_id[2 * 64 + 1];	/* the running kernel's; "" */
	struct symi_ksnap *ksnap;	/* symi_ksnap_free(): o->kallsyms's */
	bool kloaded;		/* o->kallsyms tried */
	struct symi_ksnap *khere;	/* symi_ksnap_free(): this host's, once read */
	bool ktried;
	struct ko *kos;		/* ko_free(): o->ko_dir's .ko files */
	size_t nkos, capkos;
	bool kos_read;
	struct tool_dirs dirs;	/* tool_dirs_release(): --debuginfo-path */
	char release[256];	/* kernel_release(): "" before */

	char msg[512];		/* tool_err_capture() */
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* Fibonacci hashing of the frame's fields; the table keeps the high
 * bits through the fold. */
static uint64_t frame_hash(const struct sym_prof_frame *f)
{
	uint64_t h = (f->addr ^ (uint64_t)f->map << 40 ^
		      (uint64_t)f->flags << 63) * 0x9e3779b97f4a7c15ULL;

	return h ^ h >> 31;
}

static bool frame_eq(const struct sym_prof_frame *a,
		     const struct sym_prof_frame *b)
{
	return a->addr == b->addr && a->map == b->map && a->flags == b->flags;
}

static int grow_slots(struct sctx *c)
{
	size_t n = c->nslots ? c->nslots * 2 : 1024, mask = n - 1;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t k = 0; k < c->nents; k++) {
		size_t i = frame_hash(&c->ents[k].f) & mask;

		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = (uint32_t)k + 1;
	}
	free(c->slots);
	c->slots = slots;
	c->nslots = n;
	return 0;
}

/* The entry of @f, added when new; NULL when out of memory. */
static struct ent *ent_get(struct sctx *c, const struct sym_prof_frame *f)
{
	size_t mask, i;

	if ((c->nents + 1) * 2 > c->nslots && grow_slots(c))
		return NULL;
	mask = c->nslots - 1;
	for (i = frame_hash(f) & mask; c->slots[i]; i = (i + 1) & mask)
		if (frame_eq(&c->ents[c->slots[i] - 1].f, f))
			return &c->ents[c->slots[i] - 1];
	if (tool_grow(&c->ents, &c->capents, c->nents + 1, sizeof(*c->ents),
		      1024))
		return NULL;
	c->slots[i] = (uint32_t)c->nents + 1;
	c->ents[c->nents] = (struct ent){
		.f = *f, .status = ST_NONE,
		.lookup = f->flags & SYM_PROF_FRAME_RETURN && f->addr ?
				  f->addr - 1 : f->addr,
	};
	return &c->ents[c->nents++];
}

/*
 * Rows and groups.  Maps are sorted by (build ID, path) so that each
 * build ID, and each path of the maps without one, is one run.
 */

static int cmp_maps(const void *a, const void *b, void *arg)
{
	const struct sym_prof *p = arg;
	const struct sym_prof_map *x = sym_prof_map(p, *(const uint32_t *)a);
	const struct sym_prof_map *y = sym_prof_map(p, *(const uint32_t *)b);
	int r;

	if (!x->build_id != !y->build_id)
		return x->build_id ? -1 : 1;
	if (x->build_id)
		r = strcmp(x->build_id, y->build_id);
	else
		r = strcmp(x->path ? x->path : "", y->path ? y->path : "");
	if (r)
		return r;
	return x->id < y->id ? -1 : x->id > y->id;
}

static bool same_row(const struct sym_prof_map *x, const struct sym_prof_map *y)
{
	if (x->build_id || y->build_id)
		return x->build_id && y->build_id &&
		       !strcmp(x->build_id, y->build_id);
	return !strcmp(x->path ? x->path : "", y->path ? y->path : "");
}

static int make_rows(struct sctx *c)
{
	size_t nmaps = sym_prof_nmaps(c->p);
	uint32_t *order = malloc((nmaps + 1) * sizeof(*order));
	int err = -ENOMEM;

	c->map_row = malloc((nmaps + 1) * sizeof(*c->map_row));
	/* Row 0 is the frames outside any map. */
	c->rows = calloc(nmaps + 1, sizeof(*c->rows));
	c->groups = calloc(nmaps + 1, sizeof(*c->groups));
	if (!order || !c->map_row || !c->rows || !c->groups)
		goto out;
	c->nrows = 1;
	for (uint32_t i = 0; i < nmaps; i++)
		order[i] = i;
	qsort_r(order, nmaps, sizeof(*order), cmp_maps, c->p);
	for (size_t i = 0; i < nmaps; i++) {
		const struct sym_prof_map *m = sym_prof_map(c->p, order[i]);

		if (!i || !same_row(c->rows[c->nrows - 1].map, m)) {
			c->rows[c->nrows].map = m;
			if (m->build_id) {
				c->groups[c->ngroups].build_id = m->build_id;
				c->groups[c->ngroups++].row =
					(uint32_t)c->nrows;
			}
			c->nrows++;
		}
		c->map_row[order[i]] = (uint32_t)c->nrows - 1;
	}
	err = 0;
out:
	free(order);
	return err;
}

/* The group of row @row (a row with a build ID). */
static struct group *row_group(struct sctx *c, uint32_t row)
{
	size_t lo = 0, hi = c->ngroups;

	/* Groups were made in row order. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->groups[mid].row < row)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ngroups && c->groups[lo].row == row ? &c->groups[lo] :
							     NULL;
}

static int group_add(struct group *g, uint32_t ent)
{
	if (tool_grow(&g->ents, &g->cap, g->n + 1, sizeof(*g->ents), 64))
		return -ENOMEM;
	g->ents[g->n++] = ent;
	return 0;
}

/* Collect the frames of every stack into entries, rows and groups. */
static int collect(struct sctx *c)
{
	size_t nstacks = sym_prof_nstacks(c->p);
	int err;

	for (size_t i = 0; i < nstacks; i++) {
		const struct sym_prof_stack *s = sym_prof_stack(c->p, i);

		for (uint32_t k = 0; k < s->nframes; k++) {
			struct ent *e = ent_get(c, &s->frames[k]);

			if (!e)
				return -ENOMEM;
			e->samples = e->samples + s->count < e->samples ?
					     UINT64_MAX :
					     e->samples + s->count;
		}
	}
	bool has_locs = sym_prof_nlocations(c->p) > 0;

	for (size_t i = 0; i < c->nents; i++) {
		struct ent *e = &c->ents[i];
		const struct sym_prof_map *m;
		uint32_t st;

		e->row = e->f.map == SYM_PROF_NOMAP ? 0 : c->map_row[e->f.map];
		/* Kept: an answer that came with the input. */
		if (has_locs &&
		    sym_prof_location(c->p, &e->f, &st, NULL, NULL) == 0 &&
		    st == SYM_PROF_LOC_OK) {
			e->status = st;
			continue;
		}
		m = sym_prof_map(c->p, e->f.map);
		if (!m || m->kind == SYM_PROF_MAP_ANON)
			e->status = SYM_PROF_LOC_UNMAPPED;
		else if (!m->build_id)
			e->status = SYM_PROF_LOC_NOBUILDID;
		if (e->status != ST_NONE) {
			err = sym_prof_set_location(c->p, &e->f, e->status,
						    NULL, 0);
			if (err)
				return err;
			continue;
		}
		err = group_add(row_group(c, e->row), (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

/* An entry of a group by its lookup address, for the sort. */
struct keyed {
	uint64_t key;
	uint32_t ent;
};

/*
 * Sort @n keyed entries @v by key, stably, with @tmp (room for @n):
 * least significant byte first, skipping the bytes all keys share (a
 * module's addresses differ in their low three or four bytes only).  A
 * qsort_r() of entry indices compared through the entries took 20% of
 * the symbolization of 1 M distinct kernel frames.  @return the sorted
 * array, @v or @tmp
 */
static struct keyed *radix_sort(struct keyed *v, struct keyed *tmp, size_t n)
{
	uint64_t all_or = 0, all_and = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		all_or |= v[i].key;
		all_and &= v[i].key;
	}
	for (unsigned sh = 0; sh < 64; sh += 8) {
		size_t count[256] = { 0 }, pos = 0;
		struct keyed *t;

		if (!(((all_or ^ all_and) >> sh) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[v[i].key >> sh & 0xff]++;
		for (size_t d = 0; d < 256; d++) {
			size_t k = count[d];

			count[d] = pos;
			pos += k;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[v[i].key >> sh & 0xff]++] = v[i];
		t = v;
		v = tmp;
		tmp = t;
	}
	return v;
}

/* Sort @g's entries by lookup address and list the unique addresses. */
static int group_addrs(struct sctx *c, struct group *g)
{
	struct keyed *v = malloc((g->n + 1) * sizeof(*v));
	struct keyed *tmp = malloc((g->n + 1) * sizeof(*tmp));
	struct keyed *s;
	int err = -ENOMEM;

	g->addrs = malloc(g->n * sizeof(*g->addrs));
	g->first = malloc((g->n + 1) * sizeof(*g->first));
	if (!g->addrs || !g->first || !v || !tmp)
		goto out;
	for (size_t i = 0; i < g->n; i++)
		v[i] = (struct keyed){ c->ents[g->ents[i]].lookup, g->ents[i] };
	s = radix_sort(v, tmp, g->n);
	for (size_t i = 0; i < g->n; i++) {
		g->ents[i] = s[i].ent;
		if (!g->naddrs || g->addrs[g->naddrs - 1] != s[i].key) {
			g->first[g->naddrs] = i;
			g->addrs[g->naddrs++] = s[i].key;
		}
	}
	g->first[g->naddrs] = g->n;
	err = 0;
out:
	free(v);
	free(tmp);
	return err;
}

/*
 * Answers.
 */

/* What a lookup callback needs: the group and where its batch starts. */
struct answer_ctx {
	struct sctx *c;
	struct group *g;
	size_t base;		/* index of the batch's first address */
	int err;		/* set_location's failure, to tell it apart */
	bool partial;		/* a batch was answered "partial" */
};

/* The function of a frame: demangled when mangled.  *dm is set when the
 * name had to be demangled here (free() it). */
static const char *frame_function(const struct sym_frame *f, char **dm)
{
	if (f->demangled || f->name ||
	    (f->flags & SYM_FRAME_NAME_SYMTAB))
		return sym_frame_name(f);
	if (f->linkage_name) {
		*dm = sym_demangle(f->linkage_name);
		return *dm ? *dm : f->linkage_name;
	}
	return NULL;
}

/* frame_function(), or with o->llvm_names the symbol llvm-symbolizer
 * names the outermost frame (@i of @n) after, when there is one. */
static const char *llvm_function(const struct sctx *c,
				 const struct sym_frame *fr, size_t i,
				 size_t n, char **dm)
{
	const char *sym = fr[i].llvm_symbol;

	if (!c->o->llvm_names || i + 1 != n || !sym)
		return frame_function(&fr[i], dm);
	*dm = sym_demangle(sym);
	return *dm ? *dm : sym;
}

/* Set the status and lines of every entry of @g's address @k. */
static int set_answer(struct sctx *c, struct group *g, size_t k,
		      uint32_t status, const struct sym_prof_line *lines,
		      size_t n)
{
	for (size_t i = g->first[k]; i < g->first[k + 1]; i++) {
		struct ent *e = &c->ents[g->ents[i]];
		int err = sym_prof_set_location(c->p, &e->f, status, lines, n);

		if (err)
			return err;
		e->status = status;
	}
	return 0;
}

static int on_frames(void *ctx, size_t idx, const struct sym_frame *fr,
		     size_t n)
{
	struct answer_ctx *a = ctx;
	struct sym_prof_line lines[SYM_PROF_MAX_LINES];
	char *dm[SYM_PROF_MAX_LINES] = { NULL };
	int err;

	if (n > SYM_PROF_MAX_LINES)
		n = SYM_PROF_MAX_LINES;
	for (size_t i = 0; i < n; i++) {
		lines[i] = (struct sym_prof_line){
			.function = llvm_function(a->c, fr, i, n, &dm[i]),
			.file = fr[i].file,
			.line = fr[i].line,
			.column = fr[i].column,
		};
		/* A symbol's STT_FILE goes with its name. */
		if (!lines[i].function &&
		    (fr[i].flags & SYM_FRAME_FILE_SYMTAB))
			lines[i].file = NULL;
		if (fr[i].flags & SYM_FRAME_INLINED)
			lines[i].flags = SYM_PROF_LINE_INLINED;
		else if ((fr[i].flags & SYM_FRAME_SYMTAB) && lines[i].function)
			lines[i].flags = SYM_PROF_LINE_SYMTAB;
	}
	/* A frame only llvm-symbolizer's symbol names (libsym returns it
	 * for the compat styles) tells a profile nothing. */
	if (n == 1 && !lines[0].function && !lines[0].file && !lines[0].line)
		n = 0;
	err = set_answer(a->c, a->g, a->base + idx,
			 n ? SYM_PROF_LOC_OK : SYM_PROF_LOC_NOSYMBOL,
			 n ? lines : NULL, n);
	for (size_t i = 0; i < n; i++)
		free(dm[i]);
	if (err)
		a->err = err;
	return err;
}

/* Every entry of @g not answered yet gets @status; the reason goes to
 * the row. */
static int fail_group(struct sctx *c, struct group *g, uint32_t status,
		      const char *reason)
{
	struct row *r = &c->rows[g->row];

	if (reason && !r->reason[0])
		snprintf(r->reason, sizeof(r->reason), "%s", reason);
	for (size_t k = 0; k < g->naddrs; k++) {
		int err;

		if (c->ents[g->ents[g->first[k]]].status != ST_NONE)
			continue;
		err = set_answer(c, g, k, status, NULL, 0);
		if (err)
			return err;
	}
	return 0;
}

/* Note in @g's row which source answers it. */
static void set_source(struct sctx *c, struct group *g, const char *name)
{
	struct row *r = &c->rows[g->row];

	snprintf(r->source, sizeof(r->source), "%s", name);
}

/* Look @g up in table @t (a module's or the kernel's own). */
static int answer_table(struct sctx *c, struct group *g,
			const struct sym_table *t)
{
	struct answer_ctx a = { .c = c, .g = g };
	struct sym_table_stat ts;

	sym_table_stat(t, &ts);
	set_source(c, g, sym_table_source_name(ts.flags));
	return sym_table_lookup_batch(t, g->addrs, g->naddrs, on_frames, &a);
}

/*
 * The kernel: the snapshot given (--kallsyms, or PROFILE.kallsyms beside
 * the input), or this host's /proc/kallsyms when the profile's kernel is
 * this one; either when its kernel build ID is the kernel map's.
 */

/* The snapshot of this host's kernel, taken once; NULL when it cannot
 * be (not root: hidden addresses). */
static const struct symi_ksnap *kallsyms_here(struct sctx *c)
{
	char *buf = NULL, why[256];
	size_t len;

	if (!c->ktried) {
		c->ktried = true;
		if (ksnap_take(NULL, &buf, &len) == 0)
			symi_ksnap_parse(buf, len, &c->khere, why, sizeof(why));
		free(buf);
	}
	return c->khere;
}

/* Where kernel space begins: a kernel map's PGOFF below it is no
 * `_text` (a profile from elsewhere that put something else there). */
#define KERNEL_HALF 0xffff800000000000ULL

/* The snapshot for kernel build ID @bid in *@out, NULL when none; the
 * one of o->kallsyms read at the first kernel map (a profile without
 * kernel frames needs none).  This host's only for a profile of this
 * boot: its kernel map's `_text` (@text, 0 unknown) is this one's.  A
 * module's map (@bid a module's): the snapshot with that module, given
 * or this host's (its placement is the map's PGOFF, whatever the boot).
 * @return 0, or ksnap_load()'s error (printed) */
static int kallsyms_for(struct sctx *c, const char *bid, uint64_t text,
			const struct symi_ksnap **out)
{
	uint64_t here;
	int err;

	*out = NULL;
	if (c->o->kallsyms && !c->kloaded) {
		c->kloaded = true;
		err = ksnap_load(c->o->kallsyms, &c->ksnap);
		if (err)
			return err;
	}
	if (c->ksnap && (!strcmp(c->ksnap->build_id, bid) ||
			 symi_ksnap_module(c->ksnap, bid)))
		*out = c->ksnap;
	else if (c->kernel_id[0] && !strcmp(c->kernel_id, bid) &&
		 kallsyms_here(c) &&
		 (text < KERNEL_HALF ||
		  (symi_ksnap_text(c->khere, &here) && here == text)))
		*out = c->khere;
	else if (c->kernel_id[0] && kallsyms_here(c) &&
		 symi_ksnap_module(c->khere, bid))
		*out = c->khere;
	return 0;
}

/*
 * Kernel modules' .ko files (--ko-dir): indexed by build ID at the first
 * module frame, each opened at its first frame (docs/design.md, "Kernel
 * modules": a .ko's addresses are offsets into its .text).
 */
struct ko {
	char build_id[2 * 64 + 1];
	char *path;			/* free() */
	struct sym_module *mod;		/* sym_module_close(); NULL */
	bool tried;
};

#define KO_MAX_FILES 100000
#define KO_MAX_DEPTH 8

static void ko_free(struct sctx *c)
{
	for (size_t i = 0; i < c->nkos; i++) {
		free(c->kos[i].path);
		sym_module_close(c->kos[i].mod);
	}
	free(c->kos);
	c->kos = NULL;
	c->nkos = c->capkos = 0;
}

/* Is @s exactly a module file's suffix: ".ko", ".ko.xz", ".ko.zst",
 * ".ko.gz" or ".ko.debug"? */
static bool ko_suffix(const char *s)
{
	return !strcmp(s, ".ko") || !strcmp(s, ".ko.xz") ||
	       !strcmp(s, ".ko.zst") || !strcmp(s, ".ko.gz") ||
	       !strcmp(s, ".ko.debug");
}

/* Does file name @name end in a module file's suffix? */
static bool ko_file(const char *name)
{
	const char *k = strstr(name, ".ko");

	for (; k; k = strstr(k + 1, ".ko"))
		if (k > name && ko_suffix(k))
			return true;
	return false;
}

/* The .ko files under @dir, @depth levels down at most; unreadable
 * entries are skipped.  @return 0 or -ENOMEM */
static int ko_walk(struct sctx *c, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];
	int err = 0;

	if (!d)
		return 0;
	while (!err && c->nkos < KO_MAX_FILES && (de = readdir(d))) {
		struct ko k = { .tried = false };

		if (de->d_name[0] == '.' ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir,
				     de->d_name) >= sizeof(path))
			continue;
		if (de->d_type == DT_DIR) {
			if (depth < KO_MAX_DEPTH)
				err = ko_walk(c, path, depth + 1);
			continue;
		}
		if (!ko_file(de->d_name) ||
		    sym_file_build_id(path, k.build_id, sizeof(k.build_id)))
			continue;
		if (tool_grow(&c->kos, &c->capkos, c->nkos + 1,
			      sizeof(*c->kos), 64) ||
		    !(k.path = strdup(path)))
			err = -ENOMEM;
		else
			c->kos[c->nkos++] = k;
	}
	closedir(d);
	return err;
}

/* The table of the .ko with the build ID of module @m, or NULL. */
static const struct sym_table *ko_table(struct sctx *c,
					const struct symi_ksnap_module *m)
{
	SYM_OPTS(sym_module_opts, opts, .flags = SYM_MODULE_NO_SEARCH);
	const struct sym_table *t;

	if (!c->o->ko_dir || !m->text || !m->build_id[0])
		return NULL;
	if (!c->kos_read) {
		c->kos_read = true;
		ko_walk(c, c->o->ko_dir, 0);
	}
	for (size_t i = 0; i < c->nkos; i++) {
		struct ko *k = &c->kos[i];

		if (strcmp(k->build_id, m->build_id))
			continue;
		if (!k->tried) {
			k->tried = true;
			if (sym_module_open(k->path, &opts, &k->mod))
				k->mod = NULL;
		}
		return k->mod && !sym_module_table(k->mod, &t) ? t : NULL;
	}
	return NULL;
}

/* The name of @addr in its module's .ko (--ko-dir), or NULL. */
static const char *ko_name(struct sctx *c, const struct symi_ksnap_module *m,
			   uint64_t addr)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	const struct sym_table *t = m ? ko_table(c, m) : NULL;
	size_t n = 0;

	if (!t || addr < m->text ||
	    sym_table_lookup(t, addr - m->text, fr, SYM_MAX_FRAMES, &n) || !n)
		return NULL;
	return fr[n - 1].name;
}

/* A module's function as perf names it: "name [module]", from its .ko
 * when --ko-dir has it, else from the snapshot.  A snapshot of another
 * boot of the kernel (its `_text` is not the kernel map's PGOFF) names
 * the kernel's own frames, moved by the difference, and no module's:
 * those move apart.  A module's own map (@m: its build ID, PGOFF its
 * .text then) is moved to where the snapshot has that module, and
 * named only by that module's symbols. */
static int answer_kallsyms(struct sctx *c, struct group *g,
			   const struct symi_ksnap *ks,
			   const struct sym_prof_map *m)
{
	char name[SYMI_KSNAP_MAX_LINE + 300];
	const struct symi_ksnap_module *mod = NULL;
	uint64_t snap, delta = 0;

	set_source(c, g, "kallsyms");
	if (strcmp(ks->build_id, g->build_id))
		mod = symi_ksnap_module(ks, g->build_id);
	if (mod && m->pgoff >= KERNEL_HALF)
		delta = mod->text - m->pgoff;
	else if (!mod && m->pgoff >= KERNEL_HALF && symi_ksnap_text(ks, &snap))
		delta = snap - m->pgoff;
	for (size_t k = 0; k < g->naddrs; k++) {
		struct sym_prof_line l = { .flags = SYM_PROF_LINE_SYMTAB };
		struct symi_ksnap_hit h;
		int err;

		if (!symi_ksnap_lookup(ks, g->addrs[k] + delta, &h) ||
		    (mod ? h.mod != mod : delta && h.module)) {
			err = set_answer(c, g, k, SYM_PROF_LOC_NOSYMBOL, NULL,
					 0);
		} else {
			const char *ko = ko_name(c, h.mod, g->addrs[k] + delta);

			l.function = h.name;
			if (h.module) {
				snprintf(name, sizeof(name), "%s [%s]",
					 ko ? ko : h.name, h.module);
				l.function = name;
			}
			err = set_answer(c, g, k, SYM_PROF_LOC_OK, &l, 1);
		}
		if (err)
			return err;
	}
	return 0;
}

/* The vDSO: this process's (agent/vdso.h), when the build IDs match. */
static int answer_vdso(struct sctx *c, struct group *g, bool *done)
{
	SYM_OPTS(sym_module_opts, opts, .flags = SYM_MODULE_NO_SEARCH);
	struct sym_module *mod = NULL;
	const struct sym_table *t;
	const char *bid;
	const void *img;
	size_t size;
	int err = 0;

	*done = false;
	img = agent_self_vdso(&size);
	if (!img || sym_module_open_mem(img, size, &opts, &mod) != 0)
		return 0;
	bid = sym_module_build_id(mod);
	if (bid && !strcmp(bid, g->build_id) && !sym_module_table(mod, &t)) {
		err = answer_table(c, g, t);
		*done = true;
	}
	sym_module_close(mod);
	return err;
}

/*
 * symd.
 */

static int answer_server(struct sctx *c, struct group *g)
{
	double deadline = now_s() + c->o->wait_ms / 1000.0;
	struct answer_ctx a = { .c = c, .g = g };
	int err = 0;

	for (a.base = 0; a.base < g->naddrs; a.base += BATCH_MAX) {
		size_t n = g->naddrs - a.base;

		if (n > BATCH_MAX)
			n = BATCH_MAX;
		for (;;) {
			double left = deadline - now_s();

			tool_err_capture(c->msg, sizeof(c->msg));
			err = client_symbolize(c->client, g->build_id,
					       g->addrs + a.base, n,
					       left > 0 ? (unsigned)(left * 1000)
							: 0,
					       on_frames, &a);
			tool_err_capture(NULL, 0);
			a.partial |= !err && client_partial(c->client);
			if (err != -EAGAIN || now_s() >= deadline)
				break;
			usleep(200 * 1000);
		}
		if (err)
			break;
	}
	if (a.err)
		return a.err;
	switch (err) {
	case 0:
		if (g->naddrs && client_source(c->client)[0])
			set_source(c, g, client_source(c->client));
		if (a.partial && !c->o->quiet)
			fprintf(stderr, "sym: build ID %s: partial answers "
				"(--partial): function names alone, the server "
				"is still building its table\n", g->build_id);
		return 0;
	case -ENOENT:
		return fail_group(c, g, SYM_PROF_LOC_MISSING, c->msg);
	case -EAGAIN:
		snprintf(c->msg, sizeof(c->msg), "still being fetched or "
			 "converted by the server after %u ms (--wait-ms)",
			 c->o->wait_ms);
		return fail_group(c, g, SYM_PROF_LOC_ERROR, c->msg);
	case -EIO:
		return fail_group(c, g, SYM_PROF_LOC_ERROR, c->msg);
	default:
		/* No usable answer from the server at all: stop. */
		tool_err("%s", c->msg);
		return err;
	}
}

/*
 * The local store, and files on this host.
 */

/* Errors that end the whole run rather than one module's answers. */
static bool fatal(int err)
{
	return err == -ENOMEM || err == -E2BIG;
}

static int answer_store(struct sctx *c, struct group *g)
{
	struct answer_ctx a = { .c = c, .g = g };
	uint32_t flags;
	int err;

	if (sym_store_table_flags(c->store, g->build_id, &flags) == 0)
		set_source(c, g, sym_table_source_name(flags));
	err = sym_store_lookup(c->store, g->build_id, g->addrs, g->naddrs,
			       on_frames, &a);
	return a.err ? a.err : err;
}

/*
 * Debug files of the kernel and its modules by name (docs/design.md,
 * "Kernel modules"), for the release the profile was recorded on: the
 * kallsyms snapshot's `release` line, else the profile header's
 * `release`, else this host's `uname -r` (a profile written before
 * profiles said it).
 */

/* The release searched by name, said once (unless -q) with its origin. */
static const char *kernel_release(struct sctx *c)
{
	const char *from = "this host's uname -r: neither a snapshot nor "
			   "the profile says it";
	const char *hrel = sym_prof_release(c->p);
	struct utsname u;

	if (c->release[0])
		return c->release;
	if (c->ksnap && c->ksnap->release && c->ksnap->release[0]) {
		snprintf(c->release, sizeof(c->release), "%s",
			 c->ksnap->release);
		from = "the kallsyms snapshot's";
	} else if (hrel && hrel[0]) {
		snprintf(c->release, sizeof(c->release), "%s", hrel);
		from = "the profile's";
	} else if (uname(&u) == 0) {
		snprintf(c->release, sizeof(c->release), "%s", u.release);
	}
	if (c->release[0] && !c->o->quiet)
		fprintf(stderr, "%s: kernel debug files searched by name for "
			"release %s (%s)\n", tool_prog(), c->release, from);
	return c->release;
}

/* Is @file NAME.ko, NAME.ko.xz, NAME.ko.zst, NAME.ko.gz (compressed
 * whole, as distributions install them: libsym reads them) or
 * NAME.ko.debug, '-' and '_' alike (the kernel names a module with '_'
 * whatever its file's name)? */
static bool ko_name_is(const char *file, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < n; i++) {
		char a = file[i], b = name[i];

		if (a != b && (!(a == '-' || a == '_') ||
			       !(b == '-' || b == '_')))
			return false;
	}
	return ko_suffix(file + n);
}

/* Is @path @g's, by its build ID?  A file of another build is never
 * used, and said once (unless -q). */
static bool build_is(struct sctx *c, struct group *g, const char *path)
{
	char bid[2 * 64 + 1];

	if (sym_file_build_id(path, bid, sizeof(bid)))
		bid[0] = '\0';
	if (!strcmp(bid, g->build_id))
		return true;
	if (!c->o->quiet)
		tool_err("warning: '%s' has build ID %s, not the profile's %s "
			 "for %s: not used", path, bid[0] ? bid : "(none)",
			 g->build_id, c->rows[g->row].map->path);
	return false;
}

/* Is @path a directory, not through a symbolic link (a file system
 * whose readdir() does not say)? */
static bool is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The module file of @g named @name under @dir (8 levels down at most,
 * 100,000 entries), with @g's build ID, in @path. */
static bool ko_under(struct sctx *c, struct group *g, const char *dir,
		     const char *name, int depth, size_t *seen, char *path,
		     size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char sub[4096];
	bool found = false;

	if (!d)
		return false;
	while (!found && *seen < KO_MAX_FILES && (de = readdir(d))) {
		++*seen;
		if (de->d_name[0] == '.' ||
		    (size_t)snprintf(sub, sizeof(sub), "%s/%s", dir,
				     de->d_name) >= sizeof(sub))
			continue;
		if (de->d_type == DT_DIR ||
		    (de->d_type == DT_UNKNOWN && is_dir(sub)))
			found = depth < KO_MAX_DEPTH &&
				ko_under(c, g, sub, name, depth + 1, seen,
					 path, len);
		else if (ko_name_is(de->d_name, name) && build_is(c, g, sub))
			found = (size_t)snprintf(path, len, "%s", sub) < len;
	}
	closedir(d);
	return found;
}

/* The kernel's or a module's debug file by name (its map's path is
 * "[kernel.kallsyms]" or "[NAME]"): under each --debuginfo-path
 * directory and /usr/lib/debug, boot/vmlinux-REL or lib/modules/REL/,
 * then under /lib/modules/REL/ (vmlinux there, or the installed .ko). */
static bool find_kernel_file(struct sctx *c, struct group *g, char *path,
			     size_t len)
{
	const char *mpath = c->rows[g->row].map->path, *rel;
	const char *roots[TOOL_DIRS_MAX + 3];
	char name[256], dir[4096];
	size_t n = 0, seen = 0, nl;

	nl = mpath ? strlen(mpath) : 0;
	if (nl < 3 || mpath[0] != '[' || mpath[nl - 1] != ']' ||
	    nl - 2 >= sizeof(name) || !*(rel = kernel_release(c)))
		return false;
	snprintf(name, sizeof(name), "%.*s", (int)(nl - 2), mpath + 1);
	for (size_t i = 0; i < c->dirs.n; i++)
		roots[n++] = c->dirs.dirs[i];
	roots[n++] = "/usr/lib/debug";
	roots[n++] = "";
	for (size_t i = 0; i < n; i++) {
		bool kernel = !strcmp(name, "kernel.kallsyms");

		if (kernel && roots[i][0]) {
			snprintf(path, len, "%s/boot/vmlinux-%s", roots[i],
				 rel);
			if (access(path, R_OK) == 0 && build_is(c, g, path))
				return true;
		}
		snprintf(dir, sizeof(dir), "%s/lib/modules/%s", roots[i], rel);
		if (kernel) {
			if ((size_t)snprintf(path, len, "%s/vmlinux", dir) <
			    len && access(path, R_OK) == 0 &&
			    build_is(c, g, path))
				return true;
		} else if (ko_under(c, g, dir, name, 0, &seen, path, len)) {
			return true;
		}
	}
	return false;
}

/* A file on this host with @g's build ID: a map's path, the debug file
 * under .build-id/ of each --debuginfo-path directory and of
 * /usr/lib/debug, or a kernel map's by name (find_kernel_file()).
 * false when there is none. */
static bool find_file(struct sctx *c, struct group *g, char *path,
		      size_t len)
{
	const struct sym_prof_map *first = c->rows[g->row].map;
	size_t nmaps = sym_prof_nmaps(c->p);
	char bid[2 * 64 + 1];

	/* The maps of this build ID, first the row's own. */
	for (size_t i = 0; i <= nmaps; i++) {
		const struct sym_prof_map *m =
			i ? sym_prof_map(c->p, (uint32_t)(i - 1)) : first;

		if (!m->path || m->path[0] != '/' || !m->build_id ||
		    strcmp(m->build_id, g->build_id) ||
		    (i && m == first))
			continue;
		if (sym_file_module_id(m->path, bid, sizeof(bid), NULL) == 0 &&
		    !strcmp(bid, g->build_id)) {
			snprintf(path, len, "%s", m->path);
			return true;
		}
	}
	for (size_t i = 0; i <= c->dirs.n; i++) {
		snprintf(path, len, "%s/.build-id/%.2s/%s.debug",
			 i < c->dirs.n ? c->dirs.dirs[i] : "/usr/lib/debug",
			 g->build_id, g->build_id + 2);
		if (access(path, R_OK) == 0 && build_is(c, g, path))
			return true;
	}
	if (first->kind != SYM_PROF_MAP_KERNEL)
		return false;
	if (!g->ktried) {
		g->ktried = true;
		if (find_kernel_file(c, g, path, len))
			g->kfile = strdup(path);
	}
	return g->kfile && (size_t)snprintf(path, len, "%s", g->kfile) < len;
}

/*
 * convert_file() - the table of @g from @path: put into the store (under
 * its conversion lock, unless another process did it meanwhile) and
 * answered from there, or answered from the module when it cannot be
 * stored or has no DWARF (a symbols-only table under the build ID would
 * hide a debug file found later, as in `sym addr2line`).
 */
static int convert_file(struct sctx *c, struct group *g, const char *path)
{
	struct sym_store_lock *lock = NULL;
	struct sym_module *mod = NULL;
	const struct sym_table *t;
	struct sym_table_stat ts;
	int waited = 0, err;

	if (c->store && !c->store_rdonly &&
	    sym_store_lock(c->store, g->build_id, LOCK_WAIT_MS, &lock,
			   &waited) == 0 && waited &&
	    sym_store_has_table(c->store, g->build_id)) {
		sym_store_unlock(lock);
		return answer_store(c, g);
	}
	tool_err_capture(c->msg, sizeof(c->msg));
	err = sym_module_open(path, NULL, &mod);
	if (!err)
		err = tool_module_table(mod, c->store_rdonly ? NULL : c->store,
					g->build_id, &t);
	tool_err_capture(NULL, 0);
	if (err) {
		char buf[256], why[700];

		sym_strerror(err, buf, sizeof(buf));
		snprintf(why, sizeof(why), "'%.200s': %s%s%.200s", path, buf,
			 c->msg[0] ? ": " : "", c->msg);
		sym_store_unlock(lock);
		sym_module_close(mod);
		return fatal(err) ? err :
		       fail_group(c, g, SYM_PROF_LOC_ERROR, why);
	}
	sym_table_stat(t, &ts);
	if (c->store && !c->store_rdonly &&
	    ts.flags & (SYM_TABLE_DWARF | SYM_TABLE_GOPCLNTAB) &&
	    tool_store_put_module(c->store, g->build_id, mod, path, t) == 0) {
		sym_store_unlock(lock);
		sym_module_close(mod);
		return answer_store(c, g);
	}
	sym_store_unlock(lock);
	err = answer_table(c, g, t);
	sym_module_close(mod);
	return err;
}

/* Has the module at @path DWARF, inside or in a debug file found here? */
static bool has_dwarf(const char *path)
{
	struct sym_module *mod = NULL;
	bool yes;

	yes = sym_module_open(path, NULL, &mod) == 0 &&
	      sym_module_debug_file(mod) != NULL;
	sym_module_close(mod);
	return yes;
}

/*
 * from_debuginfod() - with $DEBUGINFOD_URLS set, the debug file of @g
 * from its servers (tools/debuginfod.c), put in the store beside the
 * files it holds, so that sym_store_convert() builds the table from it
 * (with the stored executable, when there is one).
 * @return true when the store now holds a debug file for @g
 */
static bool from_debuginfod(struct sctx *c, struct group *g)
{
	char *fetched = NULL, why[512], bid[2 * 64 + 1];
	bool ok;

	if (g->fetched)
		return c->store && sym_store_file_path(c->store, g->build_id,
					SYM_STORE_DEBUGINFO, bid,
					sizeof(bid)) == 0;
	g->fetched = true;
	if (!c->store || c->store_rdonly || !tool_debuginfod_enabled() ||
	    tool_debuginfod_find(g->build_id, &fetched, why, sizeof(why)))
		return false;
	ok = sym_file_build_id(fetched, bid, sizeof(bid)) == 0 &&
	     !strcmp(bid, g->build_id) &&
	     sym_store_put_file(c->store, g->build_id, SYM_STORE_DEBUGINFO,
				fetched) == 0;
	free(fetched);
	return ok;
}

static int answer_local(struct sctx *c, struct group *g)
{
	struct sym_store_entry e = { 0 };
	char path[4096], why[700], buf[256];
	bool found;
	int err;

	if (c->store) {
		err = answer_store(c, g);
		if (!err || fatal(err))
			return err;
		if (err != -SYM_E_NOTFOUND && err != -SYM_E_STALE &&
		    err != -SYM_E_BADTABLE) {
			snprintf(why, sizeof(why), "store '%.300s': %s",
				 c->store_path,
				 sym_strerror(err, buf, sizeof(buf)));
			return fail_group(c, g, SYM_PROF_LOC_ERROR, why);
		}
		if (sym_store_stat_entry(c->store, g->build_id, &e) != 0)
			e.negative = 0;
		/* Tried with this very converter: it would fail again. */
		if (e.negative == SYM_STORE_BADCONV) {
			snprintf(why, sizeof(why), "conversion failed: %s",
				 e.text);
			return fail_group(c, g, SYM_PROF_LOC_ERROR, why);
		}
	}
	/* A file here without DWARF (stripped): debuginfod may have the
	 * debug file. */
	found = find_file(c, g, path, sizeof(path));
	if (found && (!tool_debuginfod_enabled() || has_dwarf(path) ||
		      !from_debuginfod(c, g)))
		return convert_file(c, g, path);
	if (!found)
		from_debuginfod(c, g);
	/* Files the store holds for it (`sym store add`, symd, debuginfod). */
	if (c->store && !c->store_rdonly) {
		tool_err_capture(c->msg, sizeof(c->msg));
		err = sym_store_convert(c->store, g->build_id, NULL, NULL);
		tool_err_capture(NULL, 0);
		if (!err)
			return answer_store(c, g);
		if (err != -SYM_E_NOTFOUND) {
			snprintf(why, sizeof(why), "converting the store's "
				 "files: %s%s%s",
				 sym_strerror(err, buf, sizeof(buf)),
				 c->msg[0] ? ": " : "", c->msg);
			return fatal(err) ? err :
			       fail_group(c, g, SYM_PROF_LOC_ERROR, why);
		}
	}
	if (e.negative)
		snprintf(why, sizeof(why), "no debug info: %s%s%s",
			 tool_negative_name(e.negative), e.text[0] ? ": " : "",
			 e.text);
	else
		snprintf(why, sizeof(why), "no debug info: not in the store%s, "
			 "no file with this build ID here",
			 c->store ? "" : " (none open)");
	return fail_group(c, g, SYM_PROF_LOC_MISSING, why);
}

/*
 * The kernel's frames from a table of the store or symd, which holds its
 * addresses relative to the kernel's `_text` (docs/design.md, "Kernel
 * addresses"): the kernel map's PGOFF says where `_text` was when the
 * profile was recorded (docs/raw-format.md).  Without it the frames
 * cannot be asked for.
 */
static int answer_kernel(struct sctx *c, struct group *g,
			 const struct sym_prof_map *m)
{
	int err;

	if (m->pgoff < KERNEL_HALF)
		return fail_group(c, g, SYM_PROF_LOC_MISSING,
				  "the profile does not say where the kernel's "
				  "_text was (its kernel map has no PGOFF: "
				  "recorded without root, or by another tool); "
				  "give its kallsyms snapshot (--kallsyms)");
	for (size_t k = 0; k < g->naddrs; k++)
		g->addrs[k] -= m->pgoff;
	err = c->client ? answer_server(c, g) : answer_local(c, g);
	for (size_t k = 0; k < g->naddrs; k++)
		g->addrs[k] += m->pgoff;
	return err;
}

/* Has the store here, or this host, an ELF file with DWARF (a debug
 * vmlinux or .ko: by build ID, or by name for the recorded release) or
 * a DWARF table of @g's build ID?  Else the servers of $DEBUGINFOD_URLS
 * are asked for its debug file, which goes into the store. */
static bool kernel_dwarf_here(struct sctx *c, struct group *g)
{
	char path[4096];
	uint32_t flags;

	if (c->store && sym_store_table_flags(c->store, g->build_id,
					      &flags) == 0)
		return flags & SYM_TABLE_DWARF;
	if (c->store &&
	    (!sym_store_file_path(c->store, g->build_id, SYM_STORE_DEBUGINFO,
				  path, sizeof(path)) ||
	     !sym_store_file_path(c->store, g->build_id,
				  SYM_STORE_EXECUTABLE, path, sizeof(path))))
		return true;
	if (find_file(c, g, path, sizeof(path)) && has_dwarf(path))
		return true;
	return from_debuginfod(c, g);
}

/*
 * resolve_kernel() - the frames of a kernel map, the kernel's or a
 * module's (docs/record.md, "Which answers a kernel frame"): DWARF first
 * (a debug vmlinux or .ko of the build ID: in the store or on this host,
 * or symd's answer when its table is DWARF), then the kallsyms snapshot
 * (given, beside the profile, or this host's), then the store's or
 * symd's table, whatever it is.
 */
static int resolve_kernel(struct sctx *c, struct group *g,
			  const struct sym_prof_map *m)
{
	const struct symi_ksnap *ks;
	struct row *r = &c->rows[g->row];
	int err;

	err = kallsyms_for(c, g->build_id, m->pgoff, &ks);
	if (err)
		return err;
	if (!ks || !ks->nsyms)
		return answer_kernel(c, g, m);
	if (m->pgoff >= KERNEL_HALF && !c->client && kernel_dwarf_here(c, g))
		return answer_kernel(c, g, m);
	if (m->pgoff >= KERNEL_HALF && c->client) {
		err = answer_kernel(c, g, m);
		if (err || !strcmp(r->source, "dwarf"))
			return err;
		/* symd has no DWARF of it: the snapshot answers every
		 * address anew, and what symd said is forgotten. */
		r->reason[0] = '\0';
		r->source[0] = '\0';
	}
	return answer_kallsyms(c, g, ks, m);
}

static int resolve_group(struct sctx *c, struct group *g)
{
	const struct sym_prof_map *m = c->rows[g->row].map;
	bool done = false;
	int err;

	err = group_addrs(c, g);
	if (err)
		return err;
	if (m->kind == SYM_PROF_MAP_KERNEL)
		return resolve_kernel(c, g, m);
	if (m->kind == SYM_PROF_MAP_VDSO) {
		err = answer_vdso(c, g, &done);
		if (err || done)
			return err;
	}
	return c->client ? answer_server(c, g) : answer_local(c, g);
}

/*
 * The summary.
 */

static void row_label(const struct row *r, char *buf, size_t len)
{
	const struct sym_prof_map *m = r->map;

	if (!m)
		snprintf(buf, len, "[no mapping]");
	else if (m->build_id)
		snprintf(buf, len, "%s (%.8s)", m->path ? m->path : "?",
			 m->build_id);
	else
		snprintf(buf, len, "%s%s", m->path ? m->path : "[anonymous]",
			 m->flags & SYM_PROF_MAP_PERFMAP_STALE ?
				 " (perf-map-stale: names not used)" :
			 m->flags & SYM_PROF_MAP_PERFMAP ? " (perf-map)" : "");
}

/* What answered row @r: its source this time, else what its first map
 * records (a JIT map's perf map; an earlier run's). */
static const char *row_source(const struct row *r)
{
	if (r->source[0])
		return r->source;
	return r->map ? tool_map_source(r->map->flags) : "none";
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void summary(struct sctx *c, double secs, double cpu)
{
	uint64_t frames = 0, ok = 0, samples = 0, ok_samples = 0;
	size_t nrows = 0;
	char label[4200];

	for (size_t i = 0; i < c->nents; i++) {
		struct ent *e = &c->ents[i];
		struct row *r = &c->rows[e->row];
		uint32_t st = e->status == ST_NONE ? SYM_PROF_LOC_ERROR :
						     e->status;

		nrows += !r->frames;
		r->frames++;
		r->samples += e->samples;
		r->st_frames[st]++;
		r->st_samples[st] += e->samples;
		frames++;
		samples += e->samples;
		ok += st == SYM_PROF_LOC_OK;
		ok_samples += st == SYM_PROF_LOC_OK ? e->samples : 0;
	}
	fprintf(stderr, "%s: %" PRIu64 " frames in %zu modules, %" PRIu64
		" resolved (%.1f%%), %.1f%% of frame samples, %.2f s of CPU in "
		"%.2f s\n", tool_prog(), frames, nrows, ok, pct(ok, frames),
		pct(ok_samples, samples), cpu, secs);
	if (!frames || !c->o->verbose)
		return;
	fprintf(stderr, "  %8s %8s %8s %8s  %-9s  %s\n", "frames", "resolved",
		"samples", "resolved", "source", "module: not resolved");
	for (size_t i = 0; i < c->nrows; i++) {
		struct row *r = &c->rows[i];
		const char *sep = ": ";

		if (!r->frames)
			continue;
		row_label(r, label, sizeof(label));
		fprintf(stderr, "  %8" PRIu64 " %7.1f%% %7.1f%% %7.1f%%  "
			"%-9s  %s",
			r->frames, pct(r->st_frames[SYM_PROF_LOC_OK], r->frames),
			pct(r->samples, samples),
			pct(r->st_samples[SYM_PROF_LOC_OK], r->samples),
			row_source(r), label);
		for (int st = 1; st < SYM_PROF_LOC_NSTATUS; st++) {
			if (!r->st_frames[st])
				continue;
			fprintf(stderr, "%s%s %" PRIu64 " (%.1f%%)", sep,
				tool_status_name(st), r->st_frames[st],
				pct(r->st_samples[st], r->samples));
			sep = ", ";
		}
		if (r->reason[0])
			fprintf(stderr, " - %s", r->reason);
		fputc('\n', stderr);
	}
}

/*
 * The whole.
 */

static void sctx_release(struct sctx *c)
{
	for (size_t i = 0; i < c->ngroups; i++) {
		free(c->groups[i].ents);
		free(c->groups[i].addrs);
		free(c->groups[i].first);
		free(c->groups[i].kfile);
	}
	free(c->groups);
	free(c->rows);
	free(c->map_row);
	free(c->ents);
	free(c->slots);
	symi_ksnap_free(c->ksnap);
	symi_ksnap_free(c->khere);
	ko_free(c);
	tool_dirs_release(&c->dirs);
	client_free(c->client);
	sym_store_close(c->store);
}

const char *tool_status_name(uint32_t status)
{
	static const char *const names[SYM_PROF_LOC_NSTATUS] = {
		"ok", "nosymbol", "missing", "nobuildid", "unmapped", "error",
	};

	return status < SYM_PROF_LOC_NSTATUS ? names[status] : "?";
}

static const struct {
	const char *name;
	uint32_t flag;
} map_sources[] = {
	{ "dwarf", SYM_PROF_MAP_SRC_DWARF },
	{ "gopclntab", SYM_PROF_MAP_SRC_GOPCLNTAB },
	{ "symtab", SYM_PROF_MAP_SRC_SYMTAB },
	{ "kallsyms", SYM_PROF_MAP_SRC_KALLSYMS },
	{ "perf-map", SYM_PROF_MAP_PERFMAP },
};
#define NSOURCES (sizeof(map_sources) / sizeof(map_sources[0]))

const char *tool_map_source(uint32_t flags)
{
	for (size_t i = 0; i < NSOURCES; i++)
		if (flags & map_sources[i].flag)
			return map_sources[i].name;
	return "none";
}

/* Record in each map the source that answered its row (a row not looked
 * up this time keeps what an earlier run recorded). */
static int mark_sources(struct sctx *c)
{
	size_t n = sym_prof_nmaps(c->p);

	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_map *m = sym_prof_map(c->p, (uint32_t)i);
		const char *src = c->rows[c->map_row[i]].source;
		uint32_t flags = m->flags & ~(uint32_t)SYM_PROF_MAP_SRC_ALL;
		int err;

		if (!src[0])
			continue;
		for (size_t k = 0; k < NSOURCES; k++)
			if (!strcmp(src, map_sources[k].name))
				flags |= map_sources[k].flag &
					 SYM_PROF_MAP_SRC_ALL;
		err = sym_prof_set_map_flags(c->p, (uint32_t)i, flags);
		if (err)
			return err;
	}
	return 0;
}

/* libsym's messages: through tool_err(), so that they can be captured
 * into a module's reason while it converts. */
static void log_fn(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	tool_err("%s", msg);
}

/* Open the server's client, or the store (read-only when it cannot be
 * written; going on without one, with a warning, when it cannot be
 * opened at all: files on this host still answer). */
static int open_source(struct sctx *c)
{
	char buf[256];
	int err;

	if (c->o->server) {
		err = client_new(c->o->server, SERVER_STALL, &c->client);
		if (!err)
			client_accept_partial(c->client, c->o->partial);
		if (err)
			tool_err("bad server URL '%s': %s", c->o->server,
				 sym_strerror(err, buf, sizeof(buf)));
		return err;
	}
	tool_err_capture(c->msg, sizeof(c->msg));
	err = tool_store_open(c->o->store_dir, 0, NULL, c->store_path,
			      sizeof(c->store_path), &c->store);
	if (err == -EROFS || err == -EACCES || err == -EPERM) {
		err = tool_store_open(c->o->store_dir, SYM_STORE_RDONLY, NULL,
				      c->store_path, sizeof(c->store_path),
				      &c->store);
		c->store_rdonly = !err;
	}
	tool_err_capture(NULL, 0);
	if (err)
		tool_err("warning: cannot open the store '%s': %s; going on "
			 "without it", c->store_path,
			 sym_strerror(err, buf, sizeof(buf)));
	return 0;
}

int tool_prof_symbolize(struct sym_prof *p,
			const struct tool_symbolize_opts *o)
{
	struct sctx c = { .p = p, .o = o };
	double t0 = now_s(), cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	int err;

	sym_set_log(log_fn, NULL, 0);
	if (o->debuginfo_path && tool_dirs_add(&c.dirs, o->debuginfo_path)) {
		tool_err("--debuginfo-path: out of memory or too many "
			 "directories");
		err = -EINVAL;
		goto out;
	}
	err = open_source(&c);
	if (err)
		goto out;
	pm_kernel_build_id(c.kernel_id, sizeof(c.kernel_id));
	err = make_rows(&c);
	if (!err)
		err = collect(&c);
	for (size_t i = 0; !err && i < c.ngroups; i++)
		if (c.groups[i].n)
			err = resolve_group(&c, &c.groups[i]);
	if (!err)
		err = mark_sources(&c);
	if (err == -ENOMEM)
		tool_err("out of memory");
	if (!err && !o->quiet)
		summary(&c, now_s() - t0,
			clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
out:
	sctx_release(&c);
	sym_set_log(NULL, NULL, 0);
	return err;
}

int tool_symbolize_getopt(int opt, const char *arg,
			  struct tool_symbolize_opts *o)
{
	unsigned long v;
	char *end;

	switch (opt) {
	case TOOL_OPT_SERVER:
		o->server = arg;
		return 1;
	case TOOL_OPT_STORE:
		o->store_dir = arg;
		return 1;
	case TOOL_OPT_KALLSYMS:
		o->kallsyms = arg;
		return 1;
	case TOOL_OPT_KO_DIR:
		o->ko_dir = arg;
		return 1;
	case TOOL_OPT_DEBUGINFO_PATH:
		o->debuginfo_path = arg;
		return 1;
	case TOOL_OPT_PARTIAL:
		o->partial = true;
		return 1;
	case TOOL_OPT_WAIT_MS:
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || errno || v > 3600000) {
			tool_err("--wait-ms takes milliseconds, 0 to 3600000, "
				 "not '%s'", arg);
			return -1;
		}
		o->wait_ms = (unsigned)v;
		return 1;
	default:
		return 0;
	}
}

/* Has some frame of @p no location yet? */
static bool unsymbolized_frames(const struct sym_prof *p)
{
	size_t n = sym_prof_nstacks(p);

	if (!sym_prof_symbolized(p))
		return n > 0;
	for (size_t i = 0; i < n; i++) {
		const struct sym_prof_stack *s = sym_prof_stack(p, i);

		for (uint32_t k = 0; k < s->nframes; k++)
			if (sym_prof_location(p, &s->frames[k], NULL, NULL,
					      NULL))
				return true;
	}
	return false;
}

/* @o with PROFILE.kallsyms beside @path when it names none and there is
 * one; @buf holds the path. */
static struct tool_symbolize_opts beside(const char *path,
					 const struct tool_symbolize_opts *o,
					 char *buf, size_t len)
{
	struct tool_symbolize_opts b = *o;

	if (!o->kallsyms && strcmp(path, "-") &&
	    (size_t)snprintf(buf, len, "%s.kallsyms", path) < len &&
	    access(buf, R_OK) == 0)
		b.kallsyms = buf;
	return b;
}

int tool_prof_load(const char *path, const struct tool_symbolize_opts *o,
		   struct sym_prof **out)
{
	char kpath[4096];
	struct tool_symbolize_opts b = beside(path, o, kpath, sizeof(kpath));
	int err = tool_prof_read(path, out);

	if (err || !unsymbolized_frames(*out))
		return err;
	err = tool_prof_symbolize(*out, &b);
	if (err) {
		sym_prof_free(*out);
		*out = NULL;
	}
	return err;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym symbolize [-o OUT] [--server URL | --store DIR] "
		"[--wait-ms MS]\n                     [--partial] [--kallsyms FILE] [--ko-dir DIR]\n"
		"                     [--debuginfo-path DIR[:DIR...]] [-q|-v] "
		"IN\n\n"
		"Symbolize a profile (raw or pprof; - for stdin) and write its "
		"symbolized\nraw form (docs/raw-format.md, \"The symbolized "
		"form\"): every unique frame\ngets its inline chain, innermost "
		"first, with functions (demangled),\nfiles, lines and "
		"columns.\n\n"
		"  -o, --output OUT   write OUT atomically; default stdout\n"
		"      --server URL   ask symd (POST /v1/symbolize/<build-id>, "
		"one batch\n"
		"                     of deduplicated addresses per build ID)\n"
		"      --store DIR    the local store (default $SYM_STORE, "
		"~/.cache/sym);\n"
		"                     a build ID it has no table for is "
		"converted from a\n"
		"                     file with that build ID on this host (the "
		"map's\n"
		"                     path, /usr/lib/debug/.build-id/) or from "
		"the files\n"
		"                     the store holds\n"
		"      --wait-ms MS   --server: how long a build ID may stay "
		"pending\n"
		"                     (fetched or converted by symd); default "
		"30000\n"
		"      --partial      --server: take partial answers of a build "
		"ID symd is\n"
		"                     still converting (function+offset from "
		"its symbols)\n"
		"                     rather than wait for the full ones\n"
		"      --kallsyms F   kernel frames from this kallsyms snapshot "
		"(sym record\n"
		"                     writes OUT.kallsyms); default IN.kallsyms, "
		"when there\n"
		"                     is one\n"
		"      --ko-dir DIR   kernel module frames from the .ko files "
		"under DIR\n"
		"                     with the module's build ID (needs the "
		"snapshot's\n"
		"                     .text bases)\n"
		"      --debuginfo-path DIR[:DIR...]\n"
		"                     debug directories searched before "
		"/usr/lib/debug:\n"
		"                     .build-id/, and boot/vmlinux-REL and "
		"lib/modules/REL/\n"
		"                     for kernel frames (REL: the snapshot's, "
		"else the\n"
		"                     profile's release, else uname -r)\n"
		"  -q, --quiet        no summary on stderr\n"
		"  -v, --verbose      the summary's table of modules too\n"
		"  -h, --help         this text\n\n"
		"Return addresses are looked up at address - 1.  Kernel frames "
		"resolve from\nthe snapshot whose build ID is the kernel's, "
		"else from /proc/kallsyms\nwhen the kernel's build ID is "
		"this host's; module symbols as perf's\n'func [module]'.  "
		"Frames that do not resolve keep their module and\naddress, "
		"with a status: nosymbol, missing, nobuildid, unmapped, "
		"error.  The\nsummary on stderr says what share of frames and "
		"of frame samples resolved;\nwith -v, per module, and why "
		"the rest did not.\n\n"
		"Exit status: 0 when the output was written (even with "
		"unresolved frames),\n1 for a bad input, an unreachable "
		"server or a write error, 2 for bad usage.\n");
}

int tool_symbolize_main(int argc, char **argv, void (*usage_fn)(FILE *),
			bool pprof, tool_prof_check_fn check)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		TOOL_SYMBOLIZE_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct tool_symbolize_opts o = { .wait_ms = 30000 };
	const char *out = NULL;
	char kpath[4096];
	struct sym_prof *p = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, "o:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage_fn(stdout);
			return TOOL_EXIT_OK;
		default:
			rc = tool_symbolize_getopt(c, optarg, &o);
			if (rc > 0)
				break;
			if (!rc)
				usage_fn(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		usage_fn(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (o.server && o.store_dir) {
		tool_err("--server and --store exclude each other");
		return TOOL_EXIT_USAGE;
	}
	o.server = client_env_server(o.server, o.store_dir);
	if (tool_prof_binary_tty(pprof, out))
		return TOOL_EXIT_USAGE;
	o = beside(argv[optind], &o, kpath, sizeof(kpath));
	/* sym symbolize resolves every frame not ok yet; the pprof writer
	 * only those without a location (what the input did not say). */
	if (pprof ? tool_prof_load(argv[optind], &o, &p) :
		    tool_prof_read(argv[optind], &p) ||
			    tool_prof_symbolize(p, &o)) {
		sym_prof_free(p);
		return TOOL_EXIT_FAIL;
	}
	if (check)
		check(p, argv[optind]);
	rc = tool_prof_write(p, pprof, out) ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
	sym_prof_free(p);
	return rc;
}

int cmd_symbolize(int argc, char **argv)
{
	return tool_symbolize_main(argc, argv, usage, false, NULL);
}
