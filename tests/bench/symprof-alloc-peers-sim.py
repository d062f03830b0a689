#!/usr/bin/env python3
"""symprof-alloc-peers-sim.py - how often t4021's points that hold our
alloc profile to an exact peer (gperftools, heaptrack: the truth) fail
when the sampling is exactly the process of docs/symprof.md: each object
of t4020's fixture (site A at 1 M) sampled independently with
P = 1 - e^(-k/T), T = 512 KiB, and judged by tests/e2e/lib/alloc_peers.py's
own code (its variances, shares and Bonferroni bound).

    symprof-alloc-peers-sim.py RUNS FAMILY SEED

FAMILY is alloc_peers.py's --family (t4021 passes 13); 1 gives each
point 0.1 %, a rate that RUNS of some 10,000 can measure.  Prints each
point's failure rate, any point's, the stacks that failed, and the mean
and sd of each stack's z (an sd under 1 is the bound's slack).
"""
import math
import os
import random
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e", "lib"))
import alloc_peers as ap
T = 524288.0
def P(k): return -math.expm1(-k / T)
NA = 1000000
def stacks():
    al = {"A": {64: NA}, "B": {1 << 20: 200}, "C": {4096: 100000}, "D": {}, "G": {}}
    iu = {"A": {}, "B": {1 << 20: 200}, "C": {4096: 50000}, "D": {}, "G": {}}
    for i in range(4000):
        n = 3000 + (i * 7919 % 777)
        al["D"][n] = al["D"].get(n, 0) + 1
        if i % 4 < 2: iu["D"][n] = iu["D"].get(n, 0) + 1
    for i in range(300):
        n = 1000
        al["G"][n] = al["G"].get(n, 0) + 1
        while n < (1 << 20):
            n = n * 3 // 2
            al["G"][n] = al["G"].get(n, 0) + 1
        if i % 3 == 0: iu["G"][n] = iu["G"].get(n, 0) + 1
    return al, iu
def binom(n, p, rnd=random.random):
    if n <= 64: return sum(1 for _ in range(n) if rnd() < p)
    lq = math.log1p(-p); x = 0; i = -1
    while True:
        i += int(math.log(1.0 - rnd()) / lq) + 1
        if i >= n: return x
        x += 1
class S: pass
def side(e, o, rate, objects):
    s = S(); s.e, s.o, s.rate, s.objects = e, o, rate, objects
    s.v = o if objects else e; return s
def truth(st):
    return ({k: float(sum(s * c for s, c in v.items())) for k, v in st.items()},
            {k: float(sum(v.values())) for k, v in st.items()})
def sample(st):
    # the live objects of inuse are a subset of alloc's: sample alloc, and
    # keep inuse's sampled live ones (same draw)
    E = {}; O = {}
    for k, v in st.items():
        e = o = 0.0
        for s, c in v.items():
            x = binom(c, P(s)); e += x * s / P(s); o += x / P(s)
        E[k], O[k] = e, o
    return E, O
def judge(ours, ex, keys, objects, family):
    a = side(ours[0], ours[1], T, objects); b = side(ex[0], ex[1], 0, objects)
    sa, sb = ap.shares(a, b, keys, True), ap.shares(b, a, keys, True)
    zb = ap.statistics.NormalDist().inv_cdf(1 - ap.ALPHA / family / len(keys) / 2)
    bad = []; zs = {}
    for k in keys:
        d = sa[k][0] - sb[k][0]; sd = math.sqrt(sa[k][1] + sb[k][1])
        zs[k] = d / sd if sd else 0
        if abs(d) > zb * sd + 1e-9: bad.append(k)
    return bad, zs
al, iu = stacks()
N = int(sys.argv[1]); fam = int(sys.argv[2]); random.seed(int(sys.argv[3]))
ta, ti = truth(al), truth(iu)
pts = [("alloc_space gp", "al", ["A", "B", "C", "G"], False),
       ("alloc_objects ABC", "al", ["A", "B", "C"], True),
       ("alloc_space ht", "al", ["A", "B", "C", "D", "G"], False),
       ("inuse_space gp", "iu", ["A", "B", "C", "G"], False),
       ("inuse_objects ABC", "iu", ["A", "B", "C"], True),
       ("inuse_space ht", "iu", ["A", "B", "C", "D", "G"], False)]
fails = {p[0]: 0 for p in pts}; anyf = 0; per = {}
zsum = {}
for r in range(N):
    # inuse: an independent draw is the same law per point (the points of
    # one kind share a draw, as in one run)
    oa, oi = sample(al), sample(iu)
    f = False
    for name, kind, keys, objects in pts:
        ours, ex = (oa, ta) if kind == "al" else (oi, ti)
        bad, zs = judge(ours, ex, keys, objects, fam)
        for k in bad: per[(name, k)] = per.get((name, k), 0) + 1
        if bad: fails[name] += 1; f = True
        for k, z in zs.items():
            t = zsum.setdefault((name, k), [0, 0.0, 0.0]); t[0] += 1; t[1] += z; t[2] += z * z
    anyf += f
print("runs %d family %d" % (N, fam))
for k, v in fails.items(): print("point %-20s fail %d %.5f" % (k, v, v / N))
print("any of the 6: %d %.5f" % (anyf, anyf / N))
for k, v in sorted(per.items()): print("stack", k, v)
for k, t in sorted(zsum.items()):
    m = t[1] / t[0]; print("z %-20s %s mean %+.3f sd %.3f" % (k[0], k[1], m, math.sqrt(t[2] / t[0] - m * m)))
