#!/usr/bin/env python3
"""alloc_peers.py - t4021's judge: two heap profiles of the same program
and input, as folded stacks, agree on every stack's share of a value
within the 99.9% interval of their sampling.

    alloc_peers.py [--objects] [--absolute] [--only S,..] [--root NAME]
                   [--show SHARE] [--family N] A_SPACE A_OBJS A_RATE
                   B_SPACE B_OBJS B_RATE

Each X_SPACE and X_OBJS is a folded file ("frame;frame;...;leaf VALUE"
lines, root first) of one profile: bytes and objects of the same kind
(alloc_* or inuse_*).  X_RATE is the profile's mean sampling distance
in bytes, 0 for an exact profile (every allocation recorded: heaptrack,
gperftools' HEAPPROFILE).  The shares compared are of the bytes, or of
the objects with --objects.  X_OBJS may be '-' for an exact profile
when the bytes are compared (the other's variance then takes E T for
it, the largest at any sizes).

Stacks are compared whole, by function name per frame, from main to the
allocating call: a frame's name loses what the tools add around it
(" (file)" of heaptrack, "<addr>" of pprof, the inline markers "[inline]"
and "_[i]", GCC's clone suffixes .constprop.N, .isra.N, .part.N, .cold),
consecutive equal names are one frame (an inlined frame named like its
caller), the frames before main are cut (the tools disagree on libc's
start-up names, and heaptrack stops at main; --root NAME cuts at NAME
instead); stacks not under main are one key, "(not under main)", left
out of the comparison (an INFO line gives it): they are the start-up's,
which each preload sees from a different point (heaptrack before
libstdc++'s constructors, gperftools from its own).  A leaf frame marked "[inline]" is dropped:
google-pprof looks the innermost address of a gperftools stack up as it
is, though it is a return address (its FixCallerAddresses fixes all the
others), so the instruction after the call to malloc lands in an inlined
callee (must[inline] in t4021's fixture); no other tool shows that frame.

A sampled profile's estimate of a stack has the variance of
docs/symprof.md's estimator, sum k^2 (1 - P(k)) / P(k) over the stack's
objects for the bytes, sum (1 - P(k)) / P(k) for the objects, with
P(k) = 1 - e^(-k/T).  From a stack's E bytes in O objects (sizes not
known) it is taken as O h(min(E/O, 1.594 T)), h(k) = k^2 (1 - P) / P:
exact for a stack of one size, and never too small for a stack of mixed
sizes (h is concave up to 3 T and largest at 1.594 T, so by Jensen's
inequality the sum is at most O times h's concave majorant at the mean
size; site D's realloc chains, 1000 B to 1.5 MiB, get 1.34 times their
exact sd).  Without O, E T (h(k) / k < T).  The objects' variance is
O (1 - P) / P at the mean size, exact for one size only (it is convex:
--objects is for stacks of one size).  jeprof unbiases jemalloc's
samples with the same P per stack mean, so the same formula is its
variance.

Which E and O: a few dozen samples make a plug-in variance skewed (few
samples, small variance: site D's aligned stack, 26 expected samples,
13 of its live objects, fell out of 99.9 % intervals 0.4 % and 1.2 % of
the time), so each side's variance is
the largest of three: at its own figures (right for the upper tail of a
count of rare samples), at the other profile's (the truth, when it is
exact: right for their lower tail, and for a stack the side has no
sample of) and from the unsampled objects, k^2 u / P (u / P for the
objects) with u = n - O P the objects of the other's n (mean size k)
left out of this sample (n k^2 (1 - P) / P = k^2 E[u] / P: right for
the lower tail of a stack of objects near or above T, whose unsampled
count is the rare one, site B's 1 MiB at P = 0.865).

A share s = E_S / E_all has Var(s) ~ (Var_S (1 - s)^2 + s^2 Var_rest) /
E_all^2 (the delta method; a stack and the rest are independent).  The
check, per stack:

    |s_A - s_B| <= z sqrt(Var(s_A) + Var(s_B)) + 1e-9

with z the two-sided normal point of 0.001 / (N K), K the stacks
compared and N the points of the test that share its 0.1 % (--family
N, 1 by default): Bonferroni, so that all the stacks of all the points
fail together at most 0.1 % of the time with nothing wrong.  An exact
profile's variance is 0.

--absolute: compare each stack's value itself, not its share, with its
variance (for profiles of the same allocations, a program that does the
same in every run).  A share's delta-method variance misses its skew
when one stack holds most of the variance: t4021's object shares of
sites A, B and C, where A's 122 expected samples are 91 % of the
objects, failed 0.15 % of the time at a 0.1 % bound and 4 times their
bound at --family 13 (tests/bench/symprof-alloc-peers-sim.py).

--only S1,S2,...: compare these stacks only (normalised names; shares
are renormalised to their sum): for jemalloc's space, which counts
the usable size (the size class) rather than the size asked for, so only
stacks whose sizes are size classes compare.

Prints one line per stack, "PASS|FAIL share_A share_B sd z STACK" (with
--show, only the failures and the stacks of at least SHARE on either
side, then a count), and exits 1 when a line fails, 2 on bad input.
"""
import math
import re
import statistics
import sys

