/*
 * diff.c - `sym diff A B`: the functions whose share of the profile
 * changed from A to B by more than sampling noise explains (docs/views.md,
 * "Comparing profiles").
 *
 * A and B are read by the views' input layer (tools/view/views.h): raw,
 * symbolized raw or pprof, symbolized on the fly when they are not, each
 * into its own set of named stacks.  Per function name, on each side:
 *
 *   self   the value of the stacks whose leaf frame it is;
 *   total  the value of the stacks it occurs in, once per stack however
 *          often it recurs.
 *
 * A share is that over the side's whole value.  The two sides are
 * independent samples, so the question "did the share change?" is the
 * two-sample one of tools/view/stats.h: stats_diff_between() with Newcombe's
 * hybrid score interval, which holds for different sample counts, shares
 * at 0 and few samples.  With --value weight (a normalized merge, CPU
 * time) the shares are weighted, with an effective sample size from
 * stats_share_weighted(): the sum of squared weights of a stack is taken
 * as weight^2 / count, exact when a stack's samples weigh the same.
 *
 * An entry "changed" when the interval of B's share minus A's excludes 0
 * at the confidence level (--conf, 95% by default).  The changed ones are
 * listed first, most significant (largest |z|) first; with --all the rest
 * follow under "cannot tell apart", which means the difference seen is
 * within what sampling alone produces at these sample counts, not that
 * the shares are equal.  Testing many functions at 95% flags about 5% of
 * unchanged ones: use --conf 99.9 or so for a whole table.
 *
 * Broken stacks (tools/view/broken.h).  Two profiles whose shares of
 * flagged stacks differ beyond sampling noise (broken_compare(): B's
 * flagged share minus A's, Newcombe at 99.9%) were recorded differently:
 * an fp profile of a program without frame pointers against a dwarf one
 * moves every caller's total share by tens of points, which no row could
 * tell from a change of the program.  When one of the two is over 2%
 * flagged the comparison is refused (exit status 1) unless
 * --allow-broken; otherwise, or with it, every row is marked unreliable
 * ('!').  Each side also gets the views' warning when over 2%, and the
 * flagged stacks are compared as the entry "[broken stack]" like any
 * function (--broken=plain leaves that frame out).
 *
 * Exit status: 0 (whether or not something changed), 1 (an input could
 * not be read, or has no samples; the broken-stack shares differ and
 * --allow-broken was not given), 2 (usage).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "view/stats.h"
#include "tools.h"
#include "view/views.h"
#include "base.h"

enum { SELF, TOTAL, NKINDS };

/* One side's sums per name id of its views. */
struct side {
	struct views *v;
	const char *path;
	double *sum[NKINDS];	/* value */
	double *sq[NKINDS];	/* value^2 / count, per stack */
	uint64_t *cnt[NKINDS];	/* value, exact (for counts) */
	double all, all_sq;	/* whole profile */
	uint64_t all_cnt;
	size_t nnames;
};

/* One function: its name id on each side (0: absent there). */
struct fn {
	const char *name;	/* borrowed from a side's views */
	uint32_t id[2];
};

struct row {
	const struct fn *fn;
	int kind;
	double pa, pb;
	struct stats_diff d;
};

struct diff {
	struct side s[2];
	bool weight;		/* --value weight */
	struct broken_cmp broken;	/* the flagged shares of A and B */
	bool allow_broken;	/* --allow-broken */
	double conf;
	struct fn *fns;
	size_t nfns, capfns;
	uint32_t *slots;	/* name hash -> fns index + 1 */
	size_t nslots;
};

static void side_release(struct side *s)
{
	for (int k = 0; k < NKINDS; k++) {
		free(s->sum[k]);
		free(s->sq[k]);
		free(s->cnt[k]);
	}
	views_free(s->v);
	memset(s, 0, sizeof(*s));
}

