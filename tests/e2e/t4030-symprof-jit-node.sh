#!/bin/sh
# t4030-symprof-jit-node.sh - libsymprof (sym run) names JIT frames from
# the program's perf map (issue 18; docs/symprof.md, "JIT frames"):
# `node --perf-basic-prof` runs a JavaScript hot loop (hotLoopJS) from a
# temporary directory under sym run.  node unmaps its JIT code before
# the last write of the file, so the mappings must have been seen while
# it ran.
#  - the file parses (raw-check), with node's anonymous map flagged
#    perf-map;
#  - at least 95% of the samples whose leaf is JIT code get a
#    JavaScript name, and hotLoopJS is the leaf of most samples;
#  - the same run's name equals the one perf writes into its map for
#    that code (the whole line's name: taken from the map file itself,
#    before it is deleted).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
need node python3
plan 5
bail() { echo "Bail out! $*"; exit 1; }
SHARES=$SYM_ROOT/tests/e2e/lib/jit-shares.py

cd "$T" || exit 1
# the hot loop, run from here (its JIT names carry its path)
cp "$SYM_ROOT/tests/e2e/data/hot-loop.js" hot.js || exit 1
"$SYM" run -F 499 -o run.raw -- node --perf-basic-prof --logfile=/dev/null \
	hot.js 2000 > node.out 2> node.err || bail "sym run failed: $(cat node.err)"
pid=$(sed -n 's/^process \([0-9]*\) .* node$/\1/p' run.raw | head -1)
[ -n "$pid" ] || bail "no node process in the profile"
at_exit "rm -f /tmp/perf-$pid.map"
is "node ran the loop" "$(cat node.out)" "done"
sp_check "the file parses" run.raw
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
ok "hotLoopJS, as node's map names it, is the leaf of most samples" \
	python3 -c "import sys
names = {l.split(' ', 2)[2].rstrip('\n') for l in open('/tmp/perf-$pid.map')
         if 'hotLoopJS' in l}
sys.exit(not ('''$top''' in names and $topn > 0.5 * $total))"
