/*
 * table.c - reading a lookup table in place: open and lookups.
 *
 * sym_table_open() checks the header in O(1): magic, format, byte order,
 * and that every array lies inside the buffer.  It does not walk the
 * arrays, because tables are opened for each lookup batch straight from
 * LMDB pages.  (The exceptions: compressed string blobs, format 8,
 * are found in the process's registry by comparing their area, zstr.c;
 * libjvm's two are 0.96 and 0.73 MB.  Packed arrays stored as columns,
 * format 9, are found there too, and built back into records by the
 * first open of the process that meets them, cols.c.)  Instead, every
 * index a lookup
 * follows (scope, parent, func, file, string, symbol kind) is
 * bounds-checked when it is used, and parent chains are cut after
 * SYM_MAX_FRAMES steps.  A corrupt table therefore yields wrong answers,
 * never an out-of-bounds read or a loop.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "internal.h"
#include "format.h"
#include "gnutext.h"
#include "put.h"
#include "base.h"


/* Does [off, off + n * elem) lie inside a table of @size bytes, with off
 * 8-byte aligned? */
static bool in_buf(size_t size, uint32_t off, uint64_t n, size_t elem)
{
	uint64_t end;

	if (off % 8)
		return false;
	if (__builtin_mul_overflow(n, (uint64_t)elem, &end) ||
	    __builtin_add_overflow(end, (uint64_t)off, &end))
		return false;
	return end <= size;
}

/* The layout of packed array @a of @nf fields into @v (all but v->p):
 * widths sane, unused fields 0. */
static bool view_layout(const struct symt_packed *a, unsigned nf,
			struct symt_view *v)
{
	uint32_t stride = 0;

	memset(v, 0, sizeof(*v));
	for (unsigned f = 0; f < SYMT_FIELDS; f++) {
		if (a->w[f] > SYMT_BMAX || (f >= nf && a->w[f]))
			return false;
		v->mask[f] = a->w[f] ? UINT32_MAX >> (32 - a->w[f]) : 0;
		v->at[f] = (uint8_t)(stride / 8);
		v->sh[f] = (uint8_t)(stride % 8);
		stride += a->w[f];
	}
	v->n = a->count;
	v->stride = (stride + 7) / 8;	/* records are whole bytes */
	return true;
}

/* Locate packed array @a of @nf fields: in the table, widths sane, room
 * for its records and the padding. */
static bool view_open(const char *p, size_t size, const struct symt_packed *a,
		      unsigned nf, struct symt_view *v)
{
	if (!view_layout(a, nf, v) || !in_buf(size, a->off, a->bytes, 1) ||
	    (uint64_t)a->bytes < (uint64_t)a->count * v->stride + SYMT_PAD)
		return false;
	v->p = (const uint8_t *)p + a->off;
	return true;
}

/* Is [off, off + n) of the table @p of @size bytes a string blob: inside
 * it, not empty, NUL first and last? */
static bool blob_ok(const char *p, uint32_t size, uint32_t off, uint32_t n)
{
	return in_buf(size, off, n, 1) && n && p[off] == '\0' &&
	       p[off + n - 1] == '\0';
}

/*
 * A string blob at @off of @size bytes, stored in @zbytes (0: plain)
 * in frames of 2^@shift: in the buffer when plain (a blob_ok()), else the
 * process's shared inflated copy (zstr.c), whose frame index
 * symi_zstr_get() checks.  0, -ENOMEM or -SYM_E_BADTABLE.
 */
static int blob_open(const struct sym_table *t, uint32_t off, uint32_t size,
		     uint32_t zbytes, uint32_t shift, struct symt_blob *b)
{
	int err;

	b->n = size;
	if (!zbytes) {
		if (!blob_ok(t->buf, t->h->size, off, size))
			return -SYM_E_BADTABLE;
		b->plain = t->buf + off;
		return 0;
	}
	if (!in_buf(t->h->size, off, zbytes, 1))
		return -SYM_E_BADTABLE;
	err = symi_zstr_get(t->buf + off, zbytes, size, shift, t->known,
			    &b->z);
	if (!err)	/* inflated whole by an earlier open */
		b->plain = __atomic_load_n(&b->z->whole, __ATOMIC_ACQUIRE);
	return err;
}

/* The block index's place: two plain arrays, or one column area at
 * off_bstart (format 9). */
static bool index_ok(const struct symt_header *h, uint64_t nb)
{
	if (h->zindex)
		return h->off_boff == 0 && h->off_bstart % 8 == 0 &&
		       in_buf(h->size, h->off_bstart, h->zindex, 1);
	return in_buf(h->size, h->off_bstart, nb, sizeof(uint32_t)) &&
	       in_buf(h->size, h->off_boff, nb, sizeof(uint32_t));
}

/* t->bstart and t->boff: in the buffer, or built back from columns. */
static int index_open(struct sym_table *t, uint64_t nb)
{
	static const uint8_t w[2] = { 32, 32 };
	const struct symt_header *h = t->h;
	struct symi_zstr **z = &t->zrec[SYMT_R_N];
	int err;

	if (!h->zindex) {
		t->bstart = (const uint32_t *)(t->buf + h->off_bstart);
		t->boff = (const uint32_t *)(t->buf + h->off_boff);
		return 0;
	}
	err = symi_zrec_get(t->buf + h->off_bstart, h->zindex, (uint32_t)nb,
			    2, w, SYMI_COLS_U32, t->known, z);
	if (err)
		return err;
	t->bstart = (const uint32_t *)(void *)(*z)->blob;
	t->boff = t->bstart + nb;
	return 0;
}

/* Packed array @r into its view: in the buffer, or built back from
 * columns (format 9), whose records must be the bytes the header says. */
static int rec_open(struct sym_table *t, int r)
{
	const struct symt_header *h = t->h;
	struct symi_zstr **z = &t->zrec[r];
	uint32_t zbytes = h->zrec[r];
	const struct symt_packed *a;
	struct symt_view *v;
	unsigned nf;
	int err;

	switch (r) {
	case SYMT_R_SCOPES:
		a = &h->scopes, v = &t->scopes, nf = SYMT_SC_N;
		break;
	case SYMT_R_FUNCS:
		a = &h->funcs, v = &t->funcs, nf = SYMT_FN_N;
		break;
	case SYMT_R_FILES:
		a = &h->files, v = &t->files, nf = SYMT_FI_N;
		break;
	case SYMT_R_SYMS:
		a = &h->syms, v = &t->syms, nf = SYMT_SY_N;
		break;
	case SYMT_R_SRANGES:
		a = &h->sranges, v = &t->sranges, nf = SYMT_SR_N;
		break;
	default:
		a = &h->skinds, v = &t->skinds, nf = SYMT_SK_N;
		break;
	}
	if (!zbytes)
		return view_open(t->buf, h->size, a, nf, v) ? 0 :
							  -SYM_E_BADTABLE;
	/* The layout first: nothing is built for a table refused by it. */
	if (!view_layout(a, nf, v) || !in_buf(h->size, a->off, zbytes, 1) ||
	    a->bytes != symi_cols_out_bytes(SYMI_COLS_ROWS, a->count, nf, a->w))
		return -SYM_E_BADTABLE;
	err = symi_zrec_get(t->buf + a->off, zbytes, a->count, nf, a->w,
			    SYMI_COLS_ROWS, t->known, z);
	if (err)
		return err;
	v->p = (const uint8_t *)(*z)->blob;
	if ((*z)->area) {
		/* Only the symbols' arrays are written in chunks: the
		 * lookups that read the others' records test nothing. */
		if (r != SYMT_R_SYMS && r != SYMT_R_SRANGES &&
		    r != SYMT_R_SKINDS)
			return -SYM_E_BADTABLE;
		v->lz = *z;
	}
	return 0;
}

int sym_table_open(const void *buf, size_t len, struct sym_table **out)
{
	return symi_table_open_known(buf, len, 0, out);
}

/* Is @h, at the start of @len bytes, a header of this format? */
static bool header_ok(const struct symt_header *h, size_t len)
{
	return len >= sizeof(*h) && memcmp(h->magic, SYMT_MAGIC, 8) == 0 &&
	       h->bom == SYMT_BOM && h->format == SYM_TABLE_FORMAT &&
	       h->size <= len && h->size >= sizeof(*h);
}

int symi_table_header_flags(const void *buf, size_t len, uint32_t *flags)
{
	struct symt_header h;

	*flags = 0;
	if (!buf || len < sizeof(h))
		return -SYM_E_BADTABLE;
	memcpy(&h, buf, sizeof(h));
	if (!header_ok(&h, len))
		return -SYM_E_BADTABLE;
	*flags = h.flags;
	return 0;
}

int symi_table_open_known(const void *buf, size_t len, uint64_t known,
			  struct sym_table **out)
{
	const struct symt_header *h = buf;
	struct sym_table *t;
	const char *p = buf;
	uint64_t nb;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!buf || ((uintptr_t)buf & 7))
		return -EINVAL;
	if (!header_ok(h, len))
		return -SYM_E_BADTABLE;
	nb = h->block_shift <= SYMT_SHIFT_MAX ?
	     ((uint64_t)h->n_ranges + (1u << h->block_shift) - 1) >>
		     h->block_shift : 0;
	if (h->block_shift > SYMT_SHIFT_MAX || h->n_blocks != nb ||
	    !index_ok(h, nb) ||
	    !in_buf(h->size, h->off_blocks, h->blocks_size, 1) ||
	    h->blocks_size < SYMT_PAD)
		return -SYM_E_BADTABLE;
	for (int j = 0; j < SYMT_BK_BASES; j++) {
		if (h->bw[j] > SYMT_WMAX)
			return -SYM_E_BADTABLE;
	}
	t = symi_calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->buf = p;
	t->len = h->size;
	t->h = h;
	t->known = known;
	t->blocks = (const uint8_t *)p + h->off_blocks;
	t->blocks_size = h->blocks_size;
	t->bhdr_bits = SYMT_BK_N * SYMT_BK_WBITS;
	for (int j = 0; j < SYMT_BK_BASES; j++)
		t->bhdr_bits += h->bw[j];
	/* Met again under the store's key, every area is found: one lock
	 * for all of them. */
	if (known)
		symi_zreg_hold();
	err = index_open(t, nb);
	for (int r = 0; r < SYMT_R_N && !err; r++)
		err = rec_open(t, r);
	if (!err)
		err = blob_open(t, h->off_strings, h->strings_size,
				h->strings_zbytes, h->strings_shift, &t->str);
	if (!err)
		err = blob_open(t, h->off_dstrings, h->dstrings_size,
				h->dstrings_zbytes, h->dstrings_shift,
				&t->dstr);
	symi_zreg_release();
	if (err) {
		sym_table_close(t);
		return err;
	}
	*out = t;
	return 0;
}

/* The table takes ownership of @buf (it was malloc()ed): internal. */
void symi_table_adopt(struct sym_table *t, void *buf)
{
	t->owned = buf;
}

void sym_table_close(struct sym_table *t)
{
	struct symi_zstr *z[SYMT_R_N + 3];
	size_t n = 0;

	if (!t)
		return;
	z[n++] = t->str.z;
	z[n++] = t->dstr.z;
	for (int r = 0; r <= SYMT_R_N; r++)
		z[n++] = t->zrec[r];
	symi_zstr_put_many(z, n);	/* one lock for all */
	free(t->owned);
	free(t);
}

void sym_table_data(const struct sym_table *t, const void **buf, size_t *len)
{
	if (buf)
		*buf = t ? t->buf : NULL;
	if (len)
		*len = t ? t->len : 0;
}

void sym_table_stat(const struct sym_table *t, struct sym_table_stat *st)
{
	const struct symt_header *h;

	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!t)
		return;
	h = t->h;
	st->size = h->size;
	st->base = h->base;
	st->start = h->start;
	st->end = h->end;
	st->ranges = h->n_ranges;
	st->scopes = t->scopes.n;
	st->funcs = t->funcs.n;
	st->files = t->files.n;
	st->symbols = t->syms.n;
	st->strings_size = h->strings_size + h->dstrings_size;
	st->flags = h->flags;
	st->converter = h->converter;
	st->elfutils = h->elfutils;
}

const char *sym_table_source_name(uint32_t flags)
{
	if (flags & SYM_TABLE_DWARF)
		return "dwarf";
	if (flags & SYM_TABLE_GOPCLNTAB)
		return "gopclntab";
	if (flags & SYM_TABLE_KALLSYMS)
		return "kallsyms";
	if (flags & SYM_TABLE_SYMBOLS)
		return "symtab";
	return "none";
}

uint32_t sym_converter_version(void)
{
	return SYMI_CONVERTER_VERSION;
}

/* (a * b) modulo the CRC-32 polynomial, in its reflected form (bit 31 is
 * x^0), as zlib's crc32_combine() computes it. */
static uint32_t crc_multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = (uint32_t)1 << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ 0xedb88320u : b >> 1;
	}
	return p;
}

uint32_t symi_crc32_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
	uint32_t p = (uint32_t)1 << 31;		/* x^0 */
	uint32_t x2n = (uint32_t)1 << 30;	/* x^(2^0) */

	/* x^(8 * len2) modulo p(x): the squares x^(2^k), k from 3 up, of
	 * the bits of len2. */
	for (int k = 0; k < 3; k++)
		x2n = crc_multmodp(x2n, x2n);
	for (; len2; len2 >>= 1) {
		if (len2 & 1)
			p = crc_multmodp(x2n, p);
		x2n = crc_multmodp(x2n, x2n);
	}
	return crc_multmodp(p, crc1) ^ crc2;
}

