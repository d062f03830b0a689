/*
 * flame.c - the SVG flame graph writer (flame.h).
 *
 * Three passes over the tree, none recursive (stacks can be thousands of
 * frames deep):
 *   1. choose the drawn nodes: those at least minwidth wide, and when
 *      they are more than max_frames, the widest max_frames of them
 *      (choose_drawn()).  Children never have more samples than their
 *      parent, so the drawn nodes always form a tree hanging from the
 *      root, and counting them is one pass over the node array.
 *   2. in differential mode, find each drawn node's twin in the "before"
 *      tree (the same path; parents have smaller ids, so one pass in id
 *      order) and the largest change of share, which scales the colours;
 *   3. write the frames depth first, children sorted by name, each at
 *      x = its parent's x + the totals of its siblings sorted before it
 *      (frames too narrow to draw keep their place as a gap).
 *
 * Positions are in samples (fg:x, fg:w, exact) and in pixels (x, width,
 * printed with two decimals); the script redraws zoomed frames from the
 * sample positions, so rounding never accumulates.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "flame.h"
#include "stats.h"
#include "banned.h"

#define XPAD 10			/* left and right margin, px */
#define FRAME_H 16		/* one stack level, px */
#define FONT_SIZE 12
#define FONT_WIDTH 0.59		/* average glyph width / font size */

static const char *const svg_ns = "http://github.com/jonhoo/inferno";

void flame_opts_init(struct flame_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->width = 1200;
	o->minwidth = 0.1;
	o->max_frames = 50000;
	o->unit = "samples";
}

/* ---- text: XML-safe, UTF-8-safe ---- */

/*
 * Decode one UTF-8 character at s[*i] and move past it.  Returns the code
 * point, or -1 for a byte that does not start a valid, shortest-form,
 * non-surrogate sequence (one byte is consumed then).
 */
static long utf8_next(const unsigned char *s, size_t len, size_t *i)
{
	size_t at = *i, n, k;
	unsigned char c = s[at];
	long cp, min;

	if (c < 0x80) {
		*i = at + 1;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 1, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 2, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 3, cp = c & 0x07, min = 0x10000;
	} else {
		*i = at + 1;
		return -1;
	}
	if (len - at - 1 < n) {
		*i = at + 1;
		return -1;
	}
	for (k = 1; k <= n; k++) {
		if ((s[at + k] & 0xc0) != 0x80) {
			*i = at + 1;
			return -1;
		}
		cp = cp << 6 | (s[at + k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		*i = at + 1;
		return -1;
	}
	*i = at + 1 + n;
	return cp;
}

/* May XML 1.0 hold @cp as a character? */
static bool xml_char(long cp)
{
	return cp == 0x9 || cp == 0xa || cp == 0xd ||
	       (cp >= 0x20 && cp <= 0xd7ff) ||
	       (cp >= 0xe000 && cp <= 0xfffd) ||
	       (cp >= 0x10000 && cp <= 0x10ffff);
}

/*
 * Write the first @max characters of @s as XML character data (fit for
 * attribute values too); "..." follows when @s was longer.  Characters
 * XML does not allow and invalid UTF-8 become U+FFFD; blanks other than
 * the space (tab, line ends) become spaces.
 */
static void put_text(FILE *f, const char *str, size_t len, size_t max,
		     const char *more)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, start, n = 0;
	long cp;

	while (i < len) {
		if (n == max) {
			fputs(more, f);
			return;
		}
		start = i;
		cp = utf8_next(s, len, &i);
		n++;
		if (cp < 0 || !xml_char(cp)) {
			fputs("\xef\xbf\xbd", f);
			continue;
		}
		switch (cp) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		case '\t':
		case '\n':
		case '\r':
			fputc(' ', f);
			break;
		default:
			fwrite(s + start, 1, i - start, f);
		}
	}
}

/* Characters in @s as put_text() counts them. */
static size_t text_chars(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n = 0;

	while (i < len) {
		utf8_next(s, len, &i);
		n++;
	}
	return n;
}

static void put_str(FILE *f, const char *s)
{
	put_text(f, s, strlen(s), SIZE_MAX, "");
}

