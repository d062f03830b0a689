#!/usr/bin/env python3
"""alloc_peers.py - t4021's judge: two heap profiles of the same program
and input, as folded stacks, agree on every stack's share of a value
within the 99.9% interval of their sampling.

    alloc_peers.py [--objects] [--only S,..] [--root NAME] [--show SHARE]
                   A_SPACE A_OBJS A_RATE
                   B_SPACE B_OBJS B_RATE

Each X_SPACE and X_OBJS is a folded file ("frame;frame;...;leaf VALUE"
lines, root first) of one profile: bytes and objects of the same kind
(alloc_* or inuse_*).  X_RATE is the profile's mean sampling distance
in bytes, 0 for an exact profile (every allocation recorded: heaptrack,
gperftools' HEAPPROFILE).  The shares compared are of the bytes, or of
the objects with --objects.  X_OBJS may be '-' for an exact profile
when the bytes are compared (its variance needs no sizes).

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

A sampled profile's estimate of a stack, E bytes and O objects, has the
variance of docs/symprof.md's estimator, estimated from the profile
itself with the stack's mean size k = E/O and P = 1 - e^(-k/T):
Var(E) ~ E k (1 - P) / P, Var(O) ~ O (1 - P) / P (exact for a stack of
one size; jeprof unbiases jemalloc's samples with the same P per stack
mean, so the same formula is its variance).  A share s = E_S / E_all has
Var(s) ~ (Var_S (1 - s)^2 + s^2 Var_rest) / E_all^2 (the delta method;
a stack and the rest are independent).  The check, per stack:

    |s_A - s_B| <= 3.29 sqrt(Var(s_A) + Var(s_B)) + 1e-9

An exact profile's variance is 0.  When a stack has no samples, the
sampled side's variance of it is taken from the other side's figures
(the plug-in of an empty stack would be 0): E and O of the other
profile, at this profile's rate; when the other gives no bytes for it
(heaptrack's objects), 1 byte an object, the largest variance an object
count has at a rate; when it gives no objects, one object of all the
bytes, the largest variance of the bytes.

--only S1,S2,...: compare shares among these stacks only (normalised
names, renormalised to their sum): for jemalloc's space, which counts
the usable size (the size class) rather than the size asked for, so only
stacks whose sizes are size classes compare.

Prints one line per stack, "PASS|FAIL share_A share_B sd z STACK" (with
--show, only the failures and the stacks of at least SHARE on either
side, then a count), and exits 1 when a line fails, 2 on bad input.
"""
import math
import re
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


def variance(e, o, rate, objects):
    """Var of a stack's bytes estimate e (objects o) at the rate, or of
    its objects estimate."""
    if rate == 0 or e <= 0 or not o or o <= 0:
        return 0.0
    k = e / o
    p = -math.expm1(-k / rate)
    return o * (1 - p) / p if objects else e * k * (1 - p) / p


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


def side_var(side, other, key):
    if side.rate == 0:
        return 0.0
    e = side.e.get(key, 0.0)
    o = side.o.get(key, 0.0) if side.o else 0.0
    if e <= 0:
        # no samples: what this profile's sampling would vary by, at the
        # other profile's figures; bytes unknown: 1 byte an object;
        # objects unknown: one object of all the bytes
        o = other.o.get(key, 0.0) if other.o else 0.0
        e = other.e.get(key, 0.0) if other.e else o
        if e > 0 and o <= 0:
            o = 1.0
    return variance(e, o, side.rate, side.objects)


def shares(side, other, keys):
    tot = sum(side.v.get(k, 0.0) for k in keys)
    var = {k: side_var(side, other, k) for k in keys}
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
    show = 0.0
    if "--show" in args:
        i = args.index("--show")
        show = float(args[i + 1])
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
    sa, sb = shares(a, b, keys), shares(b, a, keys)
    bad = 0
    for k in sorted(keys, key=lambda k: -max(sa[k][0], sb[k][0])):
        d = sa[k][0] - sb[k][0]
        sd = math.sqrt(sa[k][1] + sb[k][1])
        ok = abs(d) <= 3.29 * sd + 1e-9
        bad += not ok
        if ok and max(sa[k][0], sb[k][0]) < show:
            continue
        print("%s %.6f %.6f %.6f %+.2f %s" % ("PASS" if ok else "FAIL",
              sa[k][0], sb[k][0], sd, d / sd if sd else 0.0, k))
    if show:
        print("INFO %d stacks compared, %d failed; those under %g of both "
              "not shown" % (len(keys), bad, show))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
