/*
 * report.c - `sym report [options] [IN...]`: the top functions of a
 * profile by self and by total samples, each share with its confidence
 * interval, and plain words on what the sample count cannot tell.
 *
 * A function's *self* samples are those whose leaf frame it is (it was
 * running); its *total* samples those whose stack holds it at least once
 * (it was running or waiting for a callee).  Names are the views' display
 * names (views.h), so an inlined function (mix_[i]) is an entry of its
 * own, and so is an unresolved frame (libfoo.so+0x1234).
 *
 * The statistics are tools/view/stats.h's, design note 4 of PRODUCT.md (see
 * docs/views.md, "Error bars and how to read them"):
 *   - each share k/n with its Wilson score interval (stats_wilson());
 *   - each pair of adjacent entries tested with the variance of the
 *     difference of two shares of ONE multinomial sample
 *     (stats_diff_within()): self shares are disjoint (k12 = 0); total
 *     shares overlap, and k12, the samples whose stack holds both
 *     functions, is counted here.  Overlapping intervals are not the
 *     test: two shares of one profile are negatively correlated;
 *   - no verdict for a pair with fewer than FEW_SAMPLES samples in one
 *     of the two but not both (the test is a normal approximation: at 5
 *     samples against 0 it says "differ" where the exact sign test gives
 *     p = 0.06; docs/views.md, "Few samples"): marked '?';
 *   - for each pair that cannot be told apart (or has too few samples),
 *     the samples that would tell them apart if the shares held
 *     (stats_n_apart(), power 0.5: the observed difference would just
 *     reach significance);
 *   - the samples a resolution of +-H points at the top entry's share
 *     needs (stats_n_wilson(), exact for the Wilson interval).
 * With --value weight the shares are weighted (stats_share_weighted()),
 * with effective sample sizes; the raw format keeps only each stack's
 * sum of weights, so its samples are taken as equally weighted.
 *
 * Stacks the recorder flagged as likely wrong are counted by flag in a
 * note; their totals go under "[broken stack]" (views.h), an entry of
 * the total table like a function, whose share is theirs.
 *
 * When the stacks come from two hosts or more (a merge with --spread, or
 * inputs of several hosts), the top functions' smallest, median and
 * largest share over the hosts follow (tools/view/report_spread.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "view/report_spread.h"
#include "view/stats.h"
#include "view/views.h"
#include "base.h"

/* Below this many samples in one of two entries but not both, the test
 * of the pair is not trusted: no verdict. */
#define FEW_SAMPLES 20

static void usage(FILE *f)
{
	fprintf(f,
"usage: sym report [options] [IN...]\n"
"\n"
"Print the top functions of a profile by self samples (the function was\n"
"running) and by total samples (it was on the stack), each share with its\n"
"confidence interval (Wilson score, binomial model).  Adjacent entries\n"
"that the sample count cannot tell apart (the difference of two shares of\n"
"one multinomial sample, not overlapping intervals) are marked '=', those\n"
"with under 20 samples in one but not both '?' (too few to compare), and\n"
"listed with the samples it would take to tell them apart; the last line\n"
"says how many samples a resolution of +-PP points at the top share needs.\n"
"When the stacks come from two hosts or more (sym merge --spread, or inputs\n"
"of several hosts), the top functions' smallest, median and largest share\n"
"over the hosts follow.\n"
"Several inputs are added together; without one, stdin is read.  Folded\n"
"stacks are not read: their counts may be periods, not samples.\n"
"\n"
"  --top N               entries per table (default 20)\n"
"  --resolution PP       the resolution asked about, in percentage points\n"
"                        (default 0.5)\n"
"  --conf PCT            confidence level of intervals and tests, in\n"
"                        percent (default 95)\n"
"  --explain             say in words what the intervals and marks mean\n"
"  -o, --output FILE     write FILE (atomically) instead of stdout\n"
"  -h, --help            this help\n"
"\n"
"%s"
"\n"
"Exit status: 0, 1 when an input cannot be read (or has no samples), 2 on\n"
"a usage error.  See docs/views.md and sym(1).\n", VIEWS_USAGE_PROFILE);
}

