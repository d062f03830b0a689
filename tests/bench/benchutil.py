#!/usr/bin/env python3
"""benchutil.py - the arithmetic of tests/bench/bench.sh.

    benchutil.py sample SEED N < objdump-d-output > addrs
        Instruction starts of `objdump -d`, N of them drawn with
        random.Random(SEED): without replacement when there are at least
        N, with replacement otherwise.  Printed as 0x%x, one a line, in
        the drawn (unsorted) order.
    benchutil.py median V...
        The median of the numbers.
    benchutil.py frames OUT N
        Parse the output of an `-a` run (ours, GNU addr2line,
        eu-addr2line or llvm-symbolizer: each group starts with the
        address line, then a function line and a location line per frame)
        and print the frames per address, one number a line.  Exits 1 when
        there are not N groups.
    benchutil.py agree A B
        Two `frames` files: the share of addresses with the same number of
        frames, as a percentage.
"""
import random
import re
import statistics
import sys

INSN = re.compile(r"^\s+([0-9a-f]+):\s")
ADDR = re.compile(r"^0x[0-9a-fA-F]+$")


def sample(seed, n):
    addrs = []
    for line in sys.stdin:
        m = INSN.match(line)
        if m:
            addrs.append(int(m.group(1), 16))
    if not addrs:
        sys.exit("benchutil: no instructions in the objdump output")
    rnd = random.Random(seed)
    if len(addrs) >= n:
        picked = rnd.sample(addrs, n)
    else:
        picked = rnd.choices(addrs, k=n)
    sys.stdout.write("".join("0x%x\n" % a for a in picked))


def frames(path, n):
    counts = []
    lines = 0
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if ADDR.match(line):
                if counts:
                    counts[-1] = lines // 2
                counts.append(0)
                lines = 0
            elif line and counts:
                lines += 1
    if counts:
        counts[-1] = lines // 2
    sys.stdout.write("".join("%d\n" % c for c in counts))
    if len(counts) != n:
        sys.stderr.write("benchutil: %s: %d address groups, want %d\n"
                         % (path, len(counts), n))
        sys.exit(1)


def agree(a, b):
    x = open(a).read().split()
    y = open(b).read().split()
    n = min(len(x), len(y))
    same = sum(1 for i in range(n) if x[i] == y[i])
    print("%.1f" % (100.0 * same / max(1, max(len(x), len(y)))))


def main():
    cmd = sys.argv[1]
    if cmd == "sample":
        sample(int(sys.argv[2]), int(sys.argv[3]))
    elif cmd == "median":
        print(statistics.median(float(v) for v in sys.argv[2:]))
    elif cmd == "frames":
        frames(sys.argv[2], int(sys.argv[3]))
    elif cmd == "agree":
        agree(sys.argv[2], sys.argv[3])
    else:
        sys.exit("benchutil: unknown command " + cmd)


if __name__ == "__main__":
    main()
