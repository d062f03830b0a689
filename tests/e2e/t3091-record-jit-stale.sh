#!/bin/sh
# t3091-record-jit-stale.sh - a stale perf map is flagged, not trusted
# (issue 18; docs/record.md, "JIT frames").  node runs a hot loop
# without --perf-basic-prof, so it writes no perf map; the test writes
# /tmp/perf-PID.map itself, one entry (FAKE_JIT_NAME) over each of
# node's anonymous executable mappings, as if a process that had this PID
# before had left it there.
#  - last written an hour before node started: sym record -p says the map
#    is stale, names no frame from it, and flags node's anonymous maps
#    perf-map-stale; the views show them under [perf-map-stale];
#  - the same file written after node started (the control, so that the
#    test can fail): the frames get FAKE_JIT_NAME, flagged perf-map.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need node python3 touch
need_perf
plan 7
bail() { echo "Bail out! $*"; exit 1; }

cd "$T" || exit 1
cat > loop.js <<'EOF'
const fs = require("fs");
function hotLoopJS(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003;
  return s;
}
let acc = 0;
for (let k = 0; ; k++) {
  acc += hotLoopJS(100000);
  if (k === 200) fs.writeFileSync("ready", "ready\n");
  if (k % 50 === 0 && fs.existsSync("stop")) break;
}
console.log(acc > 0 ? "done" : "zero");
EOF
node --logfile=/dev/null loop.js > node.out 2>&1 &
pid=$!
map=/tmp/perf-$pid.map
at_exit "touch '$T/stop'; kill $pid 2>/dev/null; rm -f '$map'"
n=0
while [ ! -s ready ] && kill -0 $pid 2>/dev/null && [ $n -lt 600 ]; do
	sleep 0.1
	n=$((n + 1))
done
[ -s ready ] || bail "node did not get ready"
[ ! -e "$map" ] || bail "$map exists before the test wrote it"
# one entry per anonymous executable mapping of node
python3 -c 'import sys
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 5 and "x" in f[1]:
        a, b = (int(x, 16) for x in f[0].split("-"))
        print("%x %x FAKE_JIT_NAME" % (a, b - a))' "/proc/$pid/maps" \
	> "$map" 2> maps.err
[ -s "$map" ] || bail "node has no anonymous executable mapping"
sed 's/^/# map: /' "$map" | head -5

touch -d '1 hour ago' "$map"
"$SYM" record -p "$pid" -d 1 -F 499 -o stale.raw > /dev/null 2> stale.err ||
	bail "sym record failed: $(cat stale.err)"
ok "sym record says the map is stale" \
	grep -q "perf map '$map' was last written .* before process $pid started" \
	stale.err
ok "node's anonymous maps are flagged perf-map-stale" \
	grep -q '^mapflags [0-9]* perf-map-stale$' stale.raw
ok "no frame is named from the stale map" \
	eval '! grep -q FAKE_JIT_NAME stale.raw'
"$SYM" fold --jit stale.raw > stale.folded 2> /dev/null
ok "the views put them under [perf-map-stale]" \
	grep -q '\[perf-map-stale\]+?_\[j\]' stale.folded

# the control: the same map, written after node started
touch "$map"
"$SYM" record -p "$pid" -d 1 -F 499 -o fresh.raw > /dev/null 2> fresh.err ||
	bail "sym record failed: $(cat fresh.err)"
ok "control: a map written after the start is not called stale" \
	eval "! grep -q 'stale' fresh.err"
ok "control: its names are used, flagged perf-map" \
	eval "grep -q '^fn [0-9]* FAKE_JIT_NAME$' fresh.raw &&
	      grep -q '^mapflags [0-9]* perf-map$' fresh.raw"
touch stop
wait $pid
is "node ended its loop" "$(cat node.out)" "done"
