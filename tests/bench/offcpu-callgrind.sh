#!/bin/bash
# offcpu-callgrind.sh - the instructions `sym record --off-cpu` spends per
# event in its handler (tools/record.c on_offcpu(), with all it calls),
# counted by callgrind, which does not move with the machine's load.
#
#   tests/bench/offcpu-callgrind.sh [ROUNDS]      (as root)
#
# The workload of offcpu-bench.sh, slower: fixtures/src/prof_pingpong.c
# built -O2 -g, started stopped, ROUNDS (10,000) rounds of
# OFFCPU_CG_WORK_US (200) us of CPU a turn, slow enough for the agent
# under valgrind to keep up (at offcpu-bench.sh's 40 the ring loses
# events, and what follows a loss costs more: the counts moved by 25%
# between runs).  `valgrind --tool=callgrind --toggle-collect=on_offcpu
# sym record --off-cpu -p PID` attaches to it (the BPF programs run in
# the kernel, unseen); once its BPF link shows in its fdinfo the
# workload runs, and at the end the recorder is stopped.  The counts are
# zeroed (callgrind_control -z) OFFCPU_CG_WARM_S (1) s after the
# workload starts: the first events open the files and read their CFI, a
# one-time cost left out.  Printed: the events handled since (calls of
# on_offcpu), the instructions collected, their quotient, the events
# lost, and the inclusive instructions per event of the handler's parts
# (callgrind_annotate --inclusive=yes); the files are in
# $BENCH_DIR/offcpu-cg.  Two runs of one binary agree within 1%.
#
# OFFCPU_CG_TOGGLE= (empty) counts the whole agent instead, all its
# threads (the ring's poll and drain, the side-band, the windows): its
# instructions per event handled are what the bench's agent column
# times.
#
# Knobs: SYM (bin/sym), BENCH_DIR (build/bench), SYM_RECORD_ARGS (more
# options for sym record), OFFCPU_CG_WORK_US, OFFCPU_CG_WARM_S,
# OFFCPU_CG_TOGGLE.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYM=${SYM:-$ROOT/bin/sym}
ROUNDS=${1:-10000}
D=${BENCH_DIR:-$ROOT/build/bench}/offcpu-cg
mkdir -p "$D"
note() { echo "offcpu-callgrind: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"
if [ "$(id -u)" != 0 ]; then
	note "skipped: BPF needs root"
	exit 0
fi
gcc -O2 -g -pthread -o "$D/pp" "$ROOT/fixtures/src/prof_pingpong.c"
ITERS=$("$D/pp" -c "${OFFCPU_CG_WORK_US:-200}")

sh -c 'kill -STOP $$; exec "$0" "$1" "$2" hold' "$D/pp" "$ROUNDS" "$ITERS" \
	> "$D/pp.out" &
fix=$!
wait_for stopped "$fix"
rm -f "$D/callgrind.out"
TOGGLE=${OFFCPU_CG_TOGGLE-on_offcpu}
# shellcheck disable=SC2086
valgrind --tool=callgrind ${TOGGLE:+--toggle-collect=$TOGGLE} \
	--callgrind-out-file="$D/callgrind.out" \
	"$SYM" record -q --off-cpu ${SYM_RECORD_ARGS:-} -p "$fix" \
	-o "$D/sym.raw" 2> "$D/valgrind.err" &
agent=$!
# (valgrind's own process is the recorder: same pid)
wait_for attached "$agent"
kill -CONT "$fix"
# The first events open the files and read their CFI: counted apart.
sleep "${OFFCPU_CG_WARM_S:-1}"
callgrind_control -z "$agent" > /dev/null 2>&1
wait_for grep -q '^rounds' "$D/pp.out"
sleep 1
kill -INT "$agent"
wait "$agent" || true
kill -TERM "$fix"
wait "$fix" 2> /dev/null || true

callgrind_annotate --inclusive=yes "$D/callgrind.out" > "$D/annotate.txt"
/usr/bin/python3.11 - "$D/callgrind.out" "$D/annotate.txt" \
	"$(awk '$1 == "lost" { print $2 }' "$D/sym.raw")" <<'EOF'
import re, sys

# The calls of on_offcpu: "calls=N ..." after each "cfn=" naming it.
calls, names, cur = 0, {}, None
with open(sys.argv[1]) as f:
    for line in f:
        m = re.match(r'(c?)fn=\((\d+)\)(?: (.*))?', line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3).strip()
            cur = names.get(m.group(2)) if m.group(1) else None
            continue
        if line.startswith('calls=') and cur == 'on_offcpu':
            calls += int(line.split()[0][6:])
        if not line.startswith('calls='):
            cur = cur if line.startswith(('cfn', 'cfi', 'cob')) else None
ir, parts = 0, []
with open(sys.argv[2]) as f:
    for line in f:
        m = re.match(r'\s*([\d,]+) \(\s*[\d.]+%\)\s+PROGRAM TOTALS', line)
        if m:
            ir = int(m.group(1).replace(',', ''))
        m = re.match(r'\s*([\d,]+) \(\s*[\d.]+%\)\s+\S+:(\S+) ', line)
        if m:
            parts.append((int(m.group(1).replace(',', '')), m.group(2)))
print('events handled %d, lost %s, instructions %d, per event %.0f'
      % (calls, sys.argv[3] or '?', ir, ir / calls if calls else 0))
for n, fn in parts[:40]:
    print('  %8.0f  %s' % (n / calls if calls else 0, fn))
EOF