/* @v with thousands separators: 1234567 -> "1,234,567". */
static const char *group(uint64_t v, char *buf, size_t len)
{
	char digits[24];
	size_t n, i, o = 0;

	n = (size_t)snprintf(digits, sizeof(digits), "%llu",
			     (unsigned long long)v);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* ---- layout ---- */

struct layout {
	const struct stacktree *t, *base;
	const struct flame_opts *o;
	uint64_t total, base_total;
	uint32_t *depth;	/* of every node */
	/* Drawn: total > min_count, or == min_count and depth < tie_depth
	 * (is_drawn()). */
	uint64_t min_count;
	uint32_t tie_depth;
	double scale;		/* px per sample */
	unsigned height, top, bottom;
	size_t max_depth;
	uint32_t *twin;		/* diff: node in base, or STACKTREE_NONE */
	double max_change;	/* diff: largest |share change| drawn */
};

struct child {
	const char *name;
	size_t len;
	uint32_t id;
};

static int child_cmp(const void *a, const void *b)
{
	const struct child *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

struct key {
	uint64_t total;
	uint32_t depth;
};

/* Widest first; among equals, the shallower first (parents first). */
static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->total != y->total)
		return (x->total < y->total) - (x->total > y->total);
	return (x->depth > y->depth) - (x->depth < y->depth);
}

static bool is_drawn(const struct layout *L, uint32_t id)
{
	uint64_t tot = stacktree_total(L->t, id);

	return tot > L->min_count ||
	       (tot == L->min_count && L->depth[id] < L->tie_depth);
}

/*
 * Pass 1: which nodes are drawn, from the minimum width and max_frames;
 * the depth of the deepest drawn node; the count of nodes left out.
 *
 * Drawn are the nodes whose key (total, depth) comes before a bound in
 * key_cmp() order.  A parent's key always comes before its children's
 * (more samples, or as many and shallower), so the drawn nodes form a
 * tree from the root.  The bound depends on the tree alone, not on the
 * order stacks were inserted in, so output stays deterministic; among
 * frames with equal keys at the bound none is drawn, so the cap holds.
 */
static int choose_drawn(struct layout *L, struct flame_stats *st)
{
	const struct stacktree *t = L->t;
	size_t n = stacktree_size(t), i, drawn = 0, omitted = 0;
	double minpx = L->o->minwidth;
	struct key *keys = NULL;
	uint64_t c;
	bool capped;
	int err = 0;

	L->depth = malloc(n * sizeof(*L->depth));
	if (!L->depth)
		return -ENOMEM;
	L->depth[0] = 0;
	for (i = 1; i < n; i++)
		L->depth[i] = L->depth[stacktree_parent(t, (uint32_t)i)] + 1;
	if (L->o->minwidth_pct)
		minpx = L->o->minwidth / 100.0 * (double)L->total * L->scale;
	/* The smallest count whose width reaches minpx. */
	if (minpx <= 0) {
		c = 1;
	} else {
		double q = ceil(minpx / L->scale);

		c = q >= (double)L->total ? L->total : (uint64_t)q;
		while (c > 1 && (double)(c - 1) * L->scale >= minpx)
			c--;
		while (c < L->total && (double)c * L->scale < minpx)
			c++;
		if (c == 0)
			c = 1;
	}
	L->min_count = c;
	L->tie_depth = UINT32_MAX;
	for (i = 0; i < n; i++)
		if (is_drawn(L, (uint32_t)i))
			drawn++;
	capped = drawn > L->o->max_frames;
	if (capped) {
		size_t k = 0;

		keys = malloc(drawn * sizeof(*keys));
		if (!keys) {
			err = -ENOMEM;
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (!is_drawn(L, (uint32_t)i))
				continue;
			keys[k].total = stacktree_total(t, (uint32_t)i);
			keys[k++].depth = L->depth[i];
		}
		qsort(keys, k, sizeof(*keys), key_cmp);
		/* keys[max_frames] is the first frame that must go. */
		L->min_count = keys[L->o->max_frames].total;
		L->tie_depth = keys[L->o->max_frames].depth;
	}
	drawn = 0;
	L->max_depth = 0;
	for (i = 0; i < n; i++) {
		if (is_drawn(L, (uint32_t)i)) {
			drawn++;
			if (L->depth[i] > L->max_depth)
				L->max_depth = L->depth[i];
		} else if (stacktree_total(t, (uint32_t)i) > 0) {
			omitted++;
		}
	}
	if (st) {
		st->drawn = drawn;
		st->omitted = omitted;
		st->minwidth_px = capped ? (double)L->min_count * L->scale :
					   minpx;
		st->depth = L->max_depth;
		st->capped = capped;
	}
out:
	free(keys);
	return err;
}