/* The sums of one side, per name id. */
static int side_sums(struct side *s)
{
	size_t n = views_nnames(s->v), ns = views_nstacks(s->v);
	uint64_t *stamp = NULL;
	int err = -ENOMEM;

	s->nnames = n;
	for (int k = 0; k < NKINDS; k++) {
		s->sum[k] = calloc(n ? n : 1, sizeof(*s->sum[k]));
		s->sq[k] = calloc(n ? n : 1, sizeof(*s->sq[k]));
		s->cnt[k] = calloc(n ? n : 1, sizeof(*s->cnt[k]));
		if (!s->sum[k] || !s->sq[k] || !s->cnt[k])
			goto out;
	}
	stamp = calloc(n ? n : 1, sizeof(*stamp));
	if (!stamp)
		goto out;
	for (size_t i = 0; i < ns; i++) {
		const struct views_stack *st = views_stack(s->v, i);
		double v = (double)st->value;
		double q = st->count ? v * v / (double)st->count : 0;
		uint32_t leaf = st->frames[st->nframes - 1];

		s->all += v;
		s->all_sq += q;
		s->all_cnt += st->value;
		s->sum[SELF][leaf] += v;
		s->sq[SELF][leaf] += q;
		s->cnt[SELF][leaf] += st->value;
		for (uint32_t j = 0; j < st->nframes; j++) {
			uint32_t id = st->frames[j];

			if (stamp[id] == i + 1)
				continue;
			stamp[id] = i + 1;
			s->sum[TOTAL][id] += v;
			s->sq[TOTAL][id] += q;
			s->cnt[TOTAL][id] += st->value;
		}
	}
	err = 0;
out:
	free(stamp);
	return err;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/* The function named @name, made when absent. */
static struct fn *fn_get(struct diff *d, const char *name)
{
	size_t mask, i;

	if ((d->nfns + 1) * 2 > d->nslots) {
		size_t n = d->nslots ? d->nslots * 2 : 256;
		uint32_t *slots = calloc(n, sizeof(*slots));

		if (!slots)
			return NULL;
		for (size_t k = 0; k < d->nfns; k++) {
			for (i = name_hash(d->fns[k].name) & (n - 1); slots[i];
			     i = (i + 1) & (n - 1))
				;
			slots[i] = (uint32_t)k + 1;
		}
		free(d->slots);
		d->slots = slots;
		d->nslots = n;
	}
	mask = d->nslots - 1;
	for (i = name_hash(name) & mask; d->slots[i]; i = (i + 1) & mask)
		if (!strcmp(d->fns[d->slots[i] - 1].name, name))
			return &d->fns[d->slots[i] - 1];
	if (tool_grow(&d->fns, &d->capfns, d->nfns + 1, sizeof(*d->fns), 256))
		return NULL;
	d->fns[d->nfns] = (struct fn){ .name = name };
	d->slots[i] = (uint32_t)++d->nfns;
	return &d->fns[d->nfns - 1];
}

/* The union of both sides' names that have a value. */
static int join(struct diff *d)
{
	for (int k = 0; k < 2; k++) {
		struct side *s = &d->s[k];

		for (uint32_t id = 1; id < s->nnames; id++) {
			struct fn *f;

			if (!s->cnt[TOTAL][id] && !s->sum[TOTAL][id])
				continue;
			f = fn_get(d, views_name(s->v, id, NULL));
			if (!f)
				return -ENOMEM;
			f->id[k] = id;
		}
	}
	return 0;
}

/* The share of name @id (0: absent) on side @s. */
static int share(const struct diff *d, const struct side *s, int kind,
		 uint32_t id, struct stats_share *out)
{
	if (!d->weight)
		return stats_share_counts(id ? s->cnt[kind][id] : 0,
					  s->all_cnt, out);
	/* Rounding can leave a part a hair above the whole. */
	return stats_share_weighted(id ? fmin(s->sum[kind][id], s->all) : 0,
				    id ? fmin(s->sq[kind][id], s->all_sq) : 0,
				    s->all, s->all_sq, out);
}

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	double za = fabs(a->d.z), zb = fabs(b->d.z);
	double da = fabs(a->d.diff), db = fabs(b->d.diff);
	int c;

	if (a->d.differ != b->d.differ)
		return a->d.differ ? -1 : 1;
	if (za != zb)
		return za > zb ? -1 : 1;
	if (da != db)
		return da > db ? -1 : 1;
	c = strcmp(a->fn->name, b->fn->name);
	return c ? c : a->kind - b->kind;
}

