#!/bin/sh
# views-bench.sh - the profile views' part of `make bench` (issue 7):
# symbolizing a 1,000,000-sample profile of 50,000 unique stacks end to
# end through a warm symd.  Goal: under 2 s.
#
# Input: tests/bench/views-gen.py writes a raw profile (VIEWS_BENCH_SAMPLES
# samples, VIEWS_BENCH_STACKS unique 20-frame stacks, four processes) over
# the build IDs of /usr/bin/python3.11 and libc.so.6, whose debug files
# (python3.11-dbg, libc6-dbg) are found by build ID; it is kept in
# $BENCH_DIR/views/ and made again only when the parameters change.  A
# fresh store is filled with `sym store add` (timed: the conversion), one
# symd (--listen 127.0.0.1:0 --quiet, no upstream) serves it, and one
# untimed `sym symbolize --server` warms it (tables opened, chunks
# verified).  Then, VIEWS_BENCH_RUNS (5) times each, wall-clock:
#
#   symbolize --server  `sym symbolize --server URL -o OUT IN`: read the
#                       file, group frames by build ID, one batch of unique
#                       addresses per build ID to symd, the symbolized
#                       raw file written (the goal's figure)
#   (phase)             the symbolization alone, as the summary reports it
#   symbolize --store   the same from the local store, no daemon
#   pprof --server      `sym pprof --server URL` from the raw input:
#                       symbolized on the fly, written as gzipped pprof
#   pprof (symbolized)  `sym pprof` of the symbolized raw file
#
# Medians are reported, with the requests symd got during one run (one
# per build ID when each batch fits in 50,000 addresses).  The section is
# printed, written to $BENCH_DIR/views/report.md and appended to
# $BENCH_DIR/report.md (replacing an earlier one of this script).  The
# exit status is 1 when something fails, not when the goal is missed.
#
# Knobs: VIEWS_BENCH_RUNS VIEWS_BENCH_SAMPLES VIEWS_BENCH_STACKS
#        VIEWS_BENCH_SEED BENCH_DIR SYM SYMD.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM=${SYM:-$ROOT/bin/sym}
SYMD=${SYMD:-$ROOT/bin/symd}
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/views
RUNS=${VIEWS_BENCH_RUNS:-5}
SAMPLES=${VIEWS_BENCH_SAMPLES:-1000000}
STACKS=${VIEWS_BENCH_STACKS:-50000}
SEED=${VIEWS_BENCH_SEED:-7}
PY=/usr/bin/python3.11
LIBC=/lib/x86_64-linux-gnu/libc.so.6
HEADING='### profile views: symbolize (tests/bench/views-bench.sh)'
export LC_ALL=C
SYM_STORE=$W/store-default
export SYM_STORE
unset DEBUGINFOD_URLS

die() { echo "views-bench: $*" >&2; exit 1; }
note() { echo "views-bench: $*" >&2; }

[ -x "$SYM" ] || die "no $SYM; run make first"
[ -x "$SYMD" ] || die "no $SYMD; run make first"
mkdir -p "$W" || die "cannot create $W"
rm -rf "$W/store" "$W/store-default"

