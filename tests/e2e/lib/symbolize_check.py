#!/usr/bin/env python3
"""symbolize_check.py - check `sym symbolize` output against llvm-symbolizer
and against its own summary (tests/e2e/t5200-symbolize.sh).

    symbolize_check.py all OUT.raw STDERR ELF KERNELMAP|-
        the four checks below (locs of maps 0, with inline chains, and 1;
        kernel; summary), one result line each: "ok - what", "not ok -
        what" or "skip what", the details as "# " lines (python starts
        slowly on a busy machine: one process does it all)

    symbolize_check.py locs OUT.raw MAPID ELF [inline]
        every `loc` of map MAPID: its status is ok and its lines (function,
        file, line, column, inline chain) are what llvm-symbolizer says for
        the same address (address - 1 for return addresses); with
        "inline", at least one has an inline chain
    symbolize_check.py summary OUT.raw STDERR
        the summary `sym symbolize` printed agrees with the file: per
        module, the frames, the share resolved, the module's share of the
        frame samples and the share of them resolved, the statuses
    symbolize_check.py kernel OUT.raw MAPID
        every ok `loc` of the kernel map MAPID names the /proc/kallsyms
        text symbol at or below its address

    symbolize_check.py pprof SYM.raw TOP TRACES
        Google's pprof agrees with the symbolized raw file: `pprof -top
        -sample_index=samples` (each function's flat and cum counts, "
        (inline)" frames included) and `pprof -traces` (each stack's count
        and function names, innermost first, inline frames expanded);
        frames that did not resolve are pprof's "[map basename]" or
        "<unknown>".  One result line each, as "all" prints them.

Prints what it compared; exits 1 with the differences.
"""
import os
import json
import re
import subprocess
import sys
from collections import defaultdict


