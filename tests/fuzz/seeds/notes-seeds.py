#!/usr/bin/env python3
"""notes-seeds.py - write the seeds of tests/fuzz/corpus/fuzz-notes/.

    python3 tests/fuzz/seeds/notes-seeds.py      (from the project root)

Rewrites every seed-* file there and keeps the others (crash-*, found-*).
Each input is fuzz-notes.c's: byte 0 (bit 0: 8-byte notes; bits 1-2: a
hex buffer of 129, 41, 1 or 0 bytes), then a block of notes.  The seeds
are blocks made here, next to each case of the parser (4- and 8-byte
notes, IDs of 16, 20, 32 and 64 bytes, the notes it skips, sizes that
run past the end), and the PT_NOTE segments of /usr/bin/ls when there is
one.
"""
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "fuzz-notes")

NT_GNU_ABI_TAG, NT_GNU_BUILD_ID, NT_GNU_PROPERTY = 1, 3, 5
ID16 = bytes(range(0x10, 0x20))
ID20 = bytes.fromhex("0123456789abcdef0123456789abcdef01234567")
ID32 = bytes(range(0xa0, 0xc0))


def pad(b, align):
    return b + b"\0" * (-len(b) % align)


def note(name, ntype, desc, align=4, namesz=None, descsz=None):
    """One note: 12-byte header, name and descriptor each padded."""
    namesz = len(name) if namesz is None else namesz
    descsz = len(desc) if descsz is None else descsz
    head = struct.pack("<III", namesz, descsz, ntype)
    # The descriptor starts at header + name rounded up (gABI, glibc).
    return pad(pad(head + name, align) + desc, align)


def flags(align=4, hexlen=129):
    return bytes([(1 if align == 8 else 0) |
                  ({129: 0, 41: 1, 1: 2, 0: 3}[hexlen] << 1)])


def pt_notes(path):
    """The PT_NOTE segments of an ELF64 little-endian file: (align, bytes)."""
    try:
        with open(path, "rb") as f:
            img = f.read()
    except OSError:
        return []
    if img[:4] != b"\x7fELF" or img[4] != 2 or img[5] != 1:
        return []
    phoff, = struct.unpack_from("<Q", img, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", img, 0x36)
    segs = []
    for i in range(phnum):
        p_type, _, p_off, _, _, p_filesz, _, p_align = struct.unpack_from(
            "<IIQQQQQQ", img, phoff + i * phentsize)
        if p_type == 4:
            segs.append((p_align, img[p_off:p_off + p_filesz]))
    return segs


GOID = (b"D12GtFoGzq5Tiei9ye1s/X_K143NeEXtCP_-LaJFc/"
        b"RWw0TPlG5cpuO4v5Q4Wf/6IIrSUuAJhYI2ODMDIFm")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.startswith("seed-"):
            os.unlink(os.path.join(OUT, name))
    abi = note(b"GNU\0", NT_GNU_ABI_TAG, struct.pack("<IIII", 0, 3, 2, 0))
    prop8 = note(b"GNU\0", NT_GNU_PROPERTY, bytes(12), align=8)
    seeds = {
        "seed-abi-then-id": flags() + abi + note(b"GNU\0", 3, ID20),
        "seed-id-hexbuf-41": flags(hexlen=41) + note(b"GNU\0", 3, ID20),
        "seed-sha256-hexbuf-41": flags(hexlen=41) + note(b"GNU\0", 3, ID32),
        "seed-id-hexbuf-1": flags(hexlen=1) + note(b"GNU\0", 3, ID16),
        "seed-id-hexbuf-0": flags(hexlen=0) + note(b"GNU\0", 3, ID16),
        "seed-8-property-then-id": flags(8) + prop8 +
        note(b"GNU\0", 3, ID20, align=8),
        "seed-8-read-as-4": flags(4) + prop8 + note(b"GNU\0", 3, ID20,
                                                    align=8),
        "seed-skipped-then-md5": flags() +
        note(b"Go\0\0", 3, ID20) + note(b"GNU\0", 4, ID20) +
        note(b"GNU\0", 3, bytes(65)) + note(b"GNU\0", 3, b"") +
        note(b"GNU\0", 3, ID16),
        "seed-id-64": flags() + note(b"GNU\0", 3, bytes(range(64))),
        "seed-cut-in-id": flags() + note(b"GNU\0", 3, ID20)[:30],
        "seed-no-padding-at-end": flags() + note(b"GNU\0", 3, ID20[:19])[:35],
        "seed-huge-namesz": flags() + note(b"GNU\0", 3, ID20,
                                           namesz=0xffffffff),
        "seed-huge-descsz-8": flags(8) + note(b"GNU\0", 3, ID20, align=8,
                                              descsz=0xfffffff0),
        "seed-empty": flags(),
        # Go's build ID note (owner "Go", type 4, an 83-byte ID as Go
        # 1.19 writes it), alone, before a GNU one, cut, and too long.
        "seed-go-note": flags() + note(b"Go\0\0", 4, GOID),
        "seed-go-then-gnu": flags() + note(b"Go\0\0", 1, b"pkg") +
        note(b"Go\0\0", 4, GOID) + note(b"GNU\0", 3, ID20),
        "seed-go-cut": flags() + note(b"Go\0\0", 4, GOID)[:60],
        "seed-go-too-long": flags() + note(b"Go\0\0", 4, bytes(1025)) +
        note(b"Go\0\0", 4, GOID),
    }
    for i, (align, seg) in enumerate(pt_notes("/usr/bin/ls")):
        seeds["seed-ls-pt-note-%d" % i] = flags(8 if align == 8 else 4) + seg
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
