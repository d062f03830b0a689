#!/bin/sh
# t4031-symprof-jitdump-node.sh - libsymprof (sym run) names JIT frames
# from the program's jitdump (issue 18; docs/symprof.md, "JIT frames"):
# `node --perf-prof` writes jit-PID.dump (perf's jitdump format) in its
# working directory, and no perf map, and maps it executable; libsymprof
# finds it in /proc/self/maps.
#  - the file parses (raw-check), with node's anonymous map flagged
#    perf-map, and node wrote no /tmp/perf-PID.map;
#  - at least 95% of the samples whose leaf is JIT code get a
#    JavaScript name, and hotLoopJS is the leaf of most samples;
#  - that name is one node's jitdump gives a code load (read here by an
#    independent few lines of Python, not by the code under test).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
need node python3
plan 6
bail() { echo "Bail out! $*"; exit 1; }
SHARES=$SYM_ROOT/tests/e2e/lib/jit-shares.py

cd "$T" || exit 1
# the hot loop, run from here (its JIT names carry its path)
cp "$SYM_ROOT/tests/e2e/data/hot-loop.js" hot.js || exit 1
"$SYM" run -F 499 -o run.raw -- node --perf-prof --logfile=/dev/null \
	hot.js 2000 > node.out 2> node.err || bail "sym run failed: $(cat node.err)"
pid=$(sed -n 's/^process \([0-9]*\) .* node$/\1/p' run.raw | head -1)
[ -n "$pid" ] || bail "no node process in the profile"
at_exit "rm -f /tmp/perf-$pid.map"
is "node ran the loop" "$(cat node.out)" "done"
sp_check "the file parses" run.raw
ok "node wrote its jitdump here and no perf map" \
	eval "[ -s jit-$pid.dump ] && [ ! -e /tmp/perf-$pid.map ]"
ok "node's anonymous map is flagged perf-map" \
	grep -q '^mapflags [0-9]* perf-map$' run.raw
"$SYM" fold --pid --jit --kernel --broken=plain run.raw > run.folded \
	2> /dev/null
python3 "$SHARES" sym run.folded "$pid" > run.shares
read -r total jit named rest < run.shares
top=$(head -1 run.shares | cut -f1 | cut -d' ' -f4-)
topn=$(head -1 run.shares | cut -f2)
echo "# sym run: $total samples, $jit in JIT code, $named named; top: $top ($topn)"
ok "at least 95% of the JIT samples have a JavaScript name" \
	python3 -c "import sys; sys.exit(not ($jit >= 50 and $named >= 0.95 * $jit))"
ok "hotLoopJS, as node's jitdump names it, is the leaf of most samples" \
	python3 -c "import struct, sys
d = open('jit-$pid.dump', 'rb').read()
off, names = struct.unpack_from('<I', d, 8)[0], set()
while off + 16 <= len(d):
    rid, size = struct.unpack_from('<II', d, off)
    if size < 16 or off + size > len(d):
        break
    if rid == 0:
        end = d.index(b'\0', off + 56)
        names.add(d[off + 56:end].decode())
    off += size
sys.exit(not ('''$top''' in names and 'hotLoopJS' in '''$top''' and
              $topn > 0.5 * $total))"