/* Per name: samples and weights, self and total. */
struct agg {
	uint64_t k[2];		/* [0] self, [1] total */
	double w[2], w2[2];	/* sums of weights and of their squares */
	size_t stamp;		/* last stack counted in total, + 1 */
};

/* One row of a table. */
struct row {
	uint32_t name;
	uint64_t k;
	double w, w2;
	struct stats_share share;	/* p and (effective) n */
	struct stats_interval ci;
	/* Against the next row: k12 (samples holding both), and the test. */
	uint64_t k12;
	double w12;
	struct stats_diff d;
	bool same_as_next;	/* cannot be told apart from the next row */
	bool few;		/* too few samples to compare with the next */
	double discordant;	/* samples in one of the two but not both */
};

struct report {
	const struct views *v;
	bool weighted;
	bool broken_plain;	/* --broken=plain */
	bool explain;		/* --explain: what the numbers mean, in words */
	double conf, res;	/* fractions */
	size_t top;
	uint64_t n;		/* samples */
	double wn, w2n;		/* weights */
	double n_eff;		/* Kish's, weighted */
	struct agg *a;
	size_t na;
	FILE *f;
	int width;
};

/* The weight and squared weight of a stack's samples, equal weights. */
static void stack_w(const struct views_stack *s, double *w, double *w2)
{
	*w = (double)s->weight;
	*w2 = s->count ? *w * *w / (double)s->count : *w * *w;
}

static int aggregate(struct report *r)
{
	const struct views *v = r->v;

	r->na = views_nnames(v);
	r->a = calloc(r->na ? r->na : 1, sizeof(*r->a));
	if (!r->a)
		return -ENOMEM;
	for (size_t i = 0; i < views_nstacks(v); i++) {
		const struct views_stack *s = views_stack(v, i);
		struct agg *leaf = &r->a[s->frames[s->nframes - 1]];
		double w, w2;

		stack_w(s, &w, &w2);
		r->n += s->count;
		r->wn += w;
		r->w2n += w2;
		leaf->k[0] += s->count;
		leaf->w[0] += w;
		leaf->w2[0] += w2;
		for (uint32_t j = 0; j < s->nframes; j++) {
			struct agg *g = &r->a[s->frames[j]];

			if (g->stamp == i + 1)
				continue;	/* recursion: once a stack */
			g->stamp = i + 1;
			g->k[1] += s->count;
			g->w[1] += w;
			g->w2[1] += w2;
		}
	}
	r->n_eff = stats_n_eff(r->wn, r->w2n);
	return 0;
}

/* Order of a table: larger first (weight or samples), then name. */
struct rank_ctx {
	const struct report *r;
	int which;
};

static int cmp_rank(const void *x, const void *y, void *arg)
{
	const struct rank_ctx *c = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	const struct agg *ga = &c->r->a[a], *gb = &c->r->a[b];
	const char *na, *nb;
	size_t la, lb;
	int d;

	if (c->r->weighted && ga->w[c->which] != gb->w[c->which])
		return ga->w[c->which] > gb->w[c->which] ? -1 : 1;
	if (ga->k[c->which] != gb->k[c->which])
		return ga->k[c->which] > gb->k[c->which] ? -1 : 1;
	na = views_name(c->r->v, a, &la);
	nb = views_name(c->r->v, b, &lb);
	d = memcmp(na, nb, la < lb ? la : lb);
	return d ? d : (la < lb ? -1 : la > lb);
}

