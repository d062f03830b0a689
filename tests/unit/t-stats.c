/*
 * t-stats.c - tools/view/stats.c, the statistics of `sym report` and
 * `sym diff`.
 *
 * Two kinds of checks:
 * - Known values.  The references come from SciPy 1.10 (Debian 12's
 *   python3-scipy), an implementation independent of ours, computed
 *   offline by tests/unit/t-stats-ref.py; two of Newcombe's 1998 results
 *   are also checked at the 4 digits the paper prints; the rest are
 *   formulas small enough to verify by hand (the weighted example).
 * - Simulations, as issue 7 asks: thousands of seeded multinomial draws
 *   from known distributions, in this process, with our own xoshiro256**
 *   and exact samplers (n categorical draws per profile: slow, but
 *   obviously right).  Each rate is asserted to lie in the 99.9% interval
 *   around the rate it should have: 0.95 for coverage, 0.05 for rejection
 *   under the null, and the exact rate (t-stats-ref.py sums the binomial
 *   probabilities) for power.  The seeds are fixed, so a run is
 *   deterministic; the bounds are wide enough that any seed passes with
 *   probability about 0.999 per check.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "view/stats.h"

/* 95% two-sided critical value, from SciPy's ndtri(0.975). */
#define Z95 1.959963984540054

static void checkf(int ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void checkf(int ok, const char *file, int line, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tap_ok(ok, file, line, what);
}

#define CHECKF(ok, ...) checkf(!!(ok), __FILE__, __LINE__, __VA_ARGS__)

/* |got - want| <= abs + rel |want|; NaN matches NaN, inf the same inf. */
static int near(double got, double want, double rel, double abs)
{
	if (isnan(want))
		return isnan(got);
	if (isinf(want))
		return got == want;
	return fabs(got - want) <= abs + rel * fabs(want);
}

#define NEAR(got, want, rel, abs, ...)                                       \
	do {                                                                 \
		double g_ = (got), w_ = (want);                              \
		CHECKF(near(g_, w_, rel, abs), __VA_ARGS__);                 \
		if (!near(g_, w_, rel, abs))                                 \
			printf("#   got %.17g, want %.17g\n", g_, w_);        \
	} while (0)

/* The 99.9% interval of a count of R trials at rate q: normal, z 3.2905. */
static int in_999(uint64_t count, uint64_t R, double q)
{
	double sd = sqrt(R * q * (1 - q)), mid = R * q;

	return count >= mid - 3.2905 * sd && count <= mid + 3.2905 * sd;
}

#define RATE(count, R, q, ...)                                               \
	do {                                                                 \
		CHECKF(in_999(count, R, q), __VA_ARGS__);                    \
		printf("#   %llu of %llu = %.4f (expected %.4f)\n",          \
		       (unsigned long long)(count), (unsigned long long)(R), \
		       (double)(count) / (R), (q));                          \
	} while (0)

/*
 * xoshiro256** 1.0 (Blackman and Vigna), seeded through splitmix64 as its
 * authors advise.  Doubles take the top 53 bits: uniform on [0, 1).
 */
struct rng {
	uint64_t s[4];
};

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
		r->s[i] = z ^ (z >> 31);
	}
}

static double rng_unif(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform on [0, m), without modulo bias (rejection). */
static uint64_t rng_below(struct rng *r, uint64_t m)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % m, x;

	do
		x = rng_next(r);
	while (x >= lim);
	return x % m;
}

/*
 * A multinomial sample of size n over m categories with cumulative
 * probabilities cum[] (cum[m-1] = 1): n independent categorical draws by
 * inversion.  Exact up to the 2^-53 grid of the uniforms.
 */
static void multinomial(struct rng *r, uint64_t n, const double *cum,
			size_t m, uint64_t *counts)
{
	memset(counts, 0, m * sizeof(*counts));
	for (uint64_t i = 0; i < n; i++) {
		double u = rng_unif(r);
		size_t j = 0;

		while (j + 1 < m && u >= cum[j])
			j++;
		counts[j]++;
	}
}

/* A binomial sample: n Bernoulli(p) draws. */
static uint64_t binomial(struct rng *r, uint64_t n, double p)
{
	uint64_t k = 0;

	for (uint64_t i = 0; i < n; i++)
		k += rng_unif(r) < p;
	return k;
}

static void cumulate(const double *p, size_t m, double *cum)
{
	double s = 0;

	for (size_t i = 0; i < m; i++)
		cum[i] = (s += p[i]);
	cum[m - 1] = 1;
}

/* ---- known values ------------------------------------------------- */