static int make_rows(struct diff *d, struct row **out, size_t *n)
{
	struct row *r = calloc(d->nfns * NKINDS + 1, sizeof(*r));
	size_t nr = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < d->nfns; i++) {
		const struct fn *f = &d->fns[i];

		for (int k = 0; k < NKINDS; k++) {
			struct stats_share a, b;
			struct row *row = &r[nr];
			int err;

			/* Self 0 on both sides: nothing to compare. */
			if (!(f->id[0] && d->s[0].sum[k][f->id[0]]) &&
			    !(f->id[1] && d->s[1].sum[k][f->id[1]]))
				continue;
			err = share(d, &d->s[0], k, f->id[0], &a);
			if (!err)
				err = share(d, &d->s[1], k, f->id[1], &b);
			/* B - A: the change from A to B. */
			if (!err)
				err = stats_diff_between(&b, &a, d->conf,
							 STATS_NEWCOMBE,
							 &row->d);
			if (err) {
				free(r);
				return err;
			}
			row->fn = f;
			row->kind = k;
			row->pa = a.p;
			row->pb = b.p;
			nr++;
		}
	}
	qsort(r, nr, sizeof(*r), cmp_row);
	*out = r;
	*n = nr;
	return 0;
}

/* The rows; @mark: each one marked unreliable ('!'). */
static void put_rows(FILE *f, const struct row *r, size_t n, bool mark)
{
	fprintf(f, "%s%-5s %8s %8s %8s  %-19s %7s  %s\n", mark ? "  " : "",
		"", "A", "B", "change", "interval", "z", "function");
	for (size_t i = 0; i < n; i++) {
		char iv[48];

		snprintf(iv, sizeof(iv), "[%+.2f, %+.2f]", 100 * r[i].d.lo,
			 100 * r[i].d.hi);
		fprintf(f, "%s%-5s %7.2f%% %7.2f%% %+8.2f  %-19s %7.1f  %s\n",
			mark ? "! " : "",
			r[i].kind == SELF ? "self" : "total", 100 * r[i].pa,
			100 * r[i].pb, 100 * r[i].d.diff, iv, r[i].d.z,
			r[i].fn->name);
	}
}

static void put_side(FILE *f, const char *which, const struct side *s,
		     const char *unit)
{
	const struct views_input *in = views_input(s->v, 0);

	fprintf(f, "%s: %s, %llu samples", which, s->path,
		(unsigned long long)in->samples);
	if (strcmp(unit, "samples"))
		fprintf(f, ", %.6g %s", s->all, unit);
	if (in->flagged)
		fprintf(f, "; %llu with broken stacks (%.2f%%)",
			(unsigned long long)in->flagged,
			100.0 * (double)in->flagged / (double)in->samples);
	fputc('\n', f);
}

/* "A 12.00%, B 0.38%; B - A -11.62 points, 99.9% interval [...]". */
static void put_broken_shares(FILE *f, const struct broken_cmp *c)
{
	fprintf(f, "A %.2f%%, B %.2f%%; B - A %+.2f points, %g%% interval "
		   "[%+.2f, %+.2f]", 100 * c->pa, 100 * c->pb,
		100 * c->d.diff, 100 * BROKEN_DIFF_CONF, 100 * c->d.lo,
		100 * c->d.hi);
}

/* Refuse the comparison (before any output): the message. */
static void put_refusal(const struct diff *d)
{
	fflush(stdout);
	fprintf(stderr, "%s: cannot compare '%s' and '%s': their shares of "
			"broken stacks differ beyond sampling noise (",
		tool_prog(), d->s[0].path, d->s[1].path);
	put_broken_shares(stderr, &d->broken);
	fprintf(stderr, "): a change of shares would show how the stacks were "
			"recorded, not what the program did\n");
	fprintf(stderr, "%s: record both the same way (the warnings above say "
			"how), or pass --allow-broken to compare anyway, every "
			"row marked unreliable\n", tool_prog());
}

