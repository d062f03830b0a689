#!/usr/bin/env python3
"""mutate-lines.py - damage one byte of a line program in an ELF64 file.

    mutate-lines.py IN OUT CU WHAT

CU is the unit's index in .debug_line (0-based); WHAT one of:
  first-len-0     the length of the first extended opcode becomes 0
  first-len-ff    ... becomes 0xff (a ULEB128 that goes on into the
                  opcode: a reader taking it whole skips hundreds of bytes)
  first-op-undef  the first extended opcode becomes 0x20, which DWARF 5
                  does not define
  last-len-7f     the length of the last extended opcode (the final
                  DW_LNE_end_sequence) becomes 0x7f, past the end
Prints the unit's version, the program's size and the byte changed.
The section must be uncompressed and little-endian, 32-bit DWARF.
"""
import struct
import sys


def uleb(b, p):
    v = shift = 0
    while True:
        x = b[p]
        p += 1
        v |= (x & 0x7f) << shift
        shift += 7
        if not x & 0x80:
            return v, p


def section(img, want):
    shoff, = struct.unpack_from("<Q", img, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", img, 0x3a)
    hdr = [struct.unpack_from("<IIQQQQIIQQ", img, shoff + i * shentsize)
           for i in range(shnum)]
    stro = hdr[shstrndx][4]
    for h in hdr:
        name = img[stro + h[0]:img.index(b"\0", stro + h[0])].decode()
        if name == want:
            if h[2] & 0x800:
                sys.exit("mutate-lines: %s is compressed" % want)
            return h[4], h[4] + h[5]
    sys.exit("mutate-lines: no %s" % want)


def extended_ops(img, cu):
    """(version, program start, end, [offsets of extended-op lengths])"""
    p, end = section(img, ".debug_line")
    for _ in range(cu):
        p += 4 + struct.unpack_from("<I", img, p)[0]
    ulen, ver = struct.unpack_from("<IH", img, p)
    uend = p + 4 + ulen
    q = p + 6 + (2 if ver >= 5 else 0)
    hlen, = struct.unpack_from("<I", img, q)
    prog = q + 4 + hlen
    q += 4 + 1 + (1 if ver >= 4 else 0) + 3
    opbase = img[q]
    oplen = img[q + 1:q + opbase]
    ext, p = [], prog
    while p < uend:
        op = img[p]
        p += 1
        if op == 0:
            at = p
            n, p = uleb(img, p)
            ext.append(at)
            p += n
        elif op == 9:		# DW_LNS_fixed_advance_pc: a uhalf
            p += 2
        elif op < opbase:
            for _ in range(oplen[op - 1]):
                _, p = uleb(img, p)
    return ver, prog, uend, ext


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, dst, cu, what = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    img = bytearray(open(src, "rb").read())
    ver, prog, uend, ext = extended_ops(img, cu)
    if not ext:
        sys.exit("mutate-lines: unit %d has no extended opcode" % cu)
    at, val = {
        "first-len-0": (ext[0], 0),
        "first-len-ff": (ext[0], 0xff),
        "first-op-undef": (ext[0] + 1, 0x20),
        "last-len-7f": (ext[-1], 0x7f),
    }[what]
    print("unit %d: version %d, program %d bytes, byte %d: 0x%02x -> 0x%02x"
          % (cu, ver, uend - prog, at - prog, img[at], val))
    img[at] = val
    open(dst, "wb").write(img)


main()