/* A table this big has its CRC's second half computed on a thread of
 * its own: the check reads every page (libjvm's 31 MB chunk: some 5 ms
 * of CRC and page faults, more when its pages are cold), and a lookup of
 * a few addresses waits for it. */
#define CRC_SPLIT_MIN ((size_t)8 << 20)

struct crc_half {
	const void *p;
	size_t len;
	uint32_t crc;
};

static void *crc_half_main(void *arg)
{
	struct crc_half *h = arg;

	h->crc = libdeflate_crc32(0, h->p, h->len);
	return NULL;
}

uint32_t symi_table_crc(const void *buf, size_t len)
{
	const size_t at = offsetof(struct symt_header, crc);
	static const uint32_t zero;
	struct crc_half h = { 0 };
	pthread_t tid;
	bool split = false;
	uint32_t crc;

	if (len < sizeof(struct symt_header))
		return 0;
	if (len >= CRC_SPLIT_MIN) {
		h.len = len / 2;
		h.p = (const char *)buf + (len - h.len);
		split = pthread_create(&tid, NULL, crc_half_main, &h) == 0;
		if (!split)
			h.len = 0;
	}
	crc = libdeflate_crc32(0, buf, at);
	crc = libdeflate_crc32(crc, &zero, sizeof(zero));
	crc = libdeflate_crc32(crc, (const char *)buf + at + 4,
			       len - h.len - at - 4);
	if (split) {
		pthread_join(tid, NULL);
		crc = symi_crc32_combine(crc, h.crc, h.len);
	}
	return crc;
}

/*
 * Decoding records.
 */

/* Index from a code field: 0 is none. */
static inline __attribute__((always_inline)) uint32_t uncode(uint32_t c)
{
	return c ? c - 1 : SYMT_NONE;
}

/* Scope @i, its parent as an index (a distance past @i is none, so a
 * chain always descends and cannot loop); with @call, or when it has a
 * parent, its call site (else none: the site is the parent frame's
 * place, and a frame without a parent needs none).  False if @i is out
 * of range. */
static inline __attribute__((always_inline)) bool
scope_read(const struct sym_table *t, uint32_t i, struct symt_scope *s,
	   bool call, bool entry)
{
	const struct symt_view *v = &t->scopes;
	uint32_t d;

	if (i >= v->n)
		return false;
	d = symt_get(v, i, SYMT_SC_PARENT);
	s->parent = d && d <= i ? i - d : SYMT_NONE;
	s->func = uncode(symt_get(v, i, SYMT_SC_FUNC));
	s->entry = entry ? uncode(symt_get(v, i, SYMT_SC_ENTRY)) : SYMT_NONE;
	s->flags = entry ? symt_get(v, i, SYMT_SC_FLAGS) : 0;
	s->call_file = SYMT_NONE;
	s->call_line = s->call_column = 0;
	if (call || s->parent != SYMT_NONE) {
		s->call_file = uncode(symt_get(v, i, SYMT_SC_CALL_FILE));
		s->call_line = symt_get(v, i, SYMT_SC_CALL_LINE);
		s->call_column = symt_get(v, i, SYMT_SC_CALL_COLUMN);
	}
	return true;
}

static inline __attribute__((always_inline)) bool
scope_get(const struct sym_table *t, uint32_t i, struct symt_scope *s)
{
	return scope_read(t, i, s, true, true);
}

/* scope_get() for a frame: the call site only when there is a parent;
 * the entry and flags (what SYM_OMIT_LLVM_ONLY leaves out) only without
 * @omit's bit (frame_entry()). */
static inline __attribute__((always_inline)) bool
scope_get_frame(const struct sym_table *t, uint32_t i, struct symt_scope *s,
		unsigned omit)
{
	return scope_read(t, i, s, false, !(omit & SYM_OMIT_LLVM_ONLY));
}

/* Whether a frame of @fn is SYM_FRAME_NO_LINKAGE: a DWARF name and no
 * linkage name, in a language that mangles names. */
static inline __attribute__((always_inline)) bool
func_no_linkage(const struct symt_func *fn)
{
	return fn->name && !fn->linkage && !(fn->flags & SYMT_FUNC_PLAIN);
}

/* The entry code frame_set() is given for scope @i of function @fn, read
 * as @s: without SYM_OMIT_LLVM_ONLY, the one scope_get_frame() read;
 * with it, none, but for a function GNU's output knows again by its
 * entry (tools/addr2line.c, struct gnu_seen). */
static inline __attribute__((always_inline)) uint32_t
frame_entry(const struct sym_table *t, uint32_t i,
	    const struct symt_scope *s, const struct symt_func *fn,
	    unsigned omit)
{
	if (!(omit & SYM_OMIT_LLVM_ONLY))
		return s->entry;
	if (!func_no_linkage(fn))
		return SYMT_NONE;
	return uncode(symt_get(&t->scopes, i, SYMT_SC_ENTRY));
}

/* Function @i; without what @omit (enum sym_frame_omit) drops from the
 * frames anyway: the peer names (outer and eu, set to 0), the demangled
 * name (0) and the declaration (decl_file none, decl_line 0), but for
 * the innermost frame (@inner): its line is coded against decl_line,
 * and its file may be decl_file. */
static inline __attribute__((always_inline)) bool
func_get_omit(const struct sym_table *t, uint32_t i, struct symt_func *f,
	      unsigned omit, bool inner)
{
	const struct symt_view *v = &t->funcs;
	bool peers = !(omit & SYM_OMIT_PEER_NAMES);
	bool decl = inner || !(omit & SYM_OMIT_DECL);

	if (i >= v->n)
		return false;
	f->name = symt_get(v, i, SYMT_FN_NAME);
	f->linkage = symt_get(v, i, SYMT_FN_LINKAGE);
	f->demangled = omit & SYM_OMIT_DEMANGLED ? 0 :
		       symt_get(v, i, SYMT_FN_DEMANGLED);
	f->decl_file = decl ? uncode(symt_get(v, i, SYMT_FN_DECL_FILE)) :
		       SYMT_NONE;
	f->decl_line = decl ? symt_get(v, i, SYMT_FN_DECL_LINE) : 0;
	f->outer = peers ? symt_get(v, i, SYMT_FN_OUTER) : 0;
	f->flags = symt_get(v, i, SYMT_FN_FLAGS);
	f->eu = peers ? symt_get(v, i, SYMT_FN_EU) : 0;
	return true;
}

static inline __attribute__((always_inline)) bool func_get(const struct sym_table *t, uint32_t i,
		     struct symt_func *f)
{
	return func_get_omit(t, i, f, 0, true);
}


/*
 * Whether record @i (< v->n) of @v may be read: in an array built a chunk
 * at a time (the symbols', format 10), its chunk is built first.  False
 * when the chunk is bad or memory is short: the record is then as good
 * as absent, never read as the zeros it holds.
 */
static inline __attribute__((always_inline)) bool
rec_ready(const struct symt_view *v, uint32_t i)
{
	struct symi_zstr *z = v->lz;
	unsigned r;

	if (!z)
		return true;
	r = __atomic_load_n(&z->ready[i >> z->shift], __ATOMIC_ACQUIRE);
	if (__builtin_expect(!r, 0))
		r = symi_zrec_fill(z, i >> z->shift);
	return r == 1;
}

/* Every chunk of @v built: 0, -ENOMEM, or -SYM_E_BADTABLE when one is
 * bad. */
static int rec_whole(const struct symt_view *v)
{
	int bad = v->lz ? symi_zrec_fill_all(v->lz) : 0;

	return bad > 0 ? -SYM_E_BADTABLE : bad;
}

static inline __attribute__((always_inline)) bool sym_get(const struct sym_table *t, uint32_t i,
		    struct symt_sym *s)
{
	const struct symt_view *v = &t->syms;
	uint32_t k;

	if (i >= v->n || !rec_ready(v, i))
		return false;
	s->addr = symt_get(v, i, SYMT_SY_ADDR);
	s->size = symt_get(v, i, SYMT_SY_SIZE);
	s->name = symt_get(v, i, SYMT_SY_NAME);
	s->demangled = symt_get(v, i, SYMT_SY_DEMANGLED);
	k = symt_get(v, i, SYMT_SY_KIND);
	s->file = s->flags = 0;	/* a kind out of range (corrupt): none */
	if (k < t->skinds.n && rec_ready(&t->skinds, k)) {
		s->file = symt_get(&t->skinds, k, SYMT_SK_FILE);
		s->flags = symt_get(&t->skinds, k, SYMT_SK_FLAGS);
	}
	return true;
}

/*
 * Decode block @b's header into @k.  A block whose bits do not fit its
 * area is decoded as empty (k->k = 0): no range of it answers.
 */
static void block_open(const struct sym_table *t, uint32_t b,
		       struct symi_block *k)
{
	const struct symt_header *h = t->h;
	uint64_t off = t->boff[b], pos = SYMT_BK_N * SYMT_BK_WBITS, bits, x;
	uint32_t n = 1u << h->block_shift;
	unsigned hb = t->bhdr_bits;

	k->b = b;
	k->k = 0;
	k->start = t->bstart[b];
	k->next = b + 1 < h->n_blocks ? t->bstart[b + 1] : UINT64_MAX;
	if (off + (hb + 7) / 8 + SYMT_PAD > t->blocks_size)
		return;
	k->p = t->blocks + off;
	/* The six 6-bit widths are the first 36 bits. */
	memcpy(&x, k->p, sizeof(x));
	x = le64toh(x);
#define W(j)                                                                 \
	do {                                                                 \
		k->w[j] = (uint8_t)((x >> ((j) * SYMT_BK_WBITS)) & 63);      \
		k->m[j] = ((uint64_t)1 << k->w[j]) - 1;                      \
	} while (0)
	W(0);
	W(1);
	W(2);
	W(3);
	W(4);
	W(5);
#undef W
	if (k->w[0] > SYMT_WMAX || k->w[1] > SYMT_WMAX ||
	    k->w[2] > SYMT_WMAX || k->w[3] > SYMT_WMAX ||
	    k->w[4] > SYMT_WMAX || k->w[5] > SYMT_WMAX)
		return;
	k->lbits = (uint32_t)k->w[1] + k->w[2] + k->w[3] + k->w[4] + k->w[5];
	k->sbase = (uint32_t)symt_bits(k->p, pos, h->bw[0]);
	pos += h->bw[0];
	k->fbase = (uint32_t)symt_bits(k->p, pos, h->bw[1]);
	pos += h->bw[1];
	x = symt_bits(k->p, pos, h->bw[2]);
	k->lbase = (int64_t)(x >> 1) ^ -(int64_t)(x & 1);
	pos += h->bw[2];
	k->cbase = (uint32_t)symt_bits(k->p, pos, h->bw[3]);
	pos += h->bw[3];
	k->dbase = (uint32_t)symt_bits(k->p, pos, h->bw[4]);
	pos += h->bw[4];
	k->slope = symt_bits(k->p, pos, h->bw[5]);
	pos += h->bw[5];
	x = symt_bits(k->p, pos, h->bw[6]);
	k->abase = (x >> 1) ^ (0 - (x & 1));
	if (h->n_ranges - ((uint64_t)b << h->block_shift) < n)
		n = h->n_ranges - (b << h->block_shift);
	bits = hb + (uint64_t)(n - 1) * k->w[SYMT_BK_ADDR] +
	       (uint64_t)n * k->lbits;
	if (off + (bits + 7) / 8 + SYMT_PAD > t->blocks_size)
		return;
	k->addr_at = hb;
	k->leaf_at = hb + (uint64_t)(n - 1) * k->w[SYMT_BK_ADDR];
	k->k = n;
}

/* Start of range @j >= 1 of block @k, relative to the block's start. */
static inline __attribute__((always_inline)) uint64_t block_addr1(const struct symi_block *k, uint32_t j)
{
	uint64_t pos = k->addr_at + (uint64_t)(j - 1) * k->w[SYMT_BK_ADDR], x;

	memcpy(&x, k->p + (pos >> 3), sizeof(x));
	return ((le64toh(x) >> (pos & 7)) & k->m[SYMT_BK_ADDR]) +
	       (((uint64_t)j * k->slope) >> SYMT_BK_SLOPE_SHIFT) + k->abase;
}

/* The raw codes of leaf @j of block @k: scope, file, line, column,
 * discriminator.  One load when the record fits in it (leaf records are
 * 20 to 30 bits). */
static inline __attribute__((always_inline)) void
leaf_codes(const struct symi_block *k, uint32_t j, uint64_t *c)
{
	uint64_t pos = k->leaf_at + (uint64_t)j * k->lbits, x;

	if ((pos & 7) + k->lbits <= 64) {
		memcpy(&x, k->p + (pos >> 3), sizeof(x));
		x = le64toh(x) >> (pos & 7);
		c[0] = x & k->m[SYMT_BK_SCOPE];
		x >>= k->w[SYMT_BK_SCOPE];
		c[1] = x & k->m[SYMT_BK_FILE];
		x >>= k->w[SYMT_BK_FILE];
		c[2] = x & k->m[SYMT_BK_LINE];
		x >>= k->w[SYMT_BK_LINE];
		c[3] = x & k->m[SYMT_BK_COLUMN];
		x >>= k->w[SYMT_BK_COLUMN];
		c[4] = x & k->m[SYMT_BK_DISC];
		return;
	}
	for (int f = 0; f < 5; f++) {
		c[f] = symt_bits(k->p, pos, k->w[SYMT_BK_SCOPE + f]);
		pos += k->w[SYMT_BK_SCOPE + f];
	}
}

