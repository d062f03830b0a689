#!/usr/bin/env python3
"""demo_check.py - the checks of `make demo`
(tools/scripts/demo-profile.sh) on its outputs; also used by
tests/e2e/t5900-demo.sh.

    demo_check.py shares SYMBOLIZED.raw
        Read the symbolized raw form (docs/raw-format.md, "The symbolized
        form") on its own, without sym, and check the workload's shape
        (fixtures/src/demo_work.c): each hot function's share of the
        samples is plausible.  Prints a table; writes the shares as JSON
        with --json FILE.
    demo_check.py report REPORT SHARES.json
        Check `sym report`'s text: every hot function is named, on a line
        with a percentage within rounding of its share in the raw file
        (SHARES.json, from `shares`) and a 95% interval [lo, hi] around
        it, no share with an interval on a line naming it is another
        number, and one is plausible for the design (its self share for a
        leaf, its total share for a caller).
    demo_check.py folded FOLDED SHARES.json
        The folded stacks add up to the samples, and name the hot
        functions.
    demo_check.py svg FLAME.svg
        The SVG parses as XML and names every hot function.
    demo_check.py all OUTDIR
        All four on the demo's files in OUTDIR (demo.sym.raw, writing
        shares.json; report.txt; demo.folded; flame.svg), in one process.

Exit status 0 when the check passes, 1 with the reasons on stderr.

A function's *self* share is the share of samples whose innermost frame
(the first line of the leaf frame's inline chain) is that function; its
*total* share, of samples with the function anywhere in the stack
(inlined calls count as functions, as the views show them).
"""
import json
import math
import os
import re
import sys
import xml.etree.ElementTree as ET
from urllib.parse import unquote

# The workload's design (demo_work.c): function -> (share of CPU time in
# percent, which share: "self" for leaves, "total" for callers whose time
# is in their inlined callee).  mix64 and smooth_row are inlined.
HOT = {
    "mix64": (40.0, "self"),
    "hash_keys": (40.0, "total"),
    "smooth_row": (30.0, "self"),
    "walk_grid": (30.0, "total"),
    "demo_checksum": (20.0, "total"),
    "count_primes": (10.0, "total"),
}
# The functions folded stacks and a flame graph must name.
NAMED = list(HOT)


def plausible(got, want, n):
    """A share (percent) of n samples is plausible within 30% of the
    design plus 2 points, plus 3.29 standard errors of a binomial share
    (99.9%, so a correct pipeline never fails by bad luck): the clock
    reads and the kernel take a few percent, and a pipeline that loses
    or misattributes frames is off by far more."""
    p = want / 100.0
    return abs(got - want) <= 0.3 * want + 2.0 + \
        329.0 * math.sqrt(p * (1 - p) / max(n, 1))


def fail(msgs):
    for m in msgs:
        print("demo_check: " + m, file=sys.stderr)
    sys.exit(1)


def read_symbolized(path):
    """Samples, and per function its self and total sample counts."""
    fns, locs, stacks = {}, {}, []
    symbolized = False
    with open(path, encoding="ascii") as f:
        lines = f.read().split("\n")
    if not lines or lines[0] != "sym-raw 1":
        fail(["%s: not a raw profile" % path])
    for ln in lines:
        w = ln.split(" ")
        if w[0] == "symbolized":
            symbolized = True
        elif w[0] == "fn" and len(w) == 3:
            fns[w[1]] = unquote(w[2])
        elif w[0] == "loc" and len(w) >= 3:
            chain = []
            for part in w[3:]:
                fid = part.split(":")[0].lstrip("is")
                chain.append(fns.get(fid, "?"))
            locs[w[1]] = chain
        elif w[0] == "stack" and len(w) >= 6:
            stacks.append((int(w[1]), w[6:]))
    if not symbolized:
        fail(["%s: not symbolized (no 'symbolized 1' line)" % path])
    n = sum(c for c, _ in stacks)
    self_c, total_c = {}, {}
    for count, frames in stacks:
        names = set()
        for i, fr in enumerate(frames):
            chain = locs.get(fr, [])
            if i == 0 and chain:
                self_c[chain[0]] = self_c.get(chain[0], 0) + count
            names.update(chain)
        for name in names:
            total_c[name] = total_c.get(name, 0) + count
    return n, self_c, total_c


