#!/usr/bin/env python3
"""make-gopclntab-seeds.py - the seeds of fuzz-gopclntab.

  tests/fuzz/make-gopclntab-seeds.py     (from the project root)

Writes tests/fuzz/corpus/fuzz-gopclntab/seed-*: small Go function tables
written here from the format as Go's runtime reads it (src/runtime/
symtab.go, runtime2.go; libsym's reader is not used), in the input shape
fuzz-gopclntab.c reads (u32 table length, the table, the module's data):
one of each magic (Go 1.2-1.15, 1.16, 1.18, 1.20; 64-bit little-endian,
and a 1.18 one 32-bit big-endian), each with two functions, two files,
and in the first function an inline tree two deep; then cuts of them
(the header only, the function table half there, the data missing) and a
wrong magic.  Stdlib only.
"""

import os
import struct

TAB_ADDR, DATA_ADDR, TEXT_ADDR = 0x4c0000, 0x600000, 0x401000
TREE_OFF = 0x400                # the inline tree, from the data's start
MAGIC = {12: 0xfffffffb, 116: 0xfffffffa, 118: 0xfffffff0, 120: 0xfffffff1}

# name, size, file per pc run, (line, length) runs, inline index runs,
# (SP delta, length) runs (pcsp), the _func flag (1.17+: 1 TOPFRAME)
FUNCS = [
    ("main.outer", 0x40, [(0, 0x40)],
     [(10, 8), (20, 8), (30, 0x20), (11, 0x10)],
     [(-1, 8), (0, 8), (1, 0x20), (-1, 0x10)],
     [(0, 4), (0x18, 0x38), (0, 8)], 0),
    ("main.leaf", 0x20, [(1, 0x20)], [(5, 0x20)], None, [(0, 0x20)], 1),
]
INLINE = [("main.mid", 0x4), ("main.inner", 0x8)]   # name, parentPc
FILES = ["/src/a.go", "/src/b.go"]