static void test_quantile(void)
{
	/* SciPy's ndtri (Cephes), t-stats-ref.py. */
	static const struct {
		double p, x;
	} ref[] = {
		{ 0.975, 1.959963984540054 },
		{ 0.995, 2.5758293035489004 },
		{ 0.95, 1.6448536269514722 },
		{ 0.5, 0.0 },
		{ 0.3, -0.5244005127080409 },
		{ 0.02425, -1.972961051311885 },
		{ 1e-10, -6.361340902404056 },
		{ 1e-300, -37.0470962993612 },
		{ 0.999999, 4.753424308817087 },
	};
	size_t bad = 0;
	double worst = 0;

	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++)
		NEAR(stats_norm_quantile(ref[i].p), ref[i].x, 1e-14, 0,
		     "quantile(%g) = ndtri", ref[i].p);
	CHECK(stats_norm_quantile(0) == -INFINITY);
	CHECK(stats_norm_quantile(1) == INFINITY);
	CHECK(isnan(stats_norm_quantile(-0.1)));
	CHECK(isnan(stats_norm_quantile(1.5)));
	CHECK(isnan(stats_norm_quantile(NAN)));

	/* Round trip through libm's erfc, which shares nothing with AS241:
	 * Phi(quantile(p)) = p over the lower half and deep tail, all three
	 * branches of AS241.  A relative error e in x moves p by about
	 * x^2 e relative (Phi'(x) / Phi(x) is about |x| in the tail), so
	 * with AS241's e < 1e-15 (7.3e-16 at worst against mpmath over these
	 * p) the bound is (1 + x^2) 2e-15. */
	for (int e = 1; e <= 300; e++) {
		for (int m = 1; m <= 9; m += 2) {
			double p = m * pow(10, -e), x, rel;

			if (p > 0.5)
				continue;
			x = stats_norm_quantile(p);
			rel = fabs(stats_norm_cdf(x) - p) / p / (1 + x * x);
			if (rel > worst)
				worst = rel;
			bad += !(rel <= 2e-15);
		}
	}
	for (double p = 0.001; p <= 0.5; p += 0.001) {
		double x = stats_norm_quantile(p);
		double rel = fabs(stats_norm_cdf(x) - p) / p / (1 + x * x);

		if (rel > worst)
			worst = rel;
		bad += !(rel <= 2e-15);
	}
	CHECKF(bad == 0, "Phi(quantile(p)) = p from 1e-300 to 0.5");
	printf("#   worst |Phi(x) - p| / p / (1 + x^2) = %.3g\n", worst);
	NEAR(stats_norm_cdf(Z95), 0.975, 1e-15, 0, "Phi(1.96) = 0.975");
	NEAR(stats_norm_cdf(-37.0470962993612), 1e-300, 1e-12, 0,
	     "Phi(-37.047) = 1e-300");
	CHECK(stats_norm_cdf(0) == 0.5);

	NEAR(stats_z(0), Z95, 1e-15, 0, "stats_z(0) is the 95%% default");
	NEAR(stats_z(0.95), Z95, 1e-15, 0, "stats_z(0.95)");
	NEAR(stats_z(0.99), 2.5758293035489004, 1e-14, 0, "stats_z(0.99)");
	NEAR(stats_z(0.90), 1.6448536269514722, 1e-14, 0, "stats_z(0.90)");
	CHECK(isnan(stats_z(1)));
	CHECK(isnan(stats_z(-0.5)));
	CHECK(isnan(stats_z(NAN)));
}

static void test_wilson(void)
{
	/* SciPy: binomtest(k, n).proportion_ci(conf, method="wilson"). */
	static const struct {
		uint64_t k, n;
		double conf, lo, hi;
	} ref[] = {
		{ 10, 100, 0.95, 0.05522913706067508, 0.17436566150491345 },
		{ 0, 50, 0.95, 0.0, 0.07134759913335872 },
		{ 50, 50, 0.95, 0.9286524008666412, 1.0 },
		{ 1, 1000, 0.95, 0.00017654637062607809,
		  0.0056425585979579355 },
		{ 5000, 100000, 0.95, 0.04866638929097823,
		  0.0513681825103465 },
		{ 10, 100, 0.99, 0.04602581170103505, 0.20375073847162334 },
		{ 3, 7, 0.9, 0.18644319036395607, 0.7105229089864071 },
		{ 250, 5000, 0.95, 0.04429689670057055, 0.05639403504998086 },
	};
	struct stats_interval ci, keep;
	struct stats_share s;
	size_t bad = 0;

	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
		CHECK_ERR(stats_wilson(ref[i].k, ref[i].n, ref[i].conf, &ci),
			  0);
		NEAR(ci.lo, ref[i].lo, 0, 1e-13, "wilson %llu/%llu at %g: lo",
		     (unsigned long long)ref[i].k,
		     (unsigned long long)ref[i].n, ref[i].conf);
		NEAR(ci.hi, ref[i].hi, 0, 1e-13, "wilson %llu/%llu at %g: hi",
		     (unsigned long long)ref[i].k,
		     (unsigned long long)ref[i].n, ref[i].conf);
		CHECK(ci.est == (double)ref[i].k / ref[i].n);
	}
	/* The documented edges. */
	CHECK_ERR(stats_wilson(0, 50, 0, &ci), 0);
	CHECK(ci.lo == 0 && ci.est == 0);
	NEAR(ci.hi, Z95 * Z95 / (50 + Z95 * Z95), 1e-15, 0,
	     "k = 0: hi = z^2 / (n + z^2)");
	CHECK_ERR(stats_wilson(50, 50, 0, &ci), 0);
	CHECK(ci.hi == 1 && ci.est == 1);
	CHECK_ERR(stats_wilson(0, 0, 0, &ci), 0);
	CHECK(isnan(ci.est) && ci.lo == 0 && ci.hi == 1);
	CHECK_ERR(stats_wilson(1, 1, 0, &ci), 0);
	CHECK(ci.hi == 1 && ci.lo > 0 && ci.lo < 1);

	/* Errors leave *out alone. */
	memset(&keep, 0x5a, sizeof(keep));
	ci = keep;
	CHECK_ERR(stats_wilson(51, 50, 0, &ci), -EINVAL);
	CHECK_ERR(stats_wilson(5, 50, 1.5, &ci), -EINVAL);
	CHECK_ERR(stats_wilson(5, 50, -0.2, &ci), -EINVAL);
	CHECK_ERR(stats_wilson(5, 50, NAN, &ci), -EINVAL);
	CHECK(memcmp(&ci, &keep, sizeof(ci)) == 0);
	CHECK_ERR(stats_wilson(5, 50, 0, NULL), -EINVAL);

	/* Invariants over every k of small n and a few large ones:
	 * 0 <= lo <= est <= hi <= 1, both ends rise with k. */
	for (uint64_t n = 1; n <= 200; n++) {
		struct stats_interval prev = { 0, -1, -1 };

		for (uint64_t k = 0; k <= n; k++) {
			stats_wilson(k, n, 0, &ci);
			bad += !(0 <= ci.lo && ci.lo <= ci.est &&
				 ci.est <= ci.hi && ci.hi <= 1);
			bad += !(ci.lo > prev.lo || (k == 0 && ci.lo == 0));
			bad += !(ci.hi > prev.hi);
			prev = ci;
		}
	}
	for (uint64_t n = 1000000; n <= UINT64_C(1) << 50; n *= 31) {
		stats_wilson(1, n, 0, &ci);
		bad += !(0 < ci.lo && ci.lo <= ci.est && ci.est <= ci.hi);
		stats_wilson(n / 2, n, 0, &ci);
		bad += !(ci.lo <= ci.est && ci.est <= ci.hi && ci.lo < ci.hi);
	}
	CHECKF(bad == 0, "wilson: 0 <= lo <= k/n <= hi <= 1, monotone in k");

	/* Shares with real-valued sizes are the same formula. */
	CHECK_ERR(stats_share_counts(10, 100, &s), 0);
	CHECK_ERR(stats_share_wilson(&s, 0, &ci), 0);
	NEAR(ci.lo, 0.05522913706067508, 0, 1e-13, "share_wilson = wilson");
	s.p = 0.1;
	s.n = 100.5;
	CHECK_ERR(stats_share_wilson(&s, 0, &ci), 0);
	CHECK(ci.lo > 0.05522913706067508 && ci.hi < 0.17436566150491345);
	s.p = 1.1;
	CHECK_ERR(stats_share_wilson(&s, 0, &ci), -EINVAL);
	s.p = 0.5;
	s.n = -1;
	CHECK_ERR(stats_share_wilson(&s, 0, &ci), -EINVAL);
	s.n = INFINITY;
	CHECK_ERR(stats_share_wilson(&s, 0, &ci), -EINVAL);
	CHECK_ERR(stats_share_wilson(NULL, 0, &ci), -EINVAL);
	CHECK_ERR(stats_share_counts(3, 2, &s), -EINVAL);
	CHECK_ERR(stats_share_counts(0, 0, &s), 0);
	CHECK(isnan(s.p) && s.n == 0);
}

