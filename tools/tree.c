/*
 * tree.c - `sym tree [--inverted] [--min PCT] [options] [IN...]`: the call
 * tree of a profile as text, with self and total samples, counts and
 * percentages.
 *
 * Top-down (the default), the root's children are the outermost frames
 * (main, thread starts), each node's children the functions it called; a
 * node's *total* is the samples whose stack passes through that path, its
 * *self* the samples whose stack ends there.  --inverted (bottom-up) reads
 * every stack from its leaf: the top level is the functions that were
 * running, with their self samples as their total, and below each are its
 * callers.  Both are stacktree.h's trie, so in both total = self + the
 * children's totals, and the root's total is every sample.
 *
 * Children are sorted by total, largest first (then by name, bytewise,
 * so the output depends on the profile alone).  Nodes whose total is
 * under --min percent of all samples are left out, and each parent that
 * lost some gets one line "[N more under X%]" with their summed total in
 * their place, so that the numbers still add up.
 *
 * Stacks the recorder flagged as likely wrong hang under "[broken stack]"
 * (views.h), and a header line says how many samples they hold, by flag.
 *
 * The walk is iterative (stacks can be thousands of frames deep) and
 * sorts each node's children once, when the node is printed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "view/views.h"
#include "base.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: sym tree [options] [IN...]\n"
"\n"
"Print the call tree of a profile: top-down (callers above callees), or\n"
"bottom-up with --inverted (running functions on top, their callers\n"
"below).  Each line is a node: total (samples through it) and self\n"
"(samples ending in it), as counts and percentages of all samples, then\n"
"its name, indented by depth.  total = self + the children's totals.\n"
"Several inputs are added together; without one, stdin is read.\n"
"\n"
"  --inverted            bottom-up: leaf functions first, callers below\n"
"  --min PCT             leave out nodes under PCT%% of all samples\n"
"                        (default 0.5; 0 keeps every node); each parent\n"
"                        that lost some says how many and their total\n"
"  -o, --output FILE     write FILE (atomically) instead of stdout\n"
"  -h, --help            this help\n"
"\n"
"%s"
"\n"
"Exit status: 0, 1 when an input cannot be read (or has no samples), 2 on\n"
"a usage error.  See docs/views.md and sym(1).\n", VIEWS_USAGE);
}

/* One line to print: a node, or the summary of a node's pruned children. */
struct item {
	uint32_t node;		/* the node, or the parent of the pruned */
	uint32_t depth;
	uint32_t pruned;	/* 0: a node; else how many were left out */
	uint64_t total;		/* the pruned ones' total */
};

struct walk {
	const struct stacktree *t;
	uint64_t all;		/* root total */
	uint64_t min;		/* smallest total printed */
	double min_pct;
	int width;		/* of the count columns */
	FILE *f;
	struct item *stack;
	size_t n, cap;
	uint32_t *kids;
	size_t kids_cap;
};

static double pct(uint64_t k, uint64_t n)
{
	return n ? 100.0 * (double)k / (double)n : 0;
}

/* Larger total first, then name bytewise. */
static int cmp_kids(const void *a, const void *b, void *arg)
{
	const struct stacktree *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = stacktree_total(t, x), ty = stacktree_total(t, y);
	size_t lx, ly;
	const char *nx, *ny;
	int c;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	nx = stacktree_name(t, x, &lx);
	ny = stacktree_name(t, y, &ly);
	c = memcmp(nx, ny, lx < ly ? lx : ly);
	if (c)
		return c;
	return lx < ly ? -1 : lx > ly;
}

static int push(struct walk *w, struct item it)
{
	if (tool_grow(&w->stack, &w->cap, w->n + 1, sizeof(*w->stack), 256))
		return -ENOMEM;
	w->stack[w->n++] = it;
	return 0;
}

/* Queue the children of @it (pushed in reverse, so popped sorted). */
static int push_kids(struct walk *w, const struct item *it)
{
	struct item sum = { .node = it->node, .depth = it->depth + 1 };
	size_t nk = 0, i;
	uint32_t c;
	int err;

	for (c = stacktree_first_child(w->t, it->node); c != STACKTREE_NONE;
	     c = stacktree_next_sibling(w->t, c)) {
		if (stacktree_total(w->t, c) < w->min) {
			sum.pruned++;
			sum.total += stacktree_total(w->t, c);
			continue;
		}
		if (tool_grow(&w->kids, &w->kids_cap, nk + 1,
			      sizeof(*w->kids), 64))
			return -ENOMEM;
		w->kids[nk++] = c;
	}
	if (sum.pruned) {
		err = push(w, sum);
		if (err)
			return err;
	}
	qsort_r(w->kids, nk, sizeof(*w->kids), cmp_kids, (void *)w->t);
	for (i = nk; i-- > 0;) {
		err = push(w, (struct item){ .node = w->kids[i],
					     .depth = it->depth + 1 });
		if (err)
			return err;
	}
	return 0;
}