/* The rows of table @which (0 self, 1 total): the top entries. */
static int make_rows(struct report *r, int which, struct row **out,
		     size_t *nout)
{
	struct rank_ctx c = { r, which };
	uint32_t *ids = malloc(r->na * sizeof(*ids) + 1);
	struct row *rows = NULL;
	size_t n = 0, i;

	if (!ids)
		return -ENOMEM;
	for (i = 1; i < r->na; i++)
		if (r->a[i].k[which] || r->a[i].w[which] > 0)
			ids[n++] = (uint32_t)i;
	qsort_r(ids, n, sizeof(*ids), cmp_rank, &c);
	if (n > r->top)
		n = r->top;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		free(ids);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct agg *g = &r->a[ids[i]];

		rows[i].name = ids[i];
		rows[i].k = g->k[which];
		rows[i].w = g->w[which];
		rows[i].w2 = g->w2[which];
	}
	free(ids);
	*out = rows;
	*nout = n;
	return 0;
}

/* k12 of adjacent total rows: the samples whose stack holds both. */
static int count_overlaps(struct report *r, struct row *rows, size_t n)
{
	const struct views *v = r->v;
	int32_t *rank = malloc(r->na * sizeof(*rank) + 1);
	size_t *mark = calloc(n ? n : 1, sizeof(*mark));
	uint32_t *seen = malloc((n ? n : 1) * sizeof(*seen));

	if (!rank || !mark || !seen) {
		free(rank);
		free(mark);
		free(seen);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->na; i++)
		rank[i] = -1;
	for (size_t i = 0; i < n; i++)
		rank[rows[i].name] = (int32_t)i;
	for (size_t i = 0; i < views_nstacks(v); i++) {
		const struct views_stack *s = views_stack(v, i);
		size_t nseen = 0;
		double w, w2;

		for (uint32_t j = 0; j < s->nframes; j++) {
			int32_t k = rank[s->frames[j]];

			if (k >= 0 && mark[k] != i + 1) {
				mark[k] = i + 1;
				seen[nseen++] = (uint32_t)k;
			}
		}
		stack_w(s, &w, &w2);
		for (size_t j = 0; j < nseen; j++) {
			uint32_t k = seen[j];

			if (k + 1 < n && mark[k + 1] == i + 1) {
				rows[k].k12 += s->count;
				rows[k].w12 += w;
			}
		}
	}
	free(rank);
	free(mark);
	free(seen);
	return 0;
}

/* Shares, intervals and the tests of adjacent rows. */
static int compute(struct report *r, struct row *rows, size_t n)
{
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		struct row *x = &rows[i];

		if (r->weighted)
			err = stats_share_weighted(x->w, x->w2, r->wn,
						   r->w2n, &x->share);
		else
			err = stats_share_counts(x->k, r->n, &x->share);
		if (!err)
			err = stats_share_wilson(&x->share, r->conf, &x->ci);
	}
	for (size_t i = 0; !err && i + 1 < n; i++) {
		struct row *x = &rows[i], *y = &rows[i + 1];

		if (r->weighted)
			err = stats_diff_within_shares(
				x->share.p, y->share.p,
				r->wn > 0 ? x->w12 / r->wn : 0, r->n_eff,
				r->conf, &x->d);
		else
			err = stats_diff_within(x->k, y->k, x->k12, r->n,
						r->conf, &x->d);
		if (r->weighted)
			x->discordant = (x->share.p + y->share.p - 2 *
					 (r->wn > 0 ? x->w12 / r->wn : 0)) *
					r->n_eff;
		else
			x->discordant = (double)(x->k + y->k - 2 * x->k12);
		x->few = !err && x->discordant < FEW_SAMPLES;
		x->same_as_next = !err && !x->few && !x->d.differ;
	}
	return err;
}