/* differ agrees with the interval and with |z|, as the header says. */
static int consistent(const struct stats_diff *d)
{
	return d->differ == (d->lo > 0 || d->hi < 0) &&
	       d->lo <= d->diff && d->diff <= d->hi;
}

static void test_within(void)
{
	/* Closed forms evaluated by t-stats-ref.py (SciPy's norm.sf). */
	static const struct {
		uint64_t k1, k2, k12, n;
		double diff, se, z, p;
		bool differ;
	} ref[] = {
		{ 300, 200, 0, 1000, 0.1, 0.022135943621178655,
		  4.517539514526256, 6.256235567415414e-06, true },
		{ 110, 100, 0, 1000, 0.01, 0.01448792600754159,
		  0.690229919368346, 0.4900496109623669, false },
		{ 600, 450, 400, 1000, 0.15, 0.015083103128998358,
		  9.944903161976935, 2.654320611811232e-23, true },
		{ 5, 0, 0, 10000, 0.0005, 0.0002235508890610816,
		  2.236627204212922, 0.025310715377991823, true },
		{ 130, 95, 0, 1000, 0.035, 0.014959110936148578,
		  2.3397112401528335, 0.019298654509606435, true },
	};
	struct stats_diff d, keep;

	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
		CHECK_ERR(stats_diff_within(ref[i].k1, ref[i].k2, ref[i].k12,
					    ref[i].n, 0, &d), 0);
		NEAR(d.diff, ref[i].diff, 1e-13, 0, "within #%zu: diff", i);
		NEAR(d.se, ref[i].se, 1e-13, 0, "within #%zu: se", i);
		NEAR(d.z, ref[i].z, 1e-12, 0, "within #%zu: z", i);
		NEAR(d.p_value, ref[i].p, 1e-10, 0, "within #%zu: p", i);
		NEAR(d.lo, ref[i].diff - Z95 * ref[i].se, 1e-12, 1e-15,
		     "within #%zu: lo", i);
		CHECKF(d.differ == ref[i].differ && consistent(&d),
		       "within #%zu: differ = %d", i, ref[i].differ);
	}
	/* The worked examples of docs/views.md.  11.0% vs 10.0% of 1000:
	 * cannot tell apart, and the samples it would take. */
	CHECK_ERR(stats_diff_within(110, 100, 0, 1000, 0, &d), 0);
	CHECK(!d.differ && d.lo < 0 && d.hi > 0);
	{
		uint64_t n50, n80;

		CHECK_ERR(stats_n_apart(0.11, 0.10, 0, 0, 0, &n50), 0);
		CHECK_ERR(stats_n_apart(0.11, 0.10, 0, 0, 0.8, &n80), 0);
		CHECKF(n50 == 8064 && n80 == 16475, "n_apart(11%%, 10%%) = "
		       "8064, 16475 at 80%% power");
	}
	/* 13.0% vs 9.5%: the Wilson intervals overlap, yet they differ. */
	{
		struct stats_interval i1, i2;

		stats_wilson(130, 1000, 0, &i1);
		stats_wilson(95, 1000, 0, &i2);
		NEAR(i1.lo, 0.1106, 0, 5e-5, "13.0%% of 1000: lo 11.06%%");
		NEAR(i2.hi, 0.1148, 0, 5e-5, "9.5%% of 1000: hi 11.48%%");
		CHECK(i1.lo < i2.hi);
		stats_diff_within(130, 95, 0, 1000, 0, &d);
		CHECK(d.differ);
	}

	/* Shares and counts agree. */
	{
		struct stats_diff e;

		stats_diff_within(300, 200, 0, 1000, 0.99, &d);
		CHECK_ERR(stats_diff_within_shares(0.3, 0.2, 0, 1000, 0.99,
						   &e), 0);
		CHECK(near(d.se, e.se, 1e-15, 0) && near(d.lo, e.lo, 1e-15, 0));
	}

	/* Degenerate ones. */
	CHECK_ERR(stats_diff_within(0, 0, 0, 100, 0, &d), 0);
	CHECK(d.diff == 0 && d.se == 0 && d.z == 0 && d.p_value == 1 &&
	      !d.differ);
	CHECK_ERR(stats_diff_within(100, 0, 0, 100, 0, &d), 0);
	CHECK(d.diff == 1 && d.se == 0 && d.z == INFINITY &&
	      d.p_value == 0 && d.differ);
	CHECK_ERR(stats_diff_within(40, 40, 40, 100, 0, &d), 0);
	CHECK(d.diff == 0 && d.se == 0 && !d.differ);
	CHECK_ERR(stats_diff_within(0, 0, 0, 0, 0, &d), 0);
	CHECK(isnan(d.diff) && isnan(d.z) && !d.differ);

	memset(&keep, 0x5a, sizeof(keep));
	d = keep;
	CHECK_ERR(stats_diff_within(101, 0, 0, 100, 0, &d), -EINVAL);
	CHECK_ERR(stats_diff_within(0, 101, 0, 100, 0, &d), -EINVAL);
	CHECK_ERR(stats_diff_within(10, 20, 11, 100, 0, &d), -EINVAL);
	CHECK_ERR(stats_diff_within(60, 50, 0, 100, 0, &d), -EINVAL);
	CHECK_ERR(stats_diff_within(60, 50, 9, 100, 0, &d), -EINVAL);
	CHECK_ERR(stats_diff_within(10, 20, 0, 100, 2, &d), -EINVAL);
	CHECK(memcmp(&d, &keep, sizeof(d)) == 0);
	CHECK_ERR(stats_diff_within(60, 50, 10, 100, 0, &d), 0);
	CHECK_ERR(stats_diff_within(1, 1, 0, 100, 0, NULL), -EINVAL);
	CHECK_ERR(stats_diff_within_shares(0.6, 0.5, 0, 100, 0, &d),
		  -EINVAL);
	CHECK_ERR(stats_diff_within_shares(0.2, 0.1, 0.15, 100, 0, &d),
		  -EINVAL);
	CHECK_ERR(stats_diff_within_shares(0.2, 0.1, 0, -1, 0, &d), -EINVAL);
	CHECK_ERR(stats_diff_within_shares(NAN, 0.1, 0, 10, 0, &d), -EINVAL);
}

