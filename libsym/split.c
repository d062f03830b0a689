/*
 * split.c - cutting a table into self-contained address-ordered parts.
 *
 * A store keeps a huge table as several LMDB values ("chunks"), and a
 * lookup must be answerable from one chunk alone.  sym_table_split()
 * therefore gives each part exactly what its addresses reach: its ranges
 * (with a terminator at the next part's start), the scopes their leaves
 * name and all their parents, the functions and files those use, the
 * symbol ranges over the part's addresses (the first one starting at the
 * part's start) and the symbols they name, and a fresh string blob of
 * the strings all of those use.  Old indices are remapped in their
 * original order, so every sorted array stays sorted and every scope's
 * parent stays an earlier scope.  Parts keep the original base, so
 * addresses mean the same in all of them.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "format.h"

/* Old index -> new index maps (SYMT_NONE: not used). */
struct maps {
	uint32_t *scope, *func, *file, *sym, *str;
	uint32_t n_scope, n_func, n_file, n_sym;
	size_t str_len;
};

static uint32_t map_str(struct maps *m, const struct sym_table *v, uint32_t off)
{
	size_t n;

	if (off == 0 || off >= v->h->strings_size)
		return 0;
	if (m->str[off] == SYMT_NONE) {
		n = strlen(v->str + off) + 1;
		m->str[off] = (uint32_t)m->str_len;
		m->str_len += n;
	}
	return m->str[off];
}

