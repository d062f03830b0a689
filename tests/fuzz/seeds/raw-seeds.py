#!/usr/bin/env python3
"""raw-seeds.py - write the seeds of tests/fuzz/corpus/fuzz-raw/.

    python3 tests/fuzz/seeds/raw-seeds.py      (from the project root)

Rewrites every seed-* file there and keeps the others (crash-*, found-*).
seed-ok-*: valid files (the example of docs/raw-format.md, every field and
escape, the extensions a reader must let through, an empty profile, large
stacks, the symbolized form with every status, prefix and escape, the
sources of a merged profile).
seed-bad-*: one file per error of the reader, each a small edit of a valid
file, so that the fuzzer starts next to every error path.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "fuzz-raw")

BID0 = "4f1c9a0b3d2e11aa0e7c6b5d4f3e2d1c0b9a88e2"
BID1 = "a43b7e1d5c9f00112233445566778899aabbccc1"

EXAMPLE = f"""sym-raw 1
host build-7
tool sym-record 0.1.0
start 2026-11-30T17:21:15.000000Z
duration 10.000123456
event cpu-clock
mode fp
frequency 99
period 10101010
weight-unit ns
samples 990
lost 0
throttled 0
dropped 0
flagged truncated 0
flagged badreturn 0
flagged leaf 3
flagged unwind 0
flagged kernel 0
pidns 4026531836
process 4242 4026531836 4242 work
thread 4242 4242 work
map 0 file 4242 55d0c0001000 55d0c0002000 1000 1000 {BID0} /usr/local/bin/work
map 1 file 4242 7f0a1c228000 7f0a1c3bd000 28000 28000 {BID1} /usr/lib/x86_64-linux-gnu/libc.so.6
stack 693 7000000000 4242 4242 - p0:1139 r0:1187 r1:29d8a r1:29e40 r0:1065
stack 297 3000000000 4242 4242 - p0:1152 r0:1193 r1:29d8a r1:29e40 r0:1065
stack 3 30303030 4242 4242 leaf p0:1160 r1:29d8a r1:29e40 r0:1065
end
"""

ALL = f"""sym-raw 1
host build%207
tool sym-record 0.1.0
start 2026-11-30T17:21:15.123456789Z
duration 10.000123456
event cpu-clock
mode dwarf
frequency 99
period 10101010
weight-unit ns
samples 18446744073709551615
lost 1
throttled 2
dropped 3
flagged truncated 4
flagged badreturn 5
flagged leaf 6
flagged unwind 7
flagged kernel 8
pidns 4026531836
process 4242 4026532000 17 work
process 1 - 0 a%09b%7F%01%20%252D
process 3 - 0 %2D
thread 4242 4243 worker%201
thread 4242 4244 -
thread 1 1 %25
map 0 file 4242 55d0c0001000 55d0c0002000 1000 1000 4f1c0de2 /usr/local/bin/work
map 1 file 4242 7f0000000000 ffffffffffffffff 0 0 - /opt/my%20app/100%25/-x-/%C3%A9t%C3%A9.so
mapflags 1 vaddr-guessed
map 2 vdso 4242 1 1 0 0 00 %2D
map 3 kernel -1 ffffffff81000000 ffffffff82000000 0 ffffffff81000000 - [kernel.kallsyms]
map 4 anon 0 0 0 0 0 - -
stack 693 7000000000 4242 4243 - p0:1139 r1:29d8a r?:ffffffffffffffff r4:0
stack 18446744073709551615 18446744073709551615 0 0 truncated,leaf,kernel,unknown p3:ffffffff81234567 r2:7f
stack 0 0 2147483647 1 badreturn,unwind
end
"""

EXTENSIONS = """sym-raw 1
# comments, empty lines and unknown keywords are skipped