static void test_between(void)
{
	/* Newcombe (1998), Table II, method 10, as printed (4 digits). */
	static const struct {
		uint64_t ka, na, kb, nb;
		double lo, hi;
	} paper[] = {
		{ 56, 70, 48, 80, 0.0524, 0.3339 },
		{ 9, 10, 3, 10, 0.1705, 0.8090 },
	};
	/* The same method on SciPy's Wilson limits, t-stats-ref.py. */
	static const struct {
		uint64_t ka, na, kb, nb;
		double lo, hi;
	} ref[] = {
		{ 56, 70, 48, 80, 0.05243147240236484, 0.3338726540369059 },
		{ 9, 10, 3, 10, 0.17052272393450296, 0.8090179735354881 },
		{ 6, 7, 2, 7, 0.0582279274823122, 0.8062496375242278 },
		{ 5, 56, 0, 29, -0.03813714790353688, 0.1925600138551116 },
		{ 0, 10, 0, 20, -0.16112515805281935, 0.27753279986288926 },
		{ 10, 10, 0, 20, 0.6790860371419147, 1.0 },
		{ 120, 3000, 90, 1500, -0.03467044174891461,
		  -0.006674430420522714 },
	};
	/* Wald: diff, se, z, p from t-stats-ref.py. */
	static const struct {
		uint64_t ka, na, kb, nb;
		double diff, se, z, p;
	} wald[] = {
		{ 120, 3000, 90, 1500, -0.02, 0.0070992957397195385,
		  -2.817180849095055, 0.004844723739299838 },
		{ 56, 70, 48, 80, 0.2, 0.072702917999997, 2.750921221621508,
		  0.005942793304202759 },
	};
	struct stats_share a, b;
	struct stats_diff d;

	for (size_t i = 0; i < sizeof(paper) / sizeof(paper[0]); i++) {
		stats_share_counts(paper[i].ka, paper[i].na, &a);
		stats_share_counts(paper[i].kb, paper[i].nb, &b);
		CHECK_ERR(stats_diff_between(&a, &b, 0, STATS_NEWCOMBE, &d), 0);
		NEAR(d.lo, paper[i].lo, 0, 5e-5, "Newcombe 1998 %llu/%llu - "
		     "%llu/%llu: lo", (unsigned long long)paper[i].ka,
		     (unsigned long long)paper[i].na,
		     (unsigned long long)paper[i].kb,
		     (unsigned long long)paper[i].nb);
		NEAR(d.hi, paper[i].hi, 0, 5e-5, "Newcombe 1998 #%zu: hi", i);
	}
	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
		stats_share_counts(ref[i].ka, ref[i].na, &a);
		stats_share_counts(ref[i].kb, ref[i].nb, &b);
		CHECK_ERR(stats_diff_between(&a, &b, 0, STATS_NEWCOMBE, &d), 0);
		NEAR(d.lo, ref[i].lo, 0, 1e-13, "newcombe #%zu: lo", i);
		NEAR(d.hi, ref[i].hi, 0, 1e-13, "newcombe #%zu: hi", i);
		CHECKF(consistent(&d) &&
		       d.differ == (fabs(d.z) > Z95 - 1e-12),
		       "newcombe #%zu: differ, z and the interval agree", i);
	}
	for (size_t i = 0; i < sizeof(wald) / sizeof(wald[0]); i++) {
		stats_share_counts(wald[i].ka, wald[i].na, &a);
		stats_share_counts(wald[i].kb, wald[i].nb, &b);
		CHECK_ERR(stats_diff_between(&a, &b, 0, STATS_WALD, &d), 0);
		NEAR(d.diff, wald[i].diff, 1e-13, 0, "wald #%zu: diff", i);
		NEAR(d.se, wald[i].se, 1e-13, 0, "wald #%zu: se", i);
		NEAR(d.z, wald[i].z, 1e-12, 0, "wald #%zu: z", i);
		NEAR(d.p_value, wald[i].p, 1e-10, 0, "wald #%zu: p", i);
		CHECKF(d.differ && consistent(&d), "wald #%zu: differ", i);
	}

	/* Where Wald breaks and Newcombe does not: no samples in either. */
	stats_share_counts(0, 10, &a);
	stats_share_counts(0, 20, &b);
	stats_diff_between(&a, &b, 0, STATS_WALD, &d);
	CHECK(d.se == 0 && d.lo == 0 && d.hi == 0 && !d.differ);
	stats_diff_between(&a, &b, 0, STATS_NEWCOMBE, &d);
	CHECK(d.se > 0 && d.lo < 0 && d.hi > 0 && d.z == 0 && !d.differ);
	stats_share_counts(10, 10, &a);
	stats_diff_between(&a, &b, 0, STATS_WALD, &d);
	CHECK(d.diff == 1 && d.z == INFINITY && d.differ);

	stats_share_counts(0, 0, &a);
	CHECK_ERR(stats_diff_between(&a, &b, 0, STATS_NEWCOMBE, &d), 0);
	CHECK(isnan(d.diff) && !d.differ);
	a.p = 2;
	a.n = 10;
	CHECK_ERR(stats_diff_between(&a, &b, 0, STATS_WALD, &d), -EINVAL);
	stats_share_counts(1, 10, &a);
	CHECK_ERR(stats_diff_between(&a, &b, 0, (enum stats_diff_method)7,
				     &d), -EINVAL);
	CHECK_ERR(stats_diff_between(&a, NULL, 0, STATS_WALD, &d), -EINVAL);
	CHECK_ERR(stats_diff_between(&a, &b, 1, STATS_WALD, &d), -EINVAL);
}