/*
 * Leaf @j of block @k into @l.  Returns false for a hole.  When the leaf
 * has a scope, *@sc and (if it has one) *@fn are decoded too, and
 * *@have_sc, *@have_fn say so: the leaf's file and line are coded against
 * the function's declaration.
 */
static inline __attribute__((always_inline)) bool leaf_get(const struct sym_table *t, const struct symi_block *k,
		     uint32_t j, struct symt_leaf *l, struct symt_scope *sc,
		     bool *have_sc, struct symt_func *fn, bool *have_fn)
{
	uint64_t c[5];
	uint32_t decl_file = SYMT_NONE, decl_line = 0;

	*have_sc = *have_fn = false;
	leaf_codes(k, j, c);
	if (!c[0] && !c[1])
		return false;
	l->scope = c[0] ? k->sbase + (uint32_t)c[0] - 1 : SYMT_NONE;
	if (l->scope != SYMT_NONE && scope_get(t, l->scope, sc)) {
		*have_sc = true;
		if (func_get(t, sc->func, fn)) {
			*have_fn = true;
			decl_file = fn->decl_file;
			decl_line = fn->decl_line;
		}
	}
	l->file = c[1] == 0 ? SYMT_NONE : c[1] == 1 ? decl_file :
		  k->fbase + (uint32_t)c[1] - 2;
	l->line = (uint32_t)((int64_t)decl_line + k->lbase + (int64_t)c[2]);
	l->column = k->cbase + (uint32_t)c[3];
	l->discriminator = k->dbase + (uint32_t)c[4];
	return true;
}

#define IN(idx, n) ((idx) < (n))
#define IN_OR_NONE(idx, n) ((idx) == SYMT_NONE || (idx) < (n))

static const char *verify_ranges(const struct sym_table *t)
{
	const struct symt_header *h = t->h;
	struct symi_block k;

	for (uint32_t b = 0; b < h->n_blocks; b++) {
		uint64_t prev = 0, a, c[5];

		if (b && t->bstart[b] <= t->bstart[b - 1])
			return "ranges out of order";
		block_open(t, b, &k);
		if (!k.k)
			return "range block out of bounds";
		/* Range starts: ascending, below the next block's. */
		for (uint32_t j = 1; j < k.k; j++) {
			a = block_addr1(&k, j);
			if (a <= prev || a > UINT32_MAX)
				return "ranges out of order";
			prev = a;
		}
		if (k.start + prev >= k.next || k.start + prev > UINT32_MAX)
			return "ranges out of order";
		/* Scope and file indexes inside their arrays (a file coded
		 * 1 is the scope's function's, checked with the functions);
		 * one check for the block when its widths cannot reach past
		 * them, the usual case. */
		if (k.sbase + k.m[SYMT_BK_SCOPE] <= t->scopes.n &&
		    k.fbase + k.m[SYMT_BK_FILE] <= t->files.n + 1)
			continue;
		for (uint32_t j = 0; j < k.k; j++) {
			leaf_codes(&k, j, c);
			if ((c[0] && k.sbase + c[0] - 1 >= t->scopes.n) ||
			    (c[1] >= 2 && k.fbase + c[1] - 2 >= t->files.n))
				return "range leaf index out of bounds";
		}
	}
	return NULL;
}

/* String @off of either blob (NULL for 0 or out of range). */
static inline __attribute__((always_inline)) const char *str_at(const struct sym_table *t, uint32_t off)
{
	return symi_blob_at(&t->str, off);
}

static inline __attribute__((always_inline)) const char *dstr_at(const struct sym_table *t, uint32_t off)
{
	return symi_blob_at(&t->dstr, off);
}

int symi_table_check_crc(const struct sym_table *t)
{
	if (symi_table_crc(t->buf, t->len) == t->h->crc)
		return 0;
	symi_warn("table: checksum mismatch");
	return -SYM_E_BADTABLE;
}

/* The symbols' arrays built whole, the chunks' first keys checked
 * against their records: 0, -ENOMEM or -SYM_E_BADTABLE. */
static int lz_check(const struct sym_table *t)
{
	const struct symt_view *vs[] = { &t->syms, &t->sranges, &t->skinds };

	for (size_t j = 0; j < sizeof(vs) / sizeof(vs[0]); j++) {
		const struct symt_view *v = vs[j];
		int err = rec_whole(v);

		if (err)
			return err;
		for (uint32_t k = 0; v->lz && k < v->lz->nframes; k++) {
			if (symi_cols_first(v->lz->area, v->lz->nframes, k) !=
			    symt_get(v, k << v->lz->shift, 0))
				return -SYM_E_BADTABLE;
		}
	}
	return 0;
}

int sym_table_verify(const struct sym_table *t)
{
	const struct symt_header *h;
	const char *why = NULL;
	uint32_t i, ns, nd;
	uint64_t prev = 0;
	int err = 0;

	if (!t)
		return -EINVAL;
	h = t->h;
	ns = h->strings_size;
	nd = h->dstrings_size;
	if (symi_table_crc(t->buf, t->len) != h->crc)
		why = "checksum mismatch";
	else if (t->str.z && (err = symi_zstr_fill_all(t->str.z)) < 0)
		return err;
	else if (err > 0)
		why = "strings do not inflate";
	else if (t->dstr.z && (err = symi_zstr_fill_all(t->dstr.z)) < 0)
		return err;
	else if (err > 0)
		why = "demangled names do not inflate";
	if (!why)
		why = verify_ranges(t);
	for (i = 0; !why && i < t->scopes.n; i++) {
		const struct symt_view *v = &t->scopes;
		uint32_t d = symt_get(v, i, SYMT_SC_PARENT);

		/* Parents come before their children. */
		if (d > i || symt_get(v, i, SYMT_SC_FUNC) > t->funcs.n ||
		    symt_get(v, i, SYMT_SC_CALL_FILE) > t->files.n)
			why = "scope index out of bounds";
	}
	for (i = 0; !why && i < t->funcs.n; i++) {
		struct symt_func f;

		func_get(t, i, &f);
		if (!IN(f.name, ns) || !IN(f.linkage, ns) ||
		    !IN(f.demangled, nd) || !IN(f.outer, ns) || !IN(f.eu, ns) ||
		    !IN_OR_NONE(f.decl_file, t->files.n))
			why = "function index out of bounds";
	}
	for (i = 0; !why && i < t->files.n; i++) {
		uint32_t off = symt_get(&t->files, i, SYMT_FI_NAME);
		uint32_t rel = symt_get(&t->files, i, SYMT_FI_REL);

		if (!IN(off, ns))
			why = "file name out of bounds";
		else if (rel && rel >= (off ? strlen(str_at(t, off)) : 0))
			why = "file's relative path out of bounds";
	}
	if (!why) {
		err = lz_check(t);
		if (err == -ENOMEM)
			return err;
		if (err)
			why = "symbols do not inflate, or their chunks' keys "
			      "disagree";
	}
	for (i = 0; !why && i < t->skinds.n; i++) {
		if (!IN(symt_get(&t->skinds, i, SYMT_SK_FILE), ns))
			why = "symbol kind's file out of bounds";
	}
	for (i = 0; !why && i < t->syms.n; i++) {
		struct symt_sym s;

		if (!sym_get(t, i, &s))
			why = "symbol not built";	/* (whole above) */
		else if (i && s.addr < prev)
			why = "symbols out of order";
		else if (symt_get(&t->syms, i, SYMT_SY_KIND) >= t->skinds.n)
			why = "symbol kind index out of bounds";
		else if (!IN(s.name, ns) || !IN(s.demangled, nd) ||
			 !IN(s.file, ns))
			why = "symbol name out of bounds";
		else
			prev = s.addr;
	}
	for (i = 0; !why && i < t->sranges.n; i++) {
		uint32_t a = symt_get(&t->sranges, i, SYMT_SR_ADDR);

		if (i && a <= prev)
			why = "symbol ranges out of order";
		else if (symt_get(&t->sranges, i, SYMT_SR_SYM) > t->syms.n ||
			 symt_get(&t->sranges, i, SYMT_SR_GNU) > t->syms.n ||
			 symt_get(&t->sranges, i, SYMT_SR_LLVM) > t->syms.n)
			why = "symbol range index out of bounds";
		prev = a;
	}
	if (why) {
		symi_warn("table: %s", why);
		return -SYM_E_BADTABLE;
	}
	return 0;
}

/*
 * File @idx's whole path, and in *@rel how many of its bytes come before
 * its path relative to the compilation directory: 0 when that does not
 * fit the frame's 16 bits.  A corrupt rel still points inside the string
 * blob (which ends with NUL), so it can give a wrong tail, never a read
 * outside the table.
 */
/* str_at() given the strings' plain copy @sp, read once by the caller
 * (NULL while a compressed blob is not inflated whole: str_at()).  The
 * same pointer: plain is set once, to that copy. */
static inline __attribute__((always_inline)) const char *
str_sp(const struct sym_table *t, const char *sp, uint32_t off)
{
	if (!sp)
		return str_at(t, off);
	return off - 1 >= t->str.n - 1 ? NULL : sp + off;
}

/* File @idx's name, and in *@rel (NULL: not asked, as with
 * SYM_OMIT_LLVM_ONLY) where its relative part starts. */
static inline __attribute__((always_inline)) const char *
file_at_sp(const struct sym_table *t, const char *sp, uint32_t idx,
	   uint16_t *rel)
{
	uint32_t off, r;

	if (rel)
		*rel = 0;
	if (idx >= t->files.n)
		return NULL;
	off = symt_get(&t->files, idx, SYMT_FI_NAME);
	if (rel) {
		r = symt_get(&t->files, idx, SYMT_FI_REL);
		if (r <= UINT16_MAX && (uint64_t)off + r < t->str.n)
			*rel = (uint16_t)r;
	}
	return str_sp(t, sp, off);
}

static inline __attribute__((always_inline)) uint64_t entry_at(const struct sym_table *t, uint32_t off)
{
	return off == SYMT_NONE ? 0 : t->h->base + off;
}

/*
 * Index of the last element of the ascending array @v[@n] that is <= @key,
 * or -1.  Branch-free: the loop's only branch is its count, so unsorted
 * keys cost no mispredictions (after Khuong and Morin, "Array layouts for
 * comparison-based searching").
 */
static long last_le(const uint32_t *v, uint32_t n, uint32_t key)
{
	const uint32_t *base = v;

	if (!n || v[0] > key)
		return -1;
	while (n > 1) {
		uint32_t half = n / 2;

		base = base[half] <= key ? base + half : base;
		n -= half;
	}
	return base - v;
}

/* last_le() over field @f of the packed array @v. */
static long last_le_pk(const struct symt_view *v, unsigned f, uint32_t key)
{
	uint32_t pos = 0, n = v->n;

	if (!n || symt_get(v, 0, f) > key)
		return -1;
	while (n > 1) {
		uint32_t half = n / 2;

		pos = symt_get(v, pos + half, f) <= key ? pos + half : pos;
		n -= half;
	}
	return pos;
}

/*
 * Seeking forward in an ascending array: the last index i >= @from with
 * v[i] <= @key, given v[@from] <= @key.  Sorted lookups mostly move a few
 * entries, so the next SEEK_NEAR are compared at once, without branches;
 * beyond them, a gallop and a binary search.  GET(i) is v[i].
 */
#define SEEK_NEAR 4
#define SEEK(GET, n, from, key)						\
	({								\
		uint32_t i_ = (from), n_ = (n), c_ = 0, step_ = SEEK_NEAR; \
		for (uint32_t d_ = 1; d_ <= SEEK_NEAR; d_++)		\
			c_ += i_ + d_ < n_ && GET(i_ + d_) <= (key);	\
		i_ += c_;						\
		if (c_ == SEEK_NEAR) {					\
			while (i_ + step_ < n_ && GET(i_ + step_) <= (key)) { \
				i_ += step_;				\
				step_ *= 2;				\
			}						\
			/* The last <= key in [i_, i_ + step_). */	\
			for (uint32_t m_ = step_ < n_ - i_ ? step_ : n_ - i_; \
			     m_ > 1; m_ -= m_ / 2)			\
				i_ = GET(i_ + m_ / 2) <= (key) ? i_ + m_ / 2 : i_; \
		}							\
		i_;							\
	})

/* The cursor on symbol range @i, which starts at @lo and ends at @hi. */
static inline __attribute__((always_inline)) void
cover_set(const struct sym_table *t, struct symi_cursor *cur, uint32_t i,
	  uint64_t lo, uint64_t hi)
{
	const struct symt_view *v = &t->sranges;

	cur->si = i;
	cur->slo = lo;
	cur->shi = hi;
	cur->sym_i[SYMT_CH_EU] = uncode(symt_get(v, i, SYMT_SR_SYM));
	cur->sym_i[SYMT_CH_GNU] = uncode(symt_get(v, i, SYMT_SR_GNU));
	cur->sym_i[SYMT_CH_LLVM] = uncode(symt_get(v, i, SYMT_SR_LLVM));
	cur->have_sym = cur->sym_i[SYMT_CH_EU] < t->syms.n ||
			cur->sym_i[SYMT_CH_GNU] < t->syms.n ||
			cur->sym_i[SYMT_CH_LLVM] < t->syms.n;
}

/*
 * sym_cover() of symbol ranges built a chunk at a time: only the chunk
 * holding @off is built, found by the chunks' first keys, and a range's
 * end past its chunk is the next chunk's first key.  The next range of
 * the same chunk is tried first (sorted lookups).  False also when the
 * chunk is bad, or holds nothing at or below @off (an index that does
 * not agree with the records, which sym_table_verify() refuses).
 */