future-line \x01\xff  anything  
flagged someday 5
flagged leaf 3
weight-unit samples
map 7 kernel -1 ffffffff81000000 ffffffff82000000 0 ffffffff81000000 - [kernel.kallsyms]
map 3 file 1 1000 2000 0 1000 00ff %2fbin%2fa%20b
mapflags 3 vaddr-guessed,from-the-future
mapflags 7 from-the-future
thread 1 2 %2D
stack 1 10 1 2 leaf,mystery p3:1001 r7:ffffffff81000010 r?:5
stack 2 20 1 2 mystery,leaf,leaf p3:1001 r7:ffffffff81000010 r?:05
stack 1 1 0 0 -
start 1969-12-31T23:59:59.5Z
duration 1.5
period 0
pidns -
end
"""

EMPTY = """sym-raw 1
host -
tool - -
start -
duration 0.000000000
event -
mode -
frequency 0
period 0
weight-unit samples
samples 0
lost 0
throttled 0
dropped 0
flagged truncated 0
flagged badreturn 0
flagged leaf 0
flagged unwind 0
flagged kernel 0
pidns -
end
"""

HEAD = "sym-raw 1\nperiod 1\nweight-unit ns\n"
MAP0 = "map 0 file 1 1000 2000 0 1000 ab /bin/x\n"


# The symbolized form (docs/raw-format.md, "The symbolized form").
SYMBOLIZED = EXAMPLE.replace("pidns 4026531836\n", "pidns 4026531836\nsymbolized 1\n").replace(
    "stack 693", """fn 1 compute