CLONE = re.compile(r"\.(constprop|isra|part|cold|lto_priv)(\.\d+)?$")
NOT_MAIN = "(not under main)"


def frame_name(f):
    f = re.sub(r" \(.*\)$", "", f.strip())
    f = re.sub(r"<[0-9a-fA-F]+>$", "", f)
    f = re.sub(r"(_\[i\]|\[inline\])$", "", f)
    prev = None
    while prev != f:
        prev, f = f, CLONE.sub("", f)
    return f


ROOT = "main"
ALPHA = 0.001  # the false-failure rate of all the points of a --family


def stack_key(line_frames):
    frames = [f for f in line_frames.split(";") if f.strip()]
    if frames and frames[-1].endswith("[inline]"):
        frames = frames[:-1]
    names = []
    for f in frames:
        n = frame_name(f)
        if not names or names[-1] != n:
            names.append(n)
    if ROOT not in names:
        return NOT_MAIN
    return ";".join(names[names.index(ROOT):])


def read_folded(path):
    out = {}
    if path == "-":
        return None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, _, val = line.rstrip().rpartition(" ")
            try:
                v = float(val)
            except ValueError:
                sys.exit("alloc_peers: %s: not a folded line: %r"
                         % (path, line[:80]))
            k = stack_key(stack)
            out[k] = out.get(k, 0.0) + v
    return out


# x = k / T where k^2 (1 - P) / P = T^2 x^2 / (e^x - 1) is largest; the
# function is concave on [0, 3], so its least concave majorant is itself
# up to XMAX and its maximum after
XMAX = 1.5936242600400401


def variance(e, o, rate, objects):
    """Largest Var of a stack's bytes estimate (its objects estimate
    with objects) at the rate, for a stack of e bytes in o objects of
    any sizes; o None: sizes unknown."""
    if objects and o and o > 0 and e <= 0:
        e = o  # sizes unknown: 1 byte an object, the largest (1 - P) / P
    if rate == 0 or e <= 0 or (objects and not o):
        return 0.0
    if not o or o <= 0:
        return e * rate  # k (1 - P) / P < T a byte, whatever the sizes
    x = e / o / rate
    if objects:
        p = -math.expm1(-x)
        return o * (1 - p) / p
    x = min(x, XMAX)
    return o * rate * rate * x * x / math.expm1(x)


class Side:
    def __init__(self, space, objs, rate, objects):
        self.e = read_folded(space)
        self.o = read_folded(objs)
        self.rate = float(rate)
        self.objects = objects
        if objects and self.o is None:
            sys.exit("alloc_peers: --objects needs the objects' file")
        # what the shares are of
        self.v = self.o if objects else self.e