static bool sym_cover_lz(const struct sym_table *t, uint32_t off,
			 struct symi_cursor *cur)
{
	const struct symt_view *v = &t->sranges;
	const struct symi_zstr *z = v->lz;
	uint32_t nk = z->nframes, k = 0, n = nk, from, end, i;
	uint64_t hi;

#define FIRST(k) symi_cols_first(z->area, nk, (k))
#define SR(i) symt_get(v, (i), SYMT_SR_ADDR)
#define END(k) ((k) + 1 < nk ? (uint64_t)FIRST((k) + 1) : UINT64_MAX)
	if (cur->si != UINT32_MAX && off >= cur->shi && cur->si + 1 < v->n &&
	    ((cur->si + 1) >> z->shift) == (cur->si >> z->shift)) {
		/* The next range, in the chunk the cursor's is built in. */
		i = cur->si + 1;
		k = i >> z->shift;
		end = (k + 1) << z->shift < v->n ? (k + 1) << z->shift : v->n;
		hi = i + 1 < end ? SR(i + 1) : END(k);
		if (off < hi) {
			cover_set(t, cur, i, SR(i), hi);
			return cur->have_sym;
		}
	}
	if (!nk || FIRST(0) > off)
		return false;
	for (k = 0; n > 1;) {
		uint32_t half = n / 2;

		k = FIRST(k + half) <= off ? k + half : k;
		n -= half;
	}
	from = k << z->shift;
	if (!rec_ready(v, from) || SR(from) > off)
		return false;
	end = (k + 1) << z->shift < v->n ? (k + 1) << z->shift : v->n;
	i = from;
	for (n = end - from; n > 1; n -= n / 2)
		i = SR(i + n / 2) <= off ? i + n / 2 : i;
	cover_set(t, cur, i, SR(i), i + 1 < end ? SR(i + 1) : END(k));
	return cur->have_sym;
#undef END
#undef SR
#undef FIRST
}

/*
 * Is @off named by a symbol (chosen at build time)?  Its index is then
 * cur->sym_i.  The cursor keeps the symbol range of the last lookup and
 * its symbol: sorted lookups mostly stay in it or step to the next one
 * (libjvm's 100,000: 77% in it), else gallop forward; symi_table_ahead()
 * no longer guesses the range for them (it cost libjvm's run 8 M
 * instructions to save 1.5 M here).  Ranges built a chunk at a time
 * (format 10) are searched by sym_cover_lz().
 */
static inline __attribute__((always_inline)) bool
sym_cover(const struct sym_table *t, uint32_t off, struct symi_cursor *cur)
{
	const struct symt_view *v = &t->sranges;
	long i;

#define SR(i) symt_get(v, (i), SYMT_SR_ADDR)
	if (cur->si != UINT32_MAX && off >= cur->slo && off < cur->shi)
		goto done;
	if (v->lz)
		return sym_cover_lz(t, off, cur);
	if (cur->si != UINT32_MAX && off >= cur->shi &&
	    cur->si + 1 < v->n &&
	    (cur->si + 2 >= v->n ||
	     off < symt_get(v, cur->si + 2, SYMT_SR_ADDR)))
		i = cur->si + 1;
	else if (cur->si != UINT32_MAX && off >= cur->shi)
		/* Forward (sorted lookups): a gallop from the last range,
		 * not a search of the whole array. */
		i = SEEK(SR, v->n, cur->si, off);
	else
		i = last_le_pk(v, SYMT_SR_ADDR, off);
	if (i < 0)
		return false;
	cover_set(t, cur, (uint32_t)i, SR(i),
		  i + 1 < v->n ? SR(i + 1) : UINT64_MAX);
done:
	return cur->have_sym;
#undef SR
}

/*
 * The range of block @k holding @rel (relative to the block's start),
 * given that range @j starts at @jlo <= @rel; sets [*@lo, *@hi) to the
 * range's extent (*@hi = UINT64_MAX for the block's last range).  With
 * @scan (sorted lookups: the range is a few after @j), a gallop forward
 * first: ranges j + 1, j + 2, j + 4, ... until one starts past @rel.  Then
 * a branch-free binary search over what is left.
 */
static inline __attribute__((always_inline)) uint32_t
block_find(const struct symi_block *k, uint32_t j, uint64_t jlo,
	   uint32_t rel, bool scan, uint64_t *lo, uint64_t *hi)
{
	uint32_t end = k->k, n;
	uint64_t aend = UINT64_MAX;	/* where range end starts */

	if (scan) {
		for (uint32_t step = 1;; step *= 2) {
			uint64_t a;

			if (j + step >= k->k)
				break;
			a = block_addr1(k, j + step);
			if (a > rel) {
				end = j + step;
				aend = a;
				break;
			}
			j += step;
			jlo = a;
		}
	}
	n = end - j;
	while (n > 1) {
		uint32_t half = n / 2;
		uint64_t a = block_addr1(k, j + half);
		bool le = a <= rel;

		j = le ? j + half : j;
		jlo = le ? a : jlo;
		n -= half;
	}
	*lo = jlo;
	/* The next range's start: read already when it is @end. */
	*hi = j + 1 == end ? aend : block_addr1(k, j + 1);
	return j;
}

/*
 * Find the range holding @off: sets cur->j in cur->blk, or returns false.
 * The cursor keeps the block of the last lookup, its header decoded, and
 * the range found in it: sorted lookups mostly stay in that range, or
 * step a few ranges forward in the block, or into the next block.
 * Otherwise the block is found by a search of bstart (unless @hint, a
 * guess at it, is right), then the range by a search of the block's
 * address fields.
 */
static inline __attribute__((always_inline)) bool
range_find(const struct sym_table *t, uint32_t off, struct symi_cursor *cur,
	   uint32_t hint)
{
	struct symi_block *k = &cur->blk;
	uint32_t nb = t->h->n_blocks, j = 0;
	uint64_t jlo = 0, lo, hi;
	bool scan = false;

	if (k->b != UINT32_MAX && off >= k->start && off < k->next) {
		if (cur->j != UINT32_MAX && off >= cur->jlo) {
			if (off < cur->jhi)
				return true;
			j = cur->j + 1;		/* it starts at jhi <= off */
			jlo = cur->jhi - k->start;
			scan = true;
		}
	} else {
		long b;

		if (hint < nb && t->bstart[hint] <= off &&
		    (hint + 1 >= nb || off < t->bstart[hint + 1])) {
			b = hint;
		} else if (k->b != UINT32_MAX && off >= k->next) {
			/* Forward from the last block (sorted lookups):
			 * blocks b + 1, b + 2, b + 4, ... then a search
			 * between the last two. */
			uint32_t from = k->b + 1, step = 1;

			while (from + step < nb &&
			       t->bstart[from + step] <= off) {
				from += step;
				step *= 2;
			}
			b = from + last_le(t->bstart + from,
					   (from + step < nb ? from + step :
					    nb) - from, off);
			scan = b == k->b + 1;
		} else {
			b = last_le(t->bstart, nb, off);
		}
		cur->j = UINT32_MAX;
		if (b < 0)
			return false;
		block_open(t, (uint32_t)b, k);
	}
	cur->j = UINT32_MAX;
	if (!k->k || j >= k->k)
		return false;
	j = block_find(k, j, jlo, off - (uint32_t)k->start, scan, &lo, &hi);
	cur->j = j;
	cur->jlo = k->start + lo;
	cur->jhi = hi == UINT64_MAX ? k->next : k->start + hi;
	return true;
}

/* How far ahead symi_table_locate_keys() prefetches the hit it will
 * write (batch.c's SDIST). */
#define PREFETCH_HITS 8

/* The function of a scope that has none: no names, no declaration. */
static const struct symt_func no_func = { .decl_file = SYMT_NONE };

/* The symbols' fields of frame @f, none (frame_syms() sets them). */
static inline __attribute__((always_inline)) void
frame_no_symbols(struct sym_frame *f)
{
	f->symbol = NULL;
	f->symbol_addr = 0;
	f->symbol_size = 0;
	f->llvm_symbol = NULL;
	f->llvm_symbol_addr = 0;
	f->llvm_symbol_file = NULL;
	f->gnu_symbol = NULL;
	f->gnu_symbol_addr = 0;
}

/*
 * Fill frame @f field by field: from function @fn at @file:@line:@column
 * (discriminator @disc), entry @entry of a scope with enum
 * symt_scope_flags @sflags, no symbol, without the fields @omit (enum
 * sym_frame_omit) names.  Every field is written, so nothing is cleared
 * first (gcc turns a cleared frame into a slow `rep stos`); the
 * assertion makes a new field fail to build here.
 */
_Static_assert(sizeof(struct sym_frame) == 152, "frame_set() sets each field");
static inline __attribute__((always_inline)) void
frame_set(const struct sym_table *t, struct sym_frame *f,
	  const struct symt_func *fn, uint32_t file, uint32_t line,
	  uint32_t column, uint32_t disc, uint32_t entry, uint32_t sflags,
	  unsigned omit, const char *sp)
{

	f->name = str_sp(t, sp, fn->name);
	f->linkage_name = str_sp(t, sp, fn->linkage);
	f->demangled = omit & SYM_OMIT_DEMANGLED ? NULL :
		       dstr_at(t, fn->demangled);
	f->file = file_at_sp(t, sp, file, omit & SYM_OMIT_LLVM_ONLY ? NULL :
					  &f->file_rel);
	if (omit & SYM_OMIT_LLVM_ONLY)
		f->file_rel = 0;
	if (omit & SYM_OMIT_DECL) {
		f->decl_file = NULL;
		f->decl_file_rel = 0;
		f->decl_line = 0;
	} else {
		f->decl_file = file_at_sp(t, sp, fn->decl_file, &f->decl_file_rel);
		f->decl_line = fn->decl_line;
	}
	f->line = line;
	f->column = omit & SYM_OMIT_LLVM_ONLY ? 0 : column;
	f->discriminator = disc;
	f->entry = entry_at(t, entry);	/* frame_entry()'s */
	frame_no_symbols(f);
	f->flags = 0;
	if (omit & SYM_OMIT_PEER_NAMES) {
		f->outer = NULL;
		f->eu_name = NULL;
	} else {
		f->outer = str_sp(t, sp, fn->outer);
		f->eu_name = str_sp(t, sp, fn->eu);
	}
	if (func_no_linkage(fn))
		f->flags = SYM_FRAME_NO_LINKAGE;
	if ((fn->flags & SYMT_FUNC_DECL_CONST) && !(omit & SYM_OMIT_DECL))
		f->flags |= SYM_FRAME_DECL_CONST;
	if ((fn->flags & SYMT_FUNC_SPELLING) && !(omit & SYM_OMIT_DEMANGLED))
		f->flags |= SYM_FRAME_SPELLING;
	if ((sflags & SYMT_SCOPE_NO_LOW_PC) && !(omit & SYM_OMIT_LLVM_ONLY))
		f->flags |= SYM_FRAME_NO_LOW_PC;
}

/* The hit of range @j of block @k, as locate() makes it (hit->flags
 * zeroed before). */
static inline __attribute__((always_inline)) void
hit_leaf(const struct symi_block *k, uint32_t j, struct symi_hit *hit)
{
	uint64_t c[5];

	leaf_codes(k, j, c);
	/* A leaf with neither scope nor file is a hole.  Its file and line
	 * are completed by symi_table_frames() from the scope's function,
	 * as leaf_get() does. */
	if (c[0] || c[1]) {
		hit->flags = SYMI_HIT_LEAF |
			     (c[1] == 1 ? SYMI_HIT_DECL_FILE : 0);
		hit->scope = c[0] ? k->sbase + (uint32_t)c[0] - 1 : SYMT_NONE;
		hit->file = c[1] < 2 ? SYMT_NONE : k->fbase + (uint32_t)c[1] - 2;
		hit->line = (uint32_t)(k->lbase + (int64_t)c[2]);
		hit->column = k->cbase + (uint32_t)c[3];
		hit->disc = k->dbase + (uint32_t)c[4];
	}
}

/* The symbol part of a hit at @off, after its leaf; with @later (the
 * caller's omit has SYM_OMIT_SYMBOLS), a leaf's is left for
 * symi_table_frames() to look up if its frames need it
 * (SYMI_HIT_SYM_LATER): GNU's style mostly names every frame from DWARF,
 * and the symbol range changes every few addresses of a sorted batch, a
 * mispredicted branch and three fields each time.  Only the small tables'
 * sorted runs do so (symi_table_locate_keys()): the late lookup is a
 * search from scratch, which libjvm's C++ frames without linkage names
 * (10 to 20% of its addresses) would pay in cache misses (docs/bench.md,
 * "Symbols looked up late"). */
static inline __attribute__((always_inline)) void
hit_sym(const struct sym_table *t, uint32_t off, struct symi_cursor *cur,
	struct symi_hit *hit, uint32_t *syms, bool later)
{
	if (later && (hit->flags & SYMI_HIT_LEAF)) {
		hit->flags |= SYMI_HIT_SYM_LATER;
	} else if (t->sranges.n && sym_cover(t, off, cur)) {
		uint32_t *to = hit->flags & SYMI_HIT_LEAF ? syms :
			       hit->hole_sym;

		hit->flags |= SYMI_HIT_SYM;
		for (int ch = 0; ch < SYMT_CH_N; ch++)
			to[ch] = cur->sym_i[ch];
	}
}

/* *@out: @hit, of offset @off, with its symbol looked up now
 * (SYMI_HIT_SYM_LATER), a leaf's indices into @syms.  False when there is
 * none. */
