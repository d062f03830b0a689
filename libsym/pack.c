/*
 * pack.c - the table writer: prune, renumber, bit-pack (format.h).
 *
 * symi_table_pack() takes a table's decoded content (struct symi_tab, from
 * the builder or from split.c) and writes format 3:
 *
 *  1. Scopes are numbered in the order the ranges first reach them, each
 *     chain from its outermost scope down, so a parent always precedes its
 *     children (stored as a positive distance) and the scopes of nearby
 *     addresses get nearby numbers.  Scopes no range reaches are dropped.
 *  2. Functions, files and strings are kept when a kept record uses them,
 *     numbered in first-use order.  Strings that are the tail of another
 *     string ("bar" of "foo_bar") point into it.
 *  3. Ranges are cut into blocks of 2^BLOCK_SHIFT.  Each block stores its
 *     fields relative to its own minimum in as few bits as its values
 *     need; a leaf's file is coded "the declaration file of the scope's
 *     function" when it is (most ranges), and its line relative to that
 *     function's declaration line.
 *  4. Every other array is packed with the fewest bits its largest value
 *     needs.
 *
 * What a lookup answers is unchanged by all of this: t-table, t-split and
 * the oracle tests compare answers, not bytes.  Invalid indices in the
 * input become "none" here, so split.c may feed it any table.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "format.h"
#include "base.h"

/* String blobs are stored as zstd frames of 2^Z_SHIFT bytes at level
 * Z_LEVEL once they are Z_MIN bytes or more and that gains:
 * docs/table-format.md, "Compressed strings", has the measurements
 * behind the choice. */
#define Z_SHIFT 16
#define Z_LEVEL 9
#define Z_MIN 64
/* The strings (not the demangled names, which no default output reads)
 * stay plain past Z_PLAIN_FROM bytes: a batch of many addresses reads
 * most of them, and inflating them costs each process about 0.7 ms a MB
 * (libjvm's 5.8 MB: docs/table-format.md, "Plain strings past 4 MiB").
 * As with ZREC_MAX, what a reader must build before a default lookup
 * answers is bounded. */
#define Z_PLAIN_FROM ((size_t)4 << 20)

/* The packed arrays and the block index are stored as compressed
 * columns (cols.c, format 9) when the arrays together are at most
 * ZREC_MAX bytes and that gains: a reader builds them back whole at open,
 * and docs/table-format.md ("Compressed records") has what that costs a
 * table of this size. */
#define ZREC_MAX ((size_t)1 << 20)
/* Of those, the arrays every lookup reads whole (the scopes, the
 * functions and the files; the block index, 8 KB compressed, costs
 * nothing measurable) are compressed only when together they are at most
 * ZREC_HOT_MAX bytes: building them back costs a process about 1.5 us a
 * KiB at its first open.  python3.11d's are 382 KiB: compressed, they
 * were 0.59 ms of a one-address lookup's 1.67 ms and 5% of a warm lookup
 * of 100,000 addresses, for 243 KB of its 1.49 MB table; libc's 126 KiB
 * stay compressed, for its table to stay under GSYM's size
 * (docs/table-format.md, "Hot arrays plain past 256 KiB").  The symbols
 * and their ranges are built a chunk at a time, on demand: they stay
 * compressed. */
#define ZREC_HOT_MAX ((size_t)256 << 10)
/* The zstd level of the columns, whose literals symi_cols_pack() stores
 * raw: at 9 that makes libc's tables 8 KB larger and python3.11d's 21 KB
 * (0.99x and 0.79x GSYM's), and a reader builds them back 0.15 to 0.3 ms
 * sooner, as much as 14% of a one-address lookup (docs/table-format.md,
 * "Raw literals in the columns"). */
#define ZREC_LEVEL 9
/* The symbols and their ranges are stored in chunks of 2^ZREC_SYM_SHIFT
 * records, built on demand: GNU's style reads them only where DWARF names
 * no function (PLT stubs, assembly), and a lookup that reads none builds
 * none (docs/table-format.md, "Symbols in chunks").  2^11: python3.11d's
 * warm 100,000 addresses build 4 chunks of 29, libc's table stays under
 * GSYM's size (2^10 took it to 0.9996x). */
#define ZREC_SYM_SHIFT 11
size_t symi_zrec_max = ZREC_MAX;
size_t symi_zrec_hot_max = ZREC_HOT_MAX;
unsigned symi_zrec_sym_shift = ZREC_SYM_SHIFT;
size_t symi_zstr_plain_from = Z_PLAIN_FROM;

/* 64 ranges per block: one block index entry (8 bytes) per 64 ranges, an
 * in-block binary search of 6 probes.  docs/table-format.md has the
 * measurements behind the choice. */
#define BLOCK_SHIFT 6

