#!/usr/bin/env python3
"""corrupt.py - derive broken inputs from good ones, deterministically.

    corrupt.py IN OUT OP [ARG...]

ELF operations (ELF64 little-endian inputs):
    trunc FRACTION             keep the first FRACTION (0..1) of the file
    truncbytes N               keep the first N bytes
    setbyte OFF VALUE          set the byte at OFF
    flip SECTION SEED COUNT    XOR COUNT random bytes of SECTION's data
    zero SECTION               zero SECTION's data
    shdr FIELD VALUE [NAME]    set a section header field (name, type,
                               flags, addr, offset, size, link, info,
                               addralign, entsize) of section NAME (all
                               sections when omitted)
    ehdr FIELD VALUE           set an ELF header field (shoff, shnum,
                               shstrndx, phoff, phnum, shentsize)

Table operations (libsym table format 3, docs/table-format.md):
    thdr FIELD VALUE           set a header field by name (the packed
                               arrays' as ARRAY_count, ARRAY_off,
                               ARRAY_bytes, ARRAY_w0..ARRAY_w7)
    tarr ARRAY FIELD VALUE [STRIDE]
                               set FIELD of every STRIDE-th record of the
                               packed ARRAY (scopes, funcs, files, syms,
                               sranges), masked to the field's bytes;
                               VALUE "self" = the record's index, "max" =
                               all ones
    tblock FIELD VALUE [STRIDE]
                               set the width FIELD (addr, scope, file,
                               line, column, disc) in the header of every
                               STRIDE-th range block (6 bits)
    tleaf FIELD VALUE [STRIDE] set the code FIELD (scope, file, line,
                               column, disc) of every STRIDE-th range,
                               masked to its block's width ("max": all
                               ones)
    treverse [ARRAY]           reverse bstart (the default: the range
                               blocks' start addresses) or the records of
                               sranges
    tstrnonul                  make the last string byte non-NUL (plain
                               strings)
    tstrplain                  store compressed strings plain (inflated
                               with the zstd command), the demangled
                               names moved after them

Both:
    bytes SEED COUNT [START]   XOR COUNT random bytes from offset START

Random choices come from random.Random(SEED), so the output is the same
on every run.  Values accept 0x hex.
"""
import os
import random
import struct
import zlib
import sys


def num(s):
    return int(s, 0)


# --- ELF64 ---------------------------------------------------------------

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
SHDR = struct.Struct("<IIQQQQIIQQ")
SH_FIELDS = ["name", "type", "flags", "addr", "offset", "size", "link",
             "info", "addralign", "entsize"]


def sections(b):
    e = EHDR.unpack_from(b, 0)
    shoff, shentsize, shnum, shstrndx = e[6], e[11], e[12], e[13]
    shs = [list(SHDR.unpack_from(b, shoff + i * shentsize))
           for i in range(shnum)]
    strtab = shs[shstrndx]
    out = []
    for i, sh in enumerate(shs):
        o = strtab[4] + sh[0]
        name = b[o:b.index(b"\0", o)].decode()
        out.append((i, name, sh, shoff + i * shentsize))
    return out


def find(b, name):
    for s in sections(b):
        if s[1] == name:
            return s
    sys.exit("corrupt.py: no section " + name)


# --- tables --------------------------------------------------------------

# struct symt_header of libsym/format.h (272 bytes, format 9: 7 block
# bases, packed fields in bits, the demangled names' blob, both string
# blobs plain or compressed, the symbol kinds' packed array, then the
# compressed sizes of the block index and of each packed array, 0 for
# plain).
PACKED = ["scopes", "funcs", "files", "syms", "sranges"]
T_BASES = 7
THDR = struct.Struct("<8sIIIIQQQIII" + "IIIIII" + "B7B" + "III8B" * 5 +
                     "II" + "IIII" + "II" + "III8B" + "I" + "6I")
T_FIELDS = (["magic", "format", "bom", "flags", "size", "base", "start",
             "end", "crc", "converter", "elfutils", "n_ranges", "n_blocks",
             "off_bstart", "off_boff", "off_blocks", "blocks_size",
             "block_shift"] + ["bw%d" % i for i in range(T_BASES)] +
            [a + f for a in PACKED for f in
             ["_count", "_off", "_bytes"] + ["_w%d" % i for i in range(8)]] +
            ["off_strings", "strings_size", "off_dstrings", "dstrings_size",
             "dstrings_zbytes", "dstrings_shift", "strings_zbytes",
             "strings_shift"] +
            ["skinds" + f for f in
             ["_count", "_off", "_bytes"] + ["_w%d" % i for i in range(8)]] +
            ["zindex"] + ["zrec%d" % i for i in range(6)])
T_CRC_AT = 8 + 4 * 4 + 3 * 8  # offset of the crc field
T_WIDE = ("base", "start", "end")
T_BYTE = tuple(f for f in T_FIELDS if f == "block_shift" or
               f.startswith("bw") or "_w" in f)
