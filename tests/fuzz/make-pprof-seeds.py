#!/usr/bin/env python3
"""make-pprof-seeds.py - regenerate tests/fuzz/corpus/fuzz-pprof/seed-*.

    tests/fuzz/make-pprof-seeds.py        (from the project root; needs
                                           bin/sym, built when missing)

Valid seeds are what `sym convert --to pprof` writes for the raw profiles
below (gzipped and plain), plus small hand-encoded foreign profiles (no
"#sym-" comments).  Broken seeds hit each check of the reader: gzip cut
short, corrupt or followed by junk; protobuf cut short; ids 0, duplicate
and dangling; string indexes out of range; value counts; negative values;
labels out of range; bad "#sym-" comments; a stale location checksum;
stacks deeper than SYM_PROF_MAX_FRAMES.  Files not named seed-* are kept
(ext-go-cpu.pb.gz: a real Go CPU profile, see tests/fuzz/README.md).
"""
import gzip
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "fuzz-pprof")

RAW = {
    # The raw profile tests/e2e/t3100-pprof.sh converts too.
    "full": open(os.path.join(ROOT, "tests", "e2e", "data",
                              "full.raw")).read(),
    "samples": """sym-raw 1
period 1
weight-unit samples
map 0 file 7 1000 2000 0 0 abcd /a
stack 5 5 7 7 - p0:10 r0:20
stack 2 9 7 8 kernel p0:30
end
""",
    "empty": """sym-raw 1
period 1000000
weight-unit ns
end
""",
    # Symbolized: every status, inline chains, a symbol-table name, a
    # p and an r frame at one address, a line without a function.
    "symbolized": """sym-raw 1
period 1
weight-unit samples
symbolized 1
map 0 file 7 1000 9000 0 0 abcd /a
map 1 file 7 20000 30000 0 0 - /nobid
map 2 file 7 40000 50000 0 0 dead /gone
fn 1 inl%20one
fn 2 std::vector<int>::push_back(int%20const&)
fn 3 main
fn 4 _start
src 1 /src/a.h
src 2 /src/m.c
loc p0:10 ok i1:1:12:5 i-:1:3:0 2:2:40:3
loc r0:20 ok 3:2:55:1
loc p0:20 ok 3:2:56:0
loc r0:30 ok s4:-:0:0
loc p0:40 nosymbol
loc p1:50 nobuildid
loc p2:60 missing
loc p?:70 unmapped
loc r0:80 error
stack 5 5 7 7 - p0:10 r0:20 r0:30
stack 2 2 7 8 - p0:20 r0:30
stack 1 1 7 7 - p0:40 r0:80
stack 1 1 7 7 - p1:50 p2:60 r?:70
end
""",
    "symbolized-empty": """sym-raw 1
period 1
weight-unit samples
symbolized 1
end
""",
}


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def vint(field, n):
    return varint(field << 3) + varint(n)


def ld(field, data):
    if isinstance(data, str):
        data = data.encode()
    return varint((field << 3) | 2) + varint(len(data)) + data


def packed(field, nums):
    return ld(field, b"".join(varint(n) for n in nums))


def mapping(mid, start, limit, off=0, fname=0, bid=0):
    return ld(3, vint(1, mid) + vint(2, start) + vint(3, limit) +
              vint(4, off) + vint(5, fname) + vint(6, bid))


def location(lid, mid, addr, fn=None, lines=None):
    """@lines: [(function id, line, column)], innermost first."""
    body = vint(1, lid) + vint(2, mid) + vint(3, addr)
    if fn is not None:
        body += ld(4, vint(1, fn) + vint(2, 12))
    for f, l, c in lines or []:
        body += ld(4, vint(1, f) + vint(2, l) + vint(3, c))
    return ld(4, body)


def function(fid, name, fname=0):
    return ld(5, vint(1, fid) + vint(2, name) + vint(4, fname))


def label(key, s=0, num=0):
    return ld(3, vint(1, key) + vint(2, s) + vint(3, num))


def sample(locs, values, labels=b""):
    return ld(2, packed(1, locs) + packed(2, values) + labels)


STRINGS = ["", "samples", "count", "cpu", "nanoseconds", "/bin/app",
           "abcdef01", "[kernel.kallsyms]", "pid", "tid", "main", "app.c",
           "a comment", "sym_flags", "leaf,bogus", "[vdso]"]


