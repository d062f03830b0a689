#!/usr/bin/env python3
"""views_check.py - check `sym tree` and `sym report` output against the
folded stacks of the same profile (tests/e2e/t5300-views.sh).

    views_check.py tree FOLDED TREE [--inverted] [--min PCT]
    views_check.py report FOLDED REPORT [--resolution PP] [--conf PCT]
    views_check.py pprof FOLDED REPORT TOP TRACES

FOLDED is `sym fold` of the profile with the same naming options: one
"stack count" line per stack, which t5300 checks against the known shape
separately.  Everything expected is computed here from those counts, with
the formulas of tools/view/stats.h written again in Python (Wilson, the
difference of two shares of one multinomial sample, the sample sizes), so
that a bug in the C code does not check itself.

Prints TAP-style lines "ok - ..." / "not ok - ..." (one per check) and
diagnostics; the shell test turns each into a TAP point.
"""
import math
import re
import sys
from statistics import NormalDist


def read_folded(path):
    stacks = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, count = line.rsplit(" ", 1)
            stacks.append((stack.split(";"), int(count)))
    return stacks


def z_of(conf):
    return NormalDist().inv_cdf((1 + conf) / 2)


def wilson(k, n, z):
    p = k / n
    den = n + z * z
    centre = (k + z * z / 2) / den
    half = z * math.sqrt(n * p * (1 - p) + z * z / 4) / den
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return p, min(lo, p), max(hi, p)


def within(k1, k2, k12, n, z):
    """Do two entries of one profile differ?  (differ, diff, lo, hi)"""
    p1, p2, p12 = k1 / n, k2 / n, k12 / n
    var = (p1 * (1 - p1) + p2 * (1 - p2) - 2 * (p12 - p1 * p2)) / n
    se = math.sqrt(max(var, 0.0))
    d = p1 - p2
    zz = d / se if se > 0 else (0.0 if d == 0 else math.inf)
    return abs(zz) > z, d, d - z * se, d + z * se


def n_apart(k1, k2, k12, n, z):
    p1, p2, p12 = k1 / n, k2 / n, k12 / n
    if p1 == p2:
        return None
    var = max(p1 * (1 - p1) + p2 * (1 - p2) - 2 * (p12 - p1 * p2), 0.0)
    return max(1, math.ceil(z * z * var / (p1 - p2) ** 2))


def n_wilson(p, h, z):
    def half(n):
        return z * math.sqrt(n * p * (1 - p) + z * z / 4) / (n + z * z)
    if half(0) <= h:
        return 0
    lo, hi = 0, 1
    while half(hi) > h:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if half(mid) > h:
            lo = mid
        else:
            hi = mid
    return hi


class Checks:
    def __init__(self):
        self.failed = 0

    def check(self, ok, what, detail=""):
        print(("ok - " if ok else "not ok - ") + what)
        if not ok:
            self.failed += 1
            if detail:
                for line in str(detail).splitlines()[:20]:
                    print("#   " + line)


def near(a, b, tol=0.0051):
    return abs(a - b) <= tol


# ---------------------------------------------------------------- tree --