def cmd_shares(args):
    path = args[0]
    out = args[2] if len(args) > 2 and args[1] == "--json" else None
    n, self_c, total_c = read_symbolized(path)
    if n < 100:
        fail(["%s: %d samples, too few to judge shares" % (path, n)])
    errs = []
    shares = {"samples": n, "self": {}, "total": {}}
    print("   %-15s %8s %8s %8s  %s" % ("function", "self", "total",
                                         "design", "verdict"))
    for name, (want, kind) in HOT.items():
        s = 100.0 * self_c.get(name, 0) / n
        t = 100.0 * total_c.get(name, 0) / n
        got = s if kind == "self" else t
        ok = plausible(got, want, n)
        print("   %-15s %7.1f%% %7.1f%% %7.0f%%  %s" %
              (name, s, t, want, ("ok (%s)" % kind) if ok else "WRONG"))
        if not ok:
            errs.append("%s: %s share %.1f%%, the workload spends %.0f%% "
                        "there" % (name, kind, got, want))
    for name in set(self_c) | set(total_c):
        shares["self"][name] = 100.0 * self_c.get(name, 0) / n
        shares["total"][name] = 100.0 * total_c.get(name, 0) / n
    if out:
        with open(out, "w") as f:
            json.dump(shares, f)
    if errs:
        fail(errs)


# "34.68% [33.22%, 36.17%]": a share and its interval.
PAIR = re.compile(r"(\d+(?:\.\d+)?)%\s*\[\s*(\d+(?:\.\d+)?)%?\s*,"
                  r"\s*(\d+(?:\.\d+)?)%?\s*\]")


def names_in(line):
    """The words of a line that could be a function name, annotations
    such as _[i] taken off."""
    out = set()
    for tok in re.split(r"[\s;,()]+", line):
        tok = re.sub(r"_\[[a-z]\]$", "", tok)
        if tok:
            out.add(tok)
    return out


def cmd_report(args):
    with open(args[0], encoding="utf-8") as f:
        text = f.read().split("\n")
    with open(args[1]) as f:
        shares = json.load(f)
    errs = []
    for name, (want, kind) in HOT.items():
        lines = [ln for ln in text if name in names_in(ln)]
        if not lines:
            errs.append("the report does not name %s" % name)
            continue
        truth = [shares["self"].get(name, 0.0), shares["total"].get(name, 0.0)]
        shown = []
        for ln in lines:
            # Every share with an interval on a line naming the function
            # is its self or its total share (printed with at least one
            # decimal: within 0.06), inside that interval.
            for p, lo, hi in PAIR.findall(ln):
                p, lo, hi = float(p), float(lo), float(hi)
                if any(abs(p - t) <= 0.06 for t in truth) and lo <= p <= hi:
                    shown.append(p)
                else:
                    errs.append("the report gives %s %.2f%% [%.2f, %.2f]; "
                                "its self share is %.2f%%, its total share "
                                "%.2f%%:\n  %s" % (name, p, lo, hi, truth[0],
                                                  truth[1], ln))
        if not shown:
            errs.append("no line of the report gives %s a share of %s with "
                        "a 95%% interval around it:\n  %s" %
                        (name, " or ".join("%.1f%%" % t for t in truth),
                         "\n  ".join(lines[:4])))
        elif not any(plausible(p, want, shares["samples"]) for p in shown):
            errs.append("the report gives %s %s, the workload spends %.0f%% "
                        "there (%s)" % (name, ", ".join("%.1f%%" % p
                                                       for p in shown),
                                        want, kind))
    if errs:
        fail(errs)


def cmd_folded(args):
    with open(args[1]) as f:
        shares = json.load(f)
    total, seen = 0, set()
    with open(args[0], encoding="utf-8") as f:
        for ln in f:
            ln = ln.rstrip("\n")
            if not ln:
                continue
            stack, _, count = ln.rpartition(" ")
            total += int(count)
            for fr in stack.split(";"):
                seen.add(re.sub(r"_\[[a-z]\]$", "", fr))
    errs = []
    if total != shares["samples"]:
        errs.append("folded stacks add up to %d, the profile has %d samples"
                    % (total, shares["samples"]))
    errs += ["the folded stacks lack %s" % n for n in NAMED if n not in seen]
    if errs:
        fail(errs)


def cmd_svg(args):
    try:
        root = ET.parse(args[0]).getroot()
    except (ET.ParseError, OSError) as e:
        fail(["%s: %s" % (args[0], e)])
    text = " ".join(t for t in root.itertext())
    errs = ["the flame graph lacks %s" % n for n in NAMED if n not in text]
    if errs:
        fail(errs)


def cmd_all(args):
    d = args[0]
    shares = os.path.join(d, "shares.json")
    cmd_shares([os.path.join(d, "demo.sym.raw"), "--json", shares])
    cmd_report([os.path.join(d, "report.txt"), shares])
    cmd_folded([os.path.join(d, "demo.folded"), shares])
    cmd_svg([os.path.join(d, "flame.svg")])


def main():
    cmds = {"shares": (cmd_shares, 1), "report": (cmd_report, 2),
            "folded": (cmd_folded, 2), "svg": (cmd_svg, 1),
            "all": (cmd_all, 1)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or \
       len(sys.argv) - 2 < cmds[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmds[sys.argv[1]][0](sys.argv[2:])


if __name__ == "__main__":
    main()