def foreign(strings=None, extra=b"", samples=None, types=None):
    """A small foreign profile; @extra is appended (protobuf merges)."""
    strings = STRINGS if strings is None else strings
    body = b""
    for t, u in (types if types is not None else [(1, 2), (3, 4)]):
        body += ld(1, vint(1, t) + vint(2, u))
    if samples is None:
        samples = (sample([3, 1, 2], [5, 50000000],
                          label(8, num=77) + label(9, num=78) +
                          label(13, s=14)) +
                   sample([4, 1], [1, 10000000]))
    body += samples
    body += mapping(1, 0x400000, 0x500000, 0, 5, 6)
    body += mapping(2, 0xffffffff81000000, 0xffffffff82000000, 0, 7)
    body += mapping(3, 0x7ffd0000, 0x7ffd2000, 0, 15)
    body += location(1, 1, 0x401000, fn=1)
    body += location(2, 1, 0x402000)
    body += location(3, 2, 0xffffffff81000010)
    body += location(4, 3, 0x7ffd0100)
    body += function(1, 10, 11)
    for s in strings:
        body += ld(6, s)
    body += vint(9, 1000) + vint(10, 2000000000)
    body += ld(11, vint(1, 3) + vint(2, 4)) + vint(12, 10000000)
    body += vint(13, 12)
    return body + extra


def sym_convert(raw_text, tmp):
    src = os.path.join(tmp, "in.raw")
    dst = os.path.join(tmp, "out.pb.gz")
    with open(src, "w") as f:
        f.write(raw_text)
    subprocess.run([os.path.join(ROOT, "bin", "sym"), "convert", "--to",
                    "pprof", "-o", dst, src], check=True)
    with open(dst, "rb") as f:
        return f.read()


def gz(data):
    return gzip.compress(data, mtime=0)