def parse_tree(path):
    """Rows (depth, total, self or None, name, pct, selfpct); root first."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().split("\n")
    assert lines[-1] == ""
    lines = [x for x in lines[:-1] if not x.startswith("#")]
    head = lines[0]
    w = head.index("total") + len("total")
    rows = []
    for line in lines[1:]:
        total = int(line[0:w])
        pct = float(line[w + 1:w + 8])
        s = line[w + 11:2 * w + 11].strip()
        spct = line[2 * w + 12:2 * w + 20].strip()
        rest = line[2 * w + 22:]
        name = rest.lstrip(" ")
        depth = (len(rest) - len(name)) // 2
        rows.append((depth, total, None if s == "-" else int(s), name,
                     pct, None if spct == "-" else float(spct[:-1])))
    return rows


def trie_of(stacks, inverted):
    """path tuple -> [total, self]"""
    t = {(): [0, 0]}
    for frames, c in stacks:
        if inverted:
            frames = frames[::-1]
        t[()][0] += c
        for i in range(len(frames)):
            node = t.setdefault(tuple(frames[:i + 1]), [0, 0])
            node[0] += c
        t[tuple(frames)][1] += c
    return t


def check_tree(argv):
    folded, tree = argv[0], argv[1]
    inverted = "--inverted" in argv
    min_pct = float(argv[argv.index("--min") + 1]) if "--min" in argv \
        else 0.5
    stacks = read_folded(folded)
    n = sum(c for _, c in stacks)
    rows = parse_tree(tree)
    trie = trie_of(stacks, inverted)
    C = Checks()

    C.check(rows[0][0] == 0 and rows[0][3] == "[all]" and rows[0][1] == n,
            f"the root holds every sample ({n})", rows[0])
    # Rebuild paths from depths; children of each printed node.
    path, kids, bad_depth, nodes = [], {}, [], []
    for i, r in enumerate(rows[1:], 1):
        depth, name = r[0], r[3]
        if depth < 1 or depth > len(path) + 1:
            bad_depth.append(r)
            continue
        path = path[:depth - 1]
        parent = tuple(path)
        kids.setdefault(parent, []).append(r)
        if r[2] is not None:
            path.append(name)
            nodes.append((tuple(path), r))
        else:
            path.append(None)	# a pruned summary has no children
    C.check(not bad_depth, "every line is one level below a printed node",
            bad_depth[:3])
    # total = self + children's totals, pruned summaries included.
    bad = []
    for p, r in [((), rows[0])] + nodes:
        s = sum(k[1] for k in kids.get(p, []))
        if r[1] != r[2] + s:
            bad.append((p, r[1], r[2], s))
    C.check(not bad, f"total = self + children's totals at all "
            f"{len(nodes) + 1} nodes", bad[:5])
    # Every printed node is the trie's node, with its numbers.
    bad = [(p, r[1], r[2], trie.get(p)) for p, r in nodes
           if trie.get(p) != [r[1], r[2]]]
    C.check(not bad, "each node's total and self are those of the "
            "stacks", bad[:5])
    bad = [(p, r) for p, r in nodes
           if not near(r[4], 100 * r[1] / n) or
           not near(r[5], 100 * r[2] / n)]
    C.check(not bad, "percentages are of all samples", bad[:3])
    # Pruning: exactly the nodes under min_pct% are left out, each
    # parent's summary counts them.
    want_nodes = [p for p, v in trie.items()
                  if p and 100 * v[0] / n >= min_pct and
                  all(100 * trie[p[:i]][0] / n >= min_pct
                      for i in range(1, len(p)))]
    C.check(sorted(want_nodes) == sorted(p for p, _ in nodes),
            f"the nodes kept are those of at least {min_pct}%",
            f"{len(want_nodes)} wanted, {len(nodes)} printed")
    bad = []
    for p, r in [((), rows[0])] + nodes:
        small = [q for q in trie if len(q) == len(p) + 1 and
                 q[:len(p)] == p and 100 * trie[q][0] / n < min_pct]
        summ = [k for k in kids.get(p, []) if k[2] is None]
        want = (len(small), sum(trie[q][0] for q in small))
        got = (0, 0) if not summ else \
            (int(re.match(r"\[(\d+) more", summ[0][3]).group(1)), summ[0][1])
        if want != got or len(summ) > 1:
            bad.append((p, want, got))
    C.check(not bad, "each parent says how many were left out and their "
            "total", bad[:3])
    # Children sorted by total, then name.
    bad = []
    for p, ks in kids.items():
        real = [k for k in ks if k[2] is not None]
        key = [(-k[1], k[3].encode("utf-8", "surrogateescape")) for k in real]
        if key != sorted(key):
            bad.append(p)
    C.check(not bad, "children are sorted by total, then name", bad[:3])
    return C.failed


# -------------------------------------------------------------- report --

ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)%\s+\[\s*([\d.]+)%,\s*"
                 r"([\d.]+)%\] ([=? ])  (.*)$")
PAIR = re.compile(r"^  #(\d+) .* and #(\d+) .*: ([\d.]+)% vs ([\d.]+)%, "
                  r"difference ([-+][\d.]+) points, (?:[\d.]+% interval "
                  r"\[([-+][\d.]+), ([-+][\d.]+)\]|too few samples to "
                  r"compare \((\d+) in one but not both, under 20\)); "
                  r"(?:about (\d+) samples|equal shares)")
RES = re.compile(r"^Resolution: \+-([\d.]+) points at the top share "
                 r"\(([\d.]+)%\) needs (\d+) samples; these (\d+) give "
                 r"\+-([\d.]+) points\.$")


def parse_report(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    m = re.match(r"sym report: (\d+) samples", text)
    n = int(m.group(1)) if m else None
    tables, cur = [], None
    for line in text.split("\n"):
        if line.startswith("Top "):
            cur = {"title": line, "rows": [], "pairs": [], "res": None}
            tables.append(cur)
            continue
        if cur is None:
            continue
        r = ROW.match(line)
        if r:
            cur["rows"].append((int(r.group(1)), int(r.group(2)),
                                float(r.group(3)), float(r.group(4)),
                                float(r.group(5)), r.group(6),
                                r.group(7)))
        p = PAIR.match(line)
        if p:
            cur["pairs"].append(p)
        q = RES.match(line)
        if q:
            cur["res"] = q
    return n, tables


def check_report(argv):
    folded, report = argv[0], argv[1]
    res = float(argv[argv.index("--resolution") + 1]) / 100 \
        if "--resolution" in argv else 0.005
    conf = float(argv[argv.index("--conf") + 1]) / 100 \
        if "--conf" in argv else 0.95
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 20
    z = z_of(conf)
    stacks = read_folded(folded)
    n = sum(c for _, c in stacks)
    self_k, total_k = {}, {}
    for frames, c in stacks:
        self_k[frames[-1]] = self_k.get(frames[-1], 0) + c
        for f in set(frames):
            total_k[f] = total_k.get(f, 0) + c
    got_n, tables = parse_report(report)
    C = Checks()
    C.check(got_n == n, f"the report counts every sample ({n})", got_n)
    C.check(len(tables) == 2 and "self" in tables[0]["title"] and
            "total" in tables[1]["title"], "two tables: self, total",
            [t["title"] for t in tables])
    if len(tables) != 2:
        return C.failed + 1
    for which, (table, counts) in enumerate(zip(tables,
                                                 (self_k, total_k))):
        what = ("self", "total")[which]
        order = sorted(counts, key=lambda f: (-counts[f],
                                              f.encode("utf-8",
                                                       "surrogateescape")))
        order = order[:top]
        rows = table["rows"]
        C.check([r[6] for r in rows] == order and
                [r[1] for r in rows] == [counts[f] for f in order] and
                [r[0] for r in rows] == list(range(1, len(order) + 1)),
                f"{what}: the top {len(order)} functions, ranked, with "
                f"their samples", [(r[6], r[1]) for r in rows][:5])
        bad = []
        for r in rows:
            p, lo, hi = wilson(r[1], n, z)
            if not (near(r[2], 100 * p) and near(r[3], 100 * lo) and
                    near(r[4], 100 * hi)):
                bad.append((r, 100 * p, 100 * lo, 100 * hi))
        C.check(not bad, f"{what}: each share and its Wilson interval",
                bad[:3])

        def both(a, b):
            if which == 0:
                return 0
            return sum(c for fr, c in stacks if a in fr and b in fr)
        bad, want_pairs = [], {}
        for i in range(1, len(rows)):
            a, b = rows[i - 1], rows[i]
            k12 = both(a[6], b[6])
            differ, d, dlo, dhi = within(a[1], b[1], k12, n, z)
            few = a[1] + b[1] - 2 * k12 < 20
            mark = "?" if few else " " if differ else "="
            if b[5] != mark:
                bad.append((a[6], b[6], a[1], b[1], k12, mark, b[5]))
            if mark != " ":
                want_pairs[i] = (d, dlo, dhi, n_apart(a[1], b[1], k12, n,
                                                      z),
                                 a[1] + b[1] - 2 * k12 if few else None)
        C.check(not bad, f"{what}: '=' exactly where the multinomial "
                "difference test cannot tell two neighbours apart, '?' "
                "where under 20 samples are in one but not both", bad[:3])
        got_pairs = {int(p.group(1)): p for p in table["pairs"]}
        bad = []
        for i, (d, dlo, dhi, need, few) in want_pairs.items():
            p = got_pairs.get(i)
            ok = p and int(p.group(2)) == i + 1 and \
                near(float(p.group(5)), 100 * d) and \
                (p.group(9) is None) == (need is None) and \
                (need is None or abs(int(p.group(9)) - need) <= 1)
            if few is None:
                ok = ok and p.group(6) is not None and \
                    near(float(p.group(6)), 100 * dlo) and \
                    near(float(p.group(7)), 100 * dhi)
            else:
                ok = ok and p.group(8) is not None and \
                    int(p.group(8)) == few
            if not ok:
                bad.append((i, d, dlo, dhi, need, few,
                            p.group(0) if p else None))
        C.check(not bad and len(got_pairs) == len(want_pairs),
                f"{what}: each pair marked is listed with its difference "
                f"and the samples that would tell ({len(want_pairs)} "
                f"pairs)", bad[:3])
        q = table["res"]
        if rows:
            p_top = rows[0][1] / n
            want = n_wilson(p_top, res, z)
            _, lo, hi = wilson(rows[0][1], n, z)
            ok = q is not None and near(float(q.group(1)), 100 * res) and \
                abs(int(q.group(3)) - want) <= 1 and \
                int(q.group(4)) == n and \
                near(float(q.group(5)), 100 * (hi - lo) / 2)
            C.check(ok, f"{what}: the samples +-{100 * res:g} points at "
                    f"the top share need ({want})",
                    q.group(0) if q else "no Resolution line")
    return C.failed


# --------------------------------------------------------------- pprof --

def pprof_name(name):
    """Our display name as Google's pprof prints it: "mix_[i]" is
    "mix (inline)", an unresolved "libfoo.so+0x1234" is "[libfoo.so]"."""
    m = re.match(r"^(.*)\+0x[0-9a-f]+(?:_\[[kj]\])?$", name)
    if m:
        return "[" + m.group(1) + "]"
    if name.endswith("_[i]"):
        return name[:-4] + " (inline)"
    return name


def check_pprof(argv):
    """`pprof -top` and `pprof -traces` of `sym pprof`'s file against
    `sym report` and `sym fold` of the same profile."""
    folded, report, top, traces = argv[:4]
    stacks = [([pprof_name(f) for f in fr], c) for fr, c in
              read_folded(folded) if fr != ["[no stack]"]]
    C = Checks()
    got_top = {}
    with open(top) as f:
        for line in f:
            m = re.match(r"\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+(.*)$",
                         line)
            if m:
                got_top[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    # sym report's counts of every function it names (--top large).
    _, tables = parse_report(report)
    rep = {}
    for which, t in enumerate(tables):
        for r in t["rows"]:
            rep.setdefault(r[6], [0, 0])[which] = r[1]
    bad = [(n, tuple(v), got_top.get(pprof_name(n))) for n, v in rep.items()
           if "+0x" not in n and n != "[no stack]" and
           got_top.get(pprof_name(n)) != tuple(v)]
    C.check(not bad and len(rep) > 3, "pprof -top: each function's flat and "
            "cum are sym report's self and total", bad[:5])
    # Unresolved frames: pprof names them by module; so do we, after
    # folding our names the way pprof prints them.
    flat, cum = {}, {}
    for fr, c in stacks:
        flat[fr[-1]] = flat.get(fr[-1], 0) + c
        for n in set(fr):
            cum[n] = cum.get(n, 0) + c
    want = {n: (flat.get(n, 0), cum[n]) for n in cum}
    C.check(want == got_top, "pprof -top: every entry, unresolved modules "
            "too, agrees with sym fold's stacks",
            sorted(set(want.items()) ^ set(got_top.items()))[:6])
    got, cur = [], None
    with open(traces) as f:
        for line in f:
            if line.startswith("-----------+"):
                if cur:
                    got.append(cur)
                cur = None
                continue
            m = re.match(r"\s+(\d+)\s+(\S.*)$", line)
            if m and cur is None and ":" not in line.split()[0]:
                cur = [int(m.group(1)), [m.group(2)]]
            elif cur is not None and line.strip():
                cur[1].append(line.strip())
    if cur:
        got.append(cur)
    got = sorted((c, tuple(n[::-1])) for c, n in got)
    want = sorted((c, tuple(fr)) for fr, c in stacks)
    C.check(got == want, f"pprof -traces: the stacks and counts of sym fold "
            f"({len(want)} stacks)", [x for x in got if x not in want][:3] +
            [x for x in want if x not in got][:3])
    return C.failed


def main():
    fns = {"tree": check_tree, "report": check_report, "pprof": check_pprof}
    if len(sys.argv) < 4 or sys.argv[1] not in fns:
        sys.exit(__doc__)
    sys.exit(1 if fns[sys.argv[1]](sys.argv[2:]) else 0)


if __name__ == "__main__":
    main()