# Fields of the packed arrays, in order (enum symt_*_field).
T_ARRAYS = {
    "scopes": ["parent", "func", "call_file", "call_line", "call_column",
               "entry", "flags"],
    "funcs": ["name", "linkage", "demangled", "decl_file", "decl_line",
              "outer", "flags", "eu"],
    "files": ["name", "rel"],
    "syms": ["addr", "size", "name", "demangled", "kind"],
    "skinds": ["file", "flags"],
    "sranges": ["addr", "sym", "gnu", "llvm"],
}
BLOCK_FIELDS = ["addr", "scope", "file", "line", "column", "disc"]
# The packed arrays in the order of zrec[] (enum symt_rec).
T_REC = ["scopes", "funcs", "files", "syms", "sranges", "skinds"]


def thdr(b):
    return dict(zip(T_FIELDS, THDR.unpack_from(b, 0)))


def strings_plain(b):
    """The table @b with its compressed strings stored plain: the areas
    after them (the demangled names, the last) move, the size follows."""
    import subprocess
    h = thdr(b)
    if not h["strings_zbytes"]:
        return b
    o = h["off_strings"]
    n = (h["strings_size"] + (1 << h["strings_shift"]) - 1) >> \
        h["strings_shift"]
    area = bytes(b[o + 4 * (n + 1):o + h["strings_zbytes"]])
    plain = subprocess.run(["zstd", "-q", "-d", "-c"], input=area,
                           capture_output=True, check=True).stdout
    if len(plain) != h["strings_size"]:
        sys.exit("corrupt.py: the strings inflate to %d bytes, not %d" %
                 (len(plain), h["strings_size"]))
    dlen = h["dstrings_zbytes"] or h["dstrings_size"]
    d = bytes(b[h["off_dstrings"]:h["off_dstrings"] + dlen])
    nd = (o + len(plain) + 7) & ~7
    size = (nd + dlen + 7) & ~7
    out = bytearray(size)
    out[:o] = b[:o]
    out[o:o + len(plain)] = plain
    out[nd:nd + dlen] = d
    f = list(THDR.unpack_from(out, 0))
    for k, v in (("off_dstrings", nd), ("size", size),
                 ("strings_zbytes", 0), ("strings_shift", 0)):
        f[T_FIELDS.index(k)] = v
    THDR.pack_into(out, 0, *f)
    return out


