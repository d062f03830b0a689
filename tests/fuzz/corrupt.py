#!/usr/bin/env python3
"""corrupt.py - derive broken inputs from good ones, deterministically.

    corrupt.py IN OUT OP [ARG...]

ELF operations (ELF64 little-endian inputs):
    trunc FRACTION             keep the first FRACTION (0..1) of the file
    truncbytes N               keep the first N bytes
    flip SECTION SEED COUNT    XOR COUNT random bytes of SECTION's data
    zero SECTION               zero SECTION's data
    shdr FIELD VALUE [NAME]    set a section header field (name, type,
                               flags, addr, offset, size, link, info,
                               addralign, entsize) of section NAME (all
                               sections when omitted)
    ehdr FIELD VALUE           set an ELF header field (shoff, shnum,
                               shstrndx, phoff, phnum, shentsize)

Table operations (libsym table format, docs/table-format.md):
    thdr FIELD VALUE           set a header field by name
    tarr ARRAY FIELD VALUE [STRIDE]
                               set FIELD of every STRIDE-th record of
                               ARRAY (scopes, leaves, funcs, syms, addrs,
                               files, saddrs, sidx); VALUE "self" = the record's index
    treverse [ARRAY]           reverse an address array (addrs, the
                               default, or saddrs)
    tstrnonul                  make the last string byte non-NUL

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

# struct symt_header of libsym/format.h (128 bytes): magic, 4 u32, 3 u64,
# 19 u32, padding.
THDR = struct.Struct("<8sIIIIQQQ" + "I" * 19)
T_FIELDS = ["magic", "format", "bom", "flags", "size", "base", "start",
            "end", "n_ranges", "off_addrs", "off_leaves", "n_scopes",
            "off_scopes", "n_funcs", "off_funcs", "n_files", "off_files",
            "n_syms", "off_syms", "off_strings", "strings_size",
            "n_sranges", "off_saddrs", "off_sidx", "crc", "converter",
            "elfutils"]
T_CRC_AT = 8 + 4 * 4 + 3 * 8 + 4 * 16  # offset of the crc field
# array: (count field, offset field, record fields of u32)
T_ARRAYS = {
    "addrs": ("n_ranges", "off_addrs", ["addr"]),
    "leaves": ("n_ranges", "off_leaves",
               ["scope", "file", "line", "column", "discriminator"]),
    "scopes": ("n_scopes", "off_scopes",
               ["parent", "func", "call_file", "call_line", "call_column",
                "entry"]),
    "funcs": ("n_funcs", "off_funcs",
              ["name", "linkage", "demangled", "decl_file", "decl_line"]),
    "files": ("n_files", "off_files", ["name"]),
    "syms": ("n_syms", "off_syms",
             ["addr", "size", "name", "demangled", "file", "flags"]),
    "saddrs": ("n_sranges", "off_saddrs", ["addr"]),
    "sidx": ("n_sranges", "off_sidx", ["sym"]),
}


def thdr(b):
    return dict(zip(T_FIELDS, THDR.unpack_from(b, 0)))


def main():
    src, dst, op, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    b = bytearray(open(src, "rb").read())
    if op == "trunc":
        b = b[:int(len(b) * float(args[0]))]
    elif op == "truncbytes":
        b = b[:num(args[0])]
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
        h[T_FIELDS.index(args[0])] = num(args[1]) & (
            0xffffffffffffffff if args[0] in ("base", "start", "end")
            else 0xffffffff)
        THDR.pack_into(b, 0, *h)
    elif op == "tarr":
        h = thdr(b)
        cnt_f, off_f, fields = T_ARRAYS[args[0]]
        fi = fields.index(args[1])
        stride = num(args[3]) if len(args) > 3 else 1
        n, off = h[cnt_f], h[off_f]
        rec = 4 * len(fields)
        for i in range(0, n, stride):
            at = off + i * rec + 4 * fi
            if at + 4 > len(b):
                break
            v = i if args[2] == "self" else num(args[2])
            struct.pack_into("<I", b, at, v & 0xffffffff)
    elif op == "treverse":
        h = thdr(b)
        cnt_f, off_f, _ = T_ARRAYS[args[0] if args else "addrs"]
        n, off = h[cnt_f], h[off_f]
        a = list(struct.unpack_from("<%dI" % n, b, off))
        struct.pack_into("<%dI" % n, b, off, *reversed(a))
    elif op == "tstrnonul":
        h = thdr(b)
        b[h["off_strings"] + h["strings_size"] - 1] = ord("x")
    else:
        sys.exit("corrupt.py: unknown operation " + op)
    # Table corruptions keep a valid checksum, so that sym_table_verify()
    # gets past it to the structural checks (fixcrc=0 to leave it stale).
    if op.startswith("t") and op != "trunc" and op != "truncbytes" and \
            os.environ.get("fixcrc", "1") == "1" and len(b) >= 128:
        struct.pack_into("<I", b, T_CRC_AT, 0)
        end = min(len(b), thdr(b)["size"])
        struct.pack_into("<I", b, T_CRC_AT, zlib.crc32(bytes(b[:end])))
    open(dst, "wb").write(bytes(b))


if __name__ == "__main__":
    main()
