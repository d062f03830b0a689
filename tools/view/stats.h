/*
 * stats.h - the statistics behind `sym report` and `sym diff`: how far a
 * share of samples can be trusted (design note 4 of PRODUCT.md).
 *
 * A profile of n samples is a sample from a multinomial distribution: each
 * sample lands in a function with some true probability p, and the share
 * k/n that the profile shows is an estimate of p.  This module answers the
 * questions a reader of a profile asks:
 *
 *   stats_wilson()          what range of true shares does k out of n
 *                           support?  (Wilson score interval)
 *   stats_diff_within()     are two entries of ONE profile different, or
 *                           can this sample not tell them apart?
 *   stats_diff_between()    did an entry's share change between two
 *                           independent profiles A and B (`sym diff`)?
 *   stats_n_wilson(),       how many samples would a resolution of +-h at
 *   stats_n_normal()        a share p need?
 *   stats_n_apart()         how many samples would tell two shares apart?
 *   stats_share_weighted()  the same questions for samples of unequal
 *                           weights, through an effective sample size.
 *
 * The formulas, their derivations, references and a worked example are in
 * docs/views.md, section "Error bars and how to read them".
 *
 * Caveats:
 * - Every result assumes independent samples.  A timer-driven profile of a
 *   program with phases or periodic work is correlated in time, and then
 *   the true error is larger than these intervals say: read them as a
 *   lower bound on the uncertainty.  They say nothing about bias (skid,
 *   frames lost by the unwinder, a sampler that misses some code).
 * - Intervals and tests use the normal approximation (Wilson's is a score
 *   interval, good down to a handful of samples; the Wald ones need some
 *   tens of samples in each entry).  Below that, trust the Wilson and
 *   Newcombe intervals and not the z values.
 *
 * Conventions shared by every function:
 * - Pure functions: no I/O, no allocation, no global state; thread-safe.
 * - @conf is the two-sided confidence level in (0, 1); 0 means the default,
 *   STATS_CONF_DEFAULT (95%).  Any other value outside (0, 1), or NaN, is
 *   -EINVAL.
 * - Status-returning calls return 0 or -EINVAL (a bad argument: a count
 *   larger than its total, a non-finite value, a NULL out pointer), and
 *   the n_* ones also -ERANGE (the answer exceeds STATS_N_MAX) or -EDOM
 *   (no sample count can ever do it).  On error *out is left untouched.
 * - Shares and differences are fractions (0.05 is 5%), not percentages.
 *
 * Link with -lm.
 */
#ifndef SYM_TOOLS_STATS_H
#define SYM_TOOLS_STATS_H

#include <stdbool.h>
#include <stdint.h>

/** The confidence level used when a function is passed conf = 0. */
#define STATS_CONF_DEFAULT 0.95

/** Largest sample count the n_* functions return (2^53: exact in a
 *  double). */
#define STATS_N_MAX (UINT64_C(1) << 53)

/**
 * stats_norm_cdf() - the standard normal distribution function Phi(x),
 * computed as erfc(-x / sqrt(2)) / 2 (accurate in both tails).
 * @return a value in [0, 1]; NaN for NaN
 */
double stats_norm_cdf(double x);

/**
 * stats_norm_quantile() - the inverse of stats_norm_cdf(): the x with
 * Phi(x) = p.  Wichura's algorithm AS241 (PPND16, Applied Statistics 37,
 * 1988): relative error below 1e-15 over the whole range (at most
 * 7.3e-16 against 60-digit mpmath from p = 1e-300 to 1/2).
 * @return -INFINITY for p = 0, +INFINITY for p = 1, NaN for p outside
 *         [0, 1] or NaN
 */
double stats_norm_quantile(double p);

/**
 * stats_z() - the two-sided critical value of a confidence level: the z
 * with Phi(z) - Phi(-z) = conf, i.e. stats_norm_quantile((1 + conf) / 2).
 * 1.959963984540054 for 0.95, 2.5758293035489 for 0.99.
 * @param conf  in (0, 1); 0 for STATS_CONF_DEFAULT
 * @return z > 0, or NaN when @conf is invalid
 */
