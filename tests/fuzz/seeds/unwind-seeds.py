#!/usr/bin/env python3
"""unwind-seeds.py - write tests/fuzz/corpus/fuzz-unwind/seed-* (run from
the project root; the other files there are kept).

Builds tests/fuzz/seeds/unwind.c with gcc in a few ways (-O2, -O0, frame
pointers everywhere, .debug_frame instead of .eh_frame), runs each build,
which writes its registers and stack at the bottom of a chain of frames
of every CFI shape, and puts them together in fuzz-unwind.c's input
layout: an options byte, the 17 registers, the stack length and bytes,
the ELF file.  Then derives inputs from them, deterministically (seeded):
a shorter stack copy, few frames asked, the row cache off, a page cut
out of the mapping, and corrupt CFI: bytes flipped in .eh_frame,
.eh_frame_hdr and .debug_frame, zeroed sections, a CIE with a bad version
or augmentation, an FDE length past the end, a file cut short.

Needs gcc, readelf and an x86-64 host (the builds are run).
"""
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

OUT = "tests/fuzz/corpus/fuzz-unwind"
SRC = "tests/fuzz/seeds/unwind.c"
FULL = 7 << 2          # 57 frames asked
BUILDS = {
    "o2": ["-O2", "-fasynchronous-unwind-tables"],
    "o0": ["-O0", "-fasynchronous-unwind-tables"],
    "fp": ["-O2", "-fno-omit-frame-pointer", "-fasynchronous-unwind-tables"],
    "dbgframe": ["-O2", "-g", "-fno-asynchronous-unwind-tables",
                 "-fno-unwind-tables"],
}


def sections(path):
    """{name: (offset, size)} of the file's sections."""
    out = {}
    for line in subprocess.run(["readelf", "-SW", path], check=True,
                               stdout=subprocess.PIPE,
                               universal_newlines=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+"
                     r"([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            out[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16))
    return out


def seed(opts, dump, stack_len, elf):
    regs, stack = dump[:136], dump[136:]
    stack = stack[:stack_len]
    return bytes([opts]) + regs + struct.pack("<H", len(stack)) + stack + elf


def flip(data, off, size, n, rnd):
    b = bytearray(data)
    for _ in range(n):
        i = off + rnd.randrange(size)
        b[i] ^= 1 << rnd.randrange(8)
    return bytes(b)


def main():
    if not os.path.isdir(OUT):
        os.makedirs(OUT)
    for f in os.listdir(OUT):
        if f.startswith("seed-"):
            os.unlink(os.path.join(OUT, f))
    rnd = random.Random(16)
    seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in BUILDS.items():
            exe = os.path.join(tmp, name)
            subprocess.run(["gcc", "-nostdlib", "-static", "-fno-pie",
                            "-no-pie", "-Wl,--build-id", "-Wl,--eh-frame-hdr",
                            "-Wl,-z,noseparate-code", "-o", exe] +
                           flags + [SRC], check=True)
            dump = subprocess.run([exe], check=True,
                                  stdout=subprocess.PIPE).stdout
            if len(dump) < 136 + 64:
                sys.exit("%s wrote only %d bytes" % (name, len(dump)))
            elf = open(exe, "rb").read()
            secs = sections(exe)
            whole = len(dump) - 136
            seeds["%s-whole" % name] = seed(FULL, dump, whole, elf)
            if name != "o2":
                continue
            seeds["o2-nocache"] = seed(FULL | 1, dump, whole, elf)
            seeds["o2-cut-page"] = seed(FULL | 2, dump, whole, elf)
            seeds["o2-9-frames"] = seed(1 << 2, dump, whole, elf)
            seeds["o2-1-frame"] = seed(0, dump, whole, elf)
            seeds["o2-stack-64"] = seed(FULL, dump, 64, elf)
            seeds["o2-stack-0"] = seed(FULL, dump, 0, elf)
            seeds["o2-no-elf"] = seed(FULL, dump, whole, b"")
            seeds["o2-elf-cut-60"] = seed(FULL, dump, whole,
                                          elf[:len(elf) * 6 // 10])
            for sec in (".eh_frame", ".eh_frame_hdr"):
                if sec not in secs:
                    continue
                off, size = secs[sec]
                for k in range(4):
                    seeds["o2-flip%s-%d" % (sec, k)] = seed(
                        FULL, dump, whole,
                        flip(elf, off, size, 1 + 3 * k, rnd))
                z = bytearray(elf)
                z[off:off + size] = bytes(size)
                seeds["o2-zero%s" % sec] = seed(FULL, dump, whole, bytes(z))
            if ".eh_frame" in secs:
                off, size = secs[".eh_frame"]
                # The first CIE: length, CIE id 0, version, augmentation.
                b = bytearray(elf)
                b[off + 8] = 9
                seeds["o2-cie-version"] = seed(FULL, dump, whole, bytes(b))
                b = bytearray(elf)
                b[off + 9:off + 11] = b"zQ"
                seeds["o2-cie-augmentation"] = seed(FULL, dump, whole,
                                                    bytes(b))
                b = bytearray(elf)
                cie_len = struct.unpack_from("<I", b, off)[0]
                struct.pack_into("<I", b, off + 4 + cie_len, 0x7ffffff0)
                seeds["o2-fde-length"] = seed(FULL, dump, whole, bytes(b))
                # Registers that point nowhere near the stack or the code.
                r = bytearray(dump)
                struct.pack_into("<Q", r, 7 * 8, 0x10)
                seeds["o2-sp-low"] = seed(FULL, bytes(r), whole, elf)
        dbg = os.path.join(tmp, "dbgframe")
        secs = sections(dbg)
        if ".debug_frame" in secs:
            off, size = secs[".debug_frame"]
            elf = open(dbg, "rb").read()
            dump = subprocess.run([dbg], check=True,
                                  stdout=subprocess.PIPE).stdout
            for k in range(3):
                seeds["dbgframe-flip-%d" % k] = seed(
                    FULL, dump, len(dump) - 136,
                    flip(elf, off, size, 1 + 4 * k, rnd))
    for name, data in sorted(seeds.items()):
        with open(os.path.join(OUT, "seed-" + name), "wb") as f:
            f.write(data)
    print("%d seeds in %s, %d bytes" % (len(seeds), OUT,
                                        sum(len(d) for d in seeds.values())))


if __name__ == "__main__":
    main()