static bool hit_sym_now(const struct sym_table *t, const struct symi_hit *hit,
			uint32_t off, struct symi_hit *out, uint32_t *syms)
{
	struct symi_cursor cur = SYMI_CURSOR_INIT;

	*out = *hit;
	out->flags &= ~(uint32_t)SYMI_HIT_SYM_LATER;
	hit_sym(t, off, &cur, out, syms, false);
	return out->flags & SYMI_HIT_SYM;
}

/* The hit of @addr, a leaf's symbols into @syms, or left for later with
 * @later (as hit_sym()). */
static inline __attribute__((always_inline)) bool
locate(const struct sym_table *t, uint64_t addr, struct symi_cursor *cur,
       const struct symi_ahead *hint, struct symi_hit *hit, uint32_t *syms,
       bool later)
{
	const struct symt_header *h = t->h;
	uint32_t off;

	hit->flags = 0;
	if (addr < h->base || addr - h->base >= UINT32_MAX)
		return false;
	off = (uint32_t)(addr - h->base);
	if (range_find(t, off, cur, hint ? hint->b : UINT32_MAX))
		hit_leaf(&cur->blk, cur->j, hit);
	hit_sym(t, off, cur, hit, syms, later);
	return hit->flags != 0;
}

bool symi_table_locate(const struct sym_table *t, uint64_t addr,
		       struct symi_cursor *cur, const struct symi_ahead *hint,
		       struct symi_hit *hit, uint32_t *syms)
{
	return locate(t, addr, cur, hint, hit, syms, false);
}

/*
 * Sorted keys, a block at a time (symi_table_locate_keys()): the starts
 * of the block's ranges decoded once into an array (biased for SSE2's
 * signed compares, with SORTED_AHEAD sentinels past the last), and each
 * key's range found by counting, with no branch, how many of the next
 * SORTED_AHEAD starts it has passed.  The search range_find() makes for
 * one address at a time (a gallop forward, then a binary search) took a
 * mispredicted branch or two for each key.
 */
#define SORTED_AHEAD 16
#define SORTED_BIAS 0x80000000u

struct sorted_block {
	uint32_t j;		/* the range of the last key; UINT32_MAX:
				 * the starts are not decoded */
	/* st[j], for 1 <= j < k, the start of range j (range 0 starts
	 * the block), then SORTED_AHEAD sentinels. */
	uint32_t st[(1u << SYMT_SHIFT_MAX) + SORTED_AHEAD];
};

/* Decode the starts of block @k's ranges into @sb->st. */
static void sorted_open(const struct symi_block *k, struct sorted_block *sb)
{
	uint32_t j;

	for (j = 1; j < k->k; j++)
		sb->st[j] = (uint32_t)block_addr1(k, j) ^ SORTED_BIAS;
	for (; j < k->k + SORTED_AHEAD; j++)
		sb->st[j] = UINT32_MAX ^ SORTED_BIAS;
}

/* How many of the SORTED_AHEAD starts at @st are <= @rel (biased). */
static inline __attribute__((always_inline)) unsigned
sorted_count(const uint32_t *st, uint32_t rel)
{
#ifdef __SSE2__
	const __m128i key = _mm_set1_epi32((int)rel);
	const __m128i *p = (const __m128i *)(const void *)st;
	unsigned gt = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
			      _mm_cmpgt_epi32(_mm_loadu_si128(p), key))) |
		      (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
			      _mm_cmpgt_epi32(_mm_loadu_si128(p + 1), key)))
			      << 4 |
		      (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
			      _mm_cmpgt_epi32(_mm_loadu_si128(p + 2), key)))
			      << 8 |
		      (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
			      _mm_cmpgt_epi32(_mm_loadu_si128(p + 3), key)))
			      << 12;

	/* The starts climb, so the lanes past @rel are the last ones:
	 * those before the first of them are the count (no popcount,
	 * which x86-64's baseline lacks: a call to libgcc). */
	return (unsigned)__builtin_ctz(gt | 1u << SORTED_AHEAD);
#else
	unsigned n = 0;

	for (unsigned i = 0; i < SORTED_AHEAD; i++)
		n += (int32_t)st[i] <= (int32_t)rel;
	return n;
#endif
}

/* locate() for @off at or past the last key's, the block's starts in @sb
 * (sb->j valid when cur->blk is the block they were decoded from). */
static inline __attribute__((always_inline)) bool
locate_sorted(const struct sym_table *t, uint32_t off,
	      struct symi_cursor *cur, struct sorted_block *sb,
	      struct symi_hit *hit, uint32_t *syms, bool later)
{
	struct symi_block *k = &cur->blk;
	uint32_t j, c, rel;

	hit->flags = 0;
	if (k->b == UINT32_MAX || off >= k->next || off < k->start) {
		/* Another block: range_find() opens it. */
		sb->j = UINT32_MAX;
		if (range_find(t, off, cur, UINT32_MAX)) {
			sorted_open(k, sb);
			sb->j = cur->j;
			hit_leaf(k, sb->j, hit);
		}
	} else if (sb->j == UINT32_MAX) {
		/* The block's starts are not decoded (a broken block, or
		 * the cursor came from elsewhere). */
		if (range_find(t, off, cur, UINT32_MAX))
			hit_leaf(k, cur->j, hit);
	} else {
		rel = (uint32_t)(off - k->start) ^ SORTED_BIAS;
		j = sb->j;
		while ((c = sorted_count(sb->st + j + 1, rel)) ==
		       SORTED_AHEAD)
			j += SORTED_AHEAD;
		sb->j = j + c;
		hit_leaf(k, sb->j, hit);
	}
	hit_sym(t, off, cur, hit, syms, later);
	return hit->flags != 0;
}

/* What GNU's text of a hit in leaf scope @s needs besides the hit
 * (SYMI_HIT_GNU), when its chain is one frame named from DWARF as bfd
 * names it (gnu_walk() for one frame): the name's string offset (0:
 * none), the function's declaration file and line.  False for any other
 * scope.  gnu_walk()'s tests for one frame, written out: the walk itself
 * (as gnu_chain() makes it) cost python3.11d's 18,449 runs 1.0 M
 * instructions more. */
struct gnu_scope {
	uint32_t name, decl_file, decl_line;
};

/* The name gnu_text_one() prints for @fn, as a string offset (0: none):
 * str_sp()'s test, made once. */
static inline __attribute__((always_inline)) uint32_t
gnu_name(const struct sym_table *t, const struct symt_func *fn)
{
	return fn->linkage - 1 < t->str.n - 1 ? fn->linkage :
	       fn->name - 1 < t->str.n - 1 ? fn->name : 0;
}

static bool gnu_scope(const struct sym_table *t, uint32_t s,
		      struct gnu_scope *g)
{
	struct symt_scope sc;
	struct symt_func fn;

	if (s == SYMT_NONE || !scope_get_frame(t, s, &sc, SYMI_OMIT_ALL) ||
	    sc.parent != SYMT_NONE ||
	    !func_get_omit(t, sc.func, &fn, SYMI_OMIT_ALL, true) ||
	    func_no_linkage(&fn) || !(fn.name || fn.linkage))
		return false;
	g->name = gnu_name(t, &fn);
	g->decl_file = fn.decl_file;
	g->decl_line = fn.decl_line;
	return true;
}

/* gnu_chain() of scope @s into @ch (a GNU_CHAIN hit's frames, internal.h),
 * its innermost function's declaration into @g; where they start, or
 * UINT32_MAX when its GNU text is not a chain of frames all named from
 * DWARF, or @ch has no room. */
static uint32_t gnu_chain(const struct sym_table *t, uint32_t s,
			  struct symi_gnu_chains *ch, struct gnu_scope *g);

void symi_table_hit_plain(const struct sym_table *t,
			  const struct symi_hit *hit, struct symi_hit *out)
{
	const uint32_t gnu = SYMI_HIT_GNU | SYMI_HIT_GNU_CHAIN;
	struct symt_scope sc;
	struct symt_func fn;

	*out = *hit;
	if (!(hit->flags & gnu))
		return;
	out->flags &= ~gnu;
	out->column = 0;	/* GNU's style prints none */
	/* The scope's function is the one its line was made whole from;
	 * with SYMI_HIT_DECL_FILE its file is the function's either way. */
	if (scope_get_frame(t, hit->scope, &sc, SYMI_OMIT_ALL) &&
	    func_get_omit(t, sc.func, &fn, SYMI_OMIT_ALL, true))
		out->line -= fn.decl_line;
}

/* symi_table_locate_keys(), compiled for @later a constant. */
static inline __attribute__((always_inline)) size_t
locate_keys(const struct sym_table *t, struct symi_cursor *cur,
	    const uint64_t *keys, size_t n, unsigned ibits, uint64_t min,
	    uint64_t end, uint32_t tab, struct symi_hit *hits, uint32_t *syms,
	    size_t *runs, bool later, bool gnu, struct symi_gnu_chains *chains)
{
	uint64_t imask = ((uint64_t)1 << ibits) - 1;
	const struct symt_header *h = t->h;
	struct sorted_block sb;
	uint32_t last = UINT32_MAX;
	struct gnu_scope g = { 0 };
	uint32_t gflag = 0, gcol = 0;
	size_t k, r = 0;

	/* The cursor's block, if any, is decoded again on its first key. */
	cur->blk.b = UINT32_MAX;
	cur->j = UINT32_MAX;
	sb.j = UINT32_MAX;
	for (k = 0; k < n; k++) {
		uint64_t addr = min + (keys[k] >> ibits);
		struct symi_hit *hh = &hits[keys[k] & imask];

		if (addr >= end)
			break;
		/* The hits are written in no order: ask for the line
		 * early. */
		if (k + PREFETCH_HITS < n)
			__builtin_prefetch(&hits[keys[k + PREFETCH_HITS] &
						 imask], 1);
		if (addr < h->base || addr - h->base >= UINT32_MAX) {
			hh->flags = 0;
			continue;
		}
		if (locate_sorted(t, (uint32_t)(addr - h->base), cur, &sb,
				  hh, later ? NULL :
				  syms + SYMT_CH_N * (keys[k] & imask),
				  later)) {
			uint32_t s = hh->flags & SYMI_HIT_LEAF ? hh->scope :
				     SYMT_NONE;

			hh->flags |= tab << SYMI_HIT_TAB_SHIFT;
			/* Once a run of one scope, in address order. */
			if (gnu && s != last) {
				gflag = 0;
				if (gnu_scope(t, s, &g)) {
					gflag = SYMI_HIT_GNU;
					gcol = g.name;
				} else if (chains) {
					gcol = gnu_chain(t, s, chains, &g);
					if (gcol != UINT32_MAX)
						gflag = SYMI_HIT_GNU_CHAIN;
				}
			}
			if (gnu && gflag) {
				hh->flags |= gflag;
				hh->column = gcol;
				hh->line += g.decl_line;
				if (hh->flags & SYMI_HIT_DECL_FILE)
					hh->file = g.decl_file;
			}
			r += s != last;
			last = s;
		}
	}
	/* The range the cursor keeps is range_find()'s, not the last
	 * key's: forgotten, so that no later search starts from it. */
	cur->j = UINT32_MAX;
	*runs += r;
	return k;
}

size_t symi_table_locate_keys(const struct sym_table *t,
			      struct symi_cursor *cur, const uint64_t *keys,
			      size_t n, unsigned ibits, uint64_t min,
			      uint64_t end, uint32_t tab, unsigned omit,
			      struct symi_hit *hits, uint32_t *syms,
			      size_t *runs, bool gnu,
			      struct symi_gnu_chains *chains)
{
	if (omit == SYMI_OMIT_ALL && gnu)
		return locate_keys(t, cur, keys, n, ibits, min, end, tab,
				   hits, NULL, runs, true, true, chains);
	if (omit & SYM_OMIT_SYMBOLS)
		return locate_keys(t, cur, keys, n, ibits, min, end, tab,
				   hits, NULL, runs, true, false, NULL);
	return locate_keys(t, cur, keys, n, ibits, min, end, tab, hits,
			   syms, runs, false, false, NULL);
}

void symi_table_ahead(const struct sym_table *t, uint64_t addr,
		      struct symi_ahead *a)
{
	const struct symt_header *h = t->h;
	const uint32_t *bs = t->bstart;
	uint32_t off, nb = h->n_blocks, b = a->b;
	long r;

	if (addr < h->base || addr - h->base >= UINT32_MAX)
		return;
	off = (uint32_t)(addr - h->base);
#define BS(i) bs[i]
	if (b < nb && bs[b] <= off) {
		b = SEEK(BS, nb, b, off);
	} else {
		r = last_le(bs, nb, off);
		b = r < 0 ? UINT32_MAX : (uint32_t)r;
	}
	if (b != a->b && b < nb && t->boff[b] < t->blocks_size) {
		/* The whole block (a header, address fields and leaves: 4
		 * or 5 cache lines on libjvm), at most 8 lines of it, inside
		 * the block area whatever boff says. */
		uint64_t from = t->boff[b], to = b + 1 < nb ? t->boff[b + 1] :
				t->blocks_size;

		if (to > t->blocks_size || to < from + 1)
			to = from + 1;
		if (to > from + 512)
			to = from + 512;
		for (uint64_t o = from & ~(uint64_t)63; o < to; o += 64)
			__builtin_prefetch(t->blocks + o);
	}
	a->b = b;
#undef BS
}

/*
 * The outermost frame @f gets the symbols: eu-addr2line's (@symbol),
 * llvm-symbolizer's (@llvm_symbol), and GNU addr2line's, which names the
 * frame when DWARF does not (no function, or no linkage name in a
 * language that mangles names).  Without GNU's, a frame with no DWARF
 * function is named after eu's (SYM_FRAME_NAME_OTHER).
 */
