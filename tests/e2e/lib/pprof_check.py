#!/usr/bin/env python3
"""pprof_check.py - compare what Google's pprof reads from our pprof files
with the raw file they were made from (tests/e2e/t3100-pprof.sh).

  pprof_check.py raw RAW PPROF_RAW_OUT      `pprof -raw` agrees with RAW:
        samples (count, weight, labels pid/tid/sym_flags), each frame's
        runtime address (vaddr - map vaddr + map start) and the mapping
        it falls in (start, limit, offset, file, build ID)
  pprof_check.py traces RAW PPROF_TRACES_OUT `pprof -traces`: one trace
        per stack, with its labels and depth
  pprof_check.py same RAW1 RAW2 [--pprof-rule]  the two raw files hold
        the same profile (maps compared by content, so renumbered maps
        are equal); with --pprof-rule the frame kinds of RAW1 are first
        rewritten as pprof has them (the leaf exact, the rest return
        addresses), for a file that went through pprof's own writer
  pprof_check.py total RAW PPROF_RAW_OUT     same total count and weight,
        every map a guessed vaddr (a foreign profile)

Exit 0 when they agree; else the differences on stdout, exit 1.
"""
import re
import sys

M64 = (1 << 64) - 1


def pct(s):
    if s == "-":
        return ""
    return re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), s)


def read_raw(path):
    """The raw file as dicts: header, maps by id, stacks."""
    prof = {"header": {}, "maps": {}, "stacks": [], "procs": {},
            "threads": {}, "mapflags": {}}
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.rstrip("\n").split(" ")
            if not w[0] or w[0].startswith("#"):
                continue
            if w[0] == "map":
                prof["maps"][w[1]] = {
                    "kind": w[2], "pid": int(w[3]), "start": int(w[4], 16),
                    "end": int(w[5], 16), "pgoff": int(w[6], 16),
                    "vaddr": int(w[7], 16), "bid": "" if w[8] == "-" else w[8],
                    "path": pct(w[9])}
            elif w[0] == "mapflags":
                prof["mapflags"][w[1]] = w[2]
            elif w[0] == "stack":
                prof["stacks"].append({
                    "count": int(w[1]), "weight": int(w[2]),
                    "pid": int(w[3]), "tid": int(w[4]),
                    "flags": "" if w[5] == "-" else w[5],
                    "frames": w[6:]})
            elif w[0] == "process":
                prof["procs"][w[1]] = w[2:]
            elif w[0] == "thread":
                prof["threads"][w[2]] = [w[1]] + w[3:]
            elif w[0] in ("sym-raw", "end"):
                pass
            else:
                prof["header"][" ".join(w[:-1]) if w[0] == "flagged"
                               else w[0]] = " ".join(w[1:])
    return prof


def frame_parts(prof, fr):
    """(kind, map dict or None, address in the file) of a frame."""
    kind, rest = fr[0], fr[1:]
    mid, addr = rest.split(":")
    return kind, (None if mid == "?" else prof["maps"][mid]), int(addr, 16)


def runtime(prof, fr):
    _, m, addr = frame_parts(prof, fr)
    if m is None:
        return addr, None
    return (addr - m["vaddr"] + m["start"]) & M64, m


def map_key(m):
    return (m["start"], m["end"], m["pgoff"],
            (m["path"] + " " + m["bid"]).strip())


def labels_of(s):
    lab = {}
    if s["pid"]:
        lab["pid"] = str(s["pid"])
    if s["tid"]:
        lab["tid"] = str(s["tid"])
    if s["flags"]:
        lab["sym_flags"] = s["flags"]
    return lab


def parse_pprof_raw(path):
    """`pprof -raw` output: samples, locations, mappings."""
    samples, locs, maps = [], {}, {}
    sect = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line in ("Samples:", "Locations", "Mappings"):
                sect = line
                continue
            if sect == "Samples:":
                m = re.match(r"^\s+((?:\s*-?\d+)+): ([\d ]*)$", line)
                if m:
                    samples.append({
                        "values": [int(v) for v in m.group(1).split()],
                        "locs": m.group(2).split(), "labels": {}})
                elif samples and line.startswith("                "):
                    for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                        samples[-1]["labels"][k] = v
            elif sect == "Locations":
                m = re.match(r"^\s*(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?", line)
                if m:
                    locs[m.group(1)] = (int(m.group(2), 16), m.group(3))
            elif sect == "Mappings":
                m = re.match(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/"
                             r"(0x[0-9a-f]+) (.*)$", line)
                if m:
                    maps[m.group(1)] = (int(m.group(2), 16),
                                        int(m.group(3), 16),
                                        int(m.group(4), 16),
                                        m.group(5).strip())
    return samples, locs, maps


