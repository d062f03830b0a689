#!/usr/bin/env python3
"""elf-bomb.py - write a decompression bomb from a small ELF64 file.

    elf-bomb.py IN OUT KIND SIZE [SECTION...]

Each SECTION (default .debug_info) of IN gets new contents, appended at
the end of OUT: an Elf64_Chdr of type KIND (zstd or zlib) declaring
SIZE bytes, then a real KIND stream of SIZE zero bytes, so the section
decompresses to exactly what it declares (zstd: about 4 bytes per
128 KiB, with the zstd tool; zlib: about 1 byte per KiB, deflate's
limit).  SIZE takes a K, M or G suffix (powers of 1024).  The section
header gets SHF_COMPRESSED, the new offset and size; nothing else
changes, so the file is still a valid ELF with its build ID.
"""
import struct
import subprocess
import sys
import zlib

SHF_COMPRESSED = 0x800
KINDS = {"zlib": 1, "zstd": 2}


def size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if s[-1:].upper() in mult:
        return int(s[:-1]) * mult[s[-1:].upper()]
    return int(s)


def zeros_stream(kind, n):
    if kind == "zstd":
        # zstd --no-check: no checksum needed; -1 is fast on zeros.
        p = subprocess.run(["sh", "-c", "head -c %d /dev/zero | zstd -q -1 -c" % n],
                           check=True, stdout=subprocess.PIPE)
        return p.stdout
    z = zlib.compressobj(9)
    out = []
    block = bytes(1 << 20)
    left = n
    while left:
        k = min(left, len(block))
        out.append(z.compress(block[:k]))
        left -= k
    out.append(z.flush())
    return b"".join(out)


def main():
    if len(sys.argv) < 5 or sys.argv[3] not in KINDS:
        sys.exit(__doc__)
    src, dst, kind, n = sys.argv[1], sys.argv[2], sys.argv[3], size(sys.argv[4])
    names = sys.argv[5:] or [".debug_info"]
    img = bytearray(open(src, "rb").read())
    if img[:4] != b"\x7fELF" or img[4] != 2 or img[5] != 1:
        sys.exit("elf-bomb: %s: not a little-endian ELF64 file" % src)
    shoff, = struct.unpack_from("<Q", img, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", img, 0x3a)
    stroff = struct.unpack_from("<Q", img, shoff + shstrndx * shentsize + 0x18)[0]
    stream = zeros_stream(kind, n)
    data = struct.pack("<IIQQ", KINDS[kind], 0, n, 1) + stream
    done = set()
    for i in range(shnum):
        h = shoff + i * shentsize
        name_off, = struct.unpack_from("<I", img, h)
        end = img.index(b"\0", stroff + name_off)
        name = img[stroff + name_off:end].decode()
        if name not in names:
            continue
        while len(img) % 8:
            img.append(0)
        off = len(img)
        img += data
        flags, = struct.unpack_from("<Q", img, h + 8)
        struct.pack_into("<Q", img, h + 8, flags | SHF_COMPRESSED)
        struct.pack_into("<QQ", img, h + 0x18, off, len(data))
        struct.pack_into("<Q", img, h + 0x30, 1)
        done.add(name)
    if done != set(names):
        sys.exit("elf-bomb: %s: no section %s" % (src, ", ".join(sorted(set(names) - done))))
    open(dst, "wb").write(img)


main()
