/*
 * stats.c - confidence intervals, tests and sample-size answers for the
 * shares of a profile (tools/view/stats.h is the manual, docs/views.md the
 * derivations).
 *
 * Everything is a pure function of its arguments.  The normal quantile
 * is Wichura's AS241, whose rational approximations are good to better
 * than 1e-15 relative, so the critical values match the tables to the
 * last digit; the distribution function is libm's erfc(), accurate in
 * both tails.
 *
 * Invariants kept for every caller: intervals of shares lie within [0, 1]
 * and contain the estimate, intervals of differences within [-1, 1];
 * `differ` always agrees with whether the interval holds 0; nothing here
 * divides by zero on valid input (n = 0 and se = 0 are spelled out).
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>

#include "stats.h"
#include "banned.h"

/*
 * Sums of weights computed by the caller in another order may overshoot
 * their bound by a few ulps: allow that much before calling them invalid.
 */
#define STATS_SLACK 1e-9

double stats_norm_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

/* Wichura, M. J. (1988), Algorithm AS 241, Applied Statistics 37(3). */
double stats_norm_quantile(double p)
{
	double q, r, num, den, x;

	if (isnan(p) || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	q = p - 0.5;
	if (fabs(q) <= 0.425) {
		r = 0.180625 - q * q;
		num = (((((((2.5090809287301226727e+3 * r +
			     3.3430575583588128105e+4) * r +
			    6.7265770927008700853e+4) * r +
			   4.5921953931549871457e+4) * r +
			  1.3731693765509461125e+4) * r +
			 1.9715909503065514427e+3) * r +
			1.3314166789178437745e+2) * r +
		       3.3871328727963666080e+0);
		den = (((((((5.2264952788528545610e+3 * r +
			     2.8729085735721942674e+4) * r +
			    3.9307895800092710610e+4) * r +
			   2.1213794301586595867e+4) * r +
			  5.3941960214247511077e+3) * r +
			 6.8718700749205790830e+2) * r +
			4.2313330701600911252e+1) * r +
		       1.0);
		return q * num / den;
	}
	r = q < 0 ? p : 1.0 - p;
	r = sqrt(-log(r));
	if (r <= 5.0) {
		r -= 1.6;
		num = (((((((7.74545014278341407640e-4 * r +
			     2.27238449892691845833e-2) * r +
			    2.41780725177450611770e-1) * r +
			   1.27045825245236838258e+0) * r +
			  3.64784832476320460504e+0) * r +
			 5.76949722146069140550e+0) * r +
			4.63033784615654529590e+0) * r +
		       1.42343711074968357734e+0);
		den = (((((((1.05075007164441684324e-9 * r +
			     5.47593808499534494600e-4) * r +
			    1.51986665636164571966e-2) * r +
			   1.48103976427480074590e-1) * r +
			  6.89767334985100004550e-1) * r +
			 1.67638483018380384940e+0) * r +
			2.05319162663775882187e+0) * r +
		       1.0);
	} else {
		r -= 5.0;
		num = (((((((2.01033439929228813265e-7 * r +
			     2.71155556874348757815e-5) * r +
			    1.24266094738807843860e-3) * r +
			   2.65321895265761230930e-2) * r +
			  2.96560571828504891230e-1) * r +
			 1.78482653991729133580e+0) * r +
			5.46378491116411436990e+0) * r +
		       6.65790464350110377720e+0);
		den = (((((((2.04426310338993978564e-15 * r +
			     1.42151175831644588870e-7) * r +
			    1.84631831751005468180e-5) * r +
			   7.86869131145613259100e-4) * r +
			  1.48753612908506148525e-2) * r +
			 1.36929880922735805310e-1) * r +
			5.99832206555887937690e-1) * r +
		       1.0);
	}
	x = num / den;
	return q < 0 ? -x : x;
}

double stats_z(double conf)
{
	if (conf == 0)
		conf = STATS_CONF_DEFAULT;
	if (!(conf > 0 && conf < 1))
		return NAN;
	/* 1 - (1 - conf) / 2 would lose digits of a conf near 1; this does
	 * not, and AS241 takes the tail from 1 - p exactly enough. */
	return stats_norm_quantile(0.5 + conf / 2);
}

static double clamp(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* The Wilson interval of the share p of n (real) samples, at z. */
static void wilson(double p, double n, double z, struct stats_interval *out)
{
	double z2 = z * z, den, centre, half, lo, hi;

	if (n == 0) {
		out->est = NAN;
		out->lo = 0;
		out->hi = 1;
		return;
	}
	/* In counts, k = p n: centre (k + z^2/2) / (n + z^2), half-width
	 * z sqrt(k (n - k) / n + z^2 / 4) / (n + z^2). */
	den = n + z2;
	centre = (p * n + z2 / 2) / den;
	half = z * sqrt(n * p * (1 - p) + z2 / 4) / den;
	/* k = 0 and k = n make one end exact; rounding must not move it. */
	lo = p <= 0 ? 0 : clamp(centre - half, 0, 1);
	hi = p >= 1 ? 1 : clamp(centre + half, 0, 1);
	out->est = p;
	out->lo = lo < p ? lo : p;
	out->hi = hi > p ? hi : p;
}

int stats_wilson(uint64_t k, uint64_t n, double conf,
		 struct stats_interval *out)
{
	struct stats_share s;
	int err;

	err = stats_share_counts(k, n, &s);
	if (err)
		return err;
	return stats_share_wilson(&s, conf, out);
}

int stats_share_counts(uint64_t k, uint64_t n, struct stats_share *out)
{
	if (!out || k > n)
		return -EINVAL;
	out->p = n ? (double)k / (double)n : NAN;
	out->n = (double)n;
	return 0;
}

/* A share as stats_share_counts() or stats_share_weighted() make it. */
static bool share_valid(const struct stats_share *s)
{
	if (!s || !isfinite(s->n) || s->n < 0)
		return false;
	return s->n == 0 || (s->p >= 0 && s->p <= 1);
}

int stats_share_wilson(const struct stats_share *s, double conf,
		       struct stats_interval *out)
{
	double z = stats_z(conf);

	if (!out || !share_valid(s) || isnan(z))
		return -EINVAL;
	wilson(s->p, s->n, z, out);
	return 0;
}

double stats_n_eff(double sum_w, double sum_w2)
{
	if (!isfinite(sum_w) || !isfinite(sum_w2) || sum_w < 0 || sum_w2 < 0)
		return NAN;
	if (sum_w2 == 0)
		return sum_w == 0 ? 0 : NAN;
	/* Non-negative weights have (sum w)^2 >= sum w^2. */
	if (sum_w * sum_w < sum_w2 * (1 - STATS_SLACK))
		return NAN;
	return sum_w * sum_w / sum_w2;
}

int stats_share_weighted(double wk, double w2k, double wn, double w2n,
			 struct stats_share *out)
{
	double p, var, kish;
	bool known = w2k >= 0;

	if (!out || !isfinite(wk) || !isfinite(wn) || !isfinite(w2n) ||
	    isnan(w2k) || (known && !isfinite(w2k)) || wk < 0)
		return -EINVAL;
	if (wk > wn * (1 + STATS_SLACK))
		return -EINVAL;
	if (known && (w2k > w2n * (1 + STATS_SLACK) ||
		      w2k > wk * wk * (1 + STATS_SLACK)))
		return -EINVAL;
	kish = stats_n_eff(wn, w2n);
	if (isnan(kish))
		return -EINVAL;
	if (wn == 0) {
		out->p = NAN;
		out->n = 0;
		return 0;
	}
	p = clamp(wk / wn, 0, 1);
	out->p = p;
	out->n = kish;
	if (!known || p <= 0 || p >= 1)
		return 0;
	/* Linearized variance of the ratio sum(w y) / sum(w), y the 0/1
	 * indicator of the entry: sum w^2 (y - p)^2 / (sum w)^2. */
	if (w2k > w2n)
		w2k = w2n;
	var = ((1 - p) * (1 - p) * w2k + p * p * (w2n - w2k)) / (wn * wn);
	if (var > 0)
		out->n = p * (1 - p) / var;
	return 0;
}

/* Fill @out from a difference, its standard error and z_conf. */
static void wald(double diff, double se, double zc, struct stats_diff *out)
{
	out->diff = diff;
	out->se = se;
	if (isnan(diff) || isnan(se))
		out->z = NAN;
	else if (se > 0)
		out->z = diff / se;
	else
		out->z = diff == 0 ? 0 : copysign(INFINITY, diff);
	out->p_value = erfc(fabs(out->z) / M_SQRT2);
	out->lo = clamp(diff - zc * se, -1, 1);
	out->hi = clamp(diff + zc * se, -1, 1);
	if (isnan(diff) || isnan(se))
		out->lo = out->hi = NAN;
	/* |z| > zc is |diff| > zc se: the interval misses 0. */
	out->differ = fabs(out->z) > zc;
}

static void diff_nan(struct stats_diff *out)
{
	out->diff = out->se = out->z = out->p_value = NAN;
	out->lo = out->hi = NAN;
	out->differ = false;
}

int stats_diff_within_shares(double p1, double p2, double p12, double n,
			     double conf, struct stats_diff *out)
{
	double zc = stats_z(conf), var;

	if (!out || isnan(zc) || !isfinite(n) || n < 0)
		return -EINVAL;
	if (n == 0) {
		diff_nan(out);
		return 0;
	}
	if (!(p1 >= 0 && p1 <= 1 && p2 >= 0 && p2 <= 1 && p12 >= 0))
		return -EINVAL;
	if (p12 > fmin(p1, p2) + STATS_SLACK ||
	    p1 + p2 - p12 > 1 + STATS_SLACK)
		return -EINVAL;
	/* Multinomial: var(p1) = p1 (1 - p1) / n, cov(p1, p2) =
	 * (p12 - p1 p2) / n (-p1 p2 / n for disjoint entries). */
	var = p1 * (1 - p1) + p2 * (1 - p2) - 2 * (p12 - p1 * p2);
	if (var < 0)	/* rounding, for two entries that are one */
		var = 0;
	wald(p1 - p2, sqrt(var / n), zc, out);
	return 0;
}

int stats_diff_within(uint64_t k1, uint64_t k2, uint64_t k12, uint64_t n,
		      double conf, struct stats_diff *out)
{
	double dn = (double)n;

	if (!out || k1 > n || k2 > n || k12 > k1 || k12 > k2 ||
	    k1 - k12 > n - k2)	/* k1 + k2 - k12 > n, without overflow */
		return -EINVAL;
	if (n == 0)
		return stats_diff_within_shares(0, 0, 0, 0, conf, out);
	return stats_diff_within_shares((double)k1 / dn, (double)k2 / dn,
					(double)k12 / dn, dn, conf, out);
}

static void newcombe(const struct stats_share *a, const struct stats_share *b,
		     double zc, struct stats_diff *out)
{
	struct stats_interval ia, ib;
	double diff = a->p - b->p, lo, hi, se;

	wilson(a->p, a->n, zc, &ia);
	wilson(b->p, b->n, zc, &ib);
	lo = diff - hypot(a->p - ia.lo, ib.hi - b->p);
	hi = diff + hypot(ia.hi - a->p, b->p - ib.lo);
	if (diff > 0)
		se = (diff - lo) / zc;
	else if (diff < 0)
		se = (hi - diff) / zc;
	else
		se = (hi - lo) / (2 * zc);
	wald(diff, se, zc, out);
	/* The interval is the method; z and p only restate it. */
	out->lo = clamp(lo, -1, 1);
	out->hi = clamp(hi, -1, 1);
	out->differ = out->lo > 0 || out->hi < 0;
}

int stats_diff_between(const struct stats_share *a,
		       const struct stats_share *b, double conf,
		       enum stats_diff_method method, struct stats_diff *out)
{
	double zc = stats_z(conf);

	if (!out || !share_valid(a) || !share_valid(b) || isnan(zc) ||
	    (method != STATS_WALD && method != STATS_NEWCOMBE))
		return -EINVAL;
	if (a->n == 0 || b->n == 0) {
		diff_nan(out);
		return 0;
	}
	if (method == STATS_NEWCOMBE) {
		newcombe(a, b, zc, out);
		return 0;
	}
	/* Independent samples: the variances add. */
	wald(a->p - b->p, sqrt(a->p * (1 - a->p) / a->n +
			       b->p * (1 - b->p) / b->n), zc, out);
	return 0;
}

/* ceil(x) as a sample count, or -ERANGE. */
static int to_count(double x, uint64_t *n)
{
	if (!(x <= (double)STATS_N_MAX))
		return -ERANGE;
	*n = x > 0 ? (uint64_t)ceil(x) : 0;
	return 0;
}

int stats_n_normal(double p, double h, double conf, uint64_t *n)
{
	double z = stats_z(conf);

	if (!n || isnan(z) || !(p >= 0 && p <= 1) || !(h > 0) || isinf(h))
		return -EINVAL;
	return to_count(z * z * p * (1 - p) / (h * h), n);
}

/* Half-width of the Wilson interval of share p with n samples. */
static double wilson_half(double p, double n, double z)
{
	return z * sqrt(n * p * (1 - p) + z * z / 4) / (n + z * z);
}

int stats_n_wilson(double p, double h, double conf, uint64_t *n)
{
	double z = stats_z(conf);
	uint64_t lo = 0, hi = 1;

	if (!n || isnan(z) || !(p >= 0 && p <= 1) || !(h > 0) || isinf(h))
		return -EINVAL;
	/* wilson_half() falls from 1/2 at n = 0 toward 0: its derivative
	 * has the sign of z^2 (p (1-p) - 1/2) - n p (1-p) < 0. */
	if (wilson_half(p, 0, z) <= h) {
		*n = 0;
		return 0;
	}
	while (wilson_half(p, (double)hi, z) > h) {
		if (hi >= STATS_N_MAX)
			return -ERANGE;
		lo = hi;
		hi *= 2;
	}
	/* Invariant: half(lo) > h >= half(hi). */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (wilson_half(p, (double)mid, z) > h)
			lo = mid;
		else
			hi = mid;
	}
	*n = hi;
	return 0;
}

int stats_n_apart(double p1, double p2, double p12, double conf,
		  double power, uint64_t *n)
{
	double zc = stats_z(conf), zp, var, d;
	int err;

	if (power == 0)
		power = 0.5;
	if (!n || isnan(zc) || !(power >= 0.5 && power < 1))
		return -EINVAL;
	if (!(p1 >= 0 && p1 <= 1 && p2 >= 0 && p2 <= 1 && p12 >= 0) ||
	    p12 > fmin(p1, p2) + STATS_SLACK ||
	    p1 + p2 - p12 > 1 + STATS_SLACK)
		return -EINVAL;
	d = p1 - p2;
	if (d == 0)
		return -EDOM;
	zp = stats_norm_quantile(power);
	var = p1 * (1 - p1) + p2 * (1 - p2) - 2 * (p12 - p1 * p2);
	if (var < 0)
		var = 0;
	err = to_count((zc + zp) * (zc + zp) * var / (d * d), n);
	if (!err && *n == 0)
		*n = 1;
	return err;
}