static double share(uint64_t k, uint64_t n)
{
	return n ? (double)k / (double)n : 0;
}

/* Pass 2 (differential): twins in the base tree, the largest change. */
static int find_twins(struct layout *L)
{
	const struct stacktree *t = L->t, *b = L->base;
	size_t n = stacktree_size(t), i;

	L->twin = malloc(n * sizeof(*L->twin));
	if (!L->twin)
		return -ENOMEM;
	L->twin[0] = STACKTREE_ROOT;
	L->max_change = 0;
	for (i = 1; i < n; i++) {
		uint32_t p = stacktree_parent(t, (uint32_t)i), tw;
		const char *name;
		size_t len;
		double d;

		L->twin[i] = STACKTREE_NONE;
		if (!is_drawn(L, (uint32_t)i) || L->twin[p] == STACKTREE_NONE)
			goto change;
		name = stacktree_name(t, (uint32_t)i, &len);
		tw = stacktree_find(b, L->twin[p], name, len);
		L->twin[i] = tw;
change:
		if (!is_drawn(L, (uint32_t)i))
			continue;
		d = share(stacktree_total(t, (uint32_t)i), L->total) -
		    (L->twin[i] == STACKTREE_NONE ? 0 :
		     share(stacktree_total(b, L->twin[i]), L->base_total));
		if (fabs(d) > L->max_change)
			L->max_change = fabs(d);
	}
	return 0;
}

/* ---- colours ---- */

enum kind { KIND_USER, KIND_KERNEL, KIND_JIT, KIND_INLINE };

static const char *const kind_names[] = {
	[KIND_USER] = NULL, [KIND_KERNEL] = "kernel",
	[KIND_JIT] = "JIT", [KIND_INLINE] = "inlined",
};

/* FlameGraph's annotations: a name ending in _[k], _[j] or _[i]. */
static enum kind frame_kind(const char *s, size_t len)
{
	if (len < 4 || s[len - 4] != '_' || s[len - 3] != '[' ||
	    s[len - 1] != ']')
		return KIND_USER;
	switch (s[len - 2]) {
	case 'k':
		return KIND_KERNEL;
	case 'j':
		return KIND_JIT;
	case 'i':
		return KIND_INLINE;
	default:
		return KIND_USER;
	}
}

