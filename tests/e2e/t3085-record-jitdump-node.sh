#!/bin/sh
# t3085-record-jitdump-node.sh - JIT frames named from a jitdump (issue
# 18): `node --perf-prof` writes jit-PID.dump (perf's jitdump format) in
# its working directory, and no perf map, while `sym record` samples it
# and perf records the same run (perf record runs node under sym record:
# one run, two samplers).  perf's own reader of jitdumps is the peer:
# `perf record -k 1` then `perf inject --jit`, which turns each code load
# into a jitted-PID-N.so that `perf script` names frames from.
#  - node maps its jitdump and writes no /tmp/perf-PID.map, so every
#    name sym record gives comes from the jitdump;
#  - the anonymous maps are flagged perf-map, the summary counts the
#    frames named;
#  - at least 95% of node's samples whose leaf is JIT code get a
#    JavaScript name, and hotLoopJS is the leaf of most of them;
#  - perf's reader names the same hot function, with the same whole name
#    (script, line and column), and the two shares agree within their
#    99.9% interval (two independent samplings of one run);
#  - sym symbolize keeps the names.
# Everything node writes stays in the test's temporary directory
# (--logfile=/dev/null: no isolate-*-v8.log).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need node python3
need_perf
plan 9
bail() { echo "Bail out! $*"; exit 1; }
SHARES=$SYM_ROOT/tests/e2e/lib/jit-shares.py

cd "$T" || exit 1
# the hot loop, run from here (its JIT names carry its path)
cp "$SYM_ROOT/tests/e2e/data/hot-loop.js" hot.js || exit 1
# perf's jitdump reader needs perf record -k 1 (CLOCK_MONOTONIC, the
# clock the runtime stamps its records with) and perf inject --jit.
use_perf=0
if command -v perf > /dev/null 2>&1 &&
   perf record -q -k 1 -e cpu-clock -o probe.data -- true > /dev/null 2>&1; then
	use_perf=1
fi
if [ $use_perf = 1 ]; then
	set -- perf record -q -k 1 -F 499 -e cpu-clock -o perf.data --
else
	set --
fi
"$SYM" record -F 499 -o node.raw -- "$@" node --perf-prof \
	--logfile=/dev/null hot.js > node.out 2> node.err ||
	bail "sym record failed: $(cat node.err)"
pid=$(sed -n 's/^process \([0-9]*\) .* node$/\1/p' node.raw | head -1)
[ -n "$pid" ] || bail "no node process in the profile"
at_exit "rm -f /tmp/perf-$pid.map"
is "node ran the loop" "$(cat node.out)" "done"
ok "node wrote its jitdump here and no perf map" \
	eval "[ -s jit-$pid.dump ] && [ ! -e /tmp/perf-$pid.map ]"
ok "node's anonymous maps are flagged perf-map" \
	eval "awk '\$1 == \"map\" && \$3 == \"anon\" && \$4 == $pid { print \$2 }' node.raw | while read id; do grep -qx \"mapflags \$id perf-map\" node.raw || exit 1; done && grep -q '^mapflags .* perf-map$' node.raw"
ok "the summary counts the JIT frames it named" \
	grep -q 'JIT frames (last file): [1-9][0-9]* of .* perf maps or jitdumps' \
	node.err

"$SYM" fold --pid --jit --kernel --broken=plain node.raw > sym.folded \
	2> fold.err || bail "sym fold failed: $(cat fold.err)"
python3 "$SHARES" sym sym.folded "$pid" > sym.shares
read -r s_total s_jit s_named s_rest < sym.shares
s_top=$(head -1 sym.shares | cut -f1 | cut -d' ' -f4-)
s_topn=$(head -1 sym.shares | cut -f2)
echo "# sym: $s_total samples of node, $s_jit in JIT code, $s_named named;" \
	"top: $s_top ($s_topn)"
ok "at least 95% of node's JIT samples have a JavaScript name" \
	python3 -c "import sys; j, n = $s_jit, $s_named
sys.exit(not (j >= 50 and n >= 0.95 * j))"
case $s_top in
"JS:*hotLoopJS $T/hot.js:1:"*) top_ok=yes ;;
*) top_ok=no ;;
esac
ok "hotLoopJS (with its script's path) is the leaf of most samples" \
	python3 -c "import sys; sys.exit(not ('$top_ok' == 'yes' and
$s_topn > 0.5 * $s_total))"

if [ $use_perf = 1 ]; then
	perf inject --jit -i perf.data -o perf.jit.data > inject.out 2>&1 ||
		bail "perf inject --jit failed: $(tail -3 inject.out)"
	perf script -i perf.jit.data -F comm,pid,ip,sym,dso > perf.txt \
		2> ps.err
	python3 "$SHARES" perf perf.txt "$pid" > perf.shares
	read -r p_total p_jit p_named p_rest < perf.shares
	p_top=$(head -1 perf.shares | cut -f1 | cut -d' ' -f4-)
	p_topn=$(head -1 perf.shares | cut -f2)
	echo "# perf inject --jit: $p_total samples of node, $p_jit in JIT" \
		"code, $p_named named; top: $p_top ($p_topn)"
	is "perf's jitdump reader names the same hot function, whole name" \
		"$p_top" "$s_top"
	ok "its shares agree within the 99.9% interval" \
		python3 "$SHARES" agree sym.shares perf.shares
else
	skip "perf cannot record here"
	skip "perf cannot record here"
fi

"$SYM" symbolize -q -o sym.raw node.raw 2> symb.err ||
	bail "sym symbolize failed: $(cat symb.err)"
"$SYM" fold --pid --jit --kernel --broken=plain sym.raw > symd.folded \
	2> /dev/null
python3 "$SHARES" sym symd.folded "$pid" > symd.shares
is "sym symbolize keeps them" "$(cat symd.shares)" "$(cat sym.shares)"