double stats_z(double conf);

/** A point estimate with a two-sided interval around it. */
struct stats_interval {
	/** The estimate itself, k/n; NaN when n = 0. */
	double est;
	/** The interval, lo <= est <= hi, within [0, 1] for a share. */
	double lo, hi;
};

/**
 * stats_wilson() - Wilson score interval for the share k/n.
 * With p = k/n and z = stats_z(conf):
 *
 *     centre = (k + z^2/2) / (n + z^2)
 *     half   = z / (n + z^2) * sqrt(k (n - k) / n + z^2/4)
 *     [lo, hi] = [centre - half, centre + half]
 *
 * (no continuity correction).  The interval is not centred on k/n: it
 * leans toward 1/2, which is what keeps it honest near 0 and 1.
 * Edge cases: k = 0 gives lo = 0 exactly and hi = z^2 / (n + z^2) > 0
 * ("never seen" still allows a small share); k = n gives hi = 1 exactly;
 * n = 0 gives est = NaN and [0, 1], the interval that knows nothing.
 * @param k     samples in the entry
 * @param n     samples in the profile
 * @param conf  0 for 95%
 * @param[out] out  the share and its interval
 * @return 0, -EINVAL (k > n, bad @conf, NULL @out)
 */
int stats_wilson(uint64_t k, uint64_t n, double conf,
		 struct stats_interval *out);

/**
 * A share of a profile, with the (effective) number of samples that
 * measures how precise it is.  For plain counts p = k/n and n is the
 * sample count (stats_share_counts()); for weighted samples n is an
 * effective sample size and need not be an integer
 * (stats_share_weighted()).
 */
struct stats_share {
	/** The share, in [0, 1]; NaN when n = 0. */
	double p;
	/** The (effective) sample size, >= 0. */
	double n;
};

/**
 * stats_share_counts() - the share of k samples out of n.
 * @return 0, -EINVAL (k > n, NULL @out)
 */
int stats_share_counts(uint64_t k, uint64_t n, struct stats_share *out);

/**
 * stats_n_eff() - Kish's effective sample size of samples with weights
 * w_i: (sum w_i)^2 / sum w_i^2.  It is n for equal weights and smaller
 * the more unequal they are; it is the n of an unweighted sample whose
 * share would have the same variance, exactly so when the weights are
 * independent of where the samples land, approximately otherwise.
 * @param sum_w   sum of the weights, >= 0
 * @param sum_w2  sum of their squares
 * @return the effective size; 0 when @sum_w2 is 0; NaN for negative or
 *         non-finite arguments or sums no set of non-negative weights can
 *         have (sum_w^2 < sum_w2)
 */
double stats_n_eff(double sum_w, double sum_w2);

/**
 * stats_share_weighted() - the share of an entry in a profile whose
 * samples carry unequal weights (merged hosts with different periods,
 * per-host normalization, CPU-seconds), with an effective sample size
 * that makes every other function here work on it.
 *
 * The share is p = wk / wn.  Its variance is estimated by linearizing the
 * ratio (the survey-sampling "sandwich" estimate):
 *
 *     var(p) = ((1 - p)^2 w2k + p^2 (w2n - w2k)) / wn^2
 *
 * and the effective size is n = p (1 - p) / var(p), the size of the
 * unweighted sample that would have that variance.  This is per entry: an
 * entry whose samples all come from the heavily weighted host gets a small
 * n even when the profile as a whole is large.  When @w2k is unknown (pass
 * a negative value) or p is 0 or 1 (where that formula is 0/0), n is
 * Kish's stats_n_eff(wn, w2n) of the whole profile instead.  Both are
 * approximations, good when no single sample carries a large part of the
 * weight; with equal weights both give back the plain count exactly.
 * The scale of the weights does not matter.
 * @param wk   sum of the weights of the entry's samples
 * @param w2k  sum of their squares, or < 0 when unknown
 * @param wn   sum of the weights of all samples of the profile
 * @param w2n  sum of their squares
 * @param[out] out  p and the effective n; p = NaN, n = 0 when wn = 0
 * @return 0, -EINVAL (non-finite or negative sums, wk > wn, w2k > w2n,
 *         wn^2 < w2n, NULL @out)
 */