static void put_table(struct report *r, const struct row *rows, size_t n,
		      int which)
{
	const char *unit = views_unit(r->v);
	FILE *f = r->f;

	fprintf(f, "\nTop %zu functions by %s %s", n, which ? "total" : "self",
		unit);
	if (r->explain)
		fprintf(f, " (%s)", which ? "on the stack: running or calling"
					  : "running when sampled");
	fputc('\n', f);
	fprintf(f, " rank %*s    share  %g%% interval       function\n",
		r->width, which ? "total" : "self", 100 * r->conf);
	for (size_t i = 0; i < n; i++) {
		const struct row *x = &rows[i];
		size_t len;
		const char *name = views_name(r->v, x->name, &len);

		fprintf(f, "%5zu %*llu  %6.2f%%  [%5.2f%%, %5.2f%%] %c  ",
			i + 1, r->width,
			(unsigned long long)(r->weighted ? (uint64_t)x->w
							 : x->k),
			100 * x->share.p, 100 * x->ci.lo, 100 * x->ci.hi,
			i == 0 ? ' ' : rows[i - 1].few ? '?' :
			rows[i - 1].same_as_next ? '=' : ' ');
		fwrite(name, 1, len, f);
		fputc('\n', f);
	}
}

static void put_pairs(struct report *r, const struct row *rows, size_t n)
{
	FILE *f = r->f;
	bool any = false;
	uint64_t need;
	int err;

	for (size_t i = 0; i + 1 < n; i++) {
		const struct row *x = &rows[i], *y = &rows[i + 1];
		const char *nx = views_name(r->v, x->name, NULL);
		const char *ny = views_name(r->v, y->name, NULL);

		if (!x->same_as_next && !x->few)
			continue;
		if (!any)
			fprintf(f, "Cannot tell apart with these %.0f%s samples "
				   "(%g%%%s):\n", r->weighted ? r->n_eff :
				   (double)r->n, r->weighted ? " effective" :
				   "", 100 * r->conf, r->explain ? "; '=' cannot "
				   "tell, '?' too few to compare" : "");
		any = true;
		fprintf(f, "  #%zu %s and #%zu %s: %.2f%% vs %.2f%%, "
			   "difference %+.2f points, ", i + 1, nx, i + 2, ny,
			100 * x->share.p, 100 * y->share.p, 100 * x->d.diff);
		if (x->few)
			fprintf(f, "too few samples to compare (%.0f in one "
				   "but not both, under %d)", x->discordant,
				FEW_SAMPLES);
		else
			fprintf(f, "%g%% interval [%+.2f, %+.2f]",
				100 * r->conf, 100 * x->d.lo, 100 * x->d.hi);
		err = stats_n_apart(x->share.p, y->share.p,
				    r->weighted ? (r->wn > 0 ? x->w12 / r->wn
							     : 0)
						: (double)x->k12 /
						  (double)r->n,
				    r->conf, 0, &need);
		if (err == 0)
			fprintf(f, "; about %llu samples would tell them "
				   "apart if the shares held\n",
				(unsigned long long)need);
		else if (err == -EDOM)
			fprintf(f, "; equal shares: no sample count tells "
				   "them apart\n");
		else
			fprintf(f, "; more samples than can be counted "
				   "would be needed\n");
	}
	if (!any && n > 1)
		fprintf(f, "Every two adjacent entries are told apart at "
			   "%g%%.\n", 100 * r->conf);
}

static void put_resolution(struct report *r, const struct row *rows,
			   size_t n)
{
	uint64_t need;
	int err;

	if (!n)
		return;
	err = stats_n_wilson(rows[0].share.p, r->res, r->conf, &need);
	fprintf(r->f, "Resolution: +-%.2f points at the top share (%.2f%%) ",
		100 * r->res, 100 * rows[0].share.p);
	if (err == 0)
		fprintf(r->f, "needs %llu samples", (unsigned long long)need);
	else
		fprintf(r->f, "needs more samples than can be counted");
	fprintf(r->f, "; these %.0f%s give +-%.2f points.\n",
		r->weighted ? rows[0].share.n : (double)r->n,
		r->weighted ? " (effective)" : "",
		100 * (rows[0].ci.hi - rows[0].ci.lo) / 2);
}

/* "Modules by source: dwarf 3, gopclntab 1, none 2." over every input,
 * when `sym symbolize` recorded a source for any. */