static int report(struct diff *d, FILE *f, bool all, size_t top)
{
	struct row *r = NULL;
	size_t n = 0, nch = 0, shown;
	const char *unit = views_unit(d->s[0].v);
	bool mark = d->broken.differ;
	int err = make_rows(d, &r, &n);

	if (err)
		return err;
	while (nch < n && r[nch].d.differ)
		nch++;
	put_side(f, "A", &d->s[0], unit);
	put_side(f, "B", &d->s[1], unit);
	fprintf(f, "Shares of %s%s; change = B - A in percentage points, "
		   "with its %g%%\ninterval (Newcombe) and z; most "
		   "significant first.\n",
		unit, d->weight ? " (weighted)" : "", 100 * d->conf);
	if (mark) {
		fprintf(f, "UNRELIABLE: the shares of broken stacks differ "
			   "beyond sampling noise\n(");
		put_broken_shares(f, &d->broken);
		fprintf(f, "):\nevery row (marked !) may show how the stacks "
			   "were recorded rather than\nwhat the program did "
			   "(%s).\n", d->broken.refuse ?
			   "compared because of --allow-broken" :
			   "not refused: neither profile is over 2% broken");
	}
	fputc('\n', f);
	shown = top && top < nch ? top : nch;
	fprintf(f, "Changed: %zu of %zu entries (self and total)%s\n", nch,
		n, nch ? ":" : ".");
	if (shown)
		put_rows(f, r, shown, mark);
	if (shown < nch)
		fprintf(f, "... and %zu more (--top 0 shows all)\n",
			nch - shown);
	if (!all) {
		if (n > nch)
			fprintf(f, "\nCannot tell apart at these sample "
				   "counts: %zu entries (--all lists them).\n",
				n - nch);
	} else if (n > nch) {
		fprintf(f, "\nCannot tell apart at these sample counts (the "
			   "change is within sampling\nnoise; not a proof "
			   "that nothing changed): %zu entries:\n", n - nch);
		put_rows(f, r + nch, n - nch, mark);
	}
	free(r);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: sym diff [options] A B\n\n"
		"The functions whose share of samples changed from profile A "
		"to profile B by\nmore than sampling noise explains: self "
		"(leaf) and total (on the stack)\nshares, the change in "
		"percentage points, its confidence interval\n(Newcombe's "
		"score interval, tools/view/stats.h) and z; most significant "
		"first.\nA and B are raw, symbolized raw or pprof profiles, "
		"symbolized on the fly.\n\n"
		"  -a, --all            also list the entries that cannot be "
		"told apart\n"
		"  -c, --conf PCT       confidence level in percent, 50 to "
		"99.9999 (default\n"
		"                       95); for a whole table a stricter one "
		"(99.9) flags\n"
		"                       fewer unchanged functions by chance\n"
		"  -n, --top N          list at most N changed entries "
		"(default 50, 0: all)\n"
		"  -o, --output OUT     write OUT (atomically) instead of "
		"stdout\n"
		"  --value=WHAT         samples (default), weight: the "
		"profiles' weights\n"
		"                       (a normalized merge, CPU time), or a "
		"value type\n"
		"                       (alloc_space, inuse_space...), with "
		"effective\n"
		"                       sample sizes\n"
		"  --allow-broken       compare even when the two profiles' "
		"shares of broken\n"
		"                       stacks (flagged by the recorder) "
		"differ beyond\n"
		"                       sampling noise and one is over 2%%; "
		"every row is\n"
		"                       then marked unreliable ('!')\n"
		"  --broken=MODE        mark: flagged stacks under a [broken "
		"stack] root\n"
		"                       frame, compared as an entry (default); "
		"plain: as\n"
		"                       recorded\n"
		"  --server URL, --store DIR, --wait-ms MS, --kallsyms FILE, -q, -v\n"
		"                       how to symbolize (as sym symbolize)\n"
		"  --comm, --pid, --tid, --kernel, --jit, --inline=MODE,\n"
		"  --granularity=G, --focus=RE, --ignore=RE, --hide=RE\n"
		"                       how frames are named (as sym fold); "
		"note that --all\n"
		"                       here is not --kernel --jit\n"
		"  -h, --help           this text\n\n"
		"Exit status 0 whether or not something changed, 1 for an "
		"input that\ncannot be read or has no samples, or profiles "
		"whose broken stacks differ\n(without --allow-broken), 2 for "
		"bad usage.  docs/views.md,\n\"Comparing profiles\".\n");
}

