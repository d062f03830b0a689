/*
 * split.c - cutting a table into self-contained address-ordered parts.
 *
 * A store keeps a huge table as several LMDB values ("chunks"), and a
 * lookup must be answerable from one chunk alone.  sym_table_split()
 * decodes the table once (symi_table_unpack()) and gives each part its
 * ranges (with a terminator at the next part's start) and the symbol
 * ranges over the part's addresses (the first one starting at the part's
 * start); symi_table_pack() then keeps exactly what those reach: the
 * scopes their leaves name and all their parents, the functions and files
 * those use, the symbols the symbol ranges name, and the strings all of
 * those use.  Parts keep the original base, so addresses mean the same in
 * all of them.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "format.h"
#include "base.h"

/* Build the part holding ranges [r0, r1) of @u and addresses [pstart,
 * pend). */
static int one_part(const struct symi_tab *u, size_t r0, size_t r1,
		    uint64_t pstart, uint64_t pend, struct sym_table **out)
{
	struct symi_tab p = *u;
	size_t nr = u->n_ranges ? r1 - r0 + 1 : 0, ns = 0, i;
	uint32_t *addrs = NULL, *sa = NULL, *si[SYMT_CH_N] = { NULL };
	struct symt_leaf *leaves = NULL;
	uint32_t hold[SYMT_CH_N];
	uint32_t ps = (uint32_t)(pstart - u->base);
	uint32_t pe = (uint32_t)(pend - u->base);
	void *buf = NULL;
	size_t len;
	int err = -ENOMEM;

	addrs = symi_calloc(nr + 1, sizeof(*addrs));
	leaves = symi_calloc(nr + 1, sizeof(*leaves));
	sa = symi_malloc((u->n_sranges + 2) * sizeof(uint32_t));
	for (int c = 0; c < SYMT_CH_N; c++) {
		si[c] = symi_malloc((u->n_sranges + 2) * sizeof(uint32_t));
		if (!si[c])
			goto out;
		hold[c] = SYMT_NONE;
	}
	if (!addrs || !leaves || !sa)
		goto out;
	if (nr) {
		memcpy(addrs, u->addrs + r0, nr * sizeof(*addrs));
		memcpy(leaves, u->leaves + r0, (nr - 1) * sizeof(*leaves));
		/* Terminator where the next part starts. */
		leaves[nr - 1] = (struct symt_leaf){ .scope = SYMT_NONE,
						     .file = SYMT_NONE };
	}
	/* Symbol ranges over [ps, pe): the one holding ps restarts at ps,
	 * the later ones follow, and a terminator closes at pe. */
	for (i = 0; i < u->n_sranges && u->saddrs[i] <= ps; i++) {
		for (int c = 0; c < SYMT_CH_N; c++)
			hold[c] = u->sidx[c][i];
	}
	sa[ns] = ps;
	for (int c = 0; c < SYMT_CH_N; c++)
		si[c][ns] = hold[c];
	ns++;
	for (; i < u->n_sranges && u->saddrs[i] < pe; i++) {
		sa[ns] = u->saddrs[i];
		for (int c = 0; c < SYMT_CH_N; c++)
			si[c][ns] = u->sidx[c][i];
		ns++;
	}
	sa[ns] = pe;
	for (int c = 0; c < SYMT_CH_N; c++)
		si[c][ns] = SYMT_NONE;
	ns++;
	if (!u->n_sranges || pe <= ps)
		ns = 0;

	p.start = pstart;
	p.end = pend;
	p.addrs = addrs;
	p.leaves = leaves;
	p.n_ranges = nr;
	p.saddrs = sa;
	for (int c = 0; c < SYMT_CH_N; c++)
		p.sidx[c] = si[c];
	p.n_sranges = ns;
	p.prune_syms = true;
	err = symi_table_pack(&p, &buf, &len);
	if (err)
		goto out;
	err = sym_table_open(buf, len, out);
	if (err)
		goto out;
	symi_table_adopt(*out, buf);
	buf = NULL;
out:
	free(buf);
	free(addrs);
	free(leaves);
	free(sa);
	for (int c = 0; c < SYMT_CH_N; c++)
		free(si[c]);
	return err;
}

int sym_table_split(const struct sym_table *t, size_t max_bytes,
		    struct sym_table ***partsp, size_t *np)
{
	struct sym_table **parts = NULL;
	const struct sym_table *v = t;
	struct symi_tab u = { 0 };
	size_t nparts, per, r0, n = 0;
	uint64_t pstart;
	int err = 0;

	if (partsp)
		*partsp = NULL;
	if (np)
		*np = 0;
	if (!t || !partsp || !np || !max_bytes)
		return -EINVAL;
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
	err = symi_table_unpack(v, &u);
	if (err) {
		free(parts);
		return err;
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
		/* The part that takes the last range is the last part (the
		 * last of nparts always does, and an earlier one when the
		 * ranges run out first, as per rounds up): it
		 * ends where the table ends, so the addresses past the last
		 * range, which only symbols cover, stay in a part. */
		pend = r1 + 1 >= v->h->n_ranges ? v->h->end :
		       v->h->base + u.addrs[r1];
		if (pend < pstart)
			pend = pstart;
		err = one_part(&u, r0, r1, pstart, pend, &parts[n]);
		if (err)
			break;
		n++;
		r0 = r1;
		pstart = pend;
		if (r0 + 1 >= v->h->n_ranges && p + 1 < nparts)
			break;
	}
	symi_tab_free(&u);
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