fn 2 work_loop
fn 3 main
fn 4 __libc_start_call_main
fn 5 std::vector%3Cint%3E::push_back(int%20const&)
fn 6 %2D
src 1 /src/work.c
src 2 ./csu/../sysdeps/nptl/libc_start_call_main.h
src 3 /src/a%20b/%25.h
loc p0:1139 ok i1:1:12:5 2:1:40:3
loc r0:1187 ok 3:1:55:0
loc r1:29d8a ok s4:-:0:0
loc r1:29e40 ok i5:3:7:1 i-:3:9:0 4:2:58:16
loc r0:1065 ok 6:-:0:0
loc p0:1152 nosymbol
loc r0:1193 missing
loc p0:1160 error
loc p?:dead unmapped
loc r0:ffff nobuildid
stack 693""", 1)

SYM_HEAD = HEAD + MAP0 + "symbolized 1\nfn 1 f\nsrc 1 /a.c\n"


# Sources of a merged profile (docs/raw-format.md, "Sources").
MERGED = HEAD + MAP0 + """source 1 web-1 2026-11-30T17:21:15.000000000Z 10.000000000 10101010 ns 990 0
source 2 web%202 - 0.5 1 - 0 18446744073709551615
source 7 - 1970-01-01T00:00:00Z 0 0 samples 3 0 later fields
stack 4 4 1 1 - p0:1000
from 1
stack 1 1 1 1 - p0:1000
stack 2 2 1 1 - p0:1000 r0:1010
from 7
stack 3 3 1 1 - p0:1000
from 2
stack 1 1 1 1 - p0:1000
from -
stack 1 1 1 1 - p0:1000
from 1
stack 5 5 1 1 - p0:1000
end
"""
SRC = HEAD + MAP0 + "source 1 a - 1 1 ns 1 0\n"


def deep(n):
    frames = " ".join("r0:%x" % (0x1000 + i) for i in range(n))
    return HEAD + MAP0 + "stack 1 1 1 1 truncated p0:1000 " + frames + "\nend\n"


OK = {
    "example": EXAMPLE,
    "all-fields": ALL,
    "release": ALL.replace("pidns 4026531836\n",
                           "pidns 4026531836\nrelease 6.1.0-57-cloud-amd64\n", 1),
    "extensions": EXTENSIONS,
    "empty-profile": EMPTY,
    "minimal": HEAD + "end\n",
    "deep-1024": deep(1023),
    "symbolized": SYMBOLIZED,
    "symbolized-empty": HEAD + "symbolized 1\nend\n",
    "symbolized-later-version": HEAD + MAP0 +
        "symbolized 2\nfn 1 anything:goes\nloc whatever\n"
        "stack 1 1 1 1 - p0:1000\nend\n",
    "symbolized-unused-strings": SYM_HEAD + "fn 9 unused\nsrc 0 /b.c\n"
        "loc p0:1000 ok 1:-:0:0\nloc r0:1000 ok 1:0:1:1\nend\n",
    "symbolized-deep": SYM_HEAD + "loc p0:1000 ok" +
        " i1:1:1:1" * 127 + " 1:1:1:1\nend\n",
    "merged": MERGED,
    "merged-symbolized": MERGED.replace("source 1 ", "symbolized 1\nfn 1 f\n"
        "loc p0:1000 ok 1:-:0:0\nsource 1 ", 1),
    "many-stacks": HEAD + MAP0 + "".join(
        "stack %d %d %d %d - p0:%x r0:%x\n" % (i + 1, i * 7, i % 5, i % 3,
                                              0x1000 + i, 0x1800 + i % 9)
        for i in range(200)) + "stack 1 1 0 1 - p0:1000 r0:1800\nend\n",
}

BAD = {
    "empty": "",
    "not-raw": "hello\n",
    "version-2": "sym-raw 2\nend\n",
    "crlf": "sym-raw 1\r\nperiod 1\r\nweight-unit ns\r\nend\r\n",
    "no-end": HEAD + MAP0 + "stack 1 1 1 1 - p0:1000\n",
    "end-no-newline": HEAD + "end",
    "after-end": HEAD + "end\n# more\n",
    "no-period": "sym-raw 1\nweight-unit ns\nend\n",
    "no-weight-unit": "sym-raw 1\nperiod 1\nend\n",
    "weight-unit-unknown": "sym-raw 1\nperiod 1\nweight-unit -\nend\n",
    "double-space": HEAD + "host  x\nend\n",
    "trailing-space": HEAD + "host x \nend\n",
    "leading-space": HEAD + " host x\nend\n",
    "tab": HEAD + "host a\tb\nend\n",
    "raw-utf8": HEAD + "host caf\xc3\xa9\nend\n",
    "bad-percent": HEAD + "host a%G0\nend\n",
    "percent-end": HEAD + "host a%4\nend\n",
    "percent-nul": HEAD + "host a%00b\nend\n",
    "fields": HEAD + "tool x\nend\n",
    "not-decimal": HEAD + "samples 1x\nend\n",
    "u64-overflow": HEAD + "samples 18446744073709551616\nend\n",
    "hex-upper": HEAD + MAP0 + "stack 1 1 1 1 - p0:ABC\nend\n",
    "hex-overflow": HEAD + MAP0 + "stack 1 1 1 1 - p0:10000000000000000\nend\n",
    "pid-range": HEAD + MAP0 + "stack 1 1 2147483648 1 - p0:10\nend\n",
    "dup-header": HEAD + "host a\nhost b\nend\n",
    "dup-flagged": HEAD + "flagged leaf 1\nflagged leaf 2\nend\n",
    "start-month": HEAD + "start 2026-13-01T00:00:00Z\nend\n",
    "start-feb29": HEAD + "start 2025-02-29T00:00:00Z\nend\n",
    "start-offset": HEAD + "start 2026-11-30T17:21:15+01:00\nend\n",
    "start-range": HEAD + "start 2263-01-01T00:00:00Z\nend\n",
    "duration-frac": HEAD + "duration 1.0000000001\nend\n",
    "duration-overflow": HEAD + "duration 18446744074\nend\n",
    "map-fields": HEAD + "map 0 file 1 1000 2000 0 1000 ab\nend\n",
    "map-dup": HEAD + MAP0 + MAP0 + "end\n",
    "map-kind": HEAD + "map 0 jit 1 1000 2000 0 1000 ab /x\nend\n",
    "map-range": HEAD + "map 0 file 1 2000 1000 0 1000 ab /x\nend\n",
    "map-buildid": HEAD + "map 0 file 1 1000 2000 0 1000 abc /x\nend\n",
    "map-pid": HEAD + "map 0 file -2 1000 2000 0 1000 ab /x\nend\n",
    "mapflags-unknown-map": HEAD + "mapflags 0 vaddr-guessed\n" + MAP0 + "end\n",
    "process-fields": HEAD + "process 1 - 1\nend\n",
    "process-pidns": HEAD + "process 1 x 1 x\nend\n",
    "thread-tid": HEAD + "thread 1 4294967296 x\nend\n",
    "stack-fields": HEAD + "stack 1 1 1 1\nend\n",
    "frame-map-later": HEAD + "stack 1 1 1 1 - p0:10\n" + MAP0 + "end\n",
    "frame-map-unknown": HEAD + MAP0 + "stack 1 1 1 1 - p1:10\nend\n",
    "frame-kind": HEAD + MAP0 + "stack 1 1 1 1 - x0:10\nend\n",
    "frame-syntax": HEAD + MAP0 + "stack 1 1 1 1 - p0\nend\n",
    "stack-flag-empty": HEAD + MAP0 + "stack 1 1 1 1 leaf, p0:10\nend\n",
    "stack-sum-overflow": HEAD + MAP0 +
        "stack 18446744073709551615 1 1 1 - p0:10\nstack 1 1 1 1 - p0:10\nend\n",
    "deep-1025": deep(1024),
    "too-many-fields": HEAD + "host" + " x" * 1040 + "\nend\n",
    "sym-before-symbolized": HEAD + MAP0 + "fn 1 f\nsymbolized 1\nend\n",
    "sym-loc-before-symbolized": HEAD + MAP0 + "loc p0:1000 missing\nend\n",
    "sym-dup-symbolized": HEAD + "symbolized 1\nsymbolized 1\nend\n",
    "sym-version": HEAD + "symbolized x\nend\n",
    "sym-fn-dup": SYM_HEAD + "fn 1 g\nend\n",
    "sym-fn-unknown": SYM_HEAD + "fn 2 -\nend\n",
    "sym-fn-fields": SYM_HEAD + "fn 2\nend\n",
    "sym-src-id": SYM_HEAD + "src x /b.c\nend\n",
    "sym-loc-fields": SYM_HEAD + "loc p0:1000\nend\n",
    "sym-loc-frame": SYM_HEAD + "loc q0:1000 missing\nend\n",
    "sym-loc-map": SYM_HEAD + "loc p1:1000 missing\nend\n",
    "sym-loc-status": SYM_HEAD + "loc p0:1000 fine\nend\n",
    "sym-loc-ok-no-line": SYM_HEAD + "loc p0:1000 ok\nend\n",
    "sym-loc-lines-not-ok": SYM_HEAD + "loc p0:1000 missing 1:1:1:1\nend\n",
    "sym-loc-dup": SYM_HEAD + "loc p0:1000 missing\nloc p0:1000 ok 1:1:1:1\nend\n",
    "sym-line-syntax": SYM_HEAD + "loc p0:1000 ok 1:1:1\nend\n",
    "sym-line-extra": SYM_HEAD + "loc p0:1000 ok 1:1:1:1:1\nend\n",
    "sym-line-prefix": SYM_HEAD + "loc p0:1000 ok is1:1:1:1\nend\n",
    "sym-line-fn": SYM_HEAD + "loc p0:1000 ok 2:1:1:1\nend\n",
    "sym-line-src": SYM_HEAD + "loc p0:1000 ok 1:2:1:1\nend\n",
    "sym-line-number": SYM_HEAD + "loc p0:1000 ok 1:1:4294967296:1\nend\n",
    "sym-line-empty": SYM_HEAD + "loc p0:1000 ok 1::1:1\nend\n",
    "source-fields": SRC + "source 2 b - 1 1 ns 1\nend\n",
    "source-dup": SRC + "source 1 b - 1 1 ns 1 0\nend\n",
    "source-id": SRC + "source -1 b - 1 1 ns 1 0\nend\n",
    "source-host": SRC + "source 2 b%0 - 1 1 ns 1 0\nend\n",
    "source-start": SRC + "source 2 b 2026-02-30T00:00:00Z 1 1 ns 1 0\nend\n",
    "source-duration": SRC + "source 2 b - 1. 1 ns 1 0\nend\n",
    "source-samples": SRC + "source 2 b - 1 1 ns 18446744073709551616 0\nend\n",
    "from-undefined": SRC + "from 2\nstack 1 1 1 1 - p0:1000\nend\n",
    "from-before-source": HEAD + MAP0 + "from 1\nsource 1 a - 1 1 ns 1 0\nend\n",
    "from-fields": SRC + "from 1 1\nend\n",
    "from-sum-overflow": SRC + "from 1\nstack 18446744073709551615 1 1 1 - p0:1000\n"
        "from -\nstack 1 1 1 1 - p0:1000\nfrom 1\nstack 1 1 1 1 - p0:1000\nend\n",
    "sym-lines-129": SYM_HEAD + "loc p0:1000 ok" + " i1:1:1:1" * 128 +
        " 1:1:1:1\nend\n",
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        if name.startswith("seed-"):
            os.unlink(os.path.join(OUT, name))
    for prefix, seeds in (("seed-ok-", OK), ("seed-bad-", BAD)):
        for name, text in seeds.items():
            with open(os.path.join(OUT, prefix + name), "wb") as f:
                f.write(text.encode("latin-1"))
    print("raw-seeds: %d seeds in %s" % (len(OK) + len(BAD), OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
