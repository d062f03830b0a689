#!/usr/bin/python3
"""make-core-seeds.py - seeds of fuzz-core from a real core file.

usage: make-core-seeds.py CORE OUTDIR

A core is mostly memory; the seeds keep its ELF header, program headers
and notes whole, and cut every PT_LOAD to its first 64 bytes (laid out
one after another, offsets rewritten), so that each stays under
fuzz.mk's FUZZ_MAX_LEN.  Written: core-small (that), core-trunc (cut in
the middle of the loads), core-badnote (the second note's descsz made
huge), core-badphdr (e_phnum larger than the headers there are).
"""
import struct
import sys

core = open(sys.argv[1], "rb").read()
out = sys.argv[2]
phoff, = struct.unpack_from("<Q", core, 32)
phnum, = struct.unpack_from("<H", core, 56)
phdrs = [list(struct.unpack_from("<IIQQQQQQ", core, phoff + 56 * i))
         for i in range(phnum)]
body = bytearray(core[:64])
struct.pack_into("<Q", body, 32, 64)
hdr_at = len(body)
body += bytes(56 * phnum)
chunks = []
pos = len(body)
note_at = None
for ph in phdrs:
    typ, off, filesz = ph[0], ph[2], ph[5]
    keep = filesz if typ == 4 else min(filesz, 64)
    data = core[off:off + keep]
    if typ == 4 and note_at is None:
        note_at = pos
    ph[2] = pos
    ph[5] = keep
    chunks.append(data)
    pos += len(data)
for i, ph in enumerate(phdrs):
    struct.pack_into("<IIQQQQQQ", body, hdr_at + 56 * i, *ph)
for c in chunks:
    body += c
small = bytes(body)
open(out + "/core-small", "wb").write(small)
open(out + "/core-trunc", "wb").write(small[:len(small) - 200])
bad = bytearray(small)
namesz, descsz = struct.unpack_from("<II", bad, note_at)
second = note_at + 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
struct.pack_into("<I", bad, second + 4, 0xfffffff0)
open(out + "/core-badnote", "wb").write(bytes(bad))
bad = bytearray(small)
struct.pack_into("<H", bad, 56, 0xffff)
open(out + "/core-badphdr", "wb").write(bytes(bad))