static void put_sources(struct report *r)
{
	uint64_t n[VIEWS_NSOURCES] = { 0 }, known = 0;
	const char *sep = "";

	for (size_t i = 0; i < views_ninputs(r->v); i++)
		for (size_t k = 0; k < VIEWS_NSOURCES; k++)
			n[k] += views_input(r->v, i)->modules[k];
	for (size_t k = 0; k + 1 < VIEWS_NSOURCES; k++)
		known += n[k];
	if (!known)
		return;
	fputs("Modules by source:", r->f);
	for (size_t k = 0; k < VIEWS_NSOURCES; k++) {
		if (!n[k])
			continue;
		fprintf(r->f, "%s %s %llu", sep, views_source_name(k),
			(unsigned long long)n[k]);
		sep = ",";
	}
	fputs(".\n", r->f);
}

static void put_header(struct report *r)
{
	const struct views *v = r->v;
	uint64_t lost = 0, dropped = 0;
	size_t ni = views_ninputs(v);
	const struct views_input *in0 = views_input(v, 0);
	struct broken_tally b;
	char list[160];

	for (size_t i = 0; i < ni; i++) {
		lost += views_input(v, i)->lost;
		dropped += views_input(v, i)->dropped;
	}
	views_broken(v, &b);
	broken_list(&b, list, sizeof(list));
	fprintf(r->f, "sym report: %llu samples from %zu profile%s",
		(unsigned long long)r->n, ni, ni == 1 ? "" : "s");
	if (ni == 1 && in0->host)
		fprintf(r->f, " (host %s%s%s)", in0->host,
			in0->event ? ", " : "", in0->event ? in0->event : "");
	if (views_filtered(v))
		fprintf(r->f, "; %llu more left out by --focus, --ignore "
			   "or --hide", (unsigned long long)views_filtered(v));
	fputs(".\n", r->f);
	put_sources(r);
	if (r->weighted)
		fprintf(r->f, "Shares of the weight (%s); %.0f effective "
			   "samples.\n", views_unit(v), r->n_eff);
	if (r->explain)
		fprintf(r->f, "A share is an estimate from a sample: the "
			   "interval is the range of true shares\nthese "
			   "samples support at %g%% (Wilson score interval; "
			   "docs/views.md).\n", 100 * r->conf);
	if (b.flagged)
		fprintf(r->f, "Note: %llu samples (%.2f%%) have stacks "
			   "flagged as likely wrong (%s):\nthey bias the "
			   "shares, which the intervals do not cover%s.\n",
			(unsigned long long)b.flagged,
			100.0 * (double)b.flagged / (double)r->n, list,
			r->broken_plain ? "" : "; the totals show them "
			"under " BROKEN_FRAME);
	if (lost || dropped)
		fprintf(r->f, "Note: %llu samples lost by the kernel and %llu "
			   "dropped by the recorder are not in the shares.\n",
			(unsigned long long)lost, (unsigned long long)dropped);
}

static const char *spread_name(void *ctx, uint32_t id)
{
	return views_name(ctx, id, NULL);
}

/*
 * Each stack's host for the spread: a host name wherever it comes from
 * (recordings of one host pool), else one host per source of each input.
 * Stacks come grouped by source, so the last answer is usually right.
 */
static int put_spread(struct report *r)
{
	const struct views *v = r->v;
	struct spread *s = NULL;
	const struct views_stack *last = NULL;
	uint32_t h = 0;
	int err = spread_new(&s);

	for (size_t i = 0; !err && i < views_nstacks(v); i++) {
		const struct views_stack *st = views_stack(v, i);

		if (!last || st->input != last->input ||
		    st->source != last->source || st->host != last->host) {
			if (st->host) {
				err = spread_host(s, st->host, &h);
			} else {
				/* Unknown host: its input and source. */
				char key[48];

				snprintf(key, sizeof(key), "?%u.%u", st->input,
					 st->source);
				err = spread_host(s, key, &h);
			}
		}
		last = st;
		if (!err)
			err = spread_add(s, h, st->frames, st->nframes,
					 st->value);
	}
	if (!err)
		err = spread_print(s, r->f, r->top, views_unit(v), r->explain,
				   spread_name, (void *)v);
	spread_free(s);
	return err;
}