def unpct(s):
    if s == "-":
        return None
    out = bytearray()
    i = 0
    b = s.encode()
    while i < len(b):
        if b[i] == 0x25:
            out.append(int(b[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(b[i])
            i += 1
    return out.decode("utf-8", "replace")


def parse(path):
    """maps {id: (kind, buildid, path)}, locs {frame: (status, lines)},
    stacks [(count, [frames])]"""
    maps, fn, src, locs, stacks = {}, {}, {}, {}, []
    with open(path) as f:
        for line in f:
            w = line.rstrip("\n").split(" ")
            if w[0] == "map":
                maps[w[1]] = (w[2], None if w[8] == "-" else w[8], unpct(w[9]))
            elif w[0] == "fn":
                fn[w[1]] = unpct(w[2])
            elif w[0] == "src":
                src[w[1]] = unpct(w[2])
            elif w[0] == "loc":
                lines = []
                for l in w[3:]:
                    flag = ""
                    if l[0] in "is":
                        flag, l = l[0], l[1:]
                    f_, s_, ln, col = l.split(":")
                    lines.append((flag, fn.get(f_), src.get(s_), int(ln),
                                  int(col)))
                locs[w[1]] = (w[2], lines)
            elif w[0] == "stack":
                stacks.append((int(w[1]), w[6:]))
    return maps, locs, stacks


def frame_key(fr):
    """(kind, map, addr) of 'pMAP:ADDR'"""
    m, a = fr[1:].split(":")
    return fr[0], m, int(a, 16)


def check_locs(out, mapid, elf, need_inline=""):
    maps, locs, _ = parse(out)
    frames = [f for f in locs if frame_key(f)[1] == mapid]
    addrs = []
    for f in frames:
        k, _, a = frame_key(f)
        addrs.append(a - 1 if k == "r" else a)
    res = subprocess.run(["llvm-symbolizer", "--obj=" + elf,
                          "--output-style=JSON", "--inlining",
                          "--demangle"],
                         input="".join("0x%x\n" % a for a in addrs),
                         capture_output=True, text=True, check=True)
    answers = [json.loads(l) for l in res.stdout.splitlines() if l.strip()]
    bad = 0
    inlined = 0
    for f, a, ans in zip(frames, addrs, answers):
        st, lines = locs[f]
        # llvm-symbolizer's "" is an unknown function or file.
        want = [(s["FunctionName"] or None, s["FileName"] or None,
                 s["Line"], s["Column"])
                for s in ans["Symbol"] if s["FunctionName"] or s["Line"]]
        got = [(l[1], l[2], l[3], l[4]) for l in lines]
        flags = [l[0] for l in lines]
        ok = st == "ok" and got == want and \
            flags == ["i"] * (len(got) - 1) + [""]
        inlined += len(got) > 1
        if not ok:
            bad += 1
            print("MISMATCH %s (lookup 0x%x): got %s %s, llvm-symbolizer %s"
                  % (f, a, st, list(zip(flags, got)), want))
    print("compared %d locations of map %s with llvm-symbolizer, "
          "%d with inline chains, %d differ" % (len(frames), mapid, inlined,
                                                bad))
    if not frames or (need_inline and not inlined):
        print("nothing (or no inline chain) to compare")
        return 1
    return 1 if bad else 0


def row_key(maps, fr):
    m = frame_key(fr)[1]
    if m == "?":
        return "[no mapping]"
    kind, bid, path = maps[m]
    if bid:
        return "%s (%s)" % (path or "?", bid[:8])
    return path or "[anonymous]"


def check_summary(out, stderr):
    maps, locs, stacks = parse(out)
    frames = defaultdict(set)
    samples = defaultdict(int)
    st_frames = defaultdict(lambda: defaultdict(int))
    st_samples = defaultdict(lambda: defaultdict(int))
    total = 0
    for count, frs in stacks:
        for fr in frs:
            r = row_key(maps, fr)
            st = locs[fr][0]
            if fr not in frames[r]:
                st_frames[r][st] += 1
            frames[r].add(fr)
            samples[r] += count
            st_samples[r][st] += count
            total += count
    want = {}
    for r in frames:
        nf = len(frames[r])
        ok_f = st_frames[r].get("ok", 0)
        why = ", ".join("%s %d (%.1f%%)" % (st, st_frames[r][st],
                                             100.0 * st_samples[r][st] /
                                             samples[r])
                        for st in ("nosymbol", "missing", "nobuildid",
                                   "unmapped", "error")
                        if st_frames[r].get(st))
        want[r] = (nf, "%.1f%%" % (100.0 * ok_f / nf),
                   "%.1f%%" % (100.0 * samples[r] / total),
                   "%.1f%%" % (100.0 * st_samples[r].get("ok", 0) /
                               samples[r]), why)
    got = {}
    bad_src = False
    with open(stderr) as f:
        text = f.read().splitlines()
    rows = False
    for l in text:
        if "frames resolved  samples resolved" in l.replace("  ", "  "):
            rows = True
            continue
        if not rows or not l.startswith("  "):
            continue
        w = l.split()
        rest = l.split("%", 3)[3].strip()
        # the source column: what answered the module
        src, _, rest = rest.partition(" ")
        if src not in ("dwarf", "gopclntab", "symtab", "kallsyms",
                       "perf-map", "none"):
            print("ROW %s: unknown source '%s'" % (rest, src))
            bad_src = True
        rest = rest.strip()
        label, _, why = rest.partition(": ")
        why = why.split(" - ")[0]
        got[label] = (int(w[0]), w[1], w[2], w[3], why)
    bad = 0
    for r in sorted(set(want) | set(got)):
        if want.get(r) != got.get(r):
            bad += 1
            print("ROW %s: summary %s, file %s" % (r, got.get(r), want.get(r)))
    print("%d summary rows checked, %d differ" % (len(want), bad))
    return 1 if bad or bad_src or not want else 0


def check_kernel(out, mapid):
    _, locs, _ = parse(out)
    syms = []
    with open("/proc/kallsyms") as f:
        for l in f:
            a, t, name = l.split()[:3]
            if t in "tTwW" and int(a, 16):
                syms.append((int(a, 16), name))
    syms.sort(key=lambda s: s[0])
    bad = n = 0
    for f, (st, lines) in locs.items():
        k, m, a = frame_key(f)
        if m != mapid:
            continue
        n += 1
        a = a - 1 if k == "r" else a
        below = [s for s in syms if s[0] <= a]
        names = {s[1] for s in below if s[0] == below[-1][0]} if below else set()
        if st != "ok" or len(lines) != 1 or lines[0][0] != "s" or \
                lines[0][1] not in names:
            bad += 1
            print("KERNEL %s: got %s %s, kallsyms %s" % (f, st, lines, names))
    print("%d kernel locations checked, %d differ" % (n, bad))
    return 1 if bad or not n else 0


def check_all(out, stderr, elf, kmap):
    import contextlib
    import io
    checks = [("map 0 agrees with llvm-symbolizer, inline chains included",
               lambda: check_locs(out, "0", elf, "inline")),
              ("map 1 (same build ID, another process) too",
               lambda: check_locs(out, "1", elf)),
              ("kernel frames name their /proc/kallsyms symbol",
               None if kmap == "-" else lambda: check_kernel(out, kmap)),
              ("the summary agrees with the file (frames, samples, shares)",
               lambda: check_summary(out, stderr))]
    for what, fn in checks:
        if fn is None:
            print("skip no kernel build ID or kallsyms addresses here")
            continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = fn()
        print("%sok - %s" % ("not " if rc else "", what))
        for l in buf.getvalue().splitlines():
            print("# " + l)
    return 0


def frame_names(maps, locs, fr):
    """pprof's function names of a frame, innermost first: a frame (or a
    line) without a function is named after its mapping's file."""
    st, lines = locs.get(fr, ("none", []))
    m = frame_key(fr)[1]
    if m == "?":
        where = "<unknown>"
    else:
        where = "[%s]" % os.path.basename(maps[m][2] or "")
    if st == "ok":
        return [l[1] or where for l in lines]
    return [where]


def check_pprof(raw, top, traces):
    maps, locs, stacks = parse(raw)
    flat, cum = defaultdict(int), defaultdict(int)
    want_traces = []
    for count, frs in stacks:
        names = [n for fr in frs for n in frame_names(maps, locs, fr)]
        if names:
            flat[names[0]] += count
        for n in set(names):
            cum[n] += count
        want_traces.append((count, names))
    got_top = {}
    with open(top) as f:
        for l in f:
            m = re.match(r"\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+(.*?)"
                         r"( \(inline\))?$", l)
            if m:
                got_top[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    want_top = {n: (flat[n], cum[n]) for n in cum}
    bad = 0
    for n in sorted(set(want_top) | set(got_top)):
        if want_top.get(n) != got_top.get(n):
            bad += 1
            print("TOP %s: pprof %s, raw %s" % (n, got_top.get(n),
                                                 want_top.get(n)))
    print("%d functions in -top, %d differ" % (len(want_top), bad))
    print("%sok - pprof -top: every function's flat and cum counts"
          % ("not " if bad or not want_top else ""))
    got_traces = []
    cur = None
    with open(traces) as f:
        for l in f:
            if l.startswith("-----------+"):
                if cur:
                    got_traces.append((cur[0], cur[1]))
                cur = None
                continue
            m = re.match(r"\s+(\d+)\s+(\S.*?)( \(inline\))?$", l)
            if m and cur is None and ":" not in l.split()[0]:
                cur = (int(m.group(1)), [m.group(2)])
                continue
            m = re.match(r"\s+(\S.*?)( \(inline\))?$", l)
            if cur is not None and m:
                cur[1].append(m.group(1))
    if cur:
        got_traces.append(cur)
    key = lambda t: (t[0], t[1])
    w, g = sorted(want_traces, key=key), sorted(got_traces, key=key)
    for t in w:
        if t not in g:
            print("TRACE missing from pprof: %s" % (t,))
    for t in g:
        if t not in w:
            print("TRACE pprof has, raw has not: %s" % (t,))
    print("%d traces, pprof has %d" % (len(w), len(g)))
    print("%sok - pprof -traces: every stack's count and functions"
          % ("not " if w != g or not w else ""))
    return 0


def main():
    if sys.argv[1] == "pprof":
        return check_pprof(*sys.argv[2:5])
    if sys.argv[1] == "all":
        return check_all(*sys.argv[2:6])
    if sys.argv[1] == "locs":
        return check_locs(*sys.argv[2:6])
    if sys.argv[1] == "summary":
        return check_summary(*sys.argv[2:4])
    if sys.argv[1] == "kernel":
        return check_kernel(*sys.argv[2:4])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