static inline __attribute__((always_inline)) void
frame_syms(const struct sym_table *t, const uint32_t *si,
	   const struct symt_func *fn, struct sym_frame *f, unsigned omit,
	   const char *sp)
{
	bool dem = !(omit & SYM_OMIT_DEMANGLED);
	const struct symt_header *h = t->h;
	struct symt_sym eu, gnu, ll;
	const struct symt_sym *nm = NULL;
	bool have_eu = sym_get(t, si[SYMT_CH_EU], &eu);
	bool have_gnu, have_ll;

	/* The peers mostly choose the same symbol: decoded once. */
	if (si[SYMT_CH_GNU] == si[SYMT_CH_EU]) {
		gnu = eu;
		have_gnu = have_eu;
	} else {
		have_gnu = sym_get(t, si[SYMT_CH_GNU], &gnu);
	}
	if (si[SYMT_CH_LLVM] == si[SYMT_CH_EU]) {
		ll = eu;
		have_ll = have_eu;
	} else if (si[SYMT_CH_LLVM] == si[SYMT_CH_GNU]) {
		ll = gnu;
		have_ll = have_gnu;
	} else {
		have_ll = sym_get(t, si[SYMT_CH_LLVM], &ll);
	}
	if (have_eu) {
		f->symbol = str_sp(t, sp, eu.name);
		f->symbol_addr = h->base + eu.addr;
		f->symbol_size = eu.size;
		if (eu.flags & SYMI_SYM_OBJECT)
			f->flags |= SYM_FRAME_SYMBOL_OBJECT;
		if (eu.flags & SYMI_SYM_PLT)
			f->flags |= SYM_FRAME_PLT;
	}
	if (have_ll) {
		f->llvm_symbol = str_sp(t, sp, ll.name);
		f->llvm_symbol_addr = h->base + ll.addr;
		f->llvm_symbol_file = str_sp(t, sp, ll.file);
	}
	if (have_gnu) {
		f->gnu_symbol = str_sp(t, sp, gnu.name);
		f->gnu_symbol_addr = h->base + gnu.addr;
		if (gnu.flags & SYMI_SYM_PLT)
			f->flags |= SYM_FRAME_PLT;
	}
	if (f->name || f->linkage_name) {
		/* A DWARF function: its linkage name, or for C the name. */
		if (f->linkage_name || (fn->flags & SYMT_FUNC_PLAIN) ||
		    !have_gnu)
			return;
		f->linkage_name = str_sp(t, sp, gnu.name);
		f->demangled = dem ? dstr_at(t, gnu.demangled) : NULL;
		f->flags |= SYM_FRAME_NAME_SYMTAB;
		f->flags &= ~(uint32_t)SYM_FRAME_SPELLING;
		if (dem && (gnu.flags & SYMI_SYM_SPELLING))
			f->flags |= SYM_FRAME_SPELLING;
		return;
	}
	if (have_gnu) {
		nm = &gnu;
	} else if (have_eu) {
		nm = &eu;
		f->flags |= SYM_FRAME_NAME_OTHER;
	} else {
		return;
	}
	if (nm->flags & SYMI_SYM_PLT)
		f->flags |= SYM_FRAME_PLT;
	if (nm->demangled) {
		f->linkage_name = str_sp(t, sp, nm->name);
		f->demangled = dem ? dstr_at(t, nm->demangled) : NULL;
		if (dem && (nm->flags & SYMI_SYM_SPELLING))
			f->flags |= SYM_FRAME_SPELLING;
	}
	f->name = str_sp(t, sp, nm->name);
	f->entry = omit & SYM_OMIT_LLVM_ONLY ? 0 : h->base + nm->addr;
	f->flags |= SYM_FRAME_SYMTAB;
	if (!f->file && nm->file) {
		f->file = str_sp(t, sp, nm->file);
		f->flags |= SYM_FRAME_FILE_SYMTAB;
	}
}

const char *sym_frame_name(const struct sym_frame *f)
{
	if ((f->flags & SYM_FRAME_SYMTAB) && !f->symbol)
		return NULL;
	if (f->demangled)
		return f->demangled;
	if ((f->flags & SYM_FRAME_NAME_SYMTAB) && f->linkage_name)
		return f->linkage_name;
	return f->name ? f->name : f->linkage_name;
}

/*
 * Whether frames @fr[@n], the outermost of function @outer, are all named
 * from DWARF as GNU addr2line names them (SYM_OMIT_SYMBOLS): frame_syms()
 * would only add the symbols, which its output does not read then.  The
 * outermost needs a function; a name without a linkage name in a
 * language that mangles is SYM_FRAME_NO_LINKAGE's, on that frame too.
 */
static inline __attribute__((always_inline)) bool
named_all(const struct sym_frame *fr, size_t n, const struct symt_func *outer)
{
	if (!outer->linkage && !outer->name)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (fr[i].flags & SYM_FRAME_NO_LINKAGE)
			return false;
	}
	return true;
}

/* symi_table_frames(), and in *@decl_line the decl_line of the innermost
 * frame's function (0 without one), which its line is coded against; *@late
 * says whether the symbol of a SYMI_HIT_SYM_LATER hit was looked up (the
 * frames depend on it then). */
static inline __attribute__((always_inline)) size_t
frames_of(const struct sym_table *t, const struct symi_hit *hit,
	  const uint32_t *syms, uint64_t addr, struct sym_frame *fr,
	  size_t max, unsigned omit, const char *sp, uint32_t *decl_line,
	  bool *late)
{
	struct symt_scope sc = { 0 };	/* set when have_sc */
	struct symt_func fn = no_func, outer_fn = no_func;
	bool have_leaf = hit->flags & SYMI_HIT_LEAF, have_sc = false;
	bool have_sym = hit->flags & SYMI_HIT_SYM;
	bool later = hit->flags & SYMI_HIT_SYM_LATER;
	struct symi_hit now;
	uint32_t now_syms[SYMT_CH_N];
	size_t n = 0, steps = 0;

	*decl_line = 0;
	*late = false;
	if (!have_leaf && !have_sym)
		return 0;
	if (have_leaf && hit->scope != SYMT_NONE &&
	    scope_get_frame(t, hit->scope, &sc, omit)) {
		have_sc = true;
		if (!func_get_omit(t, sc.func, &fn, omit, true))
			fn = no_func;
	}
	/* Without a function, decl_file is none and decl_line 0. */
	*decl_line = fn.decl_line;
	if (have_leaf)
		frame_set(t, &fr[0], &fn,
			  hit->flags & SYMI_HIT_DECL_FILE ? fn.decl_file :
							    hit->file,
			  fn.decl_line + hit->line, hit->column, hit->disc,
			  have_sc ? frame_entry(t, hit->scope, &sc, &fn, omit) :
				    SYMT_NONE,
			  have_sc ? sc.flags : 0, omit, sp);
	else
		frame_set(t, &fr[0], &no_func, SYMT_NONE, 0, 0, 0, SYMT_NONE,
			  0, omit, sp);
	n = 1;
	outer_fn = fn;
	if (have_sc) {
		/* Walk up the inline chain: each caller frame's location is
		 * the call site recorded in its callee's scope. */
		while (sc.parent != SYMT_NONE && steps++ < SYM_MAX_FRAMES) {
			struct symt_scope up;

			uint32_t ui = sc.parent;

			if (!scope_get_frame(t, ui, &up, omit))
				break;
			fr[n - 1].flags |= SYM_FRAME_INLINED;
			if (n == max) {
				fr[n - 1].flags |= SYM_FRAME_TRUNCATED;
				break;
			}
			if (!func_get_omit(t, up.func, &fn, omit, false))
				fn = no_func;
			outer_fn = fn;
			frame_set(t, &fr[n++], &fn, sc.call_file, sc.call_line,
				  sc.call_column, 0,
				  frame_entry(t, ui, &up, &fn, omit), up.flags,
				  omit, sp);
			sc = up;
		}
	}
	/* The symbols belong to the outermost frame; a cut chain has
	 * none.  A symbol left for later is looked up now if they are
	 * read. */
	if ((have_sym || later) && !(fr[n - 1].flags & SYM_FRAME_TRUNCATED) &&
	    !((omit & SYM_OMIT_SYMBOLS) && named_all(fr, n, &outer_fn))) {
		if (later) {
			/* Located at @addr: an offset from base. */
			*late = true;
			have_sym = hit_sym_now(t, hit,
					       (uint32_t)(addr - t->h->base),
					       &now, now_syms);
			hit = &now;
			syms = now_syms;
		}
		if (have_sym)
			frame_syms(t, symi_hit_syms(hit, syms), &outer_fn,
				   &fr[n - 1], omit, sp);
	}
	/* A frame only llvm-symbolizer names (its _init running on) is
	 * still an answer: its outputs name it. */
	return n;
}

/*
 * frame_set() under SYMI_OMIT_ALL for a function @fn that is named from
 * DWARF as bfd names it (not func_no_linkage()), in two parts.  Its entry
 * is not kept then (frame_entry()), and SYMI_OMIT_ALL drops every flag
 * frame_set() would set, so only the names, the file, the line and the
 * discriminator are the frame's own (frame_gnu_own()); the rest is the
 * same for every such frame (frame_gnu_fixed()), written once for each
 * of a run's frames (python3.11d's 100,000 warm addresses, callgrind:
 * 100.2 M instructions through frames_of(), 98.4 M through frames_gnu()
 * with every field written for each frame, 96.9 M so).
 */
_Static_assert(sizeof(struct sym_frame) == 152,
	       "frame_gnu_fixed() and frame_gnu_own() set each field");
static inline __attribute__((always_inline)) void
frame_gnu_fixed(struct sym_frame *f)
{
	f->demangled = NULL;
	f->decl_file = NULL;
	f->column = 0;
	f->decl_line = 0;
	f->entry = 0;
	frame_no_symbols(f);
	f->file_rel = 0;
	f->decl_file_rel = 0;
	f->outer = NULL;
	f->eu_name = NULL;
}

static inline __attribute__((always_inline)) void
frame_gnu_own(const struct sym_table *t, struct sym_frame *f,
	      const struct symt_func *fn, uint32_t file, uint32_t line,
	      uint32_t disc, const char *sp)
{
	f->name = str_sp(t, sp, fn->name);
	f->linkage_name = str_sp(t, sp, fn->linkage);
	f->file = file_at_sp(t, sp, file, NULL);
	f->line = line;
	f->discriminator = disc;
	f->flags = 0;
}

/* Frame @j of a run's @fr, of which [0, *@fixed) have frame_gnu_fixed()'s
 * fields already. */
static inline __attribute__((always_inline)) void
frame_gnu(const struct sym_table *t, struct sym_frame *fr, size_t j,
	  size_t *fixed, const struct symt_func *fn, uint32_t file,
	  uint32_t line, uint32_t disc, const char *sp)
{
	if (j >= *fixed) {
		frame_gnu_fixed(&fr[j]);
		*fixed = j + 1;
	}
	frame_gnu_own(t, &fr[j], fn, file, line, disc, sp);
}

/* One frame of gnu_walk(): @j, innermost first, of function @fn at
 * @file:@line.  False stops the walk. */
typedef bool (*gnu_frame_fn)(void *c, size_t j, const struct symt_func *fn,
			     uint32_t file, uint32_t line);

/*
 * gnu_walk() - the frames of @hit as frames_of() makes them with @omit
 * SYMI_OMIT_ALL (the GNU style's), for its common answer: a leaf in a
 * scope whose functions are all named from DWARF as bfd names them, so
 * that no symbol is read (named_all()).  Each frame goes to @emit (an
 * inlined constant: frames_gnu(), gnu_text()), with none of frames_of()'s
 * tests for the other answers: no symbols, no entries, no flags.  In
 * *@n the frames, and *@cut says whether the chain was cut at @max (the
 * last frame's SYM_FRAME_TRUNCATED).  False, having emitted some frames
 * perhaps, for any other hit (or when @emit said stop): frames_of()'s.
 */
static inline __attribute__((always_inline)) bool
gnu_walk(const struct sym_table *t, const struct symi_hit *hit, size_t max,
	 gnu_frame_fn emit, void *c, size_t *n, bool *cut)
{
	struct symt_scope sc;
	struct symt_func fn;
	size_t k = 1, steps = 0;

	*cut = false;
	if (!(hit->flags & SYMI_HIT_LEAF) ||
	    !scope_get_frame(t, hit->scope, &sc, SYMI_OMIT_ALL) ||
	    !func_get_omit(t, sc.func, &fn, SYMI_OMIT_ALL, true) ||
	    func_no_linkage(&fn) ||
	    !emit(c, 0, &fn,
		  hit->flags & SYMI_HIT_DECL_FILE ? fn.decl_file : hit->file,
		  fn.decl_line + hit->line))
		return false;
	while (sc.parent != SYMT_NONE && steps++ < SYM_MAX_FRAMES) {
		struct symt_scope up;

		if (!scope_get_frame(t, sc.parent, &up, SYMI_OMIT_ALL))
			break;
		if (k == max) {
			*cut = true;
			break;
		}
		if (!func_get_omit(t, up.func, &fn, SYMI_OMIT_ALL, false))
			fn = no_func;
		if (func_no_linkage(&fn) ||
		    !emit(c, k++, &fn, sc.call_file, sc.call_line))
			return false;
		sc = up;
	}
	/* The outermost names the answer (named_all()). */
	*n = k;
	return fn.name || fn.linkage;
}

