/*
 * t-alloc-est.c - libsymprof's allocation sampler and estimator
 * (tools/symprof/alloc_est.h, docs/symprof.md "Allocation profiles"):
 * its logarithm and exponential against libm, and a seeded simulation of
 * the sampling process that checks the estimates are unbiased (10,000
 * repetitions: the mean error within 3 standard errors of 0), that their
 * variance is the one the document derives, and that the 99.9% interval
 * covers the truth as often as it says.  Objects much smaller than the
 * rate, near it, much larger, and realloc that moves a sampled object.
 * The code simulated is the library's own (sp_sampler_take(),
 * sp_alloc_weight()); the realloc rule is alloc.c's: the old block leaves
 * the live set, the new size is an allocation of its own.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"
#include "symprof/alloc_est.h"
#include "base.h"

#define REPS 10000
/* Rate of the simulation: the process is the same at every scale, so
 * a small one keeps the runs short (sizes are given in multiples). */
#define RATE 4096u

static void check_math(void)
{
	double worst_ln = 0, worst_ex = 0;
	uint64_t rng = 1;

	for (int i = 0; i < 200000; i++) {
		double u = ((double)(sp_rand64(&rng) >> 11) + 1) / 9007199254740992.0;
		double x = u * (i % 3 == 0 ? 1e-6 : i % 3 == 1 ? 5 : 800);
		double e1 = fabs(sp_ln(u) - log(u)) / fabs(log(u) ? log(u) : 1);
		double ref = -expm1(-x);
		double e2 = fabs(sp_one_minus_exp_neg(x) - ref) / ref;

		worst_ln = e1 > worst_ln ? e1 : worst_ln;
		worst_ex = e2 > worst_ex ? e2 : worst_ex;
	}
	printf("# worst relative error: ln %.3g, 1 - e^-x %.3g\n", worst_ln,
	       worst_ex);
	CHECK(worst_ln < 1e-13);
	CHECK(worst_ex < 1e-13);
	CHECK(sp_one_minus_exp_neg(0) == 0 && sp_one_minus_exp_neg(1e4) == 1);
}

/* The distances are exponential with mean RATE: their mean and the
 * share above the mean (e^-1). */
static void check_distances(void)
{
	uint64_t rng = 42;
	double sum = 0, above = 0;
	const int n = 1000000;

	for (int i = 0; i < n; i++) {
		int64_t d = sp_next_distance(&rng, RATE);

		sum += (double)d;
		above += d >= (int64_t)RATE;
	}
	/* floor() takes 0.5 off the mean; sd of the mean RATE/1000. */
	printf("# distances: mean %.2f (want %.2f), above the mean %.5f "
	       "(want %.5f)\n", sum / n, RATE - 0.5, above / n, exp(-1));
	CHECK(fabs(sum / n - (RATE - 0.5)) < 4.0 * RATE / 1000);
	CHECK(fabs(above / n - exp(-1)) < 4 * sqrt(exp(-1) * (1 - exp(-1)) / n));
}

/* One workload: @n objects of @size bytes each (cycling through
 * @sizes), of which @nfree are freed again; with @grow, every kept
 * object is then realloc'd to @grow times its size (alloc.c: out of the
 * live set, the new size sampled as an allocation of its own). */
struct work {
	const char *name;
	const uint64_t *sizes;
	size_t nsizes, n, nfree;
	uint64_t grow;
};

/* The estimates of one repetition. */
struct est {
	double a_bytes, a_objs, u_bytes, u_objs;
};

static void run_once(const struct work *w, struct sp_sampler *s,
		     struct est *e, double *truth)
{
	double objs = 0, bytes = 0;

	*e = (struct est){ 0 };
	truth[0] = truth[1] = truth[2] = truth[3] = 0;
	for (size_t i = 0; i < w->n; i++) {
		uint64_t k = w->sizes[i % w->nsizes];
		int live = i >= w->nfree, sampled;

		sampled = sp_sampler_take(s, k, RATE);
		truth[0] += k;
		truth[1] += 1;
		if (sampled) {
			sp_alloc_weight(k, RATE, &objs, &bytes);
			e->a_bytes += bytes;
			e->a_objs += objs;
		}
		if (live && w->grow) {
			/* realloc: the old block (sampled or not) leaves
			 * the live set; the new size is sampled anew. */
			k *= w->grow;
			truth[0] += k;
			truth[1] += 1;
			sampled = sp_sampler_take(s, k, RATE);
			if (sampled) {
				sp_alloc_weight(k, RATE, &objs, &bytes);
				e->a_bytes += bytes;
				e->a_objs += objs;
			}
		}
		if (live) {
			truth[2] += k;
			truth[3] += 1;
			if (sampled) {
				e->u_bytes += bytes;
				e->u_objs += objs;
			}
		}
	}
}