/* Wilson half-width at share p with n samples, through the public API. */
static double half_at(double p, uint64_t n)
{
	struct stats_share s = { p, (double)n };
	struct stats_interval ci;

	stats_share_wilson(&s, 0, &ci);
	return (ci.hi - ci.lo) / 2;
}

static void test_samples_needed(void)
{
	/* t-stats-ref.py: the normal formula, and the larger root of
	 * h^2 (n + z^2)^2 = z^2 (n p q + z^2/4) rounded up and checked. */
	static const struct {
		double p, h;
		uint64_t normal, wilson;
	} ref[] = {
		{ 0.05, 0.005, 7299, 7312 },
		{ 0.5, 0.01, 9604, 9600 },
		{ 0.0, 0.001, 0, 1917 },
		{ 0.01, 0.001, 38031, 38120 },
	};
	uint64_t n = 42;

	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
		CHECK_ERR(stats_n_normal(ref[i].p, ref[i].h, 0, &n), 0);
		CHECKF(n == ref[i].normal, "n_normal(%g, %g) = %llu",
		       ref[i].p, ref[i].h, (unsigned long long)ref[i].normal);
		CHECK_ERR(stats_n_wilson(ref[i].p, ref[i].h, 0, &n), 0);
		CHECKF(n == ref[i].wilson, "n_wilson(%g, %g) = %llu",
		       ref[i].p, ref[i].h, (unsigned long long)ref[i].wilson);
		/* The smallest n that does it. */
		CHECKF(half_at(ref[i].p, n) <= ref[i].h &&
		       half_at(ref[i].p, n - 1) > ref[i].h,
		       "n_wilson(%g, %g) is the smallest", ref[i].p,
		       ref[i].h);
	}
	/* h >= 1/2: the interval of no samples, [0, 1], already does. */
	CHECK_ERR(stats_n_wilson(0.05, 0.5, 0, &n), 0);
	CHECK(n == 0);
	{
		/* The confidence counts: (z99 / z95)^2 = 1.7272 times more. */
		uint64_t n95, n99;

		CHECK_ERR(stats_n_wilson(0.3, 1e-3, 0, &n95), 0);
		CHECK_ERR(stats_n_wilson(0.3, 1e-3, 0.99, &n99), 0);
		NEAR((double)n99 / n95, 1.7272, 0, 1e-3, "n_wilson at 99%%");
	}
	CHECK_ERR(stats_n_normal(0.5, 1e-12, 0, &n), -ERANGE);
	CHECK_ERR(stats_n_wilson(0.5, 1e-12, 0, &n), -ERANGE);
	CHECK_ERR(stats_n_wilson(0.5, 0, 0, &n), -EINVAL);
	CHECK_ERR(stats_n_wilson(1.5, 0.01, 0, &n), -EINVAL);
	CHECK_ERR(stats_n_normal(NAN, 0.01, 0, &n), -EINVAL);
	CHECK_ERR(stats_n_normal(0.5, INFINITY, 0, &n), -EINVAL);
	CHECK_ERR(stats_n_normal(0.5, 0.01, 0, NULL), -EINVAL);

	/* Telling two entries apart. */
	CHECK_ERR(stats_n_apart(0.10, 0.09, 0, 0, 0, &n), 0);
	CHECK(n == 7295);
	CHECK_ERR(stats_n_apart(0.10, 0.09, 0, 0, 0.8, &n), 0);
	CHECK(n == 14906);
	CHECK_ERR(stats_n_apart(0.30, 0.20, 0, 0, 0, &n), 0);
	CHECK(n == 189);
	{
		/* At that n the same shares are just significant. */
		struct stats_diff d;

		stats_n_apart(0.10, 0.09, 0, 0, 0, &n);
		stats_diff_within_shares(0.10, 0.09, 0, (double)n, 0, &d);
		NEAR(d.z, Z95, 0, 2e-4, "n_apart: z = z_conf at that n");
	}
	CHECK_ERR(stats_n_apart(1, 0, 0, 0, 0, &n), 0);
	CHECK(n == 1);
	CHECK_ERR(stats_n_apart(0.1, 0.1, 0, 0, 0, &n), -EDOM);
	CHECK_ERR(stats_n_apart(0.1, 0.2, 0, 0, 0.3, &n), -EINVAL);
	CHECK_ERR(stats_n_apart(0.1, 0.2, 0.15, 0, 0, &n), -EINVAL);
	CHECK_ERR(stats_n_apart(0.1, 0.1 + 1e-12, 0, 0, 0, &n), -ERANGE);
}