static int write_report(struct report *r)
{
	struct row *rows[2] = { NULL, NULL };
	size_t n[2] = { 0, 0 };
	char digits[32];
	int err;

	err = aggregate(r);
	for (int which = 0; !err && which < 2; which++) {
		err = make_rows(r, which, &rows[which], &n[which]);
		if (!err && which == 1)
			err = count_overlaps(r, rows[1], n[1]);
		if (!err)
			err = compute(r, rows[which], n[which]);
	}
	if (err)
		goto out;
	r->width = snprintf(digits, sizeof(digits), "%.0f",
			    r->weighted ? r->wn : (double)r->n);
	if (r->width < 5)
		r->width = 5;
	put_header(r);
	for (int which = 0; which < 2; which++) {
		put_table(r, rows[which], n[which], which);
		put_pairs(r, rows[which], n[which]);
		put_resolution(r, rows[which], n[which]);
	}
	err = put_spread(r);
out:
	free(rows[0]);
	free(rows[1]);
	free(r->a);
	return err;
}

int cmd_report(int argc, char **argv)
{
	enum { OPT_TOP = 256, OPT_RES, OPT_CONF, OPT_EXPLAIN };
	static const struct option longopts[] = {
		VIEWS_OPTIONS,
		{ "top", required_argument, NULL, OPT_TOP },
		{ "resolution", required_argument, NULL, OPT_RES },
		{ "conf", required_argument, NULL, OPT_CONF },
		{ "explain", no_argument, NULL, OPT_EXPLAIN },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct views_opts vo = { .no_folded = true, .need_samples = true };
	struct report r = { .conf = 0.95, .res = 0.005, .top = 20 };
	struct views_out out = { 0 };
	struct views *v = NULL;
	const char *output = NULL;
	double x;
	int c, err, status = TOOL_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "o:hqv", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TOP:
			if (views_parse_number(optarg, 1, 1e6, &x) ||
			    x != floor(x)) {
				tool_err("--top: '%s' is not a number from 1 "
					 "to 1000000", optarg);
				return TOOL_EXIT_USAGE;
			}
			r.top = (size_t)x;
			break;
		case OPT_RES:
			if (views_parse_number(optarg, 1e-6, 50, &x)) {
				tool_err("--resolution: '%s' is not a number "
					 "of percentage points from 0.000001 "
					 "to 50", optarg);
				return TOOL_EXIT_USAGE;
			}
			r.res = x / 100;
			break;
		case OPT_EXPLAIN:
			r.explain = true;
			break;
		case OPT_CONF:
			if (views_parse_number(optarg, 50, 99.9999, &x)) {
				tool_err("--conf: '%s' is not a percentage "
					 "from 50 to 99.9999", optarg);
				return TOOL_EXIT_USAGE;
			}
			r.conf = x / 100;
			break;
		default:
			err = views_option(c, optarg, &vo, &output, usage);
			if (err >= 0)
				return err;
		}
	}

	if (views_read(argv + optind, (size_t)(argc - optind), &vo, &v))
		goto out;
	r.v = v;
	r.weighted = vo.flags & VIEWS_WEIGHT;
	r.broken_plain = vo.flags & VIEWS_BROKEN_PLAIN;
	if (views_out_open(&out, output))
		goto out;
	r.f = out.f;
	err = write_report(&r);
	if (err)
		tool_err("cannot compute the report: %s", strerror(-err));
	if (views_out_close(&out, !err) == 0 && !err)
		status = TOOL_EXIT_OK;
out:
	views_free(v);
	return status;
}
