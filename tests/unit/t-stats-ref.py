#!/usr/bin/python3
# t-stats-ref.py - the reference values of tests/unit/t-stats.c, computed
# offline with SciPy, an implementation independent of tools/view/stats.c.
#
# Not run by `make check` (SciPy is not a dependency of symd).  To redo:
#   apt-get install python3-scipy && /usr/bin/python3 tests/unit/t-stats-ref.py
# Debian 12: python3-scipy 1.10.1, numpy 1.24.2.  What each value checks:
#   - ndtri: scipy.special.ndtri (Cephes), for stats_norm_quantile();
#   - Wilson: scipy.stats.binomtest(k, n).proportion_ci(method="wilson");
#   - Newcombe: method 10 of Newcombe (1998) on SciPy's Wilson limits; the
#     paper's own 4-digit results are in t-stats.c as well;
#   - the exact rejection rates and coverages that the simulations of
#     t-stats.c are compared with, by summing binomial probabilities.
import numpy as np
from scipy.special import ndtri
from scipy.stats import binom, binomtest, norm

Z = ndtri(0.975)

print("== ndtri")
for p in (0.975, 0.995, 0.95, 0.5, 0.3, 0.02425, 1e-10, 1e-300, 0.999999):
    print(f"\t{{ {p!r}, {ndtri(p)!r} }},")

print("== Wilson (scipy binomtest)")
for k, n, c in ((10, 100, 0.95), (0, 50, 0.95), (50, 50, 0.95),
                (1, 1000, 0.95), (5000, 100000, 0.95), (10, 100, 0.99),
                (3, 7, 0.90), (250, 5000, 0.95)):
    ci = binomtest(k, n).proportion_ci(confidence_level=c, method="wilson")
    print(f"\t{{ {k}, {n}, {c}, {ci.low!r}, {ci.high!r} }},")

def wilson(k, n, z=Z):
    ci = binomtest(k, n).proportion_ci(confidence_level=2 * norm.cdf(z) - 1,
                                       method="wilson")
    return ci.low, ci.high

print("== Newcombe method 10")
for ka, na, kb, nb in ((56, 70, 48, 80), (9, 10, 3, 10), (6, 7, 2, 7),
                       (5, 56, 0, 29), (0, 10, 0, 20), (10, 10, 0, 20),
                       (120, 3000, 90, 1500)):
    pa, pb = ka / na, kb / nb
    la, ua = wilson(ka, na)
    lb, ub = wilson(kb, nb)
    d = pa - pb
    lo = d - np.hypot(pa - la, ub - pb)
    hi = d + np.hypot(ua - pa, pb - lb)
    print(f"\t{{ {ka}, {na}, {kb}, {nb}, {max(lo, -1)!r}, {min(hi, 1)!r} }},")

print("== Wald, two independent profiles")
for ka, na, kb, nb in ((120, 3000, 90, 1500), (56, 70, 48, 80)):
    pa, pb = ka / na, kb / nb
    se = np.sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb)
    d = pa - pb
    print(f"\t{{ {ka}, {na}, {kb}, {nb}, {d!r}, {se!r}, {d / se!r}, "
          f"{2 * norm.sf(abs(d / se))!r} }},")

print("== within one profile (multinomial)")
for k1, k2, k12, n in ((300, 200, 0, 1000), (110, 100, 0, 1000),
                       (600, 450, 400, 1000), (5, 0, 0, 10000)):
    p1, p2, p12 = k1 / n, k2 / n, k12 / n
    var = (p1 * (1 - p1) + p2 * (1 - p2) - 2 * (p12 - p1 * p2)) / n
    se = np.sqrt(var)
    d = p1 - p2
    print(f"\t{{ {k1}, {k2}, {k12}, {n}, {d!r}, {se!r}, {d / se!r}, "
          f"{2 * norm.sf(abs(d / se))!r} }},")

print("== samples needed")
def half(p, n, z=Z):
    return z * np.sqrt(n * p * (1 - p) + z * z / 4) / (n + z * z)
for p, h in ((0.05, 0.005), (0.5, 0.01), (0.0, 0.001), (0.01, 0.001)):
    nn = int(np.ceil(Z * Z * p * (1 - p) / h ** 2))
    # Wilson: the larger root of h^2 (n + z^2)^2 = z^2 (n p q + z^2/4),
    # then the integer around it checked directly.
    a, b = h * h, 2 * h * h * Z * Z - Z * Z * p * (1 - p)
    c = h * h * Z ** 4 - Z ** 4 / 4
    root = (-b + np.sqrt(b * b - 4 * a * c)) / (2 * a)
    nw = int(np.ceil(root))
    while half(p, nw - 1) <= h:
        nw -= 1
    while half(p, nw) > h:
        nw += 1
    print(f"\tp={p} h={h}: normal {nn}, wilson {nw} (root {root!r})")
