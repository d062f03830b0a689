#!/usr/bin/env python3
"""jit-shares.py sym|perf FILE PID - the leaf frames of process PID's
samples, as `sym fold --pid --jit --kernel --broken=plain` or
`perf script -F comm,pid,ip,sym,dso` (no call chains) print them.

Prints one line: "total jit named top_name\\ttop_count" where jit counts
samples whose leaf is in JIT code (sym: a frame marked _[j], named
unless its name is a bracketed placeholder; perf: a dso
that is the process's perf map, or one of the jitted-PID-N.so files
that `perf inject --jit` makes from its jitdump), named those of them that got a name
(sym: not [perf-map]+?; perf: not [unknown]), and top the most frequent
JIT name with its samples.  Then one line per JIT name: "count\\tname".

jit-shares.py agree SYM_SHARES PERF_SHARES - exit 0 when the top
function's shares of two such outputs agree within the 99.9% interval.
"""
import collections
import math
import re
import sys


def sym_leaves(path, pid):
    root = re.compile(r"^.*-%s$" % re.escape(pid))
    for line in open(path, encoding="utf-8", errors="replace"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if not root.match(frames[0]):
            continue
        leaf = frames[-1]
        if leaf.endswith("_[j]"):
            name = leaf[:-4]
            # unnamed: "[perf-map]+?", "[perf-map-stale]+?", "[anon]+?"
            # (a JIT frame no map or jitdump named)
            yield int(count), True, None if name.startswith("[") \
                else name
        else:
            yield int(count), False, None


def perf_leaves(path, pid):
    # "node 12345 7f0a1c2d3e4f JS:*hot /x.js:1:2 (/tmp/perf-12345.map)"
    pat = re.compile(r"^\s*\S+\s+(\d+)\s+([0-9a-f]+)\s+(.*)\s+\((.*)\)$")
    mapname = "/tmp/perf-%s.map" % pid
    jitted = re.compile(r"(^|/)jitted-%s-\d+\.so$" % re.escape(pid))
    for line in open(path, encoding="utf-8", errors="replace"):
        m = pat.match(line.rstrip("\n"))
        if not m or m.group(1) != pid:
            continue
        sym, dso = m.group(3), m.group(4)
        if dso != mapname and not jitted.search(dso):
            yield 1, False, None
        else:
            yield 1, True, None if sym == "[unknown]" else sym


def agree(a_path, b_path):
    """The top JIT function's shares of two such outputs (sym's, perf's:
    two independent samplings of one run) agree within their 99.9%
    interval, a two-proportion z-test; each side has at least 100
    samples."""
    def first(path):
        head, top = open(path).readline().rstrip("\n").split("\t")
        return int(top), int(head.split()[0])
    a, n = first(a_path)
    b, m = first(b_path)
    p = (a + b) / (n + m)
    se = math.sqrt(max(p * (1 - p), 1e-9) * (1 / n + 1 / m))
    print("# sym %.4f perf %.4f, z %.2f" %
          (a / n, b / m, abs(a / n - b / m) / se))
    return not (n >= 100 and m >= 100 and abs(a / n - b / m) <= 3.29 * se)


def main():
    if sys.argv[1] == "agree":
        sys.exit(agree(sys.argv[2], sys.argv[3]))
    kind, path, pid = sys.argv[1:4]
    it = sym_leaves(path, pid) if kind == "sym" else perf_leaves(path, pid)
    total = jit = named = 0
    names = collections.Counter()
    for count, is_jit, name in it:
        total += count
        if is_jit:
            jit += count
            if name is not None:
                named += count
                names[name] += count
    top = names.most_common(1)[0] if names else ("-", 0)
    print("%d %d %d %s\t%d" % (total, jit, named, top[0], top[1]))
    for name, count in names.most_common():
        print("%d\t%s" % (count, name))


main()