def cmd_raw(raw_path, out_path):
    prof = read_raw(raw_path)
    samples, locs, maps = parse_pprof_raw(out_path)
    want, got = [], []
    nframes = 0
    for s in prof["stacks"]:
        frames = []
        for fr in s["frames"]:
            addr, m = runtime(prof, fr)
            frames.append((addr, map_key(m) if m else None))
            nframes += 1
        want.append((s["count"], s["weight"],
                     tuple(sorted(labels_of(s).items())), tuple(frames)))
    for s in samples:
        frames = []
        for lid in s["locs"]:
            addr, mid = locs[lid]
            frames.append((addr, maps[mid] if mid else None))
        vals = s["values"]
        got.append((vals[0], vals[-1], tuple(sorted(s["labels"].items())),
                    tuple(frames)))
    return report(sorted(want), sorted(got),
                  "%d samples, %d frames, %d mappings" %
                  (len(want), nframes, len(maps)))


def cmd_traces(raw_path, out_path):
    prof = read_raw(raw_path)
    want = sorted((tuple(sorted(labels_of(s).items())), len(s["frames"]))
                  for s in prof["stacks"])
    got = []
    text = open(out_path, encoding="utf-8").read()
    for block in text.split("-----------+")[1:]:
        lines = [l for l in block.split("\n")[1:] if l.strip()]
        if not lines:
            continue
        lab = {}
        depth = 0
        for l in lines:
            m = re.match(r"^\s*(\w+):\s+(.*)$", l)
            if m and depth == 0:
                lab[m.group(1)] = m.group(2).strip()
            else:
                depth += 1
        got.append((tuple(sorted(lab.items())), depth))
    return report(want, sorted(got), "%d traces" % len(want))


def canon(prof, pprof_rule):
    """A raw profile with maps named by content instead of ids."""
    def mkey(m):
        return (m["kind"], m["pid"], m["start"], m["end"], m["pgoff"],
                m["vaddr"], m["bid"], m["path"])
    mflags = {mid: prof["mapflags"].get(mid, "") for mid in prof["maps"]}
    maps = sorted(mkey(m) + (mflags[mid],) for mid, m in prof["maps"].items())
    stacks = []
    for s in prof["stacks"]:
        frames = []
        for i, fr in enumerate(s["frames"]):
            kind, m, addr = frame_parts(prof, fr)
            if pprof_rule:
                kind = "p" if i == 0 else "r"
            frames.append((kind, mkey(m) if m else None, addr))
        stacks.append((s["count"], s["weight"], s["pid"], s["tid"],
                       s["flags"], tuple(frames)))
    return {"header": sorted(prof["header"].items()), "maps": maps,
            "stacks": sorted(stacks), "procs": sorted(prof["procs"].items()),
            "threads": sorted(prof["threads"].items())}


def cmd_same(a, b, pprof_rule):
    ca, cb = canon(read_raw(a), pprof_rule), canon(read_raw(b), False)
    bad = 0
    for k in ca:
        if ca[k] != cb[k]:
            print("%s differ:" % k)
            for x in ca[k]:
                if x not in cb[k]:
                    print("  - %r" % (x,))
            for x in cb[k]:
                if x not in ca[k]:
                    print("  + %r" % (x,))
            bad = 1
    if not bad:
        print("same: %d maps, %d stacks" % (len(ca["maps"]),
                                            len(ca["stacks"])))
    return bad


def cmd_total(raw_path, out_path):
    prof = read_raw(raw_path)
    samples, _, _ = parse_pprof_raw(out_path)
    want = (sum(s["values"][0] for s in samples),
            sum(s["values"][-1] for s in samples))
    got = (sum(s["count"] for s in prof["stacks"]),
           sum(s["weight"] for s in prof["stacks"]))
    guessed = [mid for mid in prof["maps"]
               if "vaddr-guessed" not in prof["mapflags"].get(mid, "")
               and prof["maps"][mid]["kind"] != "kernel"]
    print("pprof: %d samples, %d ns; raw: %d, %d; %d maps, not guessed: %s"
          % (want + got + (len(prof["maps"]), guessed)))
    return 0 if want == got and want[0] > 0 and not guessed else 1


def report(want, got, what):
    if want == got:
        print("agree: " + what)
        return 0
    for x in want:
        if x not in got:
            print("only in raw:   %r" % (x,))
    for x in got:
        if x not in want:
            print("only in pprof: %r" % (x,))
    return 1


def main(argv):
    if len(argv) >= 4 and argv[1] == "raw":
        return cmd_raw(argv[2], argv[3])
    if len(argv) >= 4 and argv[1] == "traces":
        return cmd_traces(argv[2], argv[3])
    if len(argv) >= 4 and argv[1] == "same":
        return cmd_same(argv[2], argv[3], "--pprof-rule" in argv[4:])
    if len(argv) >= 4 and argv[1] == "total":
        return cmd_total(argv[2], argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