static void test_weighted(void)
{
	struct stats_share s;
	struct stats_interval ci, cw;

	CHECK(stats_n_eff(10, 10) == 10);	/* ten weights of 1 */
	CHECK(stats_n_eff(30, 90) == 10);	/* ten weights of 3 */
	CHECK(stats_n_eff(10, 50) == 2);	/* two weights of 5 */
	CHECK(stats_n_eff(0, 0) == 0);
	CHECK(isnan(stats_n_eff(1, 2)));	/* (sum w)^2 < sum w^2 */
	CHECK(isnan(stats_n_eff(-1, 1)));
	CHECK(isnan(stats_n_eff(1, 0)));
	CHECK(isnan(stats_n_eff(NAN, 1)));

	/* Equal weights give the counts back, both ways. */
	CHECK_ERR(stats_share_weighted(3.0 * 37, 9.0 * 37, 3.0 * 500,
				       9.0 * 500, &s), 0);
	NEAR(s.p, 37.0 / 500, 1e-15, 0, "equal weights: p = k/n");
	NEAR(s.n, 500, 1e-12, 0, "equal weights: per-entry n = n");
	CHECK_ERR(stats_share_weighted(3.0 * 37, -1, 3.0 * 500, 9.0 * 500,
				       &s), 0);
	NEAR(s.n, 500, 1e-12, 0, "equal weights: Kish n = n");
	stats_share_wilson(&s, 0, &cw);
	stats_wilson(37, 500, 0, &ci);
	NEAR(cw.lo, ci.lo, 1e-12, 0, "equal weights: the counts' interval");

	/* By hand: entry {1, 1} in a profile {1, 1, 4}.  p = 2/6 = 1/3;
	 * var = ((2/3)^2 2 + (1/3)^2 (18 - 2)) / 36 = (24/9) / 36 = 2/27;
	 * n = p (1 - p) / var = (2/9) (27/2) = 3; Kish = 36 / 18 = 2. */
	CHECK_ERR(stats_share_weighted(2, 2, 6, 18, &s), 0);
	NEAR(s.p, 1.0 / 3, 1e-15, 0, "by hand: p");
	NEAR(s.n, 3, 1e-14, 0, "by hand: per-entry n = 3");
	CHECK_ERR(stats_share_weighted(2, -1, 6, 18, &s), 0);
	NEAR(s.n, 2, 1e-14, 0, "by hand: Kish n = 2");
	/* p = 0 and p = 1 fall back on Kish. */
	CHECK_ERR(stats_share_weighted(0, 0, 6, 18, &s), 0);
	CHECK(s.p == 0 && s.n == 2);
	CHECK_ERR(stats_share_weighted(6, 18, 6, 18, &s), 0);
	CHECK(s.p == 1 && s.n == 2);
	CHECK_ERR(stats_share_weighted(0, 0, 0, 0, &s), 0);
	CHECK(isnan(s.p) && s.n == 0);

	CHECK_ERR(stats_share_weighted(7, 7, 6, 18, &s), -EINVAL);
	CHECK_ERR(stats_share_weighted(2, 5, 6, 18, &s), -EINVAL);
	CHECK_ERR(stats_share_weighted(2, 2, 6, 40, &s), -EINVAL);
	CHECK_ERR(stats_share_weighted(2, 20, 6, 18, &s), -EINVAL);
	CHECK_ERR(stats_share_weighted(-1, 1, 6, 18, &s), -EINVAL);
	CHECK_ERR(stats_share_weighted(NAN, 1, 6, 18, &s), -EINVAL);
	CHECK_ERR(stats_share_weighted(2, NAN, 6, 18, &s), -EINVAL);
	CHECK_ERR(stats_share_weighted(2, 2, INFINITY, 18, &s), -EINVAL);
	CHECK_ERR(stats_share_weighted(2, 2, 6, 18, NULL), -EINVAL);
}

