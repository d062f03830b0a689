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
    benchutil.py debugsize FILE...
        The .debug_* sections of the ELF files together: prints
        "uncompressed_bytes on_disk_bytes sections".  A SHF_COMPRESSED
        section counts with the ch_size of its Elf64_Chdr, a GNU .zdebug_*
        one with the size after its "ZLIB" magic; SHT_NOBITS sections
        (the placeholders of a stripped file) do not count.
"""
import random
import re
import statistics
import struct
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


def debugsize(paths):
    total = disk = count = 0
    for path in paths:
        with open(path, "rb") as f:
            ident = f.read(16)
            if ident[:4] != b"\x7fELF" or ident[4] != 2:
                sys.exit("benchutil: %s: not a 64-bit ELF file" % path)
            end = "<" if ident[5] == 1 else ">"
            f.seek(0)
            hdr = f.read(64)
            shoff, = struct.unpack_from(end + "Q", hdr, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH",
                                                            hdr, 0x3a)
            shdrs = []
            for i in range(shnum):
                f.seek(shoff + i * shentsize)
                shdrs.append(struct.unpack(end + "IIQQQQIIQQ",
                                           f.read(64)))
            f.seek(shdrs[shstrndx][4])
            names = f.read(shdrs[shstrndx][5])
            for (name, stype, flags, _addr, off, size, *_rest) in shdrs:
                n = names[name:names.index(b"\0", name)].decode()
                if stype == 8 or not (n.startswith(".debug_") or
                                      n.startswith(".zdebug_")):
                    continue
                count += 1
                disk += size
                if flags & 0x800:       # SHF_COMPRESSED: Elf64_Chdr
                    f.seek(off)
                    _type, _res, usize = struct.unpack(end + "IIQ",
                                                       f.read(16))
                    total += usize
                elif n.startswith(".zdebug_"):
                    f.seek(off)
                    head = f.read(12)
                    if head[:4] == b"ZLIB":
                        total += struct.unpack(">Q", head[4:])[0]
                    else:
                        total += size
                else:
                    total += size
    print("%d %d %d" % (total, disk, count))


def main():
    cmd = sys.argv[1]
    if cmd == "sample":
        sample(int(sys.argv[2]), int(sys.argv[3]))
    elif cmd == "median":
        print(statistics.median(float(v) for v in sys.argv[2:]))
    elif cmd == "frames":
        frames(sys.argv[2], int(sys.argv[3]))
    elif cmd == "debugsize":
        debugsize(sys.argv[2:])
    elif cmd == "agree":
        agree(sys.argv[2], sys.argv[3])
    else:
        sys.exit("benchutil: unknown command " + cmd)


if __name__ == "__main__":
    main()
