#!/usr/bin/env python3
"""symprof_check.py - analyses of libsymprof's raw files for the
t4000-symprof-* tests (the files are validated by build/tests/raw-check,
libsym's reader; this only reads what it needs).

  symprof_check.py shares RAW OUT [Z]
      OUT is symprof_threads' output ("worker K tid T cpu_ns N").  For each
      worker, the samples of its tid against the binomial interval
      n*p +- Z*sqrt(n*p*(1-p)) + 1, where n is the workers' samples and p
      the worker's share of the workers' CPU time (Z = 3.29: 99.9 %).
      Prints one diagnostic line per worker; exit 1 when one is outside.
  symprof_check.py bias RAW OUT
      the same numbers, only printed (never fails): how far each share is
      from the CPU share, and the largest gap, for the setitimer path.
  symprof_check.py reach RAW BINARY FUNC...
      every stack whose tid is not excluded must hold a frame of BINARY
      that resolves (nm) to one of FUNC.  Prints the stacks that do not,
      resolved; exit 1 if any.
  symprof_check.py leaf RAW BINARY LEAF CALLER
      every stack whose leaf is LEAF has CALLER right after it (the caller
      of a frameless leaf, recovered from CFI).  Exit 1 if not, or if no
      stack has that leaf.
  symprof_check.py tidsamples RAW TID
      print the samples of one thread.
  symprof_check.py inmap RAW PATH-SUFFIX [BINARY FUNC]
      print how many samples have a frame in a map whose path ends with
      PATH-SUFFIX (and, given BINARY and FUNC, resolve to FUNC).
  symprof_check.py header RAW KEY
      print one header line's value.
  symprof_check.py stacks RAW BINARY...
      print each stack as "COUNT FLAGS FRAMES", FLAGS "-" or the flags,
      FRAMES leaf first, joined by ";": each frame of one of the BINARY
      files resolved (nm) to its function, the others as FILE:ADDR (the
      file's base name) or ?:ADDR, all prefixed with the kind (p: or r:).
"""
import bisect
import math
import subprocess
import sys


def parse(path):
    hdr, maps, stacks = {}, {}, []
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("ascii", "replace").rstrip("\n")
            if not line or line.startswith("#"):
                continue
            w = line.split(" ")
            if w[0] == "map":
                maps[w[1]] = {"kind": w[2], "start": int(w[4], 16),
                              "end": int(w[5], 16), "buildid": w[8],
                              "path": unenc(w[9])}
            elif w[0] == "stack":
                frames = []
                for fr in w[6:]:
                    kind, rest = fr[0], fr[1:]
                    m, a = rest.split(":")
                    frames.append((kind, m, int(a, 16)))
                stacks.append({"count": int(w[1]), "weight": int(w[2]),
                               "tid": int(w[4]), "flags": w[5],
                               "frames": frames})
            elif w[0] in ("process", "thread", "end", "sym-raw"):
                pass
            else:
                hdr[w[0]] = " ".join(w[1:])
    return hdr, maps, stacks