SYMD_PID=
cleanup() {
	[ -n "$SYMD_PID" ] && kill -9 "$SYMD_PID" 2> /dev/null
	return 0
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# debug_file, usable_input, median, append_report
. "$ROOT/tests/bench/lib.sh"

now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.3f\n", $2 - $1 }'; }

usable_input python3.11 "$PY" && pydbg=$dbg || die "python3.11-dbg is needed"
usable_input libc "$LIBC" && libcdbg=$dbg || die "libc6-dbg is needed"
[ -n "$pydbg" ] && [ -n "$libcdbg" ] ||
	die "the debug files of $PY and $LIBC are needed by build ID"

# --- the profile --------------------------------------------------------
PARAMS="$SAMPLES $STACKS $SEED $("$SYM" buildid "$PY" "$LIBC" | cut -d' ' -f1 | tr '\n' ' ')"
if [ ! -s "$W/in.raw" ] || [ "$(cat "$W/in.params" 2>/dev/null)" != "$PARAMS" ]; then
	note "writing the profile ($SAMPLES samples, $STACKS stacks)"
	python3 tests/bench/views-gen.py "$W/in.raw" "$SAMPLES" "$STACKS" \
		"$SEED" "$PY=$pydbg" "$LIBC=$libcdbg" > "$W/in.txt" ||
		die "views-gen.py failed"
	echo "$PARAMS" > "$W/in.params"
fi
PROFILE=$(cat "$W/in.txt")

# --- the store and symd ---------------------------------------------------
t0=$(now)
"$SYM" store --store "$W/store" add "$PY" "$LIBC" > "$W/add.out" 2>&1 ||
	die "sym store add failed: $(cat "$W/add.out")"
CONVERT=$(secs "$t0" "$(now)")
"$SYMD" --listen 127.0.0.1:0 --store "$W/store" --quiet > "$W/symd.out" \
	2> "$W/symd.err" &
SYMD_PID=$!
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' \
		"$W/symd.out" 2>/dev/null)
	[ -n "$PORT" ] && break
	sleep 0.05
done
[ -n "$PORT" ] || die "symd did not start: $(cat "$W/symd.err")"
URL=http://127.0.0.1:$PORT
"$SYM" symbolize --server "$URL" -o "$W/warm.raw" "$W/in.raw" \
	2> "$W/warm.err" || die "warming failed: $(cat "$W/warm.err")"
grep -q ' resolved (100.0%)' "$W/warm.err" ||
	note "not every frame resolved: $(head -1 "$W/warm.err")"

requests() {
	curl -sS --max-time 30 "$URL/metrics" | awk '
		/^symd_requests_total\{route="symbolize"/ { n += $2 }
		END { print n + 0 }'
}

# symd_cpu: symd's CPU seconds so far (user + system, all threads).
HZ=$(getconf CLK_TCK)
symd_cpu() {
	sed 's/.*) //' "/proc/$SYMD_PID/stat" | awk -v hz="$HZ" '
		{ printf "%.3f\n", ($12 + $13) / hz }'
}

# run NAME CMD...: run CMD $RUNS times.  Per run, to $W/NAME.times: the
# wall-clock seconds, the command's CPU seconds (user + system, from GNU
# time; - without it) and symd's; its stderr to $W/NAME.err.  The
# machine may be shared: CPU seconds say what the work costs, wall-clock
# seconds what a user waits.
run() {
	_name=$1
	shift
	: > "$W/$_name.times"
	for _ in $(seq "$RUNS"); do
		_c0=$(symd_cpu)
		_t0=$(now)
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f "%U %S" -o "$W/time.out" "$@" \
				2> "$W/$_name.err"
		else
			"$@" 2> "$W/$_name.err"
		fi || die "$_name failed: $(cat "$W/$_name.err")"
		_wall=$(secs "$_t0" "$(now)")
		_cpu=-
		[ -x /usr/bin/time ] &&
			_cpu=$(awk 'END { printf "%.3f", $1 + $2 }' "$W/time.out")
		echo "$_wall $_cpu $(secs "$_c0" "$(symd_cpu)")" >> "$W/$_name.times"
		# The summary's own figure: "..., in 0.41 s".
		sed -n '1s/.* in \([0-9.]*\) s$/\1/p' "$W/$_name.err" >> "$W/$_name.phase"
	done
}

rm -f "$W"/*.phase
r0=$(requests)
run server "$SYM" symbolize --server "$URL" -o "$W/server.raw" "$W/in.raw"
REQS=$(( ($(requests) - r0) / RUNS ))
run store "$SYM" symbolize --store "$W/store" -o "$W/store.raw" "$W/in.raw"
run pprof_server "$SYM" pprof --server "$URL" -o "$W/server.pb.gz" "$W/in.raw"
run pprof_sym "$SYM" pprof -o "$W/sym.pb.gz" "$W/server.raw"
# symd's API does not say which names come from the symbol table (the
# local store marks them "s"): equal but for that.
sed 's/ s\([0-9-]\)/ \1/g' "$W/store.raw" | cmp -s "$W/server.raw" - ||
	note "the --server and --store outputs differ"

# med NAME [COLUMN]: the median of a column of $W/NAME.times (1 wall,
# 2 the command's CPU, 3 symd's CPU).
med() { median $(awk -v c="${2:-1}" '{ print $c }' "$W/$1.times"); }
SERVER=$(med server)
PHASE=$(median $(cat "$W/server.phase" 2>/dev/null))
GOAL=$(echo "$SERVER" | awk '{ print ($1 < 2) ? "met" : "NOT met" }')

report() {
	echo "$HEADING"
	echo
	echo "Input: $PROFILE; $(wc -c < "$W/in.raw") bytes of raw text," \
		"symbolized $(wc -c < "$W/server.raw") bytes;" \
		"conversion into a fresh store (sym store add, both) ${CONVERT} s."
	echo "Host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" \
		"at the end; $RUNS runs each, medians."
	echo
	echo "| what | wall s | sym CPU s | symd CPU s | wall s of each run |"
	echo "|---|---|---|---|---|"
	for n in server store pprof_server pprof_sym; do
		case $n in
		server) d="sym symbolize --server (warm symd), end to end" ;;
		store) d="sym symbolize --store (local store, no daemon)" ;;
		pprof_server) d="sym pprof --server from the raw input" ;;
		pprof_sym) d="sym pprof of the symbolized raw file" ;;
		esac
		echo "| $d | $(med $n) | $(med $n 2) | $(med $n 3) |" \
			"$(awk '{ printf "%s ", $1 }' "$W/$n.times")|"
	done
	echo "| (the symbolization phase of the first, as its summary" \
		"says) | $PHASE | | | $(tr '\n' ' ' < "$W/server.phase")|"
	echo
	echo "symd got $REQS symbolize requests per run (one per build ID)." \
		"Goal (issue 7): under 2 s end to end through a warm symd: $GOAL" \
		"(${SERVER} s)."
	echo
}
report > "$W/report.md"
append_report "$HEADING" "$W/report.md" "$OUT/report.md"
cat "$W/report.md"
echo "report: $OUT/report.md ($W/report.md)"
exit 0
