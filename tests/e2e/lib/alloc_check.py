#!/usr/bin/env python3
"""alloc_check.py - t4020's judge of an alloc-mode profile against the
truth its fixture wrote (fixtures/src/symprof_alloc.c).

    alloc_check.py RAW BINARY TRUTH

Attributes each stack of RAW to the site (site_a, site_b, site_c, site_d
and site_d_grow as D) whose code holds its innermost frame in BINARY's
map, sums the four value types per site, and prints one line per
(site, type):

    PASS|FAIL SITE TYPE estimate truth sd z

PASS when the estimate lies in the 99.9% family-wise interval of
docs/symprof.md, truth +- z sd, sd^2 = sum k^2 (1 - P) / P over the site's allocations
(live ones for inuse_*; (1 - P) / P each for the object counts),
P = 1 - e^(-k/T), T the file's period; plus the rounding of each
stack's estimates to whole numbers (0.5 a stack).  Then a TOTAL line per
type, and the share of samples in no site as an INFO line.

z is Bonferroni's over every PASS|FAIL line (4 a site, and the 4
totals; 20 for t4020's fixture, |z| <= 4.06), so that the whole check
fails by chance in at most 0.1 % of runs, as alloc_peers.py's and
workloads_check.py's do.  With 3.29 for each of 20 lines (the test
judges 18 of them), about 1 to 2 % of correct runs failed one.
"""
import math
import statistics
import subprocess
import sys

ALPHA = 0.001  # the false-failure rate of the whole check


def symbols(binary):
    out = subprocess.run(["nm", "-S", "--defined-only", binary],
                         capture_output=True, text=True, check=True).stdout
    want = {"site_a": "A", "site_b": "B", "site_c": "C", "site_d": "D",
            "site_d_grow": "D"}
    ranges = []
    for line in out.splitlines():
        f = line.split()
        # GCC's clones keep the name before a dot (site_a.constprop.0)
        name = f[3].split(".")[0] if len(f) == 4 else None
        if name in want:
            start, size = int(f[0], 16), int(f[1], 16)
            ranges.append((start, start + size, want[name]))
    if len(ranges) != 5:
        sys.exit("alloc_check: site functions missing from nm's output")
    return ranges


def read_raw(path, binary):
    types, maps, stacks, period = [], set(), [], None
    base = binary.rsplit("/", 1)[-1]
    with open(path) as f:
        if f.readline().strip() != "sym-raw 2":
            sys.exit("alloc_check: not a sym-raw 2 file")
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "period":
                period = int(w[1])
            elif w[0] == "value-type":
                types.append(w[1])
            elif w[0] == "map" and w[9].rsplit("/", 1)[-1] == base:
                maps.add(w[1])
            elif w[0] == "stack":
                vals = [int(v) for v in w[6].split(",")]
                frames = []
                for fr in w[7:]:
                    m, a = fr[1:].split(":")
                    frames.append((fr[0], m, int(a, 16)))
                stacks.append((int(w[1]), dict(zip(types, vals)), frames))
    return period, maps, stacks


def site_of(frames, maps, ranges):
    for kind, m, a in frames:
        if m not in maps:
            continue
        pc = a - 1 if kind == "r" else a
        for lo, hi, s in ranges:
            if lo <= pc < hi:
                return s
        return None   # the innermost frame of the program: no site
    return None


def main():
    raw, binary, truth_path = sys.argv[1:4]
    ranges = symbols(binary)
    T, maps, stacks = read_raw(raw, binary)
    est, nst = {}, {}
    nosite = total = 0
    for count, vals, frames in stacks:
        s = site_of(frames, maps, ranges)
        total += count
        if s is None:
            nosite += count
            continue
        nst[s] = nst.get(s, 0) + 1
        e = est.setdefault(s, dict.fromkeys(vals, 0))
        for k, v in vals.items():
            e[k] += v
    tru, var = {}, {}
    with open(truth_path) as f:
        for line in f:
            s, size, live, n = line.split()
            k, live, n = int(size), live == "1", int(n)
            p = -math.expm1(-k / T)
            t = tru.setdefault(s, dict.fromkeys(
                ["alloc_space", "alloc_objects", "inuse_space",
                 "inuse_objects"], 0))
            v = var.setdefault(s, dict.fromkeys(t, 0.0))
            for typ, bytes_ in (("alloc", True), ("inuse", live)):
                if typ == "inuse" and not live:
                    continue
                t[typ + "_space"] += n * k
                t[typ + "_objects"] += n
                v[typ + "_space"] += n * k * k * (1 - p) / p
                v[typ + "_objects"] += n * (1 - p) / p
    bad = 0
    sums = {}
    zb = statistics.NormalDist().inv_cdf(1 - ALPHA / (4 * len(tru) + 4) / 2)
    for s in sorted(tru):
        for typ in ("alloc_space", "inuse_space", "alloc_objects",
                    "inuse_objects"):
            e = est.get(s, {}).get(typ, 0)
            t, sd = tru[s][typ], math.sqrt(var[s][typ])
            slack = 0.5 * nst.get(s, 0)
            ok = abs(e - t) <= zb * sd + slack
            z = (e - t) / sd if sd else 0.0
            print("%s %s %s %d %d %.0f %.2f" % ("PASS" if ok else "FAIL",
                  s, typ, e, t, sd, z))
            a = sums.setdefault(typ, [0, 0, 0.0, 0.0])
            a[0] += e
            a[1] += t
            a[2] += var[s][typ]
            a[3] += slack
            bad += not ok
    for typ, (e, t, v, slack) in sums.items():
        sd = math.sqrt(v)
        ok = abs(e - t) <= zb * sd + slack
        print("%s TOTAL %s %d %d %.0f %.2f %+.2f%% (interval: +-%.2f%%)" % (
              "PASS" if ok else "FAIL", typ, e, t, sd,
              (e - t) / sd if sd else 0, 100.0 * (e - t) / t if t else 0,
              100 * zb * sd / t if t else 0))
    print("INFO samples %d, in no site %d; |z| <= %.2f" % (total, nosite, zb))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