static void frame_fill(const struct layout *L, uint32_t id, char *buf,
		       size_t len)
{
	const char *name;
	size_t nlen;
	enum kind k;
	uint64_t h = 0xcbf29ce484222325ULL;
	double v1, v2, v3;
	size_t i;

	if (L->base) {
		double d, x;
		int c;

		d = share(stacktree_total(L->t, id), L->total) -
		    (L->twin[id] == STACKTREE_NONE ? 0 :
		     share(stacktree_total(L->base, L->twin[id]),
			   L->base_total));
		x = L->max_change > 0 ? fabs(d) / L->max_change : 0;
		c = (int)lround(250 - 200 * x);
		if (d > 0)
			snprintf(buf, len, "rgb(255,%d,%d)", c, c);
		else if (d < 0)
			snprintf(buf, len, "rgb(%d,%d,255)", c, c);
		else
			snprintf(buf, len, "rgb(250,250,250)");
		return;
	}
	if (id == STACKTREE_ROOT) {
		snprintf(buf, len, "rgb(200,200,200)");
		return;
	}
	name = stacktree_name(L->t, id, &nlen);
	k = frame_kind(name, nlen);
	if (k != KIND_USER)
		nlen -= 4;
	/* Hash the name, so that a function has one colour everywhere. */
	for (i = 0; i < nlen; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	v1 = (double)(h & 0xffff) / 65536.0;
	v2 = (double)(h >> 16 & 0xffff) / 65536.0;
	v3 = (double)(h >> 32 & 0xffff) / 65536.0;
	switch (k) {
	case KIND_KERNEL:	/* orange */
		snprintf(buf, len, "rgb(%d,%d,0)", 190 + (int)(65 * v1),
			 90 + (int)(65 * v1));
		break;
	case KIND_JIT:		/* green */
		snprintf(buf, len, "rgb(%d,%d,%d)", 50 + (int)(60 * v1),
			 200 + (int)(55 * v1), 50 + (int)(60 * v1));
		break;
	case KIND_INLINE:	/* aqua */
		snprintf(buf, len, "rgb(%d,%d,%d)", 50 + (int)(60 * v1),
			 165 + (int)(55 * v1), 165 + (int)(55 * v1));
		break;
	default:		/* "hot": red to yellow */
		snprintf(buf, len, "rgb(%d,%d,%d)", 205 + (int)(50 * v3),
			 (int)(230 * v1), (int)(55 * v2));
	}
}

/* ---- writing ---- */

static void put_share(FILE *f, const char *what, uint64_t k, uint64_t n,
		      const char *unit)
{
	struct stats_interval ci = { 0, 0, 1 };
	char num[32];

	/* k <= n holds for every node (a total never exceeds the root's),
	 * and stats_wilson() leaves [0, 1] for n = 0. */
	(void)stats_wilson(k, n, 0, &ci);
	fprintf(f, "%s%s ", what, group(k, num, sizeof(num)));
	put_str(f, unit);
	fprintf(f, ", %.2f%%; 95%% CI %.2f-%.2f%%", 100 * share(k, n),
		100 * ci.lo, 100 * ci.hi);
}

/*
 * The tooltip: "NAME (DETAILS)".  DETAILS never holds " (", so the
 * script finds the name before the last " (".
 */
static void put_title(FILE *f, const struct layout *L, uint32_t id)
{
	uint64_t k = stacktree_total(L->t, id);
	const char *name;
	size_t len;
	char num[32];

	fputs("<title>", f);
	if (id == STACKTREE_ROOT) {
		fprintf(f, "all (%s ", group(k, num, sizeof(num)));
		put_str(f, L->o->unit);
		if (L->base) {
			fprintf(f, "; before: %s ",
				group(L->base_total, num, sizeof(num)));
			put_str(f, L->o->unit);
		}
		fputs(", 100%)</title>", f);
		return;
	}
	name = stacktree_name(L->t, id, &len);
	put_text(f, name, len, FLAME_NAME_MAX, "...");
	fputs(" (", f);
	if (L->base) {
		uint32_t tw = L->twin[id];
		uint64_t kb = tw == STACKTREE_NONE ? 0 :
			      stacktree_total(L->base, tw);
		struct stats_share sa, sb;
		struct stats_diff d = { 0 };

		/* Newcombe's hybrid score interval of a difference of two
		 * independent shares, from the two Wilson intervals. */
		(void)stats_share_counts(k, L->total, &sa);
		(void)stats_share_counts(kb, L->base_total, &sb);
		(void)stats_diff_between(&sa, &sb, 0, STATS_NEWCOMBE, &d);
		put_share(f, "after: ", k, L->total, L->o->unit);
		fputs("; ", f);
		put_share(f, "before: ", kb, L->base_total, L->o->unit);
		if (L->base_total)
			fprintf(f, "; change %+.2f pp, 95%% CI %+.2f to "
				"%+.2f pp", 100 * d.diff, 100 * d.lo,
				100 * d.hi);
		else
			fprintf(f, "; change %+.2f pp (no samples before)",
				100 * share(k, L->total));
	} else {
		put_share(f, "", k, L->total, L->o->unit);
	}
	if (kind_names[frame_kind(name, len)])
		fprintf(f, "; %s", kind_names[frame_kind(name, len)]);
	fputs(")</title>", f);
}

/* The label that fits @w px: the name, cut with "..", or nothing. */
static void put_label(FILE *f, const struct layout *L, uint32_t id, double w)
{
	size_t fit = (size_t)floor(w / (FONT_SIZE * FONT_WIDTH)), len, n;
	const char *name;

	if (fit < 3)
		return;
	if (id == STACKTREE_ROOT) {
		fputs("all", f);
		return;
	}
	name = stacktree_name(L->t, id, &len);
	n = text_chars(name, len);
	if (n > FLAME_NAME_MAX)
		n = FLAME_NAME_MAX + 3;
	if (n <= fit)
		put_text(f, name, len, FLAME_NAME_MAX, "...");
	else
		put_text(f, name, len, fit - 2, "..");
}

static void put_frame(FILE *f, const struct layout *L, uint32_t id,
		      uint64_t x, size_t depth)
{
	uint64_t w = stacktree_total(L->t, id);
	double px = XPAD + (double)x * L->scale, pw = (double)w * L->scale;
	unsigned y;
	char fill[64];

	if (L->o->icicle)
		y = L->top + (unsigned)depth * FRAME_H;
	else
		y = L->height - L->bottom - (unsigned)(depth + 1) * FRAME_H;
	frame_fill(L, id, fill, sizeof(fill));
	fputs("<g>", f);
	put_title(f, L, id);
	fprintf(f, "<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" "
		   "fill=\"%s\" fg:x=\"%llu\" fg:w=\"%llu\"/>",
		px, y, pw, (unsigned)FRAME_H - 1, fill, (unsigned long long)x,
		(unsigned long long)w);
	fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", px + 3,
		y + (FRAME_H - 1) / 2.0 + 3);
	put_label(f, L, id, pw);
	fputs("</text></g>\n", f);
}