def unsampled_var(side, other, key):
    """Var of the stack's estimate from its unsampled objects: at the
    other profile's n objects of mean size k, this profile's estimate
    puts x = O P of them in the sample and u = n - x out of it, and
    Var(x) = n P (1 - P) = E[u] P, so the bytes' n k^2 (1 - P) / P is
    k^2 E[u] / P and the objects' n (1 - P) / P is E[u] / P."""
    if not other.o or not other.e:
        return 0.0
    n, e = other.o.get(key, 0.0), other.e.get(key, 0.0)
    if n <= 0 or e <= 0:
        return 0.0
    k = e / n
    p = -math.expm1(-k / side.rate)
    u = max(0.0, n - side.o.get(key, 0.0) * p)
    return u / p if side.objects else k * k * u / p


def side_var(side, other, key):
    """The largest of the variances at this profile's figures, at the
    other's (the truth, when the other is exact) and from the unsampled
    objects."""
    if side.rate == 0:
        return 0.0
    return max([variance(x.e.get(key, 0.0) if x.e else 0.0,
                         x.o.get(key, 0.0) if x.o else None,
                         side.rate, side.objects) for x in (side, other)] +
               [unsampled_var(side, other, key)])


def shares(side, other, keys, absolute=False):
    """Each stack's (share, its variance); with absolute, (value, its
    variance)."""
    tot = sum(side.v.get(k, 0.0) for k in keys)
    var = {k: side_var(side, other, k) for k in keys}
    if absolute:
        return {k: (side.v.get(k, 0.0), var[k]) for k in keys}
    vtot = sum(var.values())
    res = {}
    for k in keys:
        s = side.v.get(k, 0.0) / tot if tot else 0.0
        vs = (var[k] * (1 - s) ** 2 + s * s * (vtot - var[k])) / tot ** 2 \
            if tot else 0.0
        res[k] = (s, vs)
    return res


def main():
    args = sys.argv[1:]
    only = None
    global ROOT
    objects = "--objects" in args
    if objects:
        args.remove("--objects")
    absolute = "--absolute" in args
    if absolute:
        args.remove("--absolute")
    show = 0.0
    if "--show" in args:
        i = args.index("--show")
        show = float(args[i + 1])
        del args[i:i + 2]
    family = 1
    if "--family" in args:
        i = args.index("--family")
        family = int(args[i + 1])
        del args[i:i + 2]
    if "--root" in args:
        i = args.index("--root")
        ROOT = args[i + 1]
        del args[i:i + 2]
    if "--only" in args:
        i = args.index("--only")
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
    if len(args) != 6:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    a, b = Side(*args[0:3], objects), Side(*args[3:6], objects)
    keys = (set(a.v) | set(b.v)) - {NOT_MAIN}
    print("INFO %.0f %.0f %s" % (a.v.get(NOT_MAIN, 0), b.v.get(NOT_MAIN, 0),
                                 NOT_MAIN))
    if only:
        keys &= only
        if keys != only:
            print("alloc_peers: stacks missing: %s" % sorted(only - keys),
                  file=sys.stderr)
            return 2
    keys = sorted(keys)
    sa, sb = shares(a, b, keys, absolute), shares(b, a, keys, absolute)
    zb = statistics.NormalDist().inv_cdf(1 - ALPHA / family / len(keys) / 2)
    print("INFO %d stacks, %d points: |z| <= %.2f" % (len(keys), family, zb))
    bad = 0
    for k in sorted(keys, key=lambda k: -max(sa[k][0], sb[k][0])):
        d = sa[k][0] - sb[k][0]
        sd = math.sqrt(sa[k][1] + sb[k][1])
        ok = abs(d) <= zb * sd + 1e-9
        bad += not ok
        if ok and max(sa[k][0], sb[k][0]) < show:
            continue
        print(("%s %.0f %.0f %.0f %+.2f %s" if absolute else
               "%s %.6f %.6f %.6f %+.2f %s") % ("PASS" if ok else "FAIL",
              sa[k][0], sb[k][0], sd, d / sd if sd else 0.0, k))
    if show:
        print("INFO %d stacks compared, %d failed; those under %g of both "
              "not shown" % (len(keys), bad, show))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