def main():
    if not os.path.exists(os.path.join(ROOT, "bin", "sym")):
        subprocess.run(["make", "-C", ROOT, "bin/sym"], check=True)
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.startswith("seed-"):
            os.unlink(os.path.join(OUT, name))
    seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in RAW.items():
            g = sym_convert(text, tmp)
            seeds["ours-%s.pb.gz" % name] = g
            seeds["ours-%s.pb" % name] = gzip.decompress(g)
    full_gz = seeds["ours-full.pb.gz"]
    full = seeds["ours-full.pb"]

    seeds["foreign.pb"] = foreign()
    seeds["foreign.pb.gz"] = gz(foreign())
    seeds["foreign-one-type.pb"] = foreign(
        types=[(1, 2)], samples=sample([1, 2], [3]))
    seeds["foreign-default-type.pb"] = foreign() + vint(14, 3)
    seeds["foreign-deep.pb"] = foreign(
        samples=sample([1] + [2] * 1500, [1, 1]))
    # Foreign lines: an inline chain with columns, a function known only
    # by its system name, a negative and a huge line number.
    seeds["foreign-lines.pb"] = foreign(
        extra=location(5, 1, 0x401500, lines=[(2, 7, 3), (1, 99, 1)]) +
        location(6, 1, 0x401600, lines=[(3, -4, 1 << 40)]) +
        function(2, 14, 11) + ld(5, vint(1, 3) + vint(3, 10)) +
        sample([5, 6, 1], [2, 20000000]))
    seeds["foreign-deep-lines.pb"] = foreign(
        extra=location(5, 1, 0x401500, lines=[(1, i, 0)
                                              for i in range(200)]) +
        sample([5], [1, 1]))
    seeds["gzip-two-members.pb.gz"] = gz(full[:len(full) // 2]) + \
        gz(full[len(full) // 2:])

    # Broken gzip.
    seeds["bad-gzip-cut.pb.gz"] = full_gz[:len(full_gz) // 2]
    seeds["bad-gzip-header-only.pb.gz"] = full_gz[:10]
    seeds["bad-gzip-junk.pb.gz"] = full_gz + b"junk"
    flipped = bytearray(full_gz)
    flipped[-6] ^= 0xFF          # the CRC-32 of the trailer
    seeds["bad-gzip-crc.pb.gz"] = bytes(flipped)
    flipped = bytearray(full_gz)
    flipped[len(flipped) // 3] ^= 0x5A
    seeds["bad-gzip-flip.pb.gz"] = bytes(flipped)
    seeds["bad-gzip-concat.pb.gz"] = full_gz + full_gz

    # Broken protobuf.
    for frac in (0.1, 0.5, 0.9):
        seeds["bad-cut-%d.pb" % int(frac * 100)] = full[:int(len(full) * frac)]
    seeds["bad-huge-length.pb"] = b"\x0a\xff\xff\xff\xff\x0f"
    seeds["bad-wire-type.pb"] = b"\x0f\x01"
    seeds["bad-text.pb"] = b"this is not a profile\n"
    seeds["bad-empty.pb"] = b""
    seeds["bad-mapping-id0.pb"] = foreign(extra=mapping(0, 1, 2))
    seeds["bad-mapping-dup.pb"] = foreign(extra=mapping(1, 1, 2))
    seeds["bad-mapping-range.pb"] = foreign(extra=mapping(9, 5, 4))
    seeds["bad-mapping-fname.pb"] = foreign(extra=mapping(9, 1, 2, 0, 999))
    seeds["bad-location-dup.pb"] = foreign(extra=location(2, 1, 5))
    seeds["bad-location-id0.pb"] = foreign(extra=location(0, 1, 5))
    seeds["bad-location-map.pb"] = foreign(extra=location(9, 77, 5))
    seeds["bad-location-fn.pb"] = foreign(extra=location(9, 1, 5, fn=42))
    seeds["bad-function-name.pb"] = foreign(extra=function(2, 1000))
    seeds["bad-sample-loc.pb"] = foreign(extra=sample([99], [1, 1]))
    seeds["bad-sample-nvalues.pb"] = foreign(extra=sample([1], [1]))
    seeds["bad-sample-negative.pb"] = foreign(extra=sample([1], [1, -5]))
    seeds["bad-label-pid-big.pb"] = foreign(
        extra=sample([1], [1, 1], label(8, num=1 << 40)))
    seeds["bad-label-tid-neg.pb"] = foreign(
        extra=sample([1], [1, 1], label(9, num=-3)))
    seeds["bad-label-two-pids.pb"] = foreign(
        extra=sample([1], [1, 1], label(8, num=1) + label(8, num=2)))
    seeds["bad-label-key0.pb"] = foreign(
        extra=sample([1], [1, 1], label(0, num=1)))
    seeds["bad-label-str.pb"] = foreign(
        extra=sample([1], [1, 1], label(13, s=500)))
    seeds["bad-string0.pb"] = foreign(strings=["x"] + STRINGS[1:])
    seeds["bad-no-strings.pb"] = foreign(strings=[])
    seeds["bad-comment-index.pb"] = foreign(extra=vint(13, 400))
    seeds["bad-period.pb"] = foreign(extra=vint(12, -1))
    seeds["bad-duration.pb"] = foreign(extra=vint(10, -1))
    seeds["bad-default-type.pb"] = foreign(extra=vint(14, 300))
    seeds["bad-no-types.pb"] = foreign(types=[])

    # Ours, with its "#sym-" comments broken: they are appended strings
    # and comment indexes (protobuf merges repeated fields).
    def with_comment(text):
        # The string table of ours is the first repeated field 6 run;
        # the new string's index is the count of field-6 entries.
        idx = count_strings(full)
        return full + ld(6, text) + vint(13, idx)

    seeds["bad-sym-map-kind.pb"] = with_comment(
        "#sym-map 1 start=55d0c0001000 limit=55d0c0005000 offset=1000 "
        "vaddr=1000 kind=odd pid=1")
    seeds["bad-sym-map-short.pb"] = with_comment("#sym-map 1 start=1")
    seeds["bad-sym-header.pb"] = with_comment("#sym-header samples x")
    seeds["bad-sym-header-pct.pb"] = with_comment("#sym-header host a%0")
    seeds["bad-sym-process.pb"] = with_comment("#sym-process -5 0 0 x")
    seeds["bad-sym-pc.pb"] = with_comment("#sym-pc 1 x")
    seeds["bad-sym-pc-missing.pb"] = with_comment("#sym-pc 99999")
    sym = seeds["ours-symbolized.pb"]

    def sym_with_comment(text):
        return sym + ld(6, text) + vint(13, count_strings(sym))

    seeds["bad-sym-loc-id.pb"] = sym_with_comment("#sym-loc missing x")
    seeds["bad-sym-symtab-missing.pb"] = sym_with_comment(
        "#sym-symtab 99999")
    seeds["sym-loc-later-status.pb"] = sym_with_comment("#sym-loc odd 1 2")
    seeds["sym-symbolized-later.pb"] = sym_with_comment("#sym-symbolized 2")
    seeds["bad-sym-words.pb"] = with_comment("#sym-header " + "w " * 40)
    seeds["sym-later-words.pb"] = with_comment("#sym-later " + "w " * 40)
    seeds["sym-unknown-keyword.pb"] = with_comment("#sym-later 1 2 3")
    stale = full.replace(b"#sym-pprof 1 locations=", b"#sym-pprof 1 locationz=")
    seeds["sym-stale-crc.pb"] = stale

    for name, data in sorted(seeds.items()):
        with open(os.path.join(OUT, "seed-" + name), "wb") as f:
            f.write(data)
    print("%d seeds in %s" % (len(seeds), OUT))
    return 0


def count_strings(buf):
    """Number of string_table (field 6) entries of a top-level message."""
    i, n = 0, 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            _, i = read_varint(buf, i)
        elif wt == 2:
            ln, i = read_varint(buf, i)
            i += ln
            n += field == 6
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
    return n


def read_varint(buf, i):
    shift, v = 0, 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


if __name__ == "__main__":
    sys.exit(main())