int stats_share_weighted(double wk, double w2k, double wn, double w2n,
			 struct stats_share *out);

/**
 * stats_share_wilson() - stats_wilson() for a share with a real-valued
 * (effective) sample size: k = p n.
 * @return 0, -EINVAL (p outside [0, 1] while n > 0, n negative or not
 *         finite, bad @conf, NULL pointer)
 */
int stats_share_wilson(const struct stats_share *s, double conf,
		       struct stats_interval *out);

/** The comparison of two shares. */
struct stats_diff {
	/** The estimated difference: p1 - p2, or pA - pB. */
	double diff;
	/** Its standard error (see each function for which one). */
	double se;
	/** diff / se: 0 when both are 0, +-INFINITY when only se is 0. */
	double z;
	/** Two-sided p-value of "no difference", 2 Phi(-|z|). */
	double p_value;
	/** Interval for the true difference at the confidence, in [-1, 1]. */
	double lo, hi;
	/**
	 * True when the sample tells the two apart at the confidence: the
	 * interval excludes 0, which is the same as |z| > stats_z(conf).
	 * False means "cannot tell apart": the difference seen is within
	 * what sampling noise alone produces (not that the shares are
	 * equal).
	 */
	bool differ;
};

/**
 * stats_diff_within() - can two entries of ONE profile be told apart?
 * Two shares of the same multinomial sample are negatively correlated (a
 * sample in one is not in the other), so comparing their two intervals is
 * wrong: overlapping intervals do not mean "the same".  With p1 = k1/n,
 * p2 = k2/n and p12 = k12/n the share of samples counted in both:
 *
 *     var(p1 - p2) = (p1 (1 - p1) + p2 (1 - p2) - 2 (p12 - p1 p2)) / n
 *
 * For disjoint entries (self shares, k12 = 0) the covariance is
 * -p1 p2 / n and this is (p1 (1-p1) + p2 (1-p2) + 2 p1 p2) / n.  Total
 * shares overlap (a caller's total holds its callee's samples): pass the
 * samples whose stack holds both functions as k12.
 * se = sqrt(var), z = diff / se, interval diff +- z_conf se (Wald).
 * @param k1, k2  samples in each entry
 * @param k12     samples in both (0 for self shares)
 * @param n       samples in the profile
 * @param conf    0 for 95%
 * @return 0, -EINVAL (k1 or k2 > n, k12 > min(k1, k2), k1 + k2 - k12 > n,
 *         bad @conf, NULL @out).  n = 0 gives NaN estimates and
 *         differ = false.
 */
int stats_diff_within(uint64_t k1, uint64_t k2, uint64_t k12, uint64_t n,
		      double conf, struct stats_diff *out);

/**
 * stats_diff_within_shares() - stats_diff_within() on shares and an
 * (effective) sample size, for weighted profiles: pass the weighted shares
 * and Kish's stats_n_eff() of the profile (an approximation, see
 * stats_share_weighted()).
 * @return 0, -EINVAL (shares outside [0, 1], p12 > min(p1, p2),
 *         p1 + p2 - p12 > 1 (beyond rounding), n negative or not finite,
 *         bad @conf, NULL @out)
 */
int stats_diff_within_shares(double p1, double p2, double p12, double n,
			     double conf, struct stats_diff *out);