/* ---- simulations -------------------------------------------------- */

#define R 4000	/* replicates of each simulation */

/*
 * Wilson coverage.  Each replicate is one profile of n samples, n uniform
 * in [1000, 3000] (averaging over n smooths the sawtooth of the coverage
 * of a fixed n, which t-stats-ref.py puts at 0.9432 for p = 3%, n = 2000;
 * averaged, 0.9500 to 0.9511 for these shares).
 */
static void sim_wilson(void)
{
	static const double p[] = { 0.40, 0.25, 0.15, 0.10, 0.05, 0.03,
				    0.01, 0.01 };
	enum { M = sizeof(p) / sizeof(p[0]) };
	double cum[M];
	uint64_t counts[M], cover[M] = { 0 }, cover90 = 0, total[M] = { 0 };
	uint64_t ntotal = 0;
	double chi2 = 0, disp = 0;
	struct rng r;

	rng_seed(&r, 7);
	cumulate(p, M, cum);
	for (int i = 0; i < R; i++) {
		uint64_t n = 1000 + rng_below(&r, 2001);

		multinomial(&r, n, cum, M, counts);
		ntotal += n;
		for (int c = 0; c < M; c++) {
			struct stats_interval ci;

			total[c] += counts[c];
			stats_wilson(counts[c], n, 0, &ci);
			cover[c] += ci.lo <= p[c] && p[c] <= ci.hi;
			if (c == 3) {
				double e = n * p[c];

				/* Squared z of each count: sums to about R
				 * if the draws are independent. */
				disp += (counts[c] - e) * (counts[c] - e) /
					(e * (1 - p[c]));
				stats_wilson(counts[c], n, 0.90, &ci);
				cover90 += ci.lo <= p[c] && p[c] <= ci.hi;
			}
		}
	}
	/* The sampler first: pooled counts against p (chi-square, 7 degrees
	 * of freedom, 99.9% point 24.32) and the spread of one count across
	 * replicates (sum of R squared z, about R +- sqrt(2R)). */
	for (int c = 0; c < M; c++) {
		double e = ntotal * p[c];

		chi2 += (total[c] - e) * (total[c] - e) / e;
	}
	CHECKF(chi2 < 24.32, "sampler: pooled counts fit p, chi2 = %.2f",
	       chi2);
	CHECKF(fabs(disp - R) < 3.2905 * sqrt(2.0 * R) * 1.05,
	       "sampler: count variance is n p q, sum z^2 = %.0f of %d",
	       disp, R);
	for (int c = 0; c < M; c++)
		RATE(cover[c], R, 0.95, "wilson 95%% covers p = %.2f at 95%%",
		     p[c]);
	/* The check can fail: a 90% interval does not pass for a 95% one. */
	CHECKF(!in_999(cover90, R, 0.95) && in_999(cover90, R, 0.90),
	       "a 90%% interval covers at 90%%, not 95%% (%.4f)",
	       (double)cover90 / R);
}

/*
 * One profile, two entries: the multinomial test rejects at 5% when the
 * shares are equal and more often the more they differ.  Exact rates
 * (t-stats-ref.py): 0.0501, 0.1643, 0.4799, 0.9561.
 */
static void sim_within(void)
{
	static const double p[] = { 0.10, 0.10, 0.11, 0.12, 0.14, 0.43 };
	static const double exact[] = { 0, 0.050089126838668695,
					0.1642980726054866,
					0.4799374153214378,
					0.9561323479421413 };
	/* Nested entries (total shares): only A, only B, both, neither. */
	static const double q[] = { 0.05, 0.05, 0.20, 0.70 };
	enum { M = sizeof(p) / sizeof(p[0]), N = 2000 };
	double cum[M], cumq[4];
	uint64_t counts[M], rej[5] = { 0 }, overlap = 0, naive = 0;
	struct rng r;

	rng_seed(&r, 11);
	cumulate(p, M, cum);
	cumulate(q, 4, cumq);
	for (int i = 0; i < R; i++) {
		struct stats_diff d;

		multinomial(&r, N, cum, M, counts);
		for (int j = 1; j <= 4; j++) {
			stats_diff_within(counts[0], counts[j], 0, N, 0, &d);
			rej[j] += d.differ;
		}
		multinomial(&r, N, cumq, 4, counts);
		stats_diff_within(counts[0] + counts[2], counts[1] + counts[2],
				  counts[2], N, 0, &d);
		overlap += d.differ;
		stats_diff_within(counts[0] + counts[2], counts[1] + counts[2],
				  0, N, 0, &d);
		naive += d.differ;
	}
	RATE(rej[1], R, 0.05, "within: equal shares rejected at 5%%");
	for (int j = 2; j <= 4; j++)
		RATE(rej[j], R, exact[j], "within: power at 0.10 vs %.2f is "
		     "the exact %.4f", p[j], exact[j]);
	CHECKF(rej[1] < rej[2] && rej[2] < rej[3] && rej[3] < rej[4],
	       "within: power rises with the difference");
	/* Exact rate with the overlap: 0.0503 (t-stats-ref.py). */
	RATE(overlap, R, 0.05, "within: equal overlapping totals rejected "
	     "at 5%% with k12");
	CHECKF(naive < overlap / 4, "within: ignoring the overlap is far "
	       "too cautious (%llu vs %llu of %d)", (unsigned long long)naive,
	       (unsigned long long)overlap, R);
}