struct todo {
	uint32_t id;
	uint32_t depth;
	uint64_t x;
};

/* Pass 3: every drawn frame, depth first, children sorted by name. */
static int put_frames(FILE *f, const struct layout *L)
{
	struct todo *stack = NULL;
	struct child *kids = NULL;
	size_t nstack = 0, stack_cap = 0, kids_cap = 0;
	int err = 0;

	stack_cap = 64;
	stack = malloc(stack_cap * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	stack[nstack++] = (struct todo){ STACKTREE_ROOT, 0, 0 };
	while (nstack) {
		struct todo cur = stack[--nstack];
		size_t nk = 0, i, ndrawn = 0;
		uint64_t x;
		uint32_t c;

		put_frame(f, L, cur.id, cur.x, cur.depth);
		for (c = stacktree_first_child(L->t, cur.id);
		     c != STACKTREE_NONE; c = stacktree_next_sibling(L->t, c)) {
			err = tool_grow(&kids, &kids_cap, nk + 1,
					sizeof(*kids), 64);
			if (err)
				goto out;
			kids[nk].name = stacktree_name(L->t, c, &kids[nk].len);
			kids[nk].id = c;
			if (is_drawn(L, c))
				ndrawn++;
			nk++;
		}
		if (!ndrawn)
			continue;
		qsort(kids, nk, sizeof(*kids), child_cmp);
		err = tool_grow(&stack, &stack_cap, nstack + ndrawn,
				sizeof(*stack), 64);
		if (err)
			goto out;
		/* Push in reverse, so that the first by name comes out
		 * first; x runs over every child, drawn or not. */
		x = cur.x;
		for (i = 0; i < nk; i++)
			x += stacktree_total(L->t, kids[i].id);
		for (i = nk; i-- > 0;) {
			uint64_t w = stacktree_total(L->t, kids[i].id);

			x -= w;
			if (is_drawn(L, kids[i].id))
				stack[nstack++] = (struct todo){
					kids[i].id, cur.depth + 1, x };
		}
	}
out:
	free(stack);
	free(kids);
	return err;
}

/*
 * The script: fixed text, no name in it.  It reads the frames from the
 * DOM once (positions in samples from fg:x and fg:w, names from the
 * titles), and redraws from those on every zoom.
 */
static const char script[] =
"\"use strict\";\n"
"(function () {\n"
"var NS = \"http://github.com/jonhoo/inferno\", HL = \"rgb(230,0,230)\";\n"
"var F = [], W, xpad, cw, fh, total, zoomed = null, re = null;\n"
"var frames, det, matched, unzoom, searchb;\n"
"function el(id) { return document.getElementById(id); }\n"
"function label(f, w) {\n"
"\tvar n = Math.floor(w / cw), s = f.name;\n"
"\tif (f === F[0]) s = \"all\";\n"
"\tif (n < 3) return \"\";\n"
"\treturn s.length > n ? s.slice(0, n - 2) + \"..\" : s;\n"
"}\n"
"/* Redraw one frame; attributes that keep their value are not touched,\n"
" * since each change costs the browser layout work. */\n"
"function place(f, x, w, anc) {\n"
"\tvar xs = x.toFixed(2), ws = w.toFixed(2), lab = label(f, w);\n"
"\tif (xs !== f.xs) {\n"
"\t\tf.r.setAttribute(\"x\", xs);\n"
"\t\tf.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
"\t\tf.xs = xs;\n"
"\t}\n"
"\tif (ws !== f.ws) {\n"
"\t\tf.r.setAttribute(\"width\", ws);\n"
"\t\tf.ws = ws;\n"
"\t}\n"
"\tif (lab !== f.lab) {\n"
"\t\tf.t.textContent = lab;\n"
"\t\tf.lab = lab;\n"
"\t}\n"
"\tif (!f.vis) {\n"
"\t\tf.g.classList.remove(\"hide\");\n"
"\t\tf.vis = true;\n"
"\t}\n"
"\tif (anc !== f.anc) {\n"
"\t\tf.g.classList.toggle(\"anc\", anc);\n"
"\t\tf.anc = anc;\n"
"\t}\n"
"}\n"
"function hide(f) {\n"
"\tif (f.vis) {\n"
"\t\tf.g.classList.add(\"hide\");\n"
"\t\tf.vis = false;\n"
"\t}\n"
"}\n"
"function zoom(z) {\n"
"\tvar s = (W - 2 * xpad) / z.w, i, f;\n"
"\tfor (i = 0; i < F.length; i++) {\n"
"\t\tf = F[i];\n"
"\t\tif (f.d < z.d) {\n"
"\t\t\tif (f.x <= z.x && f.x + f.w >= z.x + z.w)\n"
"\t\t\t\tplace(f, xpad, W - 2 * xpad, true);\n"
"\t\t\telse\n"
"\t\t\t\thide(f);\n"
"\t\t} else if (f.x >= z.x && f.x + f.w <= z.x + z.w) {\n"
"\t\t\tplace(f, xpad + (f.x - z.x) * s, f.w * s, false);\n"
"\t\t} else {\n"
"\t\t\thide(f);\n"
"\t\t}\n"
"\t}\n"
"\tzoomed = z === F[0] ? null : z;\n"
"\tunzoom.classList.toggle(\"hide\", !zoomed);\n"
"}\n"
"function reset() { zoom(F[0]); }\n"
"function search(term) {\n"
"\tvar i, f, hits = [], sum = 0, end = -1;\n"
"\tfor (i = 0; i < F.length; i++) {\n"
"\t\tf = F[i];\n"
"\t\tif (f.hit) f.r.setAttribute(\"fill\", f.fill);\n"
"\t\tf.hit = false;\n"
"\t}\n"
"\tre = null;\n"
"\tif (term) {\n"
"\t\ttry {\n"
"\t\t\tre = new RegExp(term);\n"
"\t\t} catch (e) {\n"
"\t\t\tre = new RegExp(term.replace(/[.*+?^${}()|[\\]\\\\\\/]/g, \"\\\\$&\"));\n"
"\t\t}\n"
"\t}\n"
"\tif (!re) {\n"
"\t\tmatched.textContent = \" \";\n"
"\t\tsearchb.textContent = \"Search\";\n"
"\t\treturn;\n"
"\t}\n"
"\tfor (i = 1; i < F.length; i++) {\n"
"\t\tf = F[i];\n"
"\t\tif (!re.test(f.name)) continue;\n"
"\t\tf.hit = true;\n"
"\t\tf.r.setAttribute(\"fill\", HL);\n"
"\t\thits.push(f);\n"
"\t}\n"
"\t/* Frames nest or are disjoint: count each outermost hit once. */\n"
"\thits.sort(function (a, b) { return a.x - b.x || a.d - b.d; });\n"
"\tfor (i = 0; i < hits.length; i++) {\n"
"\t\tif (hits[i].x >= end) {\n"
"\t\t\tsum += hits[i].w;\n"
"\t\t\tend = hits[i].x + hits[i].w;\n"
"\t\t}\n"
"\t}\n"
"\tmatched.textContent = \"Matched: \" + (100 * sum / total).toFixed(2) + \"%\";\n"
"\tsearchb.textContent = \"Reset Search\";\n"
"}\n"
"function ask() {\n"
"\tvar t = window.prompt(\"Search frames (regular expression):\", \"\");\n"
"\tif (t) search(t);\n"
"}\n"
"function frameOf(e) {\n"
"\tvar g = e.target;\n"
"\twhile (g && g.parentNode !== frames) g = g.parentNode;\n"
"\treturn g ? F[g.fgIndex] : null;\n"
"}\n"
"function init() {\n"
"\tvar svg = el(\"flamegraph\"), gs, i, g, r, t, ti, p;\n"
"\tframes = el(\"frames\");\n"
"\tdet = el(\"details\");\n"
"\tmatched = el(\"matched\");\n"
"\tunzoom = el(\"unzoom\");\n"
"\tsearchb = el(\"search\");\n"
"\tW = +svg.getAttribute(\"width\");\n"
"\txpad = +svg.getAttributeNS(NS, \"xpad\");\n"
"\tcw = +svg.getAttributeNS(NS, \"charwidth\");\n"
"\tfh = +svg.getAttributeNS(NS, \"frameheight\");\n"
"\tgs = frames.children;\n"
"\tfor (i = 0; i < gs.length; i++) {\n"
"\t\tg = gs[i];\n"
"\t\tr = g.getElementsByTagName(\"rect\")[0];\n"
"\t\tti = g.getElementsByTagName(\"title\")[0].textContent;\n"
"\t\tp = ti.lastIndexOf(\" (\");\n"
"\t\tg.fgIndex = i;\n"
"\t\tt = g.getElementsByTagName(\"text\")[0];\n"
"\t\tF.push({ g: g, r: r, t: t,\n"
"\t\t\tx: +r.getAttributeNS(NS, \"x\"), w: +r.getAttributeNS(NS, \"w\"),\n"
"\t\t\ty: +r.getAttribute(\"y\"), d: 0, title: ti,\n"
"\t\t\tname: p < 0 ? ti : ti.slice(0, p),\n"
"\t\t\tfill: r.getAttribute(\"fill\"), hit: false,\n"
"\t\t\txs: r.getAttribute(\"x\"), ws: r.getAttribute(\"width\"),\n"
"\t\t\tlab: t.textContent, vis: true, anc: false });\n"
"\t}\n"
"\tif (!F.length) return;\n"
"\ttotal = F[0].w;\n"
"\tfor (i = 0; i < F.length; i++)\n"
"\t\tF[i].d = Math.round(Math.abs(F[i].y - F[0].y) / fh);\n"
"\tframes.addEventListener(\"click\", function (e) {\n"
"\t\tvar f = frameOf(e);\n"
"\t\tif (f) zoom(f);\n"
"\t});\n"
"\tframes.addEventListener(\"mouseover\", function (e) {\n"
"\t\tvar f = frameOf(e);\n"
"\t\tif (f) det.textContent = f.title;\n"
"\t});\n"
"\tframes.addEventListener(\"mouseout\", function () {\n"
"\t\tdet.textContent = \" \";\n"
"\t});\n"
"\tunzoom.addEventListener(\"click\", reset);\n"
"\tsearchb.addEventListener(\"click\", function () {\n"
"\t\tif (re) search(null); else ask();\n"
"\t});\n"
"\twindow.addEventListener(\"keydown\", function (e) {\n"
"\t\tif (((e.ctrlKey || e.metaKey) && e.key === \"f\") || e.key === \"F3\") {\n"
"\t\t\te.preventDefault();\n"
"\t\t\task();\n"
"\t\t} else if (e.key === \"Escape\") {\n"
"\t\t\tsearch(null);\n"
"\t\t\treset();\n"
"\t\t}\n"
"\t});\n"
"\tsvg.setAttribute(\"data-ready\", \"1\");\n"
"}\n"
"if (document.readyState === \"loading\")\n"
"\tdocument.addEventListener(\"DOMContentLoaded\", init);\n"
"else\n"
"\tinit();\n"
"})();\n";

static const char style[] =
"#flamegraph text { font-family: Verdana, \"DejaVu Sans\", sans-serif; "
"font-size: 12px; fill: #000; }\n"
"#title { text-anchor: middle; font-size: 17px; }\n"
"#subtitle { text-anchor: middle; fill: #555; }\n"
"#frames g { cursor: pointer; }\n"
"#frames text { pointer-events: none; }\n"
"#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
"#unzoom, #search { cursor: pointer; }\n"
"#search, #matched { text-anchor: end; }\n"
".anc { opacity: 0.5; }\n"
".hide { display: none; }\n";

static void put_header(FILE *f, const struct layout *L,
		       const struct flame_stats *st)
{
	const struct flame_opts *o = L->o;
	const char *title = o->title;
	const char *mode = L->base ? "diff" : o->icicle ? "icicle" : "flame";

	if (!title)
		title = L->base ? "Differential Flame Graph" :
			o->icicle ? "Icicle Graph" : "Flame Graph";
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" "
		   "standalone=\"yes\"?>\n");
	fprintf(f, "<svg version=\"1.1\" id=\"flamegraph\" width=\"%u\" "
		   "height=\"%u\" viewBox=\"0 0 %u %u\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" xmlns:fg=\"%s\" "
		   "fg:xpad=\"%d\" fg:frameheight=\"%d\" fg:charwidth=\"%.2f\" "
		   "fg:mode=\"%s\">\n",
		o->width, L->height, o->width, L->height, svg_ns, XPAD,
		FRAME_H, FONT_SIZE * FONT_WIDTH, mode);
	fprintf(f, "<!-- sym flamegraph: %zu frames drawn, %zu narrower than "
		   "%.2f px left out -->\n",
		st->drawn, st->omitted, st->minwidth_px);
	fprintf(f, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\">"
		   "<stop stop-color=\"%s\" offset=\"5%%\"/>"
		   "<stop stop-color=\"%s\" offset=\"95%%\"/>"
		   "</linearGradient></defs>\n",
		L->base ? "#fafafa" : "#eeeeee",
		L->base ? "#e8e8e8" : "#eeeeb0");
	fprintf(f, "<style>\n%s</style>\n", style);
	fprintf(f, "<script><![CDATA[\n%s]]></script>\n", script);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
		   "fill=\"url(#background)\"/>\n", o->width, L->height);
	fprintf(f, "<text id=\"title\" x=\"%.1f\" y=\"%d\">", o->width / 2.0,
		FONT_SIZE * 2);
	put_str(f, title);
	fputs("</text>\n", f);
	if (o->subtitle) {
		fprintf(f, "<text id=\"subtitle\" x=\"%.1f\" y=\"%d\">",
			o->width / 2.0, FONT_SIZE * 7 / 2);
		put_str(f, o->subtitle);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD,
		L->height - L->bottom / 2);
	fprintf(f, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">"
		   "Reset Zoom</text>\n", XPAD, FONT_SIZE * 2);
	fprintf(f, "<text id=\"search\" x=\"%u\" y=\"%d\">Search</text>\n",
		o->width - XPAD, FONT_SIZE * 2);
	fprintf(f, "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n",
		o->width - XPAD, L->height - L->bottom / 2);
}