static unsigned width(uint64_t v)
{
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

static uint32_t code(uint32_t idx, size_t n)
{
	return idx < n ? idx + 1 : 0;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* A packed array being laid out. */
struct pk {
	struct symt_packed *h;	/* in the output header */
	unsigned nf;
	uint64_t stride;	/* bytes per record */
	uint8_t *p;
	uint8_t *z;		/* its column area when stored so, else NULL */
	size_t zlen;
};

static void pk_widths(struct pk *a, struct symt_packed *h, unsigned nf,
		      const uint64_t *max, uint32_t count)
{
	a->h = h;
	a->nf = nf;
	a->stride = 0;
	h->count = count;
	for (unsigned f = 0; f < nf; f++) {
		/* Bits: a lookup reads a field with one load and a shift. */
		h->w[f] = (uint8_t)width(max[f]);
		a->stride += h->w[f];
	}
	/* Records of whole bytes: a field's byte and shift are the same in
	 * every record, so a read costs one shift more than a byte field. */
	a->stride = (a->stride + 7) / 8;
}

static size_t pk_bytes(const struct pk *a)
{
	return (size_t)(a->h->count * a->stride) + SYMT_PAD;
}

/* Write record @i's fields @v[nf] (each < 2^32) into the zeroed area. */
static void pk_put(struct pk *a, uint32_t i, const uint64_t *v)
{
	uint64_t pos = (uint64_t)i * a->stride * 8;

	for (unsigned f = 0; f < a->nf; f++) {
		symt_put(a->p, pos, a->h->w[f], v[f]);
		pos += a->h->w[f];
	}
}

/*
 * Strings: the referenced ones, deduplicated, tails shared.
 */
struct sent {
	const char *s;
	uint32_t len;
	uint32_t old;		/* offset in the input blob */
	uint32_t pos;		/* first use */
	uint32_t host;		/* index (in tail order) of the string it is
				 * stored in */
	uint32_t off;		/* new offset */
};

/* By reversed content: a string sorts right before those it is the tail
 * of. */
static int sent_tail_cmp(const void *a, const void *b)
{
	const struct sent *x = a, *y = b;
	uint32_t i = x->len, j = y->len;

	while (i && j) {
		unsigned char cx = (unsigned char)x->s[--i];
		unsigned char cy = (unsigned char)y->s[--j];

		if (cx != cy)
			return cx < cy ? -1 : 1;
	}
	if (i != j)
		return i < j ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int u32pair_cmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

struct strs {
	const char *in;
	size_t in_len;
	uint32_t *refs;		/* input offsets in first-use order */
	size_t n_refs, cap_refs;
	struct sent *e;		/* distinct */
	size_t n;
	/* Open addressing on the input offset (0: an empty slot): while
	 * the strings are made distinct, the index in e; when done, the
	 * new offset (str_map()). */
	uint32_t (*slot)[2];
	size_t n_slots;		/* a power of 2, at least twice n */
	char *blob;
	size_t len;
	bool no_tails;		/* each string its own host */
	/* When not 0: no string crosses a multiple of 2^frame_shift in the
	 * blob unless it is longer than that (zeros pad up to it), and the
	 * blob is compressed in frames of that size when that gains. */
	unsigned frame_shift;
	uint8_t *z;		/* the blob compressed, or NULL: plain */
	size_t zlen;
};

/* The slot of input offset @old (not 0) in S->slot: its own or the
 * empty one it would take. */
static uint32_t *str_slot(const struct strs *S, uint32_t old)
{
	size_t mask = S->n_slots - 1;
	size_t i = ((uint64_t)old * 0x9e3779b97f4a7c15ull) >> 32 & mask;

	while (S->slot[i][0] && S->slot[i][0] != old)
		i = (i + 1) & mask;
	return S->slot[i];
}

/* Double S->slot (the slots hold indices in e).  Returns 0 or -ENOMEM. */
static int strs_rehash(struct strs *S)
{
	uint32_t (*old)[2] = S->slot;
	size_t n = S->n_slots;

	S->n_slots = n ? 2 * n : 1024;
	S->slot = symi_calloc_huge(S->n_slots, sizeof(*S->slot));
	if (!S->slot) {
		S->slot = old;
		S->n_slots = n;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (old[i][0])
			memcpy(str_slot(S, old[i][0]), old[i], sizeof(*old));
	}
	free(old);
	return 0;
}

/* Make S->e the distinct strings of S->refs, in first-use order, the
 * slots at most half full.  Returns 0 or -ENOMEM. */
static int strs_distinct(struct strs *S)
{
	S->e = symi_calloc(S->n_refs ? S->n_refs : 1, sizeof(*S->e));
	if (!S->e || strs_rehash(S))
		return -ENOMEM;
	S->n = 0;
	for (size_t i = 0; i < S->n_refs; i++) {
		uint32_t *sl = str_slot(S, S->refs[i]);
		struct sent *x = &S->e[S->n];

		if (sl[0])
			continue;
		sl[0] = S->refs[i];
		sl[1] = (uint32_t)S->n++;
		x->old = S->refs[i];
		x->pos = (uint32_t)i;
		x->s = S->in + x->old;
		x->len = (uint32_t)strlen(x->s);
		if (2 * S->n > S->n_slots && strs_rehash(S))
			return -ENOMEM;
	}
	return 0;
}

static int str_ref(struct strs *S, uint32_t off)
{
	if (off == 0 || off >= S->in_len)
		return 0;
	if (symi_grow((void **)&S->refs, &S->cap_refs, S->n_refs + 1,
		      sizeof(*S->refs)))
		return -ENOMEM;
	S->refs[S->n_refs++] = off;
	return 0;
}

/* Where a host of @len bytes goes when the blob so far is @o bytes: at
 * @o, or at the next frame when it would cross into it and fits one. */
static size_t str_place(const struct strs *S, size_t o, size_t len)
{
	size_t f = (size_t)1 << S->frame_shift;

	if (!S->frame_shift || len + 1 > f || o % f + len + 1 <= f)
		return o;
	return (o | (f - 1)) + 1;
}

/* Lay the referenced strings out: hosts in first-use order, tails inside
 * them. */
static int strs_build(struct strs *S)
{
	uint32_t *hosts = NULL;	/* (first use, tail index) pairs */
	size_t nh = 0, i, o;
	int err = -ENOMEM;

	err = strs_distinct(S);
	if (err)
		goto out;
	err = -ENOMEM;
	if (!S->no_tails)
		qsort(S->e, S->n, sizeof(*S->e), sent_tail_cmp);
	/* From the longest end of each run of tails: its host. */
	hosts = symi_calloc(2 * (S->n ? S->n : 1), sizeof(*hosts));
	if (!hosts)
		goto out;
	for (i = S->n; i-- > 0;) {
		struct sent *x = &S->e[i];

		if (!S->no_tails && i + 1 < S->n) {
			const struct sent *y = &S->e[i + 1];

			if (x->len <= y->len &&
			    memcmp(y->s + (y->len - x->len), x->s, x->len) == 0) {
				struct sent *h = &S->e[y->host];

				x->host = y->host;
				if (x->pos < h->pos)
					h->pos = x->pos;
				continue;
			}
		}
		x->host = (uint32_t)i;
	}
	for (i = 0; i < S->n; i++) {
		if (S->e[i].host == i) {
			hosts[2 * nh] = S->e[i].pos;
			hosts[2 * nh + 1] = (uint32_t)i;
			nh++;
		}
	}
	/* Without tails, e and so the hosts are in first-use order. */
	if (!S->no_tails)
		qsort(hosts, nh, 2 * sizeof(*hosts), u32pair_cmp);
	S->len = 1;
	for (i = 0; i < nh; i++)
		S->len = str_place(S, S->len, S->e[hosts[2 * i + 1]].len) +
			 S->e[hosts[2 * i + 1]].len + 1;
	if (S->len >= UINT32_MAX) {
		err = -SYM_E_TOOBIG;
		goto out;
	}
	S->blob = symi_calloc(1, S->len);
	if (!S->blob)
		goto out;
	o = 1;
	for (i = 0; i < nh; i++) {
		struct sent *h = &S->e[hosts[2 * i + 1]];

		o = str_place(S, o, h->len);
		memcpy(S->blob + o, h->s, h->len + 1);
		h->off = (uint32_t)o;
		o += h->len + 1;
	}
	for (i = 0; i < S->n; i++) {
		const struct sent *h = &S->e[S->e[i].host];

		S->e[i].off = h->off + (h->len - S->e[i].len);
	}
	/* Each slot's new offset, for str_map(). */
	for (i = 0; i < S->n; i++)
		str_slot(S, S->e[i].old)[1] = S->e[i].off;
	err = 0;
out:
	free(hosts);
	return err;
}

/* The new offset of input string @off. */
static uint32_t str_map(const struct strs *S, uint32_t off)
{
	const uint32_t *sl;

	if (off == 0 || off >= S->in_len || !S->n_slots)
		return 0;
	sl = str_slot(S, off);
	return sl[0] ? sl[1] : 0;
}

/*
 * Blocks.
 */
struct blk {
	uint8_t w[SYMT_BK_N];
	/* scope, file, line (zigzag), column, disc, address slope, address
	 * base (zigzag) */
	uint64_t base[SYMT_BK_BASES];
	size_t off, bits;
};

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* The output's view of a leaf, after renumbering: */
struct nleaf {
	uint32_t scope, file, line, column, disc;
	uint32_t decl_file, decl_line;	/* of the scope's function */
	bool hole;
};

struct packer {
	const struct symi_tab *in;
	/* old -> new maps (SYMT_NONE: dropped) and new -> old orders */
	uint32_t *smap, *sorder, *spar;
	uint32_t *fmap, *forder;
	uint32_t *fimap, *fiorder;
	uint32_t *symap, *syorder;
	size_t ns, nf, nfi, nsy;
	struct strs S;
	struct strs D;		/* demangled names */
	/* Symbol kinds: kind[i] of output symbol i, kinds[k] = (file's new
	 * string offset, flags), nk distinct in first-use order. */
	uint32_t *kind;
	uint32_t (*kinds)[2];
	size_t nk;
};

static void strs_free(struct strs *S)
{
	free(S->refs);
	free(S->e);
	free(S->slot);
	free(S->blob);
	free(S->z);
}

/* Number the distinct (file, flags) pairs of the output symbols: P->kind,
 * P->kinds, P->nk (after the strings are laid out).  0 or -ENOMEM. */
static int number_kinds(struct packer *P)
{
	uint32_t (*slot)[3] = NULL;	/* file + 1, flags, kind; 0: empty */
	size_t nslots = 64;
	int err = -ENOMEM;

	while (nslots < 2 * P->nsy)
		nslots *= 2;
	P->kind = symi_calloc(P->nsy ? P->nsy : 1, sizeof(*P->kind));
	P->kinds = symi_calloc(P->nsy ? P->nsy : 1, sizeof(*P->kinds));
	slot = symi_calloc(nslots, sizeof(*slot));
	if (!P->kind || !P->kinds || !slot)
		goto out;
	for (size_t i = 0; i < P->nsy; i++) {
		const struct symt_sym *s = &P->in->syms[P->syorder[i]];
		uint32_t file = str_map(&P->S, s->file), flags = s->flags;
		size_t j = ((uint64_t)file * 0x9e3779b97f4a7c15ull ^ flags) *
			   0x9e3779b97f4a7c15ull >> 40 & (nslots - 1);

		while (slot[j][0] &&
		       (slot[j][0] != file + 1 || slot[j][1] != flags))
			j = (j + 1) & (nslots - 1);
		if (!slot[j][0]) {
			slot[j][0] = file + 1;
			slot[j][1] = flags;
			slot[j][2] = (uint32_t)P->nk;
			P->kinds[P->nk][0] = file;
			P->kinds[P->nk][1] = flags;
			P->nk++;
		}
		P->kind[i] = slot[j][2];
	}
	err = 0;
out:
	free(slot);
	return err;
}

static void packer_free(struct packer *P)
{
	free(P->smap);
	free(P->sorder);
	free(P->spar);
	free(P->fmap);
	free(P->forder);
	free(P->fimap);
	free(P->fiorder);
	free(P->symap);
	free(P->syorder);
	free(P->kind);
	free(P->kinds);
	strs_free(&P->S);
	strs_free(&P->D);
}

static uint32_t *new_map(size_t n)
{
	uint32_t *m = symi_malloc((n ? n : 1) * sizeof(*m));

	if (m)
		memset(m, 0xff, (n ? n : 1) * sizeof(*m));
	return m;
}

/* Number the scopes the ranges reach, parents first. */
static int number_scopes(struct packer *P)
{
	const struct symi_tab *in = P->in;
	uint32_t *chain = NULL;
	uint8_t *seen = NULL;
	size_t cap = 0;
	int err = -ENOMEM;

	P->smap = new_map(in->n_scopes);
	P->sorder = new_map(in->n_scopes);
	P->spar = new_map(in->n_scopes);
	seen = symi_calloc(in->n_scopes ? in->n_scopes : 1, 1);
	if (!P->smap || !P->sorder || !P->spar || !seen)
		goto out;
	for (size_t i = 0; i < in->n_ranges; i++) {
		uint32_t s = in->leaves[i].scope, top;
		size_t d = 0;

		/* Up the chain to the first scope already numbered; a
		 * cycle (a corrupt input) is cut where it closes. */
		while (s < in->n_scopes && P->smap[s] == SYMT_NONE &&
		       !seen[s]) {
			if (symi_grow((void **)&chain, &cap, d + 1,
				      sizeof(*chain)))
				goto out;
			seen[s] = 1;
			chain[d++] = s;
			s = in->scopes[s].parent;
		}
		top = s < in->n_scopes ? P->smap[s] : SYMT_NONE;
		while (d--) {
			uint32_t o = chain[d];

			P->smap[o] = (uint32_t)P->ns;
			P->sorder[P->ns] = o;
			P->spar[P->ns] = top;
			top = (uint32_t)P->ns++;
		}
	}
	err = 0;
out:
	free(chain);
	free(seen);
	return err;
}

static void number(uint32_t *map, uint32_t *order, size_t *n, uint32_t idx,
		   size_t lim)
{
	if (idx < lim && map[idx] == SYMT_NONE) {
		map[idx] = (uint32_t)*n;
		order[(*n)++] = idx;
	}
}

static int number_rest(struct packer *P)
{
	const struct symi_tab *in = P->in;
	size_t i;
	int err;

	P->fmap = new_map(in->n_funcs);
	P->forder = new_map(in->n_funcs);
	P->fimap = new_map(in->n_files);
	P->fiorder = new_map(in->n_files);
	P->symap = new_map(in->n_syms);
	P->syorder = new_map(in->n_syms);
	if (!P->fmap || !P->forder || !P->fimap || !P->fiorder ||
	    !P->symap || !P->syorder)
		return -ENOMEM;
	for (i = 0; i < P->ns; i++)
		number(P->fmap, P->forder, &P->nf,
		       in->scopes[P->sorder[i]].func, in->n_funcs);
	for (i = 0; i < in->n_ranges; i++)
		number(P->fimap, P->fiorder, &P->nfi, in->leaves[i].file,
		       in->n_files);
	for (i = 0; i < P->ns; i++)
		number(P->fimap, P->fiorder, &P->nfi,
		       in->scopes[P->sorder[i]].call_file, in->n_files);
	for (i = 0; i < P->nf; i++)
		number(P->fimap, P->fiorder, &P->nfi,
		       in->funcs[P->forder[i]].decl_file, in->n_files);
	if (in->prune_syms) {
		for (int c = 0; c < SYMT_CH_N; c++) {
			for (i = 0; i < in->n_sranges; i++) {
				if (in->sidx[c][i] < in->n_syms)
					P->symap[in->sidx[c][i]] = 0;
			}
		}
	}
	for (i = 0; i < in->n_syms; i++) {
		if (!in->prune_syms || P->symap[i] == 0) {
			P->symap[i] = (uint32_t)P->nsy;
			P->syorder[P->nsy++] = (uint32_t)i;
		}
	}

	/* Strings, in first-use order. */
	P->S.in = in->str;
	P->S.in_len = in->str_len;
	P->S.no_tails = in->no_tails;
	P->D.in = in->dstr;
	P->D.in_len = in->dstr_len;
	P->D.no_tails = in->no_tails;
	/* A table built to be thrown away (the lazy path) is not worth
	 * compressing. */
	P->S.frame_shift = in->no_tails ? 0 : Z_SHIFT;
	P->D.frame_shift = P->S.frame_shift;
	for (i = 0; i < P->nf; i++) {
		const struct symt_func *f = &in->funcs[P->forder[i]];

		if ((err = str_ref(&P->S, f->name)) ||
		    (err = str_ref(&P->S, f->linkage)) ||
		    (err = str_ref(&P->D, f->demangled)) ||
		    (err = str_ref(&P->S, f->outer)) ||
		    (err = str_ref(&P->S, f->eu)))
			return err;
	}
	for (i = 0; i < P->nfi; i++) {
		err = str_ref(&P->S, in->files[P->fiorder[i]].name);
		if (err)
			return err;
	}
	for (i = 0; i < P->nsy; i++) {
		const struct symt_sym *s = &in->syms[P->syorder[i]];

		if ((err = str_ref(&P->S, s->name)) ||
		    (err = str_ref(&P->D, s->demangled)) ||
		    (err = str_ref(&P->S, s->file)))
			return err;
	}
	err = strs_build(&P->S);
	return err ? err : strs_build(&P->D);
}

static void leaf_of(const struct packer *P, size_t i, struct nleaf *l)
{
	const struct symi_tab *in = P->in;
	const struct symt_leaf *o = &in->leaves[i];

	memset(l, 0, sizeof(*l));
	l->scope = o->scope < in->n_scopes ? P->smap[o->scope] : SYMT_NONE;
	l->file = o->file < in->n_files ? P->fimap[o->file] : SYMT_NONE;
	l->decl_file = SYMT_NONE;
	l->hole = l->scope == SYMT_NONE && l->file == SYMT_NONE;
	if (l->hole)
		return;
	l->line = o->line;
	l->column = o->column;
	l->disc = o->discriminator;
	if (l->scope != SYMT_NONE) {
		uint32_t f = in->scopes[o->scope].func;

		if (f < in->n_funcs) {
			const struct symt_func *fn = &in->funcs[f];

			l->decl_file = fn->decl_file < in->n_files ?
				       P->fimap[fn->decl_file] : SYMT_NONE;
			l->decl_line = fn->decl_line;
		}
	}
}

/* The file code of @l in a block whose explicit files start at @fbase. */
static uint64_t file_code(const struct nleaf *l, uint32_t fbase)
{
	if (l->file == SYMT_NONE)
		return 0;
	if (l->file == l->decl_file)
		return 1;
	return (uint64_t)(l->file - fbase) + 2;
}

/* The address of range @i of the block of ranges from @i0 less the
 * slope's line: what the block stores less the base. */
static int64_t addr_resid(const uint32_t *A, size_t i0, size_t i,
			  uint64_t slope)
{
	return (int64_t)(uint32_t)(A[i] - A[i0]) -
	       (int64_t)(((uint64_t)(i - i0) * slope) >> SYMT_BK_SLOPE_SHIFT);
}

/*
 * The address fields of the block of ranges [i0, i1), the last @amax
 * past the first: the slope of the line from the first to the last and
 * the base and width of what is left.  Ranges are 1 to 10 bytes long
 * and vary, so the residues need about 3 bits fewer than the offsets
 * from the block's start.
 */
static void addr_plan(const uint32_t *A, size_t i0, size_t i1,
		      uint64_t amax, struct blk *k)
{
	int64_t rmin = 0, rmax = 0;
	uint64_t slope = 0;

	if (i1 - i0 > 1)
		slope = (amax << SYMT_BK_SLOPE_SHIFT) / (i1 - i0 - 1);
	for (size_t i = i0 + 1; i < i1; i++) {
		int64_t r = addr_resid(A, i0, i, slope);

		rmin = i == i0 + 1 || r < rmin ? r : rmin;
		rmax = i == i0 + 1 || r > rmax ? r : rmax;
	}
	k->base[5] = slope;
	k->base[6] = zigzag(rmin);
	k->w[SYMT_BK_ADDR] = (uint8_t)width((uint64_t)(rmax - rmin));
}

/* Choose block @b's widths and bases (the block of ranges [i0, i1)). */
static void block_plan(const struct packer *P, size_t i0, size_t i1,
		       struct blk *k)
{
	const uint32_t *A = P->in->addrs;
	uint32_t smin = UINT32_MAX, smax = 0, fmin = UINT32_MAX, fmax = 0;
	uint32_t cmin = UINT32_MAX, cmax = 0, dmin = UINT32_MAX, dmax = 0;
	int64_t lmin = INT64_MAX, lmax = INT64_MIN;
	uint64_t amax = 0, fc = 0;
	bool any = false;
	struct nleaf l;

	for (size_t i = i0; i < i1; i++) {
		uint64_t a = (uint32_t)(A[i] - A[i0]);
		int64_t dl;

		amax = a > amax ? a : amax;
		leaf_of(P, i, &l);
		if (l.hole)
			continue;
		any = true;
		if (l.scope != SYMT_NONE) {
			smin = l.scope < smin ? l.scope : smin;
			smax = l.scope > smax ? l.scope : smax;
		}
		if (l.file != SYMT_NONE && l.file != l.decl_file) {
			fmin = l.file < fmin ? l.file : fmin;
			fmax = l.file > fmax ? l.file : fmax;
		}
		dl = (int64_t)l.line - (int64_t)l.decl_line;
		lmin = dl < lmin ? dl : lmin;
		lmax = dl > lmax ? dl : lmax;
		cmin = l.column < cmin ? l.column : cmin;
		cmax = l.column > cmax ? l.column : cmax;
		dmin = l.disc < dmin ? l.disc : dmin;
		dmax = l.disc > dmax ? l.disc : dmax;
	}
	memset(k, 0, sizeof(*k));
	addr_plan(A, i0, i1, amax, k);
	if (smin != UINT32_MAX) {
		k->base[0] = smin;
		k->w[SYMT_BK_SCOPE] = (uint8_t)width((uint64_t)smax - smin + 1);
	}
	if (fmin != UINT32_MAX)
		k->base[1] = fmin;
	/* Codes 0 (none) and 1 (the declaration file) are always there. */
	for (size_t i = i0; i < i1; i++) {
		uint64_t c;

		leaf_of(P, i, &l);
		c = file_code(&l, (uint32_t)k->base[1]);
		fc = c > fc ? c : fc;
	}
	k->w[SYMT_BK_FILE] = (uint8_t)width(fc);
	if (any) {
		k->base[2] = zigzag(lmin);
		k->base[3] = cmin;
		k->base[4] = dmin;
		k->w[SYMT_BK_LINE] = (uint8_t)width((uint64_t)(lmax - lmin));
		k->w[SYMT_BK_COLUMN] = (uint8_t)width((uint64_t)cmax - cmin);
		k->w[SYMT_BK_DISC] = (uint8_t)width((uint64_t)dmax - dmin);
	}
}

static uint64_t block_bits(const struct blk *k, const uint8_t *bw, size_t n)
{
	uint64_t bits = SYMT_BK_N * SYMT_BK_WBITS, leaf = 0;

	for (int j = 0; j < SYMT_BK_BASES; j++)
		bits += bw[j];
	for (int j = SYMT_BK_SCOPE; j < SYMT_BK_N; j++)
		leaf += k->w[j];
	return bits + (n - 1) * k->w[SYMT_BK_ADDR] + n * leaf;
}

static void block_write(const struct packer *P, size_t i0, size_t i1,
			const struct blk *k, const uint8_t *bw, uint8_t *p)
{
	const uint32_t *A = P->in->addrs;
	uint64_t pos = 0;
	int64_t lbase, amin;
	struct nleaf l;

	for (int j = 0; j < SYMT_BK_N; j++) {
		symt_put(p, pos, SYMT_BK_WBITS, k->w[j]);
		pos += SYMT_BK_WBITS;
	}
	for (int j = 0; j < SYMT_BK_BASES; j++) {
		symt_put(p, pos, bw[j], k->base[j]);
		pos += bw[j];
	}
	amin = (int64_t)(k->base[6] >> 1) ^ -(int64_t)(k->base[6] & 1);
	for (size_t i = i0 + 1; i < i1; i++) {
		symt_put(p, pos, k->w[SYMT_BK_ADDR],
			 (uint64_t)(addr_resid(A, i0, i, k->base[5]) - amin));
		pos += k->w[SYMT_BK_ADDR];
	}
	lbase = (int64_t)(k->base[2] >> 1) ^ -(int64_t)(k->base[2] & 1);
	for (size_t i = i0; i < i1; i++) {
		uint64_t v[5] = { 0 };

		leaf_of(P, i, &l);
		if (!l.hole) {
			v[0] = l.scope == SYMT_NONE ? 0 :
			       (uint64_t)(l.scope - k->base[0]) + 1;
			v[1] = file_code(&l, (uint32_t)k->base[1]);
			v[2] = (uint64_t)((int64_t)l.line -
					  (int64_t)l.decl_line - lbase);
			v[3] = l.column - k->base[3];
			v[4] = l.disc - k->base[4];
		}
		for (int j = 0; j < 5; j++) {
			symt_put(p, pos, k->w[SYMT_BK_SCOPE + j], v[j]);
			pos += k->w[SYMT_BK_SCOPE + j];
		}
	}
}

/*
 * The packed arrays: the fields of each new record, from the input.
 */
typedef void (*vals_fn)(const struct packer *P, size_t i, uint64_t *v);

static void scope_vals(const struct packer *P, size_t i, uint64_t *v)
{
	const struct symi_tab *in = P->in;
	const struct symt_scope *s = &in->scopes[P->sorder[i]];

	v[SYMT_SC_PARENT] = P->spar[i] == SYMT_NONE ? 0 : i - P->spar[i];
	v[SYMT_SC_FUNC] = code(s->func < in->n_funcs ? P->fmap[s->func] :
			       SYMT_NONE, P->nf);
	v[SYMT_SC_CALL_FILE] = code(s->call_file < in->n_files ?
				    P->fimap[s->call_file] : SYMT_NONE,
				    P->nfi);
	v[SYMT_SC_CALL_LINE] = s->call_line;
	v[SYMT_SC_CALL_COLUMN] = s->call_column;
	v[SYMT_SC_ENTRY] = s->entry == SYMT_NONE ? 0 :
			   (uint64_t)s->entry + 1;
	v[SYMT_SC_FLAGS] = s->flags;
}

static void func_vals(const struct packer *P, size_t i, uint64_t *v)
{
	const struct symi_tab *in = P->in;
	const struct symt_func *f = &in->funcs[P->forder[i]];

	v[SYMT_FN_NAME] = str_map(&P->S, f->name);
	v[SYMT_FN_LINKAGE] = str_map(&P->S, f->linkage);
	v[SYMT_FN_DEMANGLED] = str_map(&P->D, f->demangled);
	v[SYMT_FN_DECL_FILE] = code(f->decl_file < in->n_files ?
				    P->fimap[f->decl_file] : SYMT_NONE,
				    P->nfi);
	v[SYMT_FN_DECL_LINE] = f->decl_line;
	v[SYMT_FN_OUTER] = str_map(&P->S, f->outer);
	v[SYMT_FN_FLAGS] = f->flags;
	v[SYMT_FN_EU] = str_map(&P->S, f->eu);
}

static void file_vals(const struct packer *P, size_t i, uint64_t *v)
{
	const struct symt_file *f = &P->in->files[P->fiorder[i]];

	v[SYMT_FI_NAME] = str_map(&P->S, f->name);
	v[SYMT_FI_REL] = f->rel;
}

static void sym_vals(const struct packer *P, size_t i, uint64_t *v)
{
	const struct symt_sym *s = &P->in->syms[P->syorder[i]];

	v[SYMT_SY_ADDR] = s->addr;
	v[SYMT_SY_SIZE] = s->size;
	v[SYMT_SY_NAME] = str_map(&P->S, s->name);
	v[SYMT_SY_DEMANGLED] = str_map(&P->D, s->demangled);
	v[SYMT_SY_KIND] = P->kind[i];
}

static void kind_vals(const struct packer *P, size_t i, uint64_t *v)
{
	v[SYMT_SK_FILE] = P->kinds[i][0];
	v[SYMT_SK_FLAGS] = P->kinds[i][1];
}

static void srange_vals(const struct packer *P, size_t i, uint64_t *v)
{
	const struct symi_tab *in = P->in;
	static const unsigned field[SYMT_CH_N] = {
		[SYMT_CH_EU] = SYMT_SR_SYM, [SYMT_CH_GNU] = SYMT_SR_GNU,
		[SYMT_CH_LLVM] = SYMT_SR_LLVM,
	};

	v[SYMT_SR_ADDR] = in->saddrs[i];
	for (int c = 0; c < SYMT_CH_N; c++) {
		uint32_t s = in->sidx[c][i];

		v[field[c]] = code(s < in->n_syms ? P->symap[s] : SYMT_NONE,
				   P->nsy);
	}
}

static void pk_plan(const struct packer *P, struct pk *a,
		    struct symt_packed *h, unsigned nf, size_t count,
		    vals_fn fn)
{
	uint64_t max[SYMT_FIELDS] = { 0 }, v[SYMT_FIELDS];

	for (size_t i = 0; i < count; i++) {
		fn(P, i, v);
		for (unsigned f = 0; f < nf; f++)
			max[f] = v[f] > max[f] ? v[f] : max[f];
	}
	pk_widths(a, h, nf, max, (uint32_t)count);
}

static void pk_write(const struct packer *P, struct pk *a, uint8_t *p,
		     vals_fn fn)
{
	uint64_t v[SYMT_FIELDS];

	a->p = p;
	for (uint32_t i = 0; i < a->h->count; i++) {
		fn(P, i, v);
		pk_put(a, i, v);
	}
}

/* The range indices [*i0, *i1) of block @i. */
static void block_span(const struct symi_tab *in, size_t i, size_t *i0,
		       size_t *i1)
{
	size_t bsz = (size_t)1 << BLOCK_SHIFT;

	*i0 = i << BLOCK_SHIFT;
	*i1 = *i0 + bsz < in->n_ranges ? *i0 + bsz : in->n_ranges;
}

/*
 * Plan the blocks of ranges (*blksp: caller frees, on failure too), then
 * the global base widths (hd->bw) and each block's place in the blocks
 * area of *bytesp bytes.  Returns 0, -ENOMEM, -SYM_E_TOOBIG.
 */
static int plan_blocks(const struct packer *P, struct symt_header *hd,
		       struct blk **blksp, size_t *nbp, size_t *bytesp)
{
	const struct symi_tab *in = P->in;
	size_t bsz = (size_t)1 << BLOCK_SHIFT, bytes = 0, i0, i1;
	size_t nb = (in->n_ranges + bsz - 1) >> BLOCK_SHIFT;
	struct blk *blks;

	*nbp = nb;
	*blksp = blks = symi_calloc(nb ? nb : 1, sizeof(*blks));
	if (!blks)
		return -ENOMEM;
	for (size_t i = 0; i < nb; i++) {
		block_span(in, i, &i0, &i1);
		block_plan(P, i0, i1, &blks[i]);
		for (int j = 0; j < SYMT_BK_BASES; j++) {
			if (width(blks[i].base[j]) > hd->bw[j])
				hd->bw[j] = (uint8_t)width(blks[i].base[j]);
		}
	}
	for (size_t i = 0; i < nb; i++) {
		block_span(in, i, &i0, &i1);
		blks[i].off = bytes;
		blks[i].bits = block_bits(&blks[i], hd->bw, i1 - i0);
		bytes += (blks[i].bits + 7) / 8;
		if (bytes >= UINT32_MAX)
			return -SYM_E_TOOBIG;
	}
	*bytesp = bytes + SYMT_PAD;
	return 0;
}

/* The packed arrays of the table, and the block index's column area
 * (ix.z, when stored so). */
struct arrays {
	struct pk sc, fn, fi, sy, sr, sk;
	struct pk ix;
};

/* The packed arrays' widths: the bits of each field's largest value. */
static void plan_arrays(const struct packer *P, struct symt_header *hd,
			struct arrays *a)
{
	pk_plan(P, &a->sc, &hd->scopes, SYMT_SC_N, P->ns, scope_vals);
	pk_plan(P, &a->fn, &hd->funcs, SYMT_FN_N, P->nf, func_vals);
	pk_plan(P, &a->fi, &hd->files, SYMT_FI_N, P->nfi, file_vals);
	pk_plan(P, &a->sy, &hd->syms, SYMT_SY_N, P->nsy, sym_vals);
	pk_plan(P, &a->sr, &hd->sranges, SYMT_SR_N, P->in->n_sranges,
		srange_vals);
	pk_plan(P, &a->sk, &hd->skinds, SYMT_SK_N, P->nk, kind_vals);
}

/* Keep the compressed area *@z (*@zlen bytes) of what takes @plain bytes
 * stored plain only when it is smaller and what a reader builds from it,
 * @built bytes, is within the inflation bound (symi_zstr_bounded()); else
 * free it: stored plain. */
static void z_keep(uint8_t **z, size_t *zlen, size_t plain, size_t built)
{
	if (*z && (*zlen >= plain || !symi_zstr_bounded(built, *zlen))) {
		free(*z);
		*z = NULL;
		*zlen = 0;
	}
}

/* Place packed array @a at *off (8-aligned) and move *off past it; *zrec
 * its column area's bytes, 0 when plain. */
static void place(struct symt_packed *h, const struct pk *a, size_t *off,
		  uint32_t *zrec)
{
	h->off = (uint32_t)*off;
	h->bytes = (uint32_t)pk_bytes(a);
	*zrec = (uint32_t)a->zlen;
	*off = align8(*off + (a->z ? a->zlen : pk_bytes(a)));
}

/* The records of a packed array, for symi_cols_pack(). */
struct rows {
	const uint8_t *p;
	uint64_t stride;
	const uint8_t *w;
	unsigned pos[SYMT_FIELDS];
};

static uint32_t rows_get(const void *src, uint32_t i, unsigned f)
{
	const struct rows *R = src;

	return (uint32_t)symt_bits(R->p, i * R->stride * 8 + R->pos[f],
				   R->w[f]);
}

/* Packed array @a as compressed columns when that gains (a->z), in chunks
 * of 2^@shift records when @shift is not 0. */
static int pk_compress(const struct packer *P, struct pk *a, vals_fn fn,
		       unsigned shift)
{
	struct rows R = { .stride = a->stride, .w = a->h->w };
	uint8_t *tmp = symi_calloc(1, pk_bytes(a));
	unsigned pos = 0;
	int err;

	if (!tmp)
		return -ENOMEM;
	pk_write(P, a, tmp, fn);
	R.p = tmp;
	for (unsigned f = 0; f < a->nf; f++) {
		R.pos[f] = pos;
		pos += a->h->w[f];
	}
	err = symi_cols_pack(a->h->count, a->nf, a->h->w, rows_get, &R,
			     ZREC_LEVEL, shift, &a->z, &a->zlen);
	a->p = NULL;
	free(tmp);
	z_keep(&a->z, &a->zlen, pk_bytes(a), pk_bytes(a));
	return err;
}

/* The block index, for symi_cols_pack(): bstart, then boff. */
struct bindex {
	const struct symi_tab *in;
	const struct blk *blks;
};

static uint32_t bindex_get(const void *src, uint32_t i, unsigned f)
{
	const struct bindex *X = src;

	return f ? (uint32_t)X->blks[i].off :
		   X->in->addrs[(size_t)i << BLOCK_SHIFT];
}

/*
 * The header: what the table is and where each part goes, in the order
 * of format.h.  *sizep: the table's bytes.  Returns 0 or -SYM_E_TOOBIG.
 */
static int lay_out(const struct packer *P, const struct arrays *a,
		   size_t nb, size_t blocks_bytes, struct symt_header *hd,
		   size_t *sizep)
{
	const struct symi_tab *in = P->in;
	size_t off = align8(sizeof(*hd));

	hd->off_bstart = (uint32_t)off;
	if (a->ix.z) {
		hd->zindex = (uint32_t)a->ix.zlen;
		off = align8(off + a->ix.zlen);
	} else {
		off = align8(off + nb * sizeof(uint32_t));
		hd->off_boff = (uint32_t)off;
		off = align8(off + nb * sizeof(uint32_t));
	}
	hd->off_blocks = (uint32_t)off;
	off = align8(off + blocks_bytes);
	place(&hd->scopes, &a->sc, &off, &hd->zrec[SYMT_R_SCOPES]);
	place(&hd->funcs, &a->fn, &off, &hd->zrec[SYMT_R_FUNCS]);
	place(&hd->files, &a->fi, &off, &hd->zrec[SYMT_R_FILES]);
	place(&hd->syms, &a->sy, &off, &hd->zrec[SYMT_R_SYMS]);
	place(&hd->sranges, &a->sr, &off, &hd->zrec[SYMT_R_SRANGES]);
	place(&hd->skinds, &a->sk, &off, &hd->zrec[SYMT_R_SKINDS]);
	hd->off_strings = (uint32_t)off;
	off = align8(off + (P->S.z ? P->S.zlen : P->S.len));
	hd->off_dstrings = (uint32_t)off;
	off = align8(off + (P->D.z ? P->D.zlen : P->D.len));
	if (off >= UINT32_MAX)
		return -SYM_E_TOOBIG;
	memcpy(hd->magic, SYMT_MAGIC, sizeof(hd->magic));
	hd->format = SYM_TABLE_FORMAT;
	hd->bom = SYMT_BOM;
	hd->flags = in->flags;
	hd->size = (uint32_t)off;
	hd->base = in->base;
	hd->start = in->start;
	hd->end = in->end;
	hd->converter = in->converter;
	hd->elfutils = in->elfutils;
	hd->n_ranges = (uint32_t)in->n_ranges;
	hd->n_blocks = (uint32_t)nb;
	hd->blocks_size = (uint32_t)blocks_bytes;
	hd->block_shift = BLOCK_SHIFT;
	hd->strings_size = (uint32_t)P->S.len;
	hd->strings_zbytes = (uint32_t)P->S.zlen;
	hd->strings_shift = P->S.z ? Z_SHIFT : 0;
	hd->dstrings_size = (uint32_t)P->D.len;
	hd->dstrings_zbytes = (uint32_t)P->D.zlen;
	hd->dstrings_shift = P->D.z ? Z_SHIFT : 0;
	*sizep = off;
	return 0;
}

/* A string blob as it is stored: compressed or plain. */
static void blob_write(const struct strs *S, char *to)
{
	if (S->z)
		memcpy(to, S->z, S->zlen);
	else
		memcpy(to, S->blob, S->len);
}

/* Packed array @a as it is stored at @p: its column area, or records. */
static void pk_store(const struct packer *P, struct pk *a, uint8_t *p,
		     vals_fn fn)
{
	if (a->z)
		memcpy(p, a->z, a->zlen);
	else
		pk_write(P, a, p, fn);
}

/* Whether packed array @r (enum of format.h's SYMT_R_*) is one every
 * lookup reads whole, not a chunk at a time (ZREC_HOT_MAX). */
static bool r_hot(size_t r)
{
	return r == SYMT_R_SCOPES || r == SYMT_R_FUNCS || r == SYMT_R_FILES;
}

/*
 * The packed arrays and the block index as compressed columns, each when
 * that gains, if the arrays are at most symi_zrec_max bytes and the table is
 * kept (a lazy table, built to be thrown away, stays plain).  0 or
 * -ENOMEM.
 */
static int recs_compress(const struct packer *P, struct arrays *a,
			 const struct blk *blks, size_t nb)
{
	struct pk *all[] = { &a->sc, &a->fn, &a->fi, &a->sy, &a->sr, &a->sk };
	static const vals_fn fns[] = { scope_vals, func_vals, file_vals,
				       sym_vals, srange_vals, kind_vals };
	struct bindex X = { .in = P->in, .blks = blks };
	static const uint8_t w2[2] = { 32, 32 };
	size_t total = 0, hot = 0;
	int err = 0;

	if (P->in->no_tails)
		return 0;
	for (size_t r = 0; r < SYMT_R_N; r++) {
		total += pk_bytes(all[r]);
		if (r_hot(r))
			hot += pk_bytes(all[r]);
	}
	if (total > symi_zrec_max)
		return 0;
	for (size_t r = 0; r < SYMT_R_N && !err; r++) {
		if (r_hot(r) && hot > symi_zrec_hot_max)
			continue;
		err = pk_compress(P, all[r], fns[r],
				  r == SYMT_R_SYMS || r == SYMT_R_SRANGES ?
					  symi_zrec_sym_shift : 0);
	}
	if (err || !nb)
		return err;
	err = symi_cols_pack((uint32_t)nb, 2, w2, bindex_get, &X, ZREC_LEVEL,
			     0, &a->ix.z, &a->ix.zlen);
	z_keep(&a->ix.z, &a->ix.zlen, 8 * nb, 8 * nb + SYMT_PAD);
	return err;
}

static void arrays_free(struct arrays *a)
{
	free(a->sc.z);
	free(a->fn.z);
	free(a->fi.z);
	free(a->sy.z);
	free(a->sr.z);
	free(a->sk.z);
	free(a->ix.z);
}

/* Write the table laid out in @hd into @buf (zeroed, hd->size bytes). */
static void write_table(const struct packer *P, const struct symt_header *hd,
			const struct blk *blks, struct arrays *a, char *buf)
{
	const struct symi_tab *in = P->in;
	struct symt_header *h = (struct symt_header *)buf;
	size_t i0, i1;

	*h = *hd;
	/* The pk structs point at the local header; aim them at the copy. */
	a->sc.h = &h->scopes;
	a->fn.h = &h->funcs;
	a->fi.h = &h->files;
	a->sy.h = &h->syms;
	a->sr.h = &h->sranges;
	a->sk.h = &h->skinds;
	if (a->ix.z)
		memcpy(buf + h->off_bstart, a->ix.z, a->ix.zlen);
	for (size_t i = 0; i < h->n_blocks; i++) {
		block_span(in, i, &i0, &i1);
		if (!a->ix.z) {
			((uint32_t *)(buf + h->off_bstart))[i] = in->addrs[i0];
			((uint32_t *)(buf + h->off_boff))[i] =
				(uint32_t)blks[i].off;
		}
		block_write(P, i0, i1, &blks[i], h->bw,
			    (uint8_t *)buf + h->off_blocks + blks[i].off);
	}
	pk_store(P, &a->sc, (uint8_t *)buf + h->scopes.off, scope_vals);
	pk_store(P, &a->fn, (uint8_t *)buf + h->funcs.off, func_vals);
	pk_store(P, &a->fi, (uint8_t *)buf + h->files.off, file_vals);
	pk_store(P, &a->sy, (uint8_t *)buf + h->syms.off, sym_vals);
	pk_store(P, &a->sr, (uint8_t *)buf + h->sranges.off, srange_vals);
	pk_store(P, &a->sk, (uint8_t *)buf + h->skinds.off, kind_vals);
	blob_write(&P->S, buf + h->off_strings);
	blob_write(&P->D, buf + h->off_dstrings);
	h->crc = symi_table_crc(buf, h->size);
}

/* A string blob as zstd frames, when it is long enough, no longer than
 * @max, and that gains (S->z stays NULL: stored plain). */
static int strs_compress(struct strs *S, size_t max)
{
	int err;

	if (!S->frame_shift || S->len < Z_MIN || S->len > max)
		return 0;
	err = symi_zstr_pack(S->blob, S->len, S->frame_shift, Z_LEVEL, &S->z,
			     &S->zlen);
	z_keep(&S->z, &S->zlen, S->len, S->len);
	return err;
}

int symi_table_pack(const struct symi_tab *in, void **bufp, size_t *lenp)
{
	struct packer P = { .in = in };
	struct symt_header hd = { 0 };
	struct blk *blks = NULL;
	struct arrays a = { 0 };
	size_t nb = 0, blocks_bytes = 0, size = 0;
	char *buf = NULL;
	int err;

	*bufp = NULL;
	*lenp = 0;
	err = number_scopes(&P);
	if (!err)
		err = number_rest(&P);
	if (!err)
		err = number_kinds(&P);
	if (!err)
		err = strs_compress(&P.S, symi_zstr_plain_from);
	if (!err)
		err = strs_compress(&P.D, SIZE_MAX);
	if (!err)
		err = plan_blocks(&P, &hd, &blks, &nb, &blocks_bytes);
	if (err)
		goto out;
	plan_arrays(&P, &hd, &a);
	err = recs_compress(&P, &a, blks, nb);
	if (err)
		goto out;
	err = lay_out(&P, &a, nb, blocks_bytes, &hd, &size);
	if (err)
		goto out;
	buf = symi_calloc_huge(1, size);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	write_table(&P, &hd, blks, &a, buf);
	*bufp = buf;
	*lenp = size;
	buf = NULL;
out:
	free(buf);
	free(blks);
	arrays_free(&a);
	packer_free(&P);
	return err;
}