for p1, p2, p12, power in ((0.10, 0.09, 0, 0.5), (0.10, 0.09, 0, 0.8),
                           (0.30, 0.20, 0, 0.5)):
    var = p1 * (1 - p1) + p2 * (1 - p2) - 2 * (p12 - p1 * p2)
    zp = ndtri(power)
    print(f"\tapart {p1} {p2} {p12} power {power}: "
          f"{int(np.ceil((Z + zp) ** 2 * var / (p1 - p2) ** 2))}")

# The simulations.  Each rate is exact for the test as t-stats.c runs it.
print("== Wilson coverage, n uniform in [1000, 3000]")
def coverage(p, n):
    k = np.arange(n + 1)
    pk = k / n
    den = n + Z * Z
    c = (k + Z * Z / 2) / den
    h = Z * np.sqrt(n * pk * (1 - pk) + Z * Z / 4) / den
    inside = (c - h <= p) & (p <= c + h)
    return binom.pmf(k, n, p)[inside].sum()
for p in (0.40, 0.25, 0.15, 0.10, 0.05, 0.03, 0.01):
    print(f"\tp={p}: {np.mean([coverage(p, n) for n in range(1000, 3001)])!r}")

print("== within: rejection rate of entry 0 vs entry j, n = 2000")
def within_rate(p1, p2, n, z=Z):
    # k1 ~ Bin(n, p1); k2 | k1 ~ Bin(n - k1, p2 / (1 - p1)).
    tot = 0.0
    for k1 in range(n + 1):
        w1 = binom.pmf(k1, n, p1)
        if w1 < 1e-16:
            continue
        k2 = np.arange(n - k1 + 1)
        w2 = binom.pmf(k2, n - k1, p2 / (1 - p1))
        q1, q2 = k1 / n, k2 / n
        var = (q1 * (1 - q1) + q2 * (1 - q2) + 2 * q1 * q2) / n
        d = q1 - q2
        with np.errstate(divide="ignore", invalid="ignore"):
            rej = np.where(var > 0, np.abs(d) > z * np.sqrt(var), d != 0)
        tot += w1 * w2[rej].sum()
    return tot
for p2 in (0.10, 0.11, 0.12, 0.14):
    print(f"\t0.10 vs {p2}: {within_rate(0.10, p2, 2000)!r}")
# Overlapping entries (total shares): the statistic depends only on the
# samples in exactly one of the two, b and c, with var = (b + c)/n -
# ((b - c)/n)^2 over n: within_rate() of their shares.  t-stats.c uses
# only-A 0.05, only-B 0.05, both 0.20.
print(f"\toverlap, null: {within_rate(0.05, 0.05, 2000)!r}")

print("== between: nA = 3000, nB = 1500, pA = 0.08")
def between_rates(pa, na, pb, nb, z=Z):
    ka = np.arange(na + 1)[:, None]
    kb = np.arange(nb + 1)[None, :]
    w = binom.pmf(ka, na, pa) * binom.pmf(kb, nb, pb)
    qa, qb = ka / na, kb / nb
    d = qa - qb
    se = np.sqrt(qa * (1 - qa) / na + qb * (1 - qb) / nb)
    with np.errstate(divide="ignore", invalid="ignore"):
        wald = np.where(se > 0, np.abs(d) > z * se, d != 0)
    def wl(k, n):
        p = k / n
        den = n + Z * Z
        c = (k + Z * Z / 2) / den
        h = Z * np.sqrt(n * p * (1 - p) + Z * Z / 4) / den
        return np.where(k == 0, 0, c - h), np.where(k == n, 1, c + h)
    la, ua = wl(ka, na)
    lb, ub = wl(kb, nb)
    lo = d - np.hypot(qa - la, ub - qb)
    hi = d + np.hypot(ua - qa, qb - lb)
    newc = (lo > 0) | (hi < 0)
    truth = pa - pb
    cov = (lo <= truth) & (truth <= hi)
    wcov = (d - z * se <= truth) & (truth <= d + z * se)
    return ((w * wald).sum(), (w * newc).sum(), (w * wcov).sum(),
            (w * cov).sum())
for pb in (0.08, 0.09, 0.10, 0.12):
    r = between_rates(0.08, 3000, pb, 1500)
    print(f"\tpB={pb}: wald reject {r[0]!r}, newcombe reject {r[1]!r}, "
          f"wald cover {r[2]!r}, newcombe cover {r[3]!r}")