int flame_write(FILE *out, const struct stacktree *t,
		const struct flame_opts *opts, struct flame_stats *st)
{
	struct flame_opts defaults;
	struct flame_stats stats;
	struct layout L;
	int err;

	if (!opts) {
		flame_opts_init(&defaults);
		opts = &defaults;
	}
	memset(&L, 0, sizeof(L));
	memset(&stats, 0, sizeof(stats));
	L.t = t;
	L.base = opts->base;
	L.o = opts;
	L.total = stacktree_total(t, STACKTREE_ROOT);
	if (L.total == 0 || opts->width < 100 || opts->width > 100000 ||
	    !(opts->minwidth >= 0) || opts->minwidth > 1e9 ||
	    opts->max_frames < 1 || !opts->unit)
		return -EINVAL;
	if (L.base)
		L.base_total = stacktree_total(L.base, STACKTREE_ROOT);
	L.scale = (double)(opts->width - 2 * XPAD) / (double)L.total;
	err = choose_drawn(&L, &stats);
	if (err)
		goto out;
	if (L.base) {
		err = find_twins(&L);
		if (err)
			goto out;
	}
	L.top = FONT_SIZE * 3 + (opts->subtitle ? FONT_SIZE * 3 / 2 : 0);
	L.bottom = FONT_SIZE * 2 + 10;
	L.height = L.top + L.bottom + (unsigned)(L.max_depth + 1) * FRAME_H;
	put_header(out, &L, &stats);
	fputs("<g id=\"frames\">\n", out);
	err = put_frames(out, &L);
	if (err)
		goto out;
	fputs("</g>\n</svg>\n", out);
	if (fflush(out) != 0 || ferror(out))
		err = -EIO;
	if (st)
		*st = stats;
out:
	free(L.twin);
	free(L.depth);
	return err;
}