int cmd_diff(int argc, char **argv)
{
	enum { OPT_ALLOW_BROKEN = 256 };
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "conf", required_argument, NULL, 'c' },
		{ "top", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		TOOL_SYMBOLIZE_OPTIONS,
		{ "from", required_argument, NULL, VIEWS_OPT_FROM },
		{ "comm", no_argument, NULL, VIEWS_OPT_COMM },
		{ "pid", no_argument, NULL, VIEWS_OPT_PID },
		{ "tid", no_argument, NULL, VIEWS_OPT_TID },
		{ "kernel", no_argument, NULL, VIEWS_OPT_KERNEL },
		{ "jit", no_argument, NULL, VIEWS_OPT_JIT },
		{ "inline", required_argument, NULL, VIEWS_OPT_INLINE },
		{ "value", required_argument, NULL, VIEWS_OPT_VALUE },
		{ "quiet", no_argument, NULL, VIEWS_OPT_QUIET },
		{ "verbose", no_argument, NULL, VIEWS_OPT_VERBOSE },
		{ "broken", required_argument, NULL, VIEWS_OPT_BROKEN },
		{ "granularity", required_argument, NULL,
		  VIEWS_OPT_GRANULARITY },
		{ "focus", required_argument, NULL, VIEWS_OPT_FOCUS },
		{ "ignore", required_argument, NULL, VIEWS_OPT_IGNORE },
		{ "hide", required_argument, NULL, VIEWS_OPT_HIDE },
		{ "allow-broken", no_argument, NULL, OPT_ALLOW_BROKEN },
		{ NULL, 0, NULL, 0 },
	};
	struct views_opts vo = { .no_folded = true };
	struct diff d = { .conf = STATS_CONF_DEFAULT };
	struct views_out out = { 0 };
	const char *dst = NULL;
	unsigned long long top = 50;
	bool all = false;
	char *end;
	int c, rc, err;

	vo.sym.wait_ms = 30000;
	while ((c = getopt_long(argc, argv, "ac:n:o:qvh", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'a':
			all = true;
			break;
		case 'c':
			errno = 0;
			d.conf = strtod(optarg, &end) / 100;
			if (errno || end == optarg || *end ||
			    !(d.conf >= 0.5) || !(d.conf <= 0.999999)) {
				tool_err("--conf: '%s' is not a percentage "
					 "from 50 to 99.9999", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'n':
			errno = 0;
			top = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-') {
				tool_err("--top '%s' is not a count", optarg);
				return TOOL_EXIT_USAGE;
			}
			break;
		case 'o':
			dst = optarg;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		case OPT_ALLOW_BROKEN:
			d.allow_broken = true;
			break;
		default:
			rc = views_getopt(c, optarg, &vo);
			if (rc > 0)
				break;
			if (!rc)
				usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind + 2 != argc) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (vo.sym.server && vo.sym.store_dir) {
		tool_err("--server and --store exclude each other");
		return TOOL_EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "-") && !strcmp(argv[optind + 1], "-")) {
		tool_err("stdin ('-') can be read only once");
		return TOOL_EXIT_USAGE;
	}
	d.weight = vo.flags & VIEWS_WEIGHT;
	rc = TOOL_EXIT_FAIL;
	for (int k = 0; k < 2; k++) {
		struct side *s = &d.s[k];

		s->path = argv[optind + k];
		err = views_new(vo.flags, &s->v);
		if (!err)
			err = views_set_filters(s->v, &vo);
		if (err == -EINVAL)
			goto out;	/* (said) */
		if (err) {
			tool_err_code(s->path, err);
			goto out;
		}
		if (views_load(s->v, s->path, &vo))
			goto out;
		err = side_sums(s);
		if (err) {
			tool_err_code(s->path, err);
			goto out;
		}
		if (!s->all_cnt) {
			tool_err("'%s': no samples to compare", s->path);
			goto out;
		}
		views_warn_broken(s->v);
	}
	/* It fails only for a side without samples (its weights without
	 * counts): nothing to test, d.broken stays zero. */
	(void)broken_compare(&views_input(d.s[0].v, 0)->broken,
		       &views_input(d.s[1].v, 0)->broken, &d.broken);
	if (d.broken.refuse && !d.allow_broken) {
		put_refusal(&d);
		goto out;
	}
	err = join(&d);
	if (!err)
		err = views_out_open(&out, dst);
	if (err) {
		if (err == -ENOMEM)
			tool_err("out of memory");
		goto out;
	}
	err = report(&d, out.f, all, (size_t)top);
	if (err)
		tool_err("out of memory");
	if (!views_out_close(&out, !err) && !err)
		rc = TOOL_EXIT_OK;
out:
	side_release(&d.s[0]);
	side_release(&d.s[1]);
	free(d.fns);
	free(d.slots);
	return rc;
}