/*
 * Two independent profiles of 3000 and 1500 samples, pA = 8%: rejection
 * at 5% under the null, rising power, and coverage of the true
 * difference.  Exact rates from t-stats-ref.py.
 */
static void sim_between(void)
{
	static const double pb[] = { 0.08, 0.09, 0.10, 0.12 };
	static const double wald_exact[] = { 0.050382838287693105,
					     0.19530679475745302,
					     0.5862461552824794,
					     0.9872033711343694 };
	static const double newc_exact[] = { 0.04985117314886847,
					     0.21223198206360083,
					     0.6090040058612527,
					     0.9889206647673926 };
	enum { NA = 3000, NB = 1500, M = 4 };
	uint64_t wrej[M] = { 0 }, nrej[M] = { 0 }, wcov[M] = { 0 };
	uint64_t ncov[M] = { 0 };
	struct rng r;

	rng_seed(&r, 13);
	for (int i = 0; i < R; i++) {
		struct stats_share a, b;
		struct stats_diff d;

		stats_share_counts(binomial(&r, NA, 0.08), NA, &a);
		for (int j = 0; j < M; j++) {
			double truth = 0.08 - pb[j];

			stats_share_counts(binomial(&r, NB, pb[j]), NB, &b);
			stats_diff_between(&a, &b, 0, STATS_WALD, &d);
			wrej[j] += d.differ;
			wcov[j] += d.lo <= truth && truth <= d.hi;
			stats_diff_between(&a, &b, 0, STATS_NEWCOMBE, &d);
			nrej[j] += d.differ;
			ncov[j] += d.lo <= truth && truth <= d.hi;
		}
	}
	RATE(wrej[0], R, 0.05, "between, Wald: equal shares rejected at 5%%");
	RATE(nrej[0], R, 0.05, "between, Newcombe: equal shares rejected at "
	     "5%%");
	for (int j = 1; j < M; j++) {
		RATE(wrej[j], R, wald_exact[j], "between, Wald: power at 0.08 "
		     "vs %.2f", pb[j]);
		RATE(nrej[j], R, newc_exact[j], "between, Newcombe: power at "
		     "0.08 vs %.2f", pb[j]);
		CHECKF(wrej[j] > wrej[j - 1] && nrej[j] > nrej[j - 1],
		       "between: power rises to 0.08 vs %.2f", pb[j]);
	}
	for (int j = 0; j < M; j++) {
		RATE(wcov[j], R, 0.95, "between, Wald: covers %.2f - %.2f",
		     0.08, pb[j]);
		RATE(ncov[j], R, 0.95, "between, Newcombe: covers %.2f - %.2f",
		     0.08, pb[j]);
	}
}

/*
 * Weighted samples: 70% of the samples come from a host of weight 1, 30%
 * from a host of weight 5, and the entry's share differs by host.  The
 * true weighted share is the ratio of expectations.  The per-entry size
 * of stats_share_weighted() covers at 95% either way (a 100,000-replicate
 * run offline: 0.949 to 0.951); Kish's covers at 95% only when the
 * weights are independent of the entry (offline: 0.928 when the entry
 * lives on the heavy host).
 */
static void sim_weighted(void)
{
	static const double ph[2][2] = { { 0.05, 0.20 }, { 0.10, 0.10 } };
	enum { N = 2000 };
	struct rng r;

	rng_seed(&r, 17);
	for (int sc = 0; sc < 2; sc++) {
		double p1 = ph[sc][0], p2 = ph[sc][1];
		double truth = (0.7 * p1 + 0.3 * 5 * p2) / (0.7 + 0.3 * 5);
		uint64_t entry = 0, kish = 0;

		for (int i = 0; i < R; i++) {
			double wk = 0, w2k = 0, wn = 0, w2n = 0;
			struct stats_share s;
			struct stats_interval ci;

			for (int j = 0; j < N; j++) {
				int heavy = rng_unif(&r) >= 0.7;
				double w = heavy ? 5 : 1;
				bool in = rng_unif(&r) < (heavy ? p2 : p1);

				wn += w;
				w2n += w * w;
				if (in) {
					wk += w;
					w2k += w * w;
				}
			}
			stats_share_weighted(wk, w2k, wn, w2n, &s);
			stats_share_wilson(&s, 0, &ci);
			entry += ci.lo <= truth && truth <= ci.hi;
			stats_share_weighted(wk, -1, wn, w2n, &s);
			stats_share_wilson(&s, 0, &ci);
			kish += ci.lo <= truth && truth <= ci.hi;
		}
		RATE(entry, R, 0.95, "weighted (%s): per-entry n_eff covers at "
		     "95%%", sc ? "independent" : "correlated");
		if (sc)
			RATE(kish, R, 0.95, "weighted (independent): Kish "
			     "n_eff covers at 95%%");
		else
			CHECKF(kish < entry, "weighted (correlated): Kish "
			       "covers less (%.4f) than per-entry (%.4f)",
			       (double)kish / R, (double)entry / R);
	}
}

int main(void)
{
	struct rng r = { { 1, 2, 3, 4 } };

	/* xoshiro256**'s first output from state {1, 2, 3, 4}:
	 * rotl(2 * 5, 7) * 9 = 1280 * 9. */
	CHECK(rng_next(&r) == 11520);

	test_quantile();
	test_wilson();
	test_within();
	test_between();
	test_samples_needed();
	test_weighted();
	sim_wilson();
	sim_within();
	sim_between();
	sim_weighted();
	return tap_done();
}