struct gnu_chain_run {
	const struct sym_table *t;
	struct symi_gnu_chains *ch;
	struct gnu_scope *g;
	uint32_t at;		/* where the chain's next frame goes */
};

static inline __attribute__((always_inline)) bool
gnu_chain_one(void *c, size_t j, const struct symt_func *fn, uint32_t file,
	      uint32_t line)
{
	struct gnu_chain_run *r = c;
	uint32_t *v = r->ch->v;

	if (!j) {
		/* The innermost: its file and line are each hit's. */
		v[r->at - 1] = gnu_name(r->t, fn);
		r->g->decl_file = fn->decl_file;
		r->g->decl_line = fn->decl_line;
		return true;
	}
	if (r->ch->cap - r->at < 3)
		return false;
	v[r->at] = gnu_name(r->t, fn);
	v[r->at + 1] = file;
	v[r->at + 2] = line;
	r->at += 3;
	return true;
}

static uint32_t gnu_chain(const struct sym_table *t, uint32_t s,
			  struct symi_gnu_chains *ch, struct gnu_scope *g)
{
	/* gnu_walk() of a hit in @s: the leaf's own file and line are
	 * not read for the chain. */
	const struct symi_hit h = { .scope = s, .flags = SYMI_HIT_LEAF };
	uint32_t c = ch->n;
	struct gnu_chain_run r = { .t = t, .ch = ch, .g = g, .at = c + 2 };
	size_t n;
	bool cut;

	if (s == SYMT_NONE || ch->cap - c < 2 ||
	    !gnu_walk(t, &h, SYM_MAX_FRAMES, gnu_chain_one, &r, &n, &cut) ||
	    n < 2)
		return UINT32_MAX;
	ch->v[c] = (uint32_t)n;
	ch->n = r.at;
	return c;
}

struct frames_gnu {
	const struct sym_table *t;
	struct sym_frame *fr;
	size_t *fixed;
	const char *sp;
	uint32_t disc;		/* the innermost frame's */
};

static inline __attribute__((always_inline)) bool
frames_gnu_one(void *c, size_t j, const struct symt_func *fn, uint32_t file,
	       uint32_t line)
{
	struct frames_gnu *g = c;

	frame_gnu(g->t, g->fr, j, g->fixed, fn, file, line, j ? 0 : g->disc,
		  g->sp);
	return true;
}

/*
 * frames_gnu() - frames_of() with @omit SYMI_OMIT_ALL, for gnu_walk()'s
 * answers: the same frames in @fr[@max] (of which [0, *@fixed) keep
 * frame_gnu_fixed()'s fields from the hits before), and in *@got how
 * many.  False, having written some of @fr perhaps, for any other hit.
 */
static inline __attribute__((always_inline)) bool
frames_gnu(const struct sym_table *t, const struct symi_hit *hit,
	   struct sym_frame *fr, size_t max, const char *sp, size_t *fixed,
	   size_t *got)
{
	struct frames_gnu g = {
		.t = t, .fr = fr, .fixed = fixed, .sp = sp, .disc = hit->disc,
	};
	bool cut;

	if (!sp || !gnu_walk(t, hit, max, frames_gnu_one, &g, got, &cut))
		return false;
	for (size_t j = 0; j + 1 < *got; j++)
		fr[j].flags = SYM_FRAME_INLINED;
	if (cut)
		fr[*got - 1].flags = SYM_FRAME_INLINED | SYM_FRAME_TRUNCATED;
	return true;
}

struct gnu_text_run {
	const struct sym_table *t;
	const char *sp;
	char *w, *end;		/* at w, GNU_FAST_ROOM to spare before end */
	uint32_t disc;		/* the innermost frame's, for every frame */
};

/* gnu_put() of @x at @w, its missing name and file "??" as GNU prints
 * them; NULL when it does not fit before @end. */
static inline __attribute__((always_inline)) char *
gnu_text_put(char *w, const char *end, struct gnu_text *x)
{
	if (!x->name || !*x->name)
		x->name = "??";
	if (!x->file)
		x->file = "??";
	return gnu_put(w, end, false, x);
}

static inline __attribute__((always_inline)) bool
gnu_text_one(void *c, size_t j, const struct symt_func *fn, uint32_t file,
	     uint32_t line)
{
	struct gnu_text_run *g = c;
	const char *name = str_sp(g->t, g->sp, fn->linkage);
	struct gnu_text x = {
		.name = name ? name : str_sp(g->t, g->sp, fn->name),
		.file = file_at_sp(g->t, g->sp, file, NULL),
		.line = line,
		.disc = g->disc,
	};

	(void)j;
	if (g->end - g->w <= GNU_FAST_ROOM)
		return false;
	g->w = gnu_text_put(g->w, g->end, &x);
	return g->w != NULL;
}

/*
 * gnu_text() - the GNU style's text of @hit (libsym/gnutext.h) appended
 * to @b, when gnu_walk() takes the hit and it fits, as
 * tools/addr2line.c's print_gnu() prints the frames frames_of() makes of
 * it with -f -i: each frame's linkage name, else its name ("??" for
 * none), its file ("??"), its line, and the innermost frame's
 * discriminator.  False, with @b as it was, otherwise.
 */
static inline __attribute__((always_inline)) bool
gnu_text(const struct sym_table *t, const struct symi_hit *hit, size_t max,
	 const char *sp, struct symi_buf *b)
{
	struct gnu_text_run g = {
		.t = t, .sp = sp, .w = b->p + b->len, .end = b->p + b->alloc,
		.disc = hit->disc,
	};
	size_t n;
	bool cut;

	if (!sp || b->alloc - b->len <= GNU_FAST_ROOM ||
	    !gnu_walk(t, hit, max, gnu_text_one, &g, &n, &cut))
		return false;
	b->len = (size_t)(g.w - b->p);
	*g.w = '\0';
	return true;
}

/*
 * gnu_text() for a SYMI_HIT_GNU or SYMI_HIT_GNU_CHAIN hit: the same text,
 * from the hit, whose innermost name is @name, and, for a chain, its
 * frames at @c (internal.h, struct symi_gnu_chains; NULL: one frame).
 */
static inline __attribute__((always_inline)) bool
gnu_text_hit(const struct sym_table *t, const struct symi_hit *hit,
	     uint32_t name, const uint32_t *c, const char *sp,
	     struct symi_buf *b)
{
	char *w = b->p + b->len, *end = b->p + b->alloc;
	struct gnu_text x = {
		/* 0 or in the blob: symi_table_locate_keys() checked it. */
		.name = str_sp(t, sp, name),
		.file = file_at_sp(t, sp, hit->file, NULL),
		.line = hit->line,
		.disc = hit->disc,
	};

	for (uint32_t j = 1;; j++) {
		if (end - w <= GNU_FAST_ROOM)
			return false;
		w = gnu_text_put(w, end, &x);
		if (!w)
			return false;
		if (!c || j == c[0])
			break;
		/* bfd keeps the innermost discriminator for the inliners */
		x = (struct gnu_text){
			.name = str_sp(t, sp, c[3 * j - 1]),
			.file = file_at_sp(t, sp, c[3 * j], NULL),
			.line = c[3 * j + 1],
			.disc = hit->disc,
		};
	}
	b->len = (size_t)(w - b->p);
	*w = '\0';
	return true;
}

/* frames_of() with the strings' plain copy @sp (or NULL).  The GNU and
 * LLVM styles without -C, sym lookup's defaults, get it with @omit a
 * constant (no test of it per field) and, once the strings are plain, a
 * string one bounds check and an add. */
static inline __attribute__((always_inline)) size_t
frames_by_omit(const struct sym_table *t, const struct symi_hit *hit,
	       const uint32_t *syms, uint64_t addr, struct sym_frame *fr,
	       size_t max, unsigned omit, const char *sp,
	       uint32_t *decl_line, bool *late)
{
	if (omit == SYMI_OMIT_ALL && sp)
		return frames_of(t, hit, syms, addr, fr, max, SYMI_OMIT_ALL,
				 sp, decl_line, late);
	if (omit == SYMI_OMIT_LLVM && sp)
		return frames_of(t, hit, syms, addr, fr, max, SYMI_OMIT_LLVM,
				 sp, decl_line, late);
	return frames_of(t, hit, syms, addr, fr, max, omit, sp, decl_line,
			 late);
}

size_t symi_table_frames(const struct sym_table *t,
			 const struct symi_hit *hit, const uint32_t *syms,
			 uint64_t addr, struct sym_frame *fr, size_t max,
			 unsigned omit)
{
	uint32_t decl_line;
	bool late;

	return frames_by_omit(t, hit, syms, addr, fr, max, omit,
			      __atomic_load_n(&t->str.plain, __ATOMIC_ACQUIRE),
			      &decl_line, &late);
}

/* symi_table_frames_run() with @omit a constant where frames_by_omit()
 * makes it one.  The strings' plain copy is read for each hit: a blob
 * becomes whole during a run. */
static inline __attribute__((always_inline)) int
frames_run(const struct sym_table *t, const struct symi_hit *hits,
	   const uint32_t *syms, const uint64_t *addrs, size_t n,
	   unsigned omit, struct sym_frame *fr, size_t max, sym_frames_fn fn,
	   void *ctx, size_t lo, struct symi_gnu_text *text,
	   const struct symi_gnu_chains *chains)
{
	const uint32_t gnu = SYMI_HIT_GNU | SYMI_HIT_GNU_CHAIN;
	const struct symt_view *sv = &t->scopes;
	const char *sp;
	size_t fixed = 0;	/* frames_gnu()'s */
	size_t done = text ? text->done : 0;	/* text->done, kept here */
	uint32_t decl_line;
	bool late;
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		const struct symi_hit *h = &hits[i];
		struct symi_hit plain;
		size_t got = 0;

		sp = __atomic_load_n(&t->str.plain, __ATOMIC_ACQUIRE);
		/* The first record the frames AHEAD hits on will read; or,
		 * for a SYMI_HIT_GNU hit's text, its name. */
		if (omit == SYMI_OMIT_ALL && text && sp &&
		    i + SYMI_RUN_AHEAD < n &&
		    (h[SYMI_RUN_AHEAD].flags & gnu)) {
			const struct symi_hit *a = &h[SYMI_RUN_AHEAD];

			__builtin_prefetch(sp + (a->flags & SYMI_HIT_GNU ?
						 a->column :
						 chains->v[a->column + 1]));
		} else if (i + SYMI_RUN_AHEAD < n &&
		    (h[SYMI_RUN_AHEAD].flags & SYMI_HIT_LEAF) &&
		    h[SYMI_RUN_AHEAD].scope < sv->n) {
			const uint8_t *p = sv->p + (size_t)
				h[SYMI_RUN_AHEAD].scope * sv->stride;

			__builtin_prefetch(p);
			__builtin_prefetch(p + sv->stride - 1);
		}
		if (omit == SYMI_OMIT_ALL && text && (h->flags & gnu) &&
		    (h->flags & SYMI_HIT_GNU ?
		     gnu_text_hit(t, h, h->column, NULL, sp, text->buf) :
		     gnu_text_hit(t, h, chains->v[h->column + 1],
				  chains->v + h->column, sp, text->buf))) {
			done = lo + i + 1;
			continue;
		}
		if (h->flags & gnu) {
			/* No room for it. */
			symi_table_hit_plain(t, h, &plain);
			h = &plain;
		}
		if (omit == SYMI_OMIT_ALL && text &&
		    gnu_text(t, h, max, sp, text->buf)) {
			done = lo + i + 1;
			continue;
		}
		if (h->flags &&
		    (omit != SYMI_OMIT_ALL ||
		     !frames_gnu(t, h, fr, max, sp, &fixed, &got))) {
			got = frames_of(t, h, syms + (size_t)SYMT_CH_N * i,
					addrs[i], fr, max, omit, sp,
					&decl_line, &late);
			fixed = 0;	/* frame_syms() may have set them */
		}
		if (text)
			text->done = done;	/* for @fn to see */
		rc = fn(ctx, lo + i, fr, got);
	}
	if (text)
		text->done = done;
	return rc;
}

int symi_table_frames_run(const struct sym_table *t,
			  const struct symi_hit *hits, const uint32_t *syms,
			  const uint64_t *addrs, size_t n, unsigned omit,
			  struct sym_frame *fr, size_t max, sym_frames_fn fn,
			  void *ctx, size_t lo, struct symi_gnu_text *text,
			  const struct symi_gnu_chains *chains)
{
	/* @text a constant too: one copy that tests it for each hit cost
	 * python3.11d's warm run 1.25 M instructions (+1.4%). */
	if (omit == SYMI_OMIT_ALL && text)
		return frames_run(t, hits, syms, addrs, n, SYMI_OMIT_ALL, fr,
				  max, fn, ctx, lo, text, chains);
	if (omit == SYMI_OMIT_ALL)
		return frames_run(t, hits, syms, addrs, n, SYMI_OMIT_ALL, fr,
				  max, fn, ctx, lo, NULL, NULL);
	if (omit == SYMI_OMIT_LLVM)
		return frames_run(t, hits, syms, addrs, n, SYMI_OMIT_LLVM, fr,
				  max, fn, ctx, lo, NULL, NULL);
	return frames_run(t, hits, syms, addrs, n, omit, fr, max, fn, ctx,
			  lo, NULL, NULL);
}