/* The variance docs/symprof.md derives for the bytes of one object of
 * @k bytes: k^2 (1 - P) / P. */
static double var_bytes(uint64_t k)
{
	double p = sp_one_minus_exp_neg((double)k / RATE);

	return (double)k * (double)k * (1 - p) / p;
}

static void check_work(const struct work *w, bool check_cover)
{
	struct sp_sampler s = { .rng = 0x5eed0000u + w->n };
	double sum[4] = { 0 }, sum2[4] = { 0 }, truth[4], want_var[2] = { 0 };
	size_t cover = 0;
	static const char *const what[4] = { "alloc_space", "alloc_objects",
					      "inuse_space", "inuse_objects" };

	/* Var of the alloc_space and inuse_space estimates (independent
	 * objects: the sum of theirs). */
	for (size_t i = 0; i < w->n; i++) {
		uint64_t k = w->sizes[i % w->nsizes];
		int live = i >= w->nfree;

		want_var[0] += var_bytes(k);
		if (live && w->grow) {
			want_var[0] += var_bytes(k * w->grow);
			want_var[1] += var_bytes(k * w->grow);
		} else if (live) {
			want_var[1] += var_bytes(k);
		}
	}
	for (int r = 0; r < REPS; r++) {
		struct est e;
		double d[4];

		run_once(w, &s, &e, truth);
		d[0] = e.a_bytes - truth[0];
		d[1] = e.a_objs - truth[1];
		d[2] = e.u_bytes - truth[2];
		d[3] = e.u_objs - truth[3];
		for (int j = 0; j < 4; j++) {
			sum[j] += d[j];
			sum2[j] += d[j] * d[j];
		}
		/* The 99.9% interval: truth +- 3.29 sd. */
		cover += fabs(d[0]) <= 3.2905 * sqrt(want_var[0]) &&
			 fabs(d[2]) <= 3.2905 * sqrt(want_var[1]);
	}
	for (int j = 0; j < 4; j++) {
		double mean = sum[j] / REPS;
		double var = sum2[j] / REPS - mean * mean;
		double se = sqrt(var / REPS);
		char desc[160];

		snprintf(desc, sizeof(desc), "%s: %s unbiased (mean error "
			 "%.4g of %.6g, se %.3g)", w->name, what[j], mean,
			 truth[j], se);
		tap_ok(fabs(mean) <= 3 * se || (var == 0 && mean == 0),
		       __FILE__, __LINE__, desc);
		if (j == 0 || j == 2) {
			double want = want_var[j / 2];

			snprintf(desc, sizeof(desc), "%s: %s variance %.4g, "
				 "derived %.4g", w->name, what[j], var, want);
			/* The sample variance of 10,000 has a relative sd
			 * of sqrt(2/R) (1.4%) for a normal error, more for
			 * the skewed ones of rare samples. */
			tap_ok(want == 0 ? var == 0
					 : fabs(var / want - 1) < 0.12,
			       __FILE__, __LINE__, desc);
		}
	}
	if (check_cover) {
		char desc[160];

		snprintf(desc, sizeof(desc), "%s: the 99.9%% interval covers "
			 "both truths in %zu of %d runs", w->name, cover, REPS);
		/* Binomial(10000, 0.999): 99.5% is 5 sd below. */
		tap_ok(cover >= REPS * 995 / 1000, __FILE__, __LINE__, desc);
	}
}

int main(void)
{
	static const uint64_t small[] = { RATE / 64 };
	static const uint64_t near[] = { RATE * 9 / 10, RATE, RATE * 11 / 10 };
	static const uint64_t large[] = { RATE * 8, RATE * 64 };
	static const uint64_t mixed[] = { 24, 1000, RATE / 3, RATE, 5 * RATE,
					  17, 333 };
	static const uint64_t odd[] = { 4097, 12289, 65 };
	const struct work works[] = {
		{ "much smaller than the rate", small, 1, 20000, 10000, 0 },
		{ "near the rate", near, 3, 300, 100, 0 },
		{ "much larger than the rate", large, 2, 200, 50, 0 },
		{ "mixed sizes", mixed, 7, 7000, 3500, 0 },
		{ "realloc moving sampled objects (x3)", odd, 3, 3000, 1000, 3 },
	};

	check_math();
	check_distances();
	for (size_t i = 0; i < sizeof(works) / sizeof(works[0]); i++)
		check_work(&works[i], i != 2);
	return tap_done();
}