/** How stats_diff_between() builds its interval. */
enum stats_diff_method {
	/**
	 * Wald: var = pA (1 - pA) / nA + pB (1 - pB) / nB, interval
	 * diff +- z se, z-test with the same se.  The textbook formula; it
	 * degenerates when a share is 0 or 1 (se = 0) and is too narrow for
	 * small counts.
	 */
	STATS_WALD = 0,
	/**
	 * Newcombe's hybrid score interval (Newcombe 1998, method 10): from
	 * the Wilson intervals [lA, uA] and [lB, uB] of the two shares,
	 *
	 *   lo = diff - sqrt((pA - lA)^2 + (uB - pB)^2)
	 *   hi = diff + sqrt((uA - pA)^2 + (pB - lB)^2)
	 *
	 * It stays sound for different sample counts, for shares at 0 or 1
	 * and for few samples, and it takes effective (weighted) sizes.
	 * se is the one the interval implies on the side of 0,
	 * (diff - lo) / z for diff > 0, (hi - diff) / z for diff < 0, so
	 * that z = diff / se and differ agree with the interval.  The method
	 * `sym diff` should use.
	 */
	STATS_NEWCOMBE = 1,
};

/**
 * stats_diff_between() - did a share change between two independent
 * profiles A and B (`sym diff A B`)?  The two samples are independent, so
 * the variances add (no covariance term); the counts nA and nB may differ,
 * and weighted shares come in with their effective sizes.
 * @param a, b    from stats_share_counts() or stats_share_weighted()
 * @param conf    0 for 95%
 * @param method  STATS_WALD or STATS_NEWCOMBE
 * @param[out] out  diff = pA - pB and the rest
 * @return 0, -EINVAL (a bad share, bad @conf or @method, NULL pointer).
 *         A profile with n = 0 gives NaN estimates and differ = false.
 */
int stats_diff_between(const struct stats_share *a,
		       const struct stats_share *b, double conf,
		       enum stats_diff_method method, struct stats_diff *out);

/**
 * stats_n_normal() - samples needed for a half-width of at most @h at the
 * share @p, from the normal approximation: n = ceil(z^2 p (1 - p) / h^2).
 * 7299 for p = 5%, h = 0.5 percentage points, 95%.  It says 0 at p = 0
 * or 1, which is wrong (see stats_n_wilson()).
 * @param p  the share, in [0, 1]
 * @param h  the half-width wanted, > 0 (0.005 for +-0.5 points)
 * @param[out] n  the sample count
 * @return 0, -EINVAL, -ERANGE (more than STATS_N_MAX)
 */
int stats_n_normal(double p, double h, double conf, uint64_t *n);

/**
 * stats_n_wilson() - the exact answer to the same question for the
 * interval `sym report` prints: the smallest n whose Wilson interval at
 * the share p (k = p n) has half-width (hi - lo) / 2 at most @h.  The
 * half-width z sqrt(n p (1-p) + z^2/4) / (n + z^2) falls as n grows, so
 * this is a bisection over integers.  Near 0 and 1 it needs more samples
 * than stats_n_normal() says; 0 when h >= 1/2.
 * @return 0, -EINVAL, -ERANGE (more than STATS_N_MAX)
 */
int stats_n_wilson(double p, double h, double conf, uint64_t *n);

/**
 * stats_n_apart() - samples needed to tell two entries of one profile
 * apart if their shares are p1 and p2 (overlap p12, 0 for self shares):
 *
 *     n = ceil((z_conf + z_power)^2 var1 / (p1 - p2)^2)
 *
 * with var1 = n var(p1 - p2) of stats_diff_within() and z_power =
 * stats_norm_quantile(power).  With power = 0.5 (pass 0) it is the n at
 * which the observed difference would just reach significance; with 0.8,
 * the n at which a real difference of that size is detected 80% of the
 * time.
 * The answer is at least 1.
 * @param power  in [0.5, 1), or 0 for 0.5
 * @return 0, -EINVAL, -EDOM (p1 = p2: no n tells equal shares apart),
 *         -ERANGE (more than STATS_N_MAX)
 */
int stats_n_apart(double p1, double p2, double p12, double conf,
		  double power, uint64_t *n);

#endif /* SYM_TOOLS_STATS_H */