def getbits(b, at, pos, w):
    v = 0
    for i in range(w):
        p = pos + i
        v |= ((b[at + p // 8] >> (p % 8)) & 1) << i
    return v


def setbits(b, at, pos, w, v):
    for i in range(w):
        p = pos + i
        if (v >> i) & 1:
            b[at + p // 8] |= 1 << (p % 8)
        else:
            b[at + p // 8] &= ~(1 << (p % 8)) & 0xff


def plain_records(h, arr):
    """Exit unless the packed array @arr (or the block index) of the table
    header @h is stored plain: record corruptions need the -plainrec
    tables of gen-table-seeds."""
    z = h["zindex"] if arr == "index" else h["zrec%d" % T_REC.index(arr)]
    if z:
        sys.exit("corrupt.py: %s is stored as columns (use a -plainrec "
                 "table)" % arr)


def blocks(b, h):
    """(byte offset, ranges, widths, header bits) of each range block."""
    plain_records(h, "index")
    out = []
    hb = 6 * 6 + sum(h["bw%d" % i] for i in range(T_BASES))
    for i in range(h["n_blocks"]):
        boff, = struct.unpack_from("<I", b, h["off_boff"] + 4 * i)
        at = h["off_blocks"] + boff
        k = min(1 << h["block_shift"], h["n_ranges"] - (i << h["block_shift"]))
        w = [getbits(b, at, 6 * j, 6) for j in range(6)]
        out.append((at, k, w, hb))
    return out


def main():
    src, dst, op, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    b = bytearray(open(src, "rb").read())
    if op == "trunc":
        b = b[:int(len(b) * float(args[0]))]
    elif op == "truncbytes":
        b = b[:num(args[0])]
    elif op == "setbyte":
        b[num(args[0])] = num(args[1]) & 0xff
    elif op == "bytes":
        rnd = random.Random(num(args[0]))
        start = num(args[2]) if len(args) > 2 else 0
        for _ in range(num(args[1])):
            b[rnd.randrange(start, len(b))] ^= rnd.randrange(1, 256)
    elif op in ("flip", "zero"):
        _, _, sh, _ = find(b, args[0])
        off, size = sh[4], sh[5]
        if op == "zero":
            b[off:off + size] = bytes(size)
        else:
            rnd = random.Random(num(args[1]))
            for _ in range(num(args[2])):
                b[off + rnd.randrange(size)] ^= rnd.randrange(1, 256)
    elif op == "shdr":
        field, value = SH_FIELDS.index(args[0]), num(args[1])
        for _, name, sh, at in sections(b):
            if len(args) > 2 and name != args[2]:
                continue
            sh[field] = value & (0xffffffff if field in (0, 1, 6, 7)
                                 else 0xffffffffffffffff)
            SHDR.pack_into(b, at, *sh)
    elif op == "ehdr":
        idx = {"phoff": 5, "shoff": 6, "phnum": 10, "shentsize": 11,
               "shnum": 12, "shstrndx": 13}[args[0]]
        e = list(EHDR.unpack_from(b, 0))
        e[idx] = num(args[1])
        EHDR.pack_into(b, 0, *e)
    elif op == "thdr":
        h = list(THDR.unpack_from(b, 0))
        f = args[0]
        h[T_FIELDS.index(f)] = num(args[1]) & (
            0xffffffffffffffff if f in T_WIDE else 0xff if f in T_BYTE
            else 0xffffffff)
        THDR.pack_into(b, 0, *h)
    elif op == "tarr":
        h = thdr(b)
        arr, fields = args[0], T_ARRAYS[args[0]]
        plain_records(h, arr)
        fi = fields.index(args[1])
        stride = num(args[3]) if len(args) > 3 else 1
        ws = [h["%s_w%d" % (arr, i)] for i in range(len(fields))]
        rec = (sum(ws) + 7) // 8 * 8  # whole bytes (format 6)
        n, off = h[arr + "_count"], h[arr + "_off"]
        for i in range(0, n, stride):
            pos = i * rec + sum(ws[:fi])  # bits (format 6)
            if off + (pos + ws[fi] + 7) // 8 > len(b):
                break
            v = (i if args[2] == "self" else (1 << 64) - 1
                 if args[2] == "max" else num(args[2]))
            setbits(b, off, pos, ws[fi], v & ((1 << ws[fi]) - 1))
    elif op == "tblock":
        h = thdr(b)
        fi = BLOCK_FIELDS.index(args[0])
        stride = num(args[2]) if len(args) > 2 else 1
        for i, (at, _, _, _) in enumerate(blocks(b, h)):
            if i % stride == 0 and at + 8 <= len(b):
                setbits(b, at, 6 * fi, 6, num(args[1]) & 63)
    elif op == "tleaf":
        h = thdr(b)
        fi = BLOCK_FIELDS.index(args[0])
        stride = num(args[2]) if len(args) > 2 else 1
        r = 0
        for at, k, w, hb in blocks(b, h):
            lbits = sum(w[1:])
            leaf_at = hb + (k - 1) * w[0]
            for j in range(k):
                if r % stride == 0:
                    pos = leaf_at + j * lbits + sum(w[1:fi])
                    v = ((1 << w[fi]) - 1 if args[1] == "max"
                         else num(args[1]) & ((1 << w[fi]) - 1))
                    if at + (pos + w[fi] + 7) // 8 <= len(b):
                        setbits(b, at, pos, w[fi], v)
                r += 1
    elif op == "treverse":
        h = thdr(b)
        what = args[0] if args else "bstart"
        plain_records(h, "index" if what == "bstart" else what)
        if what == "bstart":
            n, off = h["n_blocks"], h["off_bstart"]
            a = list(struct.unpack_from("<%dI" % n, b, off))
            struct.pack_into("<%dI" % n, b, off, *reversed(a))
        else:
            rec = (sum(h["%s_w%d" % (what, i)] for i in range(8)) + 7) // 8
            n, off = h[what + "_count"], h[what + "_off"]
            recs = [bytes(b[off + i * rec:off + (i + 1) * rec])
                    for i in range(n)]
            b[off:off + n * rec] = b"".join(reversed(recs))
    elif op == "tstrnonul":
        h = thdr(b)
        if h["strings_zbytes"]:
            sys.exit("corrupt.py: tstrnonul needs plain strings (tstrplain)")
        b[h["off_strings"] + h["strings_size"] - 1] = ord("x")
    elif op == "tstrplain":
        b = strings_plain(b)
    else:
        sys.exit("corrupt.py: unknown operation " + op)
    # Table corruptions keep a valid checksum, so that sym_table_verify()
    # gets past it to the structural checks (fixcrc=0 to leave it stale).
    if op.startswith("t") and op != "trunc" and op != "truncbytes" and \
            os.environ.get("fixcrc", "1") == "1" and len(b) >= THDR.size:
        struct.pack_into("<I", b, T_CRC_AT, 0)
        end = min(len(b), thdr(b)["size"])
        struct.pack_into("<I", b, T_CRC_AT, zlib.crc32(bytes(b[:end])))
    open(dst, "wb").write(bytes(b))


if __name__ == "__main__":
    main()