static void mark_file(struct maps *m, const struct sym_table *v, uint32_t f)
{
	if (f < v->h->n_files)
		m->file[f] = 0;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Build the part holding ranges [r0, r1) and addresses [pstart, pend). */
static int one_part(const struct sym_table *v, size_t r0, size_t r1,
		    uint64_t pstart, uint64_t pend, struct sym_table **out)
{
	const struct symt_header *h = v->h;
	struct maps m = { 0 };
	struct symt_header *nh;
	size_t nr = h->n_ranges ? r1 - r0 + 1 : 0, ns = 0, i, off;
	uint32_t *sa = NULL, *si = NULL;
	uint32_t hold = SYMT_NONE;
	size_t o_addrs, o_leaves, o_scopes, o_funcs, o_files, o_syms, o_sa,
		o_si, o_str;
	uint32_t ps = (uint32_t)(pstart - h->base);
	uint32_t pe = (uint32_t)(pend - h->base);
	char *buf = NULL;
	int err = -ENOMEM;

	m.scope = malloc((h->n_scopes + 1) * sizeof(uint32_t));
	m.func = malloc((h->n_funcs + 1) * sizeof(uint32_t));
	m.file = malloc((h->n_files + 1) * sizeof(uint32_t));
	m.sym = malloc((h->n_syms + 1) * sizeof(uint32_t));
	m.str = malloc((size_t)h->strings_size * sizeof(uint32_t));
	if (!m.scope || !m.func || !m.file || !m.sym || !m.str)
		goto out;
	memset(m.scope, 0xff, (h->n_scopes + 1) * sizeof(uint32_t));
	memset(m.func, 0xff, (h->n_funcs + 1) * sizeof(uint32_t));
	memset(m.file, 0xff, (h->n_files + 1) * sizeof(uint32_t));
	memset(m.sym, 0xff, (h->n_syms + 1) * sizeof(uint32_t));
	memset(m.str, 0xff, (size_t)h->strings_size * sizeof(uint32_t));
	m.str[0] = 0;
	m.str_len = 1;

	/* Mark what the ranges reach: scopes and their parents, ... */
	for (i = r0; i < r1; i++) {
		const struct symt_leaf *l = &v->leaves[i];
		uint32_t s = l->scope;

		mark_file(&m, v, l->file);
		for (int d = 0; s < h->n_scopes && d < SYM_MAX_FRAMES; d++) {
			if (m.scope[s] == 0)
				break;
			m.scope[s] = 0;
			s = v->scopes[s].parent;
		}
	}
	/* ... then number them in order, with their functions and files. */
	for (i = 0; i < h->n_scopes; i++) {
		if (m.scope[i] != 0)
			continue;
		m.scope[i] = m.n_scope++;
		if (v->scopes[i].func < h->n_funcs)
			m.func[v->scopes[i].func] = 0;
		mark_file(&m, v, v->scopes[i].call_file);
	}
	for (i = 0; i < h->n_funcs; i++) {
		if (m.func[i] != 0)
			continue;
		m.func[i] = m.n_func++;
		mark_file(&m, v, v->funcs[i].decl_file);
	}
	/* Symbol ranges over [ps, pe): the one holding ps restarts at ps,
	 * the later ones follow, and a terminator closes at pe. */
	sa = malloc((h->n_sranges + 2) * sizeof(uint32_t));
	si = malloc((h->n_sranges + 2) * sizeof(uint32_t));
	if (!sa || !si)
		goto out;
	for (i = 0; i < h->n_sranges && v->saddrs[i] <= ps; i++)
		hold = v->sidx[i] < h->n_syms ? v->sidx[i] : SYMT_NONE;
	sa[ns] = ps;
	si[ns++] = hold;
	for (; i < h->n_sranges && v->saddrs[i] < pe; i++) {
		sa[ns] = v->saddrs[i];
		si[ns++] = v->sidx[i] < h->n_syms ? v->sidx[i] : SYMT_NONE;
	}
	sa[ns] = pe;
	si[ns++] = SYMT_NONE;
	if (!h->n_sranges || pe <= ps)
		ns = 0;
	for (i = 0; i < ns; i++) {
		if (si[i] != SYMT_NONE)
			m.sym[si[i]] = 0;
	}
	for (i = 0; i < h->n_syms; i++) {
		if (m.sym[i] == 0)
			m.sym[i] = m.n_sym++;
	}
	for (i = 0; i < h->n_files; i++) {
		if (m.file[i] == 0)
			m.file[i] = m.n_file++;
	}

	/* Strings, in a first-use order: offsets are assigned lazily. */
	for (i = 0; i < h->n_funcs; i++) {
		if (m.func[i] == SYMT_NONE)
			continue;
		map_str(&m, v, v->funcs[i].name);
		map_str(&m, v, v->funcs[i].linkage);
		map_str(&m, v, v->funcs[i].demangled);
	}
	for (i = 0; i < h->n_files; i++) {
		if (m.file[i] != SYMT_NONE)
			map_str(&m, v, v->files[i]);
	}
	for (i = 0; i < h->n_syms; i++) {
		if (m.sym[i] == SYMT_NONE)
			continue;
		map_str(&m, v, v->syms[i].name);
		map_str(&m, v, v->syms[i].demangled);
		map_str(&m, v, v->syms[i].file);
	}

	off = align8(sizeof(*nh));
	o_addrs = off;
	off = align8(off + nr * 4);
	o_leaves = off;
	off = align8(off + nr * sizeof(struct symt_leaf));
	o_scopes = off;
	off = align8(off + m.n_scope * sizeof(struct symt_scope));
	o_funcs = off;
	off = align8(off + m.n_func * sizeof(struct symt_func));
	o_files = off;
	off = align8(off + m.n_file * 4);
	o_syms = off;
	off = align8(off + m.n_sym * sizeof(struct symt_sym));
	o_sa = off;
	off = align8(off + ns * 4);
	o_si = off;
	off = align8(off + ns * 4);
	o_str = off;
	off = align8(off + m.str_len);
	if (off >= UINT32_MAX) {
		err = -SYM_E_TOOBIG;
		goto out;
	}
	buf = symi_calloc(1, off);
	if (!buf)
		goto out;
	nh = (struct symt_header *)buf;
	*nh = *h;
	nh->size = (uint32_t)off;
	nh->start = pstart;
	nh->end = pend;
	nh->n_ranges = (uint32_t)nr;
	nh->off_addrs = (uint32_t)o_addrs;
	nh->off_leaves = (uint32_t)o_leaves;
	nh->n_scopes = m.n_scope;
	nh->off_scopes = (uint32_t)o_scopes;
	nh->n_funcs = m.n_func;
	nh->off_funcs = (uint32_t)o_funcs;
	nh->n_files = m.n_file;
	nh->off_files = (uint32_t)o_files;
	nh->n_syms = m.n_sym;
	nh->off_syms = (uint32_t)o_syms;
	nh->n_sranges = (uint32_t)ns;
	nh->off_saddrs = (uint32_t)o_sa;
	nh->off_sidx = (uint32_t)o_si;
	nh->off_strings = (uint32_t)o_str;
	nh->strings_size = (uint32_t)m.str_len;

#define REMAP(map, idx) ((idx) == SYMT_NONE ? SYMT_NONE : (map)[idx])
	for (i = r0; i < r1; i++) {
		const struct symt_leaf *l = &v->leaves[i];
		struct symt_leaf *nl = (struct symt_leaf *)(buf + o_leaves) +
				       (i - r0);

		((uint32_t *)(buf + o_addrs))[i - r0] = v->addrs[i];
		*nl = *l;
		nl->scope = l->scope < h->n_scopes ? m.scope[l->scope] :
			    SYMT_NONE;
		nl->file = l->file < h->n_files ? m.file[l->file] : SYMT_NONE;
	}
	/* Terminator where the next part starts (the original one, last). */
	if (nr) {
		((uint32_t *)(buf + o_addrs))[nr - 1] = v->addrs[r1];
		((struct symt_leaf *)(buf + o_leaves))[nr - 1] =
			(struct symt_leaf){ .scope = SYMT_NONE,
					    .file = SYMT_NONE };
	}
	for (i = 0; i < h->n_scopes; i++) {
		struct symt_scope s = v->scopes[i];

		if (m.scope[i] == SYMT_NONE)
			continue;
		s.parent = s.parent < h->n_scopes ? m.scope[s.parent] :
			   SYMT_NONE;
		s.func = s.func < h->n_funcs ? m.func[s.func] : 0;
		s.call_file = s.call_file < h->n_files ? m.file[s.call_file] :
			      SYMT_NONE;
		((struct symt_scope *)(buf + o_scopes))[m.scope[i]] = s;
	}
	for (i = 0; i < h->n_funcs; i++) {
		struct symt_func f = v->funcs[i];

		if (m.func[i] == SYMT_NONE)
			continue;
		f.name = map_str(&m, v, f.name);
		f.linkage = map_str(&m, v, f.linkage);
		f.demangled = map_str(&m, v, f.demangled);
		f.decl_file = f.decl_file < h->n_files ? m.file[f.decl_file] :
			      SYMT_NONE;
		((struct symt_func *)(buf + o_funcs))[m.func[i]] = f;
	}
	for (i = 0; i < h->n_files; i++) {
		if (m.file[i] != SYMT_NONE)
			((uint32_t *)(buf + o_files))[m.file[i]] =
				map_str(&m, v, v->files[i]);
	}
	for (i = 0; i < h->n_syms; i++) {
		struct symt_sym s = v->syms[i];

		if (m.sym[i] == SYMT_NONE)
			continue;
		s.name = map_str(&m, v, s.name);
		s.demangled = map_str(&m, v, s.demangled);
		s.file = map_str(&m, v, s.file);
		((struct symt_sym *)(buf + o_syms))[m.sym[i]] = s;
	}
	for (i = 0; i < ns; i++) {
		((uint32_t *)(buf + o_sa))[i] = sa[i];
		((uint32_t *)(buf + o_si))[i] = REMAP(m.sym, si[i]);
	}
#undef REMAP
	for (i = 1; i < h->strings_size; i++) {
		if (m.str[i] != SYMT_NONE)
			memcpy(buf + o_str + m.str[i], v->str + i,
			       strlen(v->str + i) + 1);
	}
	nh->crc = symi_table_crc(buf, off);
	err = sym_table_open(buf, off, out);
	if (err)
		goto out;
	symi_table_adopt(*out, buf);
	buf = NULL;
out:
	free(buf);
	free(m.scope);
	free(m.func);
	free(m.file);
	free(m.sym);
	free(m.str);
	free(sa);
	free(si);
	return err;
}

int sym_table_split(const struct sym_table *t, size_t max_bytes,
		    struct sym_table ***partsp, size_t *np)
{
	struct sym_table **parts = NULL;
	const struct sym_table *v = t;
	size_t nparts, per, r0, n = 0;
	uint64_t pstart;
	int err = 0;

	if (!t || !partsp || !np || !max_bytes)
		return -EINVAL;
	*partsp = NULL;
	*np = 0;
	/* Ranges carry most of the bytes; split them evenly. */
	nparts = (v->h->size + max_bytes - 1) / max_bytes;
	if (nparts < 1 || v->h->n_ranges < 2)
		nparts = 1;
	if (nparts > v->h->n_ranges / 2 + 1)
		nparts = v->h->n_ranges / 2 + 1;
	parts = symi_calloc(nparts, sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	if (nparts == 1) {
		/* It fits: an exact copy, every symbol and alias kept. */
		char *copy = symi_malloc(v->h->size);

		if (!copy) {
			free(parts);
			return -ENOMEM;
		}
		memcpy(copy, v->buf, v->h->size);
		err = sym_table_open(copy, v->h->size, &parts[0]);
		if (err) {
			free(copy);
			free(parts);
			return err;
		}
		symi_table_adopt(parts[0], copy);
		*partsp = parts;
		*np = 1;
		return 0;
	}
	per = v->h->n_ranges ? (v->h->n_ranges - 1 + nparts - 1) / nparts : 0;
	pstart = v->h->start;
	r0 = 0;
	for (size_t p = 0; p < nparts; p++) {
		size_t r1 = p + 1 == nparts ? (v->h->n_ranges ?
					       v->h->n_ranges - 1 : 0) :
			    r0 + per;
		uint64_t pend;

		if (r1 > (v->h->n_ranges ? v->h->n_ranges - 1 : 0))
			r1 = v->h->n_ranges ? v->h->n_ranges - 1 : 0;
		pend = p + 1 == nparts ? v->h->end :
		       v->h->base + v->addrs[r1];
		if (pend < pstart)
			pend = pstart;
		err = one_part(v, r0, r1, pstart, pend, &parts[n]);
		if (err)
			break;
		n++;
		r0 = r1;
		pstart = pend;
		if (r0 + 1 >= v->h->n_ranges && p + 1 < nparts)
			break;
	}
	if (err) {
		for (size_t i = 0; i < n; i++)
			sym_table_close(parts[i]);
		free(parts);
		return err;
	}
	*partsp = parts;
	*np = n;
	return 0;
}