/*
 * The frame cache (struct symi_fcache).  What frames_of() makes of a hit
 * with a scope depends on the hit's scope, symbols (sym[] and whether it
 * has them, or has them looked up later) and SYMI_HIT_DECL_FILE, on @omit
 * and, through truncation, on @max; the rest of the hit (file, line,
 * column, discriminator) only sets the innermost frame's file, file_rel,
 * line, column and discriminator, written last on a hit as frame_set()
 * writes them.  The exception is a lone frame named from the symbol table
 * (SYM_FRAME_SYMTAB): frame_syms() gives it the symbol's file when the
 * line table gave none, so it is never stored; nor are frames whose
 * symbol was looked up late, which is the address's, not the scope's
 * (frames_of()'s *late).  A slot is stored only while the strings are
 * plain, or inflated whole (zstr.c), so that every string pointer is the
 * blob's plus the offset, as on a later lookup; one read while a
 * compressed blob is half inflated may be "" when memory is short.
 */
typedef uint64_t fc_v16 __attribute__((vector_size(16), may_alias,
					 aligned(8)));
_Static_assert(sizeof(struct sym_frame) % 16 == 8, "frame_copy()");

/* *@d = *@s in 16-byte moves: gcc copies a struct this size with `rep
 * movs`, which starts slowly (and valgrind counts by the word). */
static inline __attribute__((always_inline)) void
frame_copy(struct sym_frame *d, const struct sym_frame *s)
{
	fc_v16 *dv = (fc_v16 *)(void *)d;
	const fc_v16 *sv = (const fc_v16 *)(const void *)s;
	uint64_t last;

#pragma GCC unroll 16
	for (size_t i = 0; i < sizeof(*d) / 16; i++)
		dv[i] = sv[i];
	memcpy(&last, (const char *)s + sizeof(*s) - 8, 8);
	memcpy((char *)d + sizeof(*d) - 8, &last, 8);
}


size_t symi_table_frames_cached(const struct sym_table *t,
				const struct symi_hit *hit,
				const uint32_t *syms, uint64_t addr,
				struct sym_frame *fr, size_t max,
				unsigned omit, struct symi_fcache *c)
{
	bool have_sym = hit->flags & SYMI_HIT_SYM, plain = false, late;
	uint32_t kf = hit->flags & (SYMI_HIT_SYM | SYMI_HIT_DECL_FILE |
				    SYMI_HIT_SYM_LATER);
	const uint32_t *si = have_sym ? symi_hit_syms(hit, syms) : NULL;
	uint32_t s0 = si ? si[0] : UINT32_MAX;
	uint32_t s1 = si ? si[1] : UINT32_MAX;
	uint32_t s2 = si ? si[2] : UINT32_MAX;
	uint32_t decl_line;
	struct symi_fcache_key *sl = NULL;
	struct sym_frame *cf = NULL;
	const char *sp;
	size_t n;

	if ((hit->flags & SYMI_HIT_LEAF) && hit->scope < t->scopes.n &&
	    omit == c->omit) {
		uint32_t i = symi_fcache_slot(c, hit, syms);

		sl = &c->key[i];
		cf = c->fr + (size_t)i * SYMI_FCACHE_FRAMES;
		if (sl->t == t && sl->scope == hit->scope &&
		    sl->sym[0] == s0 && sl->sym[1] == s1 &&
		    sl->sym[2] == s2 && sl->flags == kf && sl->n < max) {
			n = sl->n;
			for (size_t j = 0; j < n; j++)
				frame_copy(&fr[j], &cf[j]);
			if (!(kf & SYMI_HIT_DECL_FILE))
				fr[0].file = file_at_sp(
					t, NULL, hit->file,
					omit & SYM_OMIT_LLVM_ONLY ? NULL :
					&fr[0].file_rel);
			fr[0].line = sl->decl_line + hit->line;
			fr[0].column = omit & SYM_OMIT_LLVM_ONLY ? 0 :
				       hit->column;
			fr[0].discriminator = hit->disc;
			c->hits++;
			return n;
		}
		c->misses++;
		/* A slot is filled once: as many hits as replacing its
		 * frames at each miss would give, on addresses drawn at
		 * random, without writing them again and again. */
		plain = !sl->t &&
			__atomic_load_n(&t->str.plain, __ATOMIC_ACQUIRE) &&
			((omit & SYM_OMIT_DEMANGLED) ||
			 __atomic_load_n(&t->dstr.plain, __ATOMIC_ACQUIRE));
	}
	sp = __atomic_load_n(&t->str.plain, __ATOMIC_ACQUIRE);
	n = frames_by_omit(t, hit, syms, addr, fr, max, omit, sp, &decl_line,
			   &late);
	if (!plain || late || n > SYMI_FCACHE_FRAMES || n >= max ||
	    (n == 1 && (fr[0].flags & SYM_FRAME_SYMTAB)))
		return n;
	sl->t = t;
	sl->scope = hit->scope;
	sl->sym[0] = s0;
	sl->sym[1] = s1;
	sl->sym[2] = s2;
	sl->flags = kf;
	sl->decl_line = decl_line;
	sl->n = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		frame_copy(&cf[i], &fr[i]);
	return n;
}

size_t symi_table_lookup(const struct sym_table *t, uint64_t addr,
			 struct sym_frame *fr, size_t max, unsigned omit,
			 struct symi_cursor *cur)
{
	struct symi_hit hit;
	uint32_t syms[SYMT_CH_N];

	/* A crash's few addresses mostly need no symbol in GNU's style:
	 * left for later, looked up if the frames need it (a table whose
	 * symbols are in chunks then builds none). */
	if (!locate(t, addr, cur, NULL, &hit, syms, omit & SYM_OMIT_SYMBOLS))
		return 0;
	return symi_table_frames(t, &hit, syms, addr, fr, max, omit);
}

int sym_table_lookup(const struct sym_table *t, uint64_t addr,
		     struct sym_frame *frames, size_t max, size_t *n)
{
	struct symi_cursor cur = SYMI_CURSOR_INIT;

	if (n)
		*n = 0;
	if (!t || !frames || !max || !n)
		return -EINVAL;
	*n = symi_table_lookup(t, addr, frames, max, 0, &cur);
	return 0;
}

/* symi_batch_lookup()'s view of one table: it covers everything. */
static int whole_table(void *ctx, uint64_t addr, const struct sym_table **t,
		       uint64_t *start, uint64_t *end)
{
	*t = ctx;
	*start = 0;
	*end = UINT64_MAX;
	return 0;
}

int symi_table_lookup_batch_gnu(const struct sym_table *t,
				const uint64_t *addrs, size_t count,
				unsigned omit, struct symi_gnu_text *text,
				sym_frames_fn fn, void *ctx)
{
	if (!t || (!addrs && count) || !fn || (omit & ~SYMI_OMIT_ALL))
		return -EINVAL;
	return symi_batch_lookup(addrs, count, whole_table, (void *)t, omit,
				 text, fn, ctx);
}

int sym_table_lookup_batch_omit(const struct sym_table *t,
				const uint64_t *addrs, size_t count,
				unsigned omit, sym_frames_fn fn, void *ctx)
{
	return symi_table_lookup_batch_gnu(t, addrs, count, omit, NULL, fn,
					   ctx);
}

int sym_table_lookup_batch(const struct sym_table *t, const uint64_t *addrs,
			   size_t count, sym_frames_fn fn, void *ctx)
{
	return sym_table_lookup_batch_omit(t, addrs, count, 0, fn, ctx);
}

int sym_table_find_symbol(const struct sym_table *t, const char *name,
			  uint64_t *addr, uint64_t *size)
{
	struct symt_sym s, best = { 0 };
	bool found = false;

	if (!t || !name || !addr)
		return -EINVAL;
	/* Symbols are sorted by address and, per address, best first; so
	 * among equal names the first seen per address is preferred, and
	 * across addresses global/sized beats the rest. */
	for (uint32_t i = 0; i < t->syms.n; i++) {
		const char *nm;

		if (!sym_get(t, i, &s))
			continue;
		nm = str_at(t, s.name);
		if (!nm || strcmp(nm, name) != 0)
			continue;
		if (!found || ((s.flags & SYMI_SYM_GLOBAL) &&
			       !(best.flags & SYMI_SYM_GLOBAL)) ||
		    ((s.flags & SYMI_SYM_SIZED) &&
		     !(best.flags & SYMI_SYM_SIZED) &&
		     (s.flags & SYMI_SYM_GLOBAL) ==
			     (best.flags & SYMI_SYM_GLOBAL)))
			best = s;
		found = true;
	}
	if (!found)
		return -SYM_E_NOTFOUND;
	*addr = t->h->base + best.addr;
	if (size)
		*size = best.size;
	return 0;
}

/*
 * Unpacking, for split.c.
 */
void symi_tab_free(struct symi_tab *tab)
{
	if (!tab)
		return;
	free((void *)tab->addrs);
	free((void *)tab->leaves);
	free((void *)tab->scopes);
	free((void *)tab->funcs);
	free((void *)tab->files);
	free((void *)tab->syms);
	free((void *)tab->saddrs);
	for (int c = 0; c < SYMT_CH_N; c++)
		free((void *)tab->sidx[c]);
	memset(tab, 0, sizeof(*tab));
}

int symi_table_unpack(const struct sym_table *t, struct symi_tab *out)
{
	const struct symt_header *h = t->h;
	static const struct symt_leaf hole = {
		.scope = SYMT_NONE, .file = SYMT_NONE,
	};
	uint32_t *addrs, *saddrs, *sidx[SYMT_CH_N];
	struct symt_file *files;
	struct symt_leaf *leaves;
	struct symt_scope *scopes;
	struct symt_func *funcs;
	struct symt_sym *syms;
	uint32_t i;
	int err;

	memset(out, 0, sizeof(*out));
	out->base = h->base;
	out->start = h->start;
	out->end = h->end;
	out->flags = h->flags;
	out->converter = h->converter;
	out->elfutils = h->elfutils;
	/* The symbols whole (a bad chunk fails the dump); bad string
	 * frames read "" (as lookups give them). */
	err = lz_check(t);
	if (err)
		return err;
	if ((t->str.z && symi_zstr_fill_all(t->str.z) < 0) ||
	    (t->dstr.z && symi_zstr_fill_all(t->dstr.z) < 0))
		return -ENOMEM;
	out->str = t->str.z ? t->str.z->blob : t->str.plain;
	out->str_len = h->strings_size;
	out->dstr = t->dstr.z ? t->dstr.z->blob : t->dstr.plain;
	out->dstr_len = h->dstrings_size;
	out->addrs = addrs = symi_calloc(h->n_ranges + 1, sizeof(*addrs));
	out->leaves = leaves = symi_calloc(h->n_ranges + 1, sizeof(*leaves));
	out->scopes = scopes = symi_calloc(t->scopes.n + 1, sizeof(*scopes));
	out->funcs = funcs = symi_calloc(t->funcs.n + 1, sizeof(*funcs));
	out->files = files = symi_calloc(t->files.n + 1, sizeof(*files));
	out->syms = syms = symi_calloc(t->syms.n + 1, sizeof(*syms));
	out->saddrs = saddrs = symi_calloc(t->sranges.n + 1, sizeof(*saddrs));
	for (int c = 0; c < SYMT_CH_N; c++)
		out->sidx[c] = sidx[c] = symi_calloc(t->sranges.n + 1,
						     sizeof(*sidx[c]));
	if (!addrs || !leaves || !scopes || !funcs || !files || !syms ||
	    !saddrs || !sidx[0] || !sidx[1] || !sidx[2]) {
		symi_tab_free(out);
		return -ENOMEM;
	}
	for (uint32_t b = 0; b < h->n_blocks; b++) {
		struct symi_block k;
		uint32_t j0 = b << h->block_shift;
		uint32_t n = h->n_ranges - j0;

		block_open(t, b, &k);
		if (n > (1u << h->block_shift))
			n = 1u << h->block_shift;
		for (uint32_t j = 0; j < n; j++) {
			struct symt_scope sc;
			struct symt_func fn;
			bool hs, hf;

			addrs[j0 + j] = (uint32_t)k.start;
			leaves[j0 + j] = hole;
			if (j >= k.k)
				continue;	/* a broken block: holes */
			addrs[j0 + j] = (uint32_t)(k.start +
						   (j ? block_addr1(&k, j) : 0));
			if (!leaf_get(t, &k, j, &leaves[j0 + j], &sc, &hs,
				      &fn, &hf))
				leaves[j0 + j] = hole;
		}
	}
	out->n_ranges = h->n_ranges;
	for (i = 0; i < t->scopes.n; i++)
		scope_get(t, i, &scopes[i]);
	out->n_scopes = t->scopes.n;
	for (i = 0; i < t->funcs.n; i++)
		func_get(t, i, &funcs[i]);
	out->n_funcs = t->funcs.n;
	for (i = 0; i < t->files.n; i++) {
		files[i].name = symt_get(&t->files, i, SYMT_FI_NAME);
		files[i].rel = symt_get(&t->files, i, SYMT_FI_REL);
	}
	out->n_files = t->files.n;
	for (i = 0; i < t->syms.n; i++)
		sym_get(t, i, &syms[i]);
	out->n_syms = t->syms.n;
	for (i = 0; i < t->sranges.n; i++) {
		saddrs[i] = symt_get(&t->sranges, i, SYMT_SR_ADDR);
		sidx[SYMT_CH_EU][i] = uncode(symt_get(&t->sranges, i,
						      SYMT_SR_SYM));
		sidx[SYMT_CH_GNU][i] = uncode(symt_get(&t->sranges, i,
						       SYMT_SR_GNU));
		sidx[SYMT_CH_LLVM][i] = uncode(symt_get(&t->sranges, i,
							SYMT_SR_LLVM));
	}
	out->n_sranges = t->sranges.n;
	return 0;
}