def unenc(s):
    if s == "-":
        return ""
    out, i = bytearray(), 0
    b = s.encode()
    while i < len(b):
        if b[i] == ord("%"):
            out.append(int(b[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(b[i])
            i += 1
    return out.decode("utf-8", "replace")


class Syms:
    """Function symbols of one ELF file, by ELF virtual address."""

    def __init__(self, binary):
        res = subprocess.run(["nm", "-n", "--defined-only", binary],
                             capture_output=True, text=True, check=True)
        self.addrs, self.names = [], []
        for line in res.stdout.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TtWw":
                self.addrs.append(int(p[0], 16))
                self.names.append(p[2])

    def name(self, addr):
        """The function holding addr, without gcc's clone suffixes
        (spin.constprop.0 is spin)."""
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i].split(".")[0] if i >= 0 else "?"


def workers(out):
    ws = []
    with open(out) as f:
        for line in f:
            p = line.split()
            if len(p) == 6 and p[0] == "worker":
                ws.append((int(p[1]), int(p[3]), int(p[5])))
    return ws


def share_rows(raw, out):
    _, _, stacks = parse(raw)
    ws = workers(out)
    per = {tid: 0 for _, tid, _ in ws}
    for s in stacks:
        if s["tid"] in per:
            per[s["tid"]] += s["count"]
    n = sum(per.values())
    cpu = sum(c for _, _, c in ws)
    return [(k, tid, c / cpu, per[tid], n) for k, tid, c in ws]


def cmd_shares(raw, out, z="3.29"):
    z = float(z)
    bad = 0
    rows = share_rows(raw, out)
    if not rows or rows[0][4] < 50:
        print("# too few samples: %s" % (rows[0][4] if rows else 0))
        return 1
    for k, tid, p, got, n in rows:
        exp = n * p
        half = z * math.sqrt(n * p * (1 - p)) + 1
        inside = abs(got - exp) <= half
        bad += not inside
        print("# worker %d: cpu share %.3f, samples %d of %d (share %.3f),"
              " interval [%.1f, %.1f]%s" % (k, p, got, n, got / n,
                                             exp - half, exp + half,
                                             "" if inside else "  OUTSIDE"))
    return 1 if bad else 0


def cmd_bias(raw, out):
    rows = share_rows(raw, out)
    gap = 0.0
    for k, tid, p, got, n in rows:
        share = got / n if n else 0.0
        gap = max(gap, abs(share - p))
        print("# setitimer: worker %d cpu share %.3f, sample share %.3f "
              "(%+.3f)" % (k, p, share, share - p))
    print("# setitimer: largest gap %.3f over %d samples (known bias, "
          "not asserted)" % (gap, rows[0][4] if rows else 0))
    return 0


def resolve(frame, maps, syms, binary_path):
    kind, m, addr = frame
    if m == "?" or maps[m]["path"] != binary_path:
        return None
    return syms.name(addr - 1 if kind == "r" else addr)


def describe(frames, maps, syms, binary):
    out = []
    for fr in frames:
        n = resolve(fr, maps, syms, binary)
        if n is None:
            path = maps[fr[1]]["path"] if fr[1] != "?" else "?"
            n = "%s:%x" % (path.rsplit("/", 1)[-1], fr[2])
        out.append(fr[0] + ":" + n)
    return " ".join(out)


def cmd_reach(raw, binary, *funcs):
    import os
    binary = os.path.realpath(binary)
    _, maps, stacks = parse(raw)
    syms = Syms(binary)
    bad = total = 0
    for s in stacks:
        total += s["count"]
        names = {resolve(fr, maps, syms, binary) for fr in s["frames"]}
        if not names & set(funcs):
            bad += s["count"]
            print("# does not reach %s: %d x [%s] %s" % (
                "/".join(funcs), s["count"], s["flags"],
                describe(s["frames"], maps, syms, binary)))
    print("# %d of %d samples reach %s" % (total - bad, total,
                                           " or ".join(funcs)))
    return 1 if bad or not total else 0


def cmd_leaf(raw, binary, leaf, caller):
    import os
    binary = os.path.realpath(binary)
    _, maps, stacks = parse(raw)
    syms = Syms(binary)
    seen = bad = 0
    for s in stacks:
        fr = s["frames"]
        if not fr or resolve(fr[0], maps, syms, binary) != leaf:
            continue
        seen += s["count"]
        if len(fr) < 2 or resolve(fr[1], maps, syms, binary) != caller:
            bad += s["count"]
            print("# leaf %s without caller %s: %d x [%s] %s" % (
                leaf, caller, s["count"], s["flags"],
                describe(fr, maps, syms, binary)))
    print("# %d samples with leaf %s, %d without %s next" % (seen, leaf,
                                                             bad, caller))
    return 1 if bad or not seen else 0


def cmd_tidsamples(raw, tid):
    _, _, stacks = parse(raw)
    print(sum(s["count"] for s in stacks if s["tid"] == int(tid)))
    return 0


def cmd_inmap(raw, suffix, binary=None, func=None):
    _, maps, stacks = parse(raw)
    syms = Syms(binary) if binary else None
    n = 0
    for s in stacks:
        for kind, m, addr in s["frames"]:
            if m == "?" or not maps[m]["path"].endswith(suffix):
                continue
            if syms and syms.name(addr - 1 if kind == "r" else addr) != func:
                continue
            n += s["count"]
            break
    print(n)
    return 0


def cmd_header(raw, key):
    hdr, _, _ = parse(raw)
    print(hdr.get(key, ""))
    return 0


def cmd_stacks(raw, *binaries):
    import os
    _, maps, stacks = parse(raw)
    syms = {os.path.realpath(b): Syms(b) for b in binaries}
    for s in stacks:
        names = []
        for kind, m, addr in s["frames"]:
            path = maps[m]["path"] if m != "?" else "?"
            if path in syms:
                n = syms[path].name(addr - 1 if kind == "r" else addr)
            else:
                n = "%s:%x" % (path.rsplit("/", 1)[-1], addr)
            names.append(kind + ":" + n)
        print("%d %s %s" % (s["count"], s["flags"], ";".join(names)))
    return 0


def main(argv):
    cmds = {"shares": cmd_shares, "bias": cmd_bias, "reach": cmd_reach,
            "leaf": cmd_leaf, "tidsamples": cmd_tidsamples,
            "inmap": cmd_inmap, "header": cmd_header, "stacks": cmd_stacks}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
