#!/usr/bin/env python3
"""views-gen.py - the synthetic profile of tests/bench/views-bench.sh.

    views-gen.py OUT.raw SAMPLES STACKS SEED MODULE...

MODULE is PATH=DEBUGFILE: an ELF file and the file whose symbol table
lists its functions (nm -S).  The profile is in the raw stack format:
four processes, each mapping every module (one map per module and
process: the same build IDs), STACKS unique 20-frame stacks whose counts
add up to SAMPLES (a Zipf-like spread: a few hot stacks, a long tail).

Stacks look like an interpreter's: the leaf an exact PC in the first
module (70%) or in another one, 16 return addresses drawn from pools of
call sites in the first module (hot ones more often), and three fixed
outermost frames (the first module's, then two of the second module's).
An address is inside a function (function start + 1 .. + size - 1), not
necessarily at an instruction boundary: a lookup does not care.

Prints one line: samples, stacks, unique frames and addresses per module.
"""
import random
import subprocess
import sys

FRAMES = 20
PIDS = (1001, 1002, 1003, 1004)


def functions(debug):
    out = subprocess.run(["nm", "-S", "--defined-only", debug],
                         capture_output=True, text=True, check=True).stdout
    funcs = []
    for line in out.splitlines():
        w = line.split()
        if len(w) == 4 and w[2] in "tT":
            addr, size = int(w[0], 16), int(w[1], 16)
            if size > 8:
                funcs.append((addr, size))
    funcs.sort()
    return funcs


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split()[-1]
    sys.exit("views-gen: no build ID in %s" % path)


def load_segments(path):
    """(offset, vaddr, filesz) of the executable PT_LOAD segment."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == "LOAD" and "E" in w[-2]:
            return int(w[1], 16), int(w[2], 16), int(w[4], 16)
    sys.exit("views-gen: no executable segment in %s" % path)


def main():
    out, samples, stacks, seed = sys.argv[1], int(sys.argv[2]), \
        int(sys.argv[3]), int(sys.argv[4])
    mods = []
    for spec in sys.argv[5:]:
        path, debug = spec.split("=", 1)
        mods.append((path, build_id(path), functions(debug),
                     load_segments(path)))
    rnd = random.Random(seed)

    def addr_in(funcs):
        a, s = funcs[rnd.randrange(len(funcs))]
        return a + rnd.randrange(1, s)

    main_funcs = mods[0][2]
    # Pools: call sites (return addresses) and leaf PCs.
    calls = [addr_in(main_funcs) for _ in range(6000)]
    leaves = [[addr_in(m[2]) for _ in range(4000 if i == 0 else 1500)]
              for i, m in enumerate(mods)]
    bottom = [(0, "r", addr_in(main_funcs))] + \
        [(min(1, len(mods) - 1), "r", addr_in(mods[min(1, len(mods) - 1)][2]))
         for _ in range(2)]

    def zipf_pick(pool):
        # Hot entries first: index ~ pool size * u^3.
        return pool[int(len(pool) * rnd.random() ** 3)]

    seen = set()
    stack_list = []
    while len(stack_list) < stacks:
        m = 0 if rnd.random() < 0.7 or len(mods) == 1 else \
            rnd.randrange(1, len(mods))
        frames = [(m, "p", zipf_pick(leaves[m]))]
        frames += [(0, "r", zipf_pick(calls))
                   for _ in range(FRAMES - 1 - len(bottom))]
        frames += bottom
        pid = PIDS[rnd.randrange(len(PIDS))]
        key = (pid, tuple(frames))
        if key in seen:
            continue
        seen.add(key)
        stack_list.append(key)
    # Counts: weights 1 / (i + 1)^0.8, at least 1 each, summing exactly.
    w = [1.0 / (i + 1) ** 0.8 for i in range(stacks)]
    total = sum(w)
    counts = [max(1, int(samples * x / total)) for x in w]
    i = 0
    while sum(counts) < samples:
        counts[i % stacks] += 1
        i += 1
    while sum(counts) > samples:
        j = rnd.randrange(stacks)
        if counts[j] > 1:
            counts[j] -= 1
    period = 10101010
    lines = ["sym-raw 1", "host bench", "tool views-gen 1",
             "event cpu-clock", "mode dwarf", "frequency 99",
             "period %d" % period, "weight-unit ns",
             "samples %d" % samples]
    mapid = {}
    n = 0
    for pid in PIDS:
        lines.append("process %d - %d python3" % (pid, pid))
        for k, (path, bid, _, (off, vaddr, size)) in enumerate(mods):
            start = (0x7f0000000000 + ((pid - 1000) << 32) + (k << 28)
                     if vaddr < 0x400000 or k else vaddr)
            start = start - start % 0x1000 + (vaddr % 0x1000)
            lines.append("map %d file %d %x %x %x %x %s %s" %
                         (n, pid, start, start + size, off, vaddr, bid,
                          path))
            mapid[(pid, k)] = n
            n += 1
    uniq = [set() for _ in mods]
    frames_seen = set()
    for (pid, frames), c in zip(stack_list, counts):
        fr = []
        for m, kind, a in frames:
            fr.append("%s%d:%x" % (kind, mapid[(pid, m)], a))
            frames_seen.add((pid, m, kind, a))
            uniq[m].add(a - (kind == "r"))
        lines.append("stack %d %d %d %d - %s" % (c, c * period, pid, pid,
                                                 " ".join(fr)))
    lines.append("end")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("samples=%d stacks=%d frames=%d %s" % (
        sum(counts), len(stack_list), len(frames_seen),
        " ".join("addrs[%s]=%d" % (m[0].rsplit("/", 1)[-1], len(u))
                 for m, u in zip(mods, uniq))))


if __name__ == "__main__":
    main()