static void put_line(struct walk *w, const struct item *it)
{
	uint64_t total = it->pruned ? it->total
				    : stacktree_total(w->t, it->node);
	const char *name;
	size_t len;

	fprintf(w->f, "%*llu %7.2f%%  ", w->width, (unsigned long long)total,
		pct(total, w->all));
	if (it->pruned)
		fprintf(w->f, "%*s %8s  ", w->width, "-", "-");
	else
		fprintf(w->f, "%*llu %7.2f%%  ", w->width,
			(unsigned long long)stacktree_self(w->t, it->node),
			pct(stacktree_self(w->t, it->node), w->all));
	fprintf(w->f, "%*s", 2 * (int)it->depth, "");
	if (it->pruned) {
		fprintf(w->f, "[%u more under %.2f%%]\n", it->pruned,
			w->min_pct);
	} else if (it->node == STACKTREE_ROOT) {
		fputs("[all]\n", w->f);
	} else {
		name = stacktree_name(w->t, it->node, &len);
		fwrite(name, 1, len, w->f);
		fputc('\n', w->f);
	}
}

/* Print @t (root total @all) to @f; @v's inputs, read with @flags
 * (enum views_flags), for the header. */
static int print_tree(const struct stacktree *t, const struct views *v,
		      uint32_t flags, double min_pct, bool inverted, FILE *f)
{
	const char *unit = views_unit(v);
	struct broken_tally b;
	char list[160];
	struct walk w = { .t = t, .f = f, .min_pct = min_pct };
	struct item it;
	char digits[32];
	int err = 0;

	w.all = stacktree_total(t, STACKTREE_ROOT);
	/* The smallest total kept: at least min_pct% of all, exactly. */
	w.min = (uint64_t)((double)w.all * min_pct / 100.0);
	while (w.min > 0 && pct(w.min - 1, w.all) >= min_pct)
		w.min--;
	while (pct(w.min, w.all) < min_pct)
		w.min++;
	w.width = snprintf(digits, sizeof(digits), "%llu",
			   (unsigned long long)w.all);
	if (w.width < 5)
		w.width = 5;
	fprintf(f, "# sym tree: %s, %llu %s; total = self + children's "
		   "totals", inverted ? "bottom-up (callers below the "
		   "functions they called)" : "top-down (callees below their "
		   "callers)", (unsigned long long)w.all, unit);
	if (min_pct > 0)
		fprintf(f, "; nodes under %.2f%% left out", min_pct);
	/* Broken stacks, however few: a line saying where they are. */
	views_broken(v, &b);
	broken_list(&b, list, sizeof(list));
	if (b.flagged)
		fprintf(f, "\n# %llu samples (%.2f%%) have broken stacks "
			   "(%s): %s", (unsigned long long)b.flagged,
			pct(b.flagged, b.samples), list,
			flags & VIEWS_BROKEN_PLAIN ?
			"shown as recorded (--broken=plain)" :
			"they are under " BROKEN_FRAME);
	fprintf(f, "\n%*s %8s  %*s %8s  %s\n", w.width, "total", "%",
		w.width, "self", "%", inverted ? "function <- caller" :
		"caller -> callee");
	err = push(&w, (struct item){ .node = STACKTREE_ROOT });
	while (!err && w.n) {
		it = w.stack[--w.n];
		put_line(&w, &it);
		if (!it.pruned)
			err = push_kids(&w, &it);
	}
	free(w.stack);
	free(w.kids);
	return err;
}

int cmd_tree(int argc, char **argv)
{
	enum { OPT_INVERTED = 256, OPT_MIN };
	static const struct option longopts[] = {
		VIEWS_OPTIONS,
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "min", required_argument, NULL, OPT_MIN },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct views_opts vo = { .need_samples = true };
	struct views_out out = { 0 };
	struct stacktree *t = NULL;
	struct views *v = NULL;
	const char *output = NULL;
	bool inverted = false;
	double min_pct = 0.5;
	int c, err, status = TOOL_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "o:hqv", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_INVERTED:
			inverted = true;
			break;
		case OPT_MIN:
			if (views_parse_number(optarg, 0, 100, &min_pct)) {
				tool_err("--min: '%s' is not a percentage "
					 "from 0 to 100", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		default:
			err = views_option(c, optarg, &vo, &output, usage);
			if (err >= 0)
				return err;
		}
	}

	if (views_read(argv + optind, (size_t)(argc - optind), &vo, &v))
		goto out;
	if (stacktree_new(&t)) {
		tool_err("out of memory");
		goto out;
	}
	err = views_tree(v, inverted, t);
	if (err) {
		tool_err("cannot build the tree: %s", strerror(-err));
		goto out;
	}
	if (views_out_open(&out, output))
		goto out;
	err = print_tree(t, v, vo.flags, min_pct, inverted, out.f);
	if (err)
		tool_err("out of memory");
	if (views_out_close(&out, !err) == 0 && !err)
		status = TOOL_EXIT_OK;
out:
	stacktree_free(t);
	views_free(v);
	return status;
}
