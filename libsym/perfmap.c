/*
 * perfmap.c - the reader of perf map files (perfmap.h has the format and
 * the rules).  Compiled into libsym and into libsymprof, the LD_PRELOAD
 * sampler (libc only): no allocation, no logging, no libsym call.
 */
#include <string.h>

#include "perfmap.h"
#include "base.h"

/* A hex number of 1 to 16 digits after an optional 0x, at s[*i], up to
 * a space; *i moves to the space.  Returns 0, or -1. */
static int hex_field(const char *s, size_t n, size_t *i, uint64_t *out)
{
	size_t k = *i, digits = 0;
	uint64_t v = 0;
	int d;

	if (k + 1 < n && s[k] == '0' && (s[k + 1] == 'x' || s[k + 1] == 'X'))
		k += 2;
	for (; k < n && s[k] != ' '; k++, digits++) {
		d = symi_hexval(s[k]);
		if (d < 0 || digits == 16)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || k == n)
		return -1;
	*i = k;
	*out = v;
	return 0;
}

/* Parse one line @s (@n bytes, no '\n'). */
static const char *parse_line(const char *s, size_t n,
			      struct symi_perfmap_ent *e)
{
	size_t i = 0;

	if (hex_field(s, n, &i, &e->start))
		return "START is not a hex number followed by a space";
	i++;
	if (hex_field(s, n, &i, &e->size))
		return "SIZE is not a hex number followed by a space";
	i++;
	if (i >= n)
		return "no NAME";
	if (memchr(s + i, '\0', n - i) || memchr(s + i, '\r', n - i))
		return "NAME holds a NUL or CR byte";
	if (e->size == 0)
		return "SIZE is 0";
	if (e->size > SYMI_PERFMAP_SIZE_MAX)
		return "SIZE is over 4 GiB";
	if (e->start + e->size < e->start)
		return "START + SIZE is past 2^64";
	e->name = s + i;
	e->namelen = n - i;
	return NULL;
}

int symi_perfmap_next(const char *buf, size_t len, size_t *off,
		      uint32_t *line, struct symi_perfmap_ent *ent,
		      const char **why)
{
	const char *s, *nl;
	size_t n;

	if (*off >= len)
		return 0;
	s = buf + *off;
	nl = memchr(s, '\n', len - *off);
	n = nl ? (size_t)(nl - s) : len - *off;
	*off += nl ? n + 1 : n;
	if (*line < UINT32_MAX)
		(*line)++;
	if (!nl)
		*why = "no '\\n' at the end: cut short";
	else if (n > SYMI_PERFMAP_LINE_MAX)
		*why = "longer than 4096 bytes";
	else
		*why = parse_line(s, n, ent);
	if (*why)
		return -1;
	ent->line = *line;
	return 1;
}

/* Order of points: by address, then entry. */
static int pt_less(const struct symi_perfmap_pt *x,
		   const struct symi_perfmap_pt *y)
{
	return x->addr != y->addr ? x->addr < y->addr : x->ent < y->ent;
}

static void sift(struct symi_perfmap_pt *v, size_t i, size_t n)
{
	struct symi_perfmap_pt t;
	size_t c;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && pt_less(&v[c], &v[c + 1]))
			c++;
		if (!pt_less(&v[i], &v[c]))
			return;
		t = v[i];
		v[i] = v[c];
		v[c] = t;
		i = c;
	}
}

/* Heapsort: no allocation (qsort() may malloc, and libsymprof's drain
 * thread must not). */
static void sort_pts(struct symi_perfmap_pt *v, size_t n)
{
	struct symi_perfmap_pt t;

	for (size_t i = n / 2; i-- > 0;)
		sift(v, i, n);
	for (size_t k = n; k-- > 1;) {
		t = v[0];
		v[0] = v[k];
		v[k] = t;
		sift(v, 0, k);
	}
}

/* The max-heap of entry indices (the latest entry on top). */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;

	while (i && h[(i - 1) / 2] < v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	uint32_t v = h[--(*n)];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* Append [start, end) of entry @ent to @out, merged with the last. */
static void emit(struct symi_perfmap_seg *out, size_t *nout, uint64_t start,
		 uint64_t end, uint32_t ent)
{
	struct symi_perfmap_seg *last = *nout ? &out[*nout - 1] : NULL;

	if (last && last->ent == ent && last->end == start) {
		last->end = end;
		return;
	}
	out[*nout].start = start;
	out[*nout].end = end;
	out[*nout].ent = ent;
	(*nout)++;
}

/*
 * A sweep over the sorted starts and ends: between two neighbouring
 * points the owner is the latest entry started and not yet ended.  Ended
 * entries leave the heap lazily, when they come to its top.
 */
size_t symi_perfmap_flatten(const struct symi_perfmap_ent *e, size_t n,
			    struct symi_perfmap_pt *pts, uint32_t *heap,
			    struct symi_perfmap_seg *out)
{
	size_t npts = 2 * n, nheap = 0, nout = 0;

	for (size_t i = 0; i < n; i++) {
		pts[2 * i] = (struct symi_perfmap_pt){ e[i].start,
						       (uint32_t)i, 0 };
		pts[2 * i + 1] = (struct symi_perfmap_pt){
			e[i].start + e[i].size, (uint32_t)i, 1 };
	}
	sort_pts(pts, npts);
	for (size_t k = 0; k < npts;) {
		uint64_t a = pts[k].addr;

		for (; k < npts && pts[k].addr == a; k++)
			if (!pts[k].is_end)
				heap_push(heap, &nheap, pts[k].ent);
		while (nheap && e[heap[0]].start + e[heap[0]].size <= a)
			heap_pop(heap, &nheap);
		if (nheap && k < npts)
			emit(out, &nout, a, pts[k].addr, heap[0]);
	}
	return nout;
}

const struct symi_perfmap_seg *
symi_perfmap_find(const struct symi_perfmap_seg *segs, size_t n,
		  uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (segs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && segs[lo].start <= addr && addr < segs[lo].end)
		return &segs[lo];
	return NULL;
}

int symi_proc_starttime(const char *stat, size_t len, uint64_t *ticks)
{
	const char *s = NULL, *end = stat + len;
	uint64_t v = 0;
	int field = 2;

	for (const char *c = stat; c < end; c++)
		if (*c == ')')
			s = c;	/* the last: a comm may hold ')' */
	if (!s)
		return -1;
	for (s++; s < end && field < 22; s++)
		field += *s == ' ';
	if (field != 22 || s == end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*ticks = v;
	return 0;
}
