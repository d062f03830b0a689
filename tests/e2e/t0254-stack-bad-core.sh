#!/bin/sh
# sym stack --core on damaged cores, made from a real one (sleep, SIGSEGV):
# truncated in its memory, with a note whose size runs past its segment,
# with program headers past the end of the file, not a core at all, empty
# and missing.  Each gives exit status 1 and one clear line on stderr;
# where threads can still be read they are printed, flagged partial
# (--json's "partial"), never a crash.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/core-lib.sh"
need python3
[ -x "$SYM" ] || plan_skip "$SYM not built"
core_setup
plan 12

sleep_core

# bad NAME MESSAGE: exit status 1 and MESSAGE on stderr.
bad() {
	"$SYM" stack --core "$T/$1" > "$T/$1.out" 2> "$T/$1.err"
	rc=$?
	is "$1: exit status 1" "$rc" 1
	ok "$1: says '$2'" grep -q "$2" "$T/$1.err"
}

size=$(stat -c %s "$core")
head -c $((size / 2)) "$core" > "$T/trunc"
bad trunc "is damaged (truncated"
ok "trunc: the threads are still printed" grep -q '^TID ' "$T/trunc.out"
"$SYM" stack --json --core "$T/trunc" 2>/dev/null |
	python3 -c 'import json, sys; assert json.load(sys.stdin)["partial"]' 
is "trunc: --json says partial" "$?" 0

python3 - "$core" "$T/badnote" "$T/badphdr" <<'EOT'
import struct, sys
core = bytearray(open(sys.argv[1], "rb").read())
phoff, = struct.unpack_from("<Q", core, 32)
phnum, = struct.unpack_from("<H", core, 56)
for i in range(phnum):
    typ, _, off = struct.unpack_from("<IIQ", core, phoff + 56 * i)
    if typ == 4:
        namesz, descsz = struct.unpack_from("<II", core, off)
        second = off + 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
        struct.pack_into("<I", core, second + 4, 0xfffffff0)
        break
open(sys.argv[2], "wb").write(core)
bad = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<Q", bad, 32, len(bad) - 8)
open(sys.argv[3], "wb").write(bad)
EOT
bad badnote "is damaged (.*bad notes"
bad badphdr "is damaged (.*bad headers"
cp "$exe" "$T/notcore"
bad notcore "is not an x86-64 ELF core file"
: > "$T/empty"
bad empty "empty file"
