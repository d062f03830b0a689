/*
 * alloc_est.h - the sampling process of libsymprof's allocation profiles
 * and its estimator (docs/symprof.md, "Allocation profiles"), as inline
 * code that the preload (alloc.c, drain.c) and the unit test
 * (tests/unit/t-alloc-est.c, which simulates it) share, so that the test
 * runs exactly the code the library runs.
 *
 * The process: the bytes a thread allocates are a line, and sample points
 * fall on it as a Poisson process of rate 1/T (T = SYMPROF_RATE, mean
 * distance between points).  An allocation of k bytes is sampled when at
 * least one point falls in its k bytes: P = 1 - e^(-k/T), independently
 * of every other allocation (a Poisson process puts independent numbers
 * of points in disjoint intervals).  The thread keeps `left`, the whole
 * bytes to the next point, floor(B) for the exponential distance B: the
 * allocation is sampled iff floor(B) < k, i.e. B < k (k is whole), so
 * the integer counter samples exactly as the continuous process does.
 * After a sample, the next distance is drawn afresh from the end of the
 * allocation (the process is memoryless, so that is the same process).
 *
 * The estimator (Horvitz-Thompson): a sampled allocation of k bytes
 * stands for 1/P objects and k/P bytes; an unsampled one for nothing.
 * Both are unbiased for every k: E = P * k/P = k.  Var(bytes) = k^2 (1 -
 * P)/P, at most k*T (it tends to k*T for k << T and to 0 for k >> T).
 *
 * libc only: the logarithm and the exponential are computed here (no
 * libm in the preload); both agree with libm's to about 1e-15.
 */
#ifndef SP_ALLOC_EST_H
#define SP_ALLOC_EST_H

#include <stdint.h>
#include <string.h>

/* ln 2 split in a part exact in double arithmetic and the rest. */
#define SP_LN2_HI 6.93147180369123816490e-01
#define SP_LN2_LO 1.90821492927058770002e-10

/* ln(x) for x > 0 (finite, normal): x = m 2^e with m in [sqrt(1/2),
 * sqrt(2)), ln m = 2 atanh(z), z = (m - 1)/(m + 1), |z| < 0.172. */
static inline double sp_ln(double x)
{
	uint64_t b;
	double m, z, z2, s, term;
	int e;

	memcpy(&b, &x, sizeof(b));
	e = (int)((b >> 52) & 0x7ff) - 1023;
	b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
	memcpy(&m, &b, sizeof(m));
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	z = (m - 1) / (m + 1);
	z2 = z * z;
	s = 0;
	term = z;
	for (int i = 1; i < 40; i += 2) {
		s += term / i;
		term *= z2;
	}
	return 2 * s + e * SP_LN2_LO + e * SP_LN2_HI;
}

/* 1 - e^(-x) for x >= 0, without cancellation for small x. */
static inline double sp_one_minus_exp_neg(double x)
{
	double r, er, s, term;
	int n;

	if (x > 745)
		return 1;
	if (x < 0.5) {
		/* x - x^2/2! + x^3/3! - ...: 24 terms below 0.5^25/25! */
		s = 0;
		term = x;
		for (int i = 1; i < 25; i++) {
			s += term;
			term *= -x / (i + 1);
		}
		return s;
	}
	/* e^(-x) = 2^(-n) e^(-r), r = x - n ln 2 in [0, ln 2). */
	n = (int)(x / (SP_LN2_HI + SP_LN2_LO));
	r = (x - n * SP_LN2_HI) - n * SP_LN2_LO;
	er = 0;
	term = 1;
	for (int i = 0; i < 25; i++) {
		er += term;
		term *= -r / (i + 1);
	}
	while (n-- > 0)
		er *= 0.5;
	return 1 - er;
}

/* xorshift64*: the sampler's uniform source (one per thread). */
static inline uint64_t sp_rand64(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* The next distance in bytes, floor(B) for B ~ Exp(mean @rate); at most
 * 2^62 (a draw of u = 2^-53 gives 36.7 * rate). */
static inline int64_t sp_next_distance(uint64_t *rng, uint64_t rate)
{
	/* u uniform on (0, 1]: 53 random bits, and never 0. */
	double u = (double)((sp_rand64(rng) >> 11) + 1) * (1.0 / 9007199254740992.0);
	double b = -sp_ln(u) * (double)rate;

	return b >= 4.6e18 ? (int64_t)1 << 62 : (int64_t)b;
}

/* One thread's sampler. */
struct sp_sampler {
	int64_t left;		/* floor of the bytes to the next point */
	uint64_t rng;		/* sp_rand64()'s state */
	int started;		/* @left was drawn */
};

/*
 * Account an allocation of @k bytes; true when it is sampled.  The fast
 * path (left -= k, still >= 0) is what alloc.c inlines; this is the
 * whole step.  A thread's first allocation draws the first distance.
 */
static inline int sp_sampler_take(struct sp_sampler *s, uint64_t k,
				  uint64_t rate)
{
	if (!s->started) {
		s->started = 1;
		s->left = sp_next_distance(&s->rng, rate);
	}
	if (k <= (uint64_t)s->left) {
		s->left -= (int64_t)k;
		/* B < k iff floor(B) < k: equal means B >= k. */
		return 0;
	}
	s->left = sp_next_distance(&s->rng, rate);
	return 1;
}

/*
 * What a sampled allocation of @k bytes stands for, at mean distance
 * @rate: 1/P objects and k/P bytes, P = 1 - e^(-k/rate).  A zero-byte
 * allocation is never sampled (P = 0).
 */
static inline void sp_alloc_weight(uint64_t k, uint64_t rate, double *objs,
				   double *bytes)
{
	double p = sp_one_minus_exp_neg((double)k / (double)rate);

	*objs = 1 / p;
	*bytes = (double)k / p;
}

#endif /* SP_ALLOC_EST_H */