def uvarint(v):
    out = b""
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def pcvalue(runs, quantum=1):
    out, prev = b"", -1
    for val, length in runs:
        d = val - prev
        zz = ((-d - 1) << 1) | 1 if d < 0 else d << 1
        out += uvarint(zz) + uvarint(length // quantum)
        prev = val
    return out + b"\0"


def table(ver, be=False, psz=8):
    e = ">" if be else "<"
    P = "Q" if psz == 8 else "I"

    def u32(v):
        return struct.pack(e + "I", v & 0xffffffff)

    def ptr(v):
        return struct.pack(e + P, v)

    hdr = struct.pack(e + "I", MAGIC[ver]) + bytes([0, 0, 1, psz])
    words = {12: 1, 116: 7}.get(ver, 8)
    strings = b""

    def add_str(s):
        nonlocal strings
        off = len(strings)
        strings += s.encode() + b"\0"
        return off
    # Regions, each at an offset from the table's start.
    names = [add_str(f[0]) for f in FUNCS]
    inl_names = [add_str(n) for n, _ in INLINE]
    funcname = strings
    filetab = b""
    file_offs = []
    for f in FILES:
        file_offs.append(len(filetab))
        filetab += f.encode() + b"\0"
    pctab = b"\0"
    pcs = []
    for name, size, files, lines, inl, sp, _ in FUNCS:
        fv = [(v if ver != 12 else v + 1, n) for v, n in files]
        t = {}
        for key, runs in (("file", fv), ("line", lines), ("inl", inl),
                          ("sp", sp)):
            if runs:
                t[key] = len(pctab)
                pctab += pcvalue(runs)
        pcs.append(t)
    fsz = 4 if ver >= 118 else psz
    nf = len(FUNCS)
    base = len(hdr) + words * psz
    if ver == 12:
        # Everything relative to the table: header, functab, file table
        # offset, then strings, pc tables, file table, _func records.
        ftab_len = (2 * nf + 1) * psz + 4
        str_off = base + ftab_len
        pct_off = str_off + len(funcname) + len(filetab)
        ftb_off = pct_off + len(pctab)
        ftb = u32(len(FILES) + 1) + b"".join(
            u32(str_off + len(funcname) + o) for o in file_offs)
        rec_off = ftb_off + len(ftb)
        rec_off += -rec_off % psz
        name_base, pc_base = str_off, pct_off
    else:
        name_base = base
        cu_off = name_base + len(funcname)
        cutab = b"".join(u32(o) for o in file_offs)
        ft_off = cu_off + len(cutab)
        pc_base = ft_off + len(filetab)
        pcln_off = pc_base + len(pctab)
        pcln_off += -pcln_off % psz
        ftab_len = (2 * nf + 1) * fsz
    # _func records.
    recs, rec_at = b"", []
    hdr_len = {12: psz + 32, 116: psz + 36, 118: 40, 120: 44}[ver]
    inl_fd = {12: 4}.get(ver, 3)
    entry = TEXT_ADDR
    entries = []
    for i, (name, size, files, lines, inl, _, flag) in enumerate(FUNCS):
        entries.append(entry)
        at = (rec_off if ver == 12 else pcln_off + ftab_len) + len(recs)
        pad = -at % psz
        recs += bytes(pad)
        at += pad
        rec_at.append(at)
        r = ptr(entry) if ver < 118 else u32(entry - TEXT_ADDR)
        nameoff = names[i] if ver != 12 else name_base + names[i]
        # pc-table offsets: from the pctab region, or (1.2) the table.
        t = {k: v + (pc_base if ver == 12 else 0) for k, v in pcs[i].items()}
        npcdata = 3 if inl else 2
        nfd = inl_fd + 1 if inl else 0
        r += u32(nameoff) + u32(0) + u32(0) + u32(t["sp"])
        r += u32(t["file"]) + u32(t["line"])
        r += u32(npcdata)
        if ver != 12:
            r += u32(0)                             # cuOffset
        if ver >= 120:
            r += u32(lines[0][0])                   # startLine
        # funcID, flag (before 1.17: padding; 1.2-1.15 has none)
        r += bytes([0, flag if ver != 12 else 0, 0, nfd])
        assert len(r) == hdr_len, (ver, len(r))
        # pcdata: UnsafePoint, StackMapIndex (none), InlTreeIndex.
        r += u32(0) + u32(0) + (u32(t["inl"]) if inl else b"")
        if nfd:
            if ver >= 118:
                # From go:func.*, which is where the tree starts.
                r += b"".join(u32(0 if k == inl_fd else 0xffffffff)
                              for k in range(nfd))
            else:
                if (at + len(r)) % psz:
                    r += bytes(psz - (at + len(r)) % psz)
                r += b"".join(ptr(DATA_ADDR + TREE_OFF if k == inl_fd
                                  else 0) for k in range(nfd))
        recs += r
        entry += size
    # The function table.
    ft = b""
    for i in range(nf):
        off = rec_at[i] - (0 if ver == 12 else pcln_off)
        if ver >= 118:
            ft += u32(entries[i] - TEXT_ADDR) + u32(off)
        else:
            ft += ptr(entries[i]) + ptr(off)
    ft += u32(entry - TEXT_ADDR) if ver >= 118 else ptr(entry)
    if ver == 12:
        tab = hdr + ptr(nf) + ft + u32(ftb_off) + funcname + filetab + \
            pctab + ftb
        tab += bytes(rec_off - len(tab)) + recs
    else:
        w = [nf, len(FILES)] + ([TEXT_ADDR] if ver >= 118 else []) + \
            [name_base, cu_off, ft_off, pc_base, pcln_off]
        tab = hdr + b"".join(ptr(x) for x in w) + funcname + cutab + \
            filetab + pctab
        tab += bytes(pcln_off - len(tab)) + ft + recs
    # The data: moduledata first (its pcHeader and funcnametab pointers,
    # gofunc at word 38, 40 from 1.20), then the inline tree.
    data = bytearray(TREE_OFF)
    if ver >= 118:
        idx = 40 if ver >= 120 else 38
        for k, v in ((0, TAB_ADDR), (1, TAB_ADDR + name_base),
                     (idx, DATA_ADDR + TREE_OFF)):
            data[k * psz:(k + 1) * psz] = ptr(v)
    tree = b""
    for k, (n, ppc) in enumerate(INLINE):
        noff = inl_names[k] + (name_base if ver == 12 else 0)
        if ver >= 120:
            tree += bytes(4) + u32(noff) + u32(ppc) + u32(0)
        else:
            tree += struct.pack(e + "hBB", k - 1, 0, 0) + u32(0) + \
                u32(0) + u32(noff) + u32(ppc)
    data += tree
    return bytes(tab), bytes(data)


def seed(tab, data):
    return struct.pack("<I", len(tab)) + tab + data


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    out = os.path.join(root, "tests", "fuzz", "corpus", "fuzz-gopclntab")
    os.makedirs(out, exist_ok=True)
    seeds = {}
    for ver in (12, 116, 118, 120):
        tab, data = table(ver)
        seeds["seed-go%d" % ver] = seed(tab, data)
        seeds["seed-go%d-header" % ver] = seed(tab[:40], b"")
        seeds["seed-go%d-half" % ver] = seed(tab[:len(tab) * 3 // 5], data)
        seeds["seed-go%d-nodata" % ver] = seed(tab, b"")
    tab, data = table(118, be=True, psz=4)
    seeds["seed-go118-be32"] = seed(tab, data)
    tab, data = table(120)
    seeds["seed-badmagic"] = seed(b"\xf2" + tab[1:], data)
    for name, b in sorted(seeds.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(b)
    print("%d seeds in %s" % (len(seeds), out))


if __name__ == "__main__":
    main()
