#!/bin/sh
# agg-bench.sh - `make bench`: where the eBPF agent aggregates stacks
# (issue 20, docs/record.md "Aggregation"), measured in one run:
#   perf    sym record as it is without --aggregate: perf-event rings,
#           8 KiB stack copies unwound here with CFI
#   user    --aggregate user: the BPF on-CPU sampler (a perf_event
#           program) ships raw events (registers, stack copy) through the
#           BPF ring buffer, polled every 200 ms; aggregated in the agent
#   kernel  --aggregate kernel: the same program unwinds by frame
#           pointers in BPF and sums per stack hash in maps, drained
#           every 200 ms
# and, for off-CPU (--off-cpu, the workload blocking 200 us after each
# operation), user against kernel.
#
# Workload: tests/bench/agg-work.c, THREADS threads doing 20 us operations
# at the end of one of CARD distinct 12-deep call chains (1: low
# cardinality, 4096: high), for AGG_SECS seconds of wall time.  Each case
# is run AGG_RUNS times, the cases alternating within each round, and the
# medians printed:
#   work %   the workload's CPU per operation against the same workload
#            without a profiler (the kernel side of sampling -- the
#            interrupt, the BPF program, the stack copy -- is charged to
#            the workload)
#   agent %  the recorder's own CPU (its getrusage, user + sys), in % of
#            one CPU over the run, start-up included (loading and
#            verifying the BPF programs, reading /proc/kallsyms)
#   loop %   of it, the steady state: the thread CPU of its rounds
#            (draining, unwinding, aggregating), in % of one CPU
#   bpf ms   the BPF programs' run time (kernel.bpf_stats_enabled is set
#            for the bench and put back)
#   kmem MB  kernel memory of the maps and buffers (their memlock, as
#            bpftool map show says it); for perf, the rings
#   lost     events lost (the file's header: ring full, maps full,
#            collisions)
#   samples  events in the file; ev/row: events per row drained from the
#            maps (kernel only)
# Knobs (the full matrix takes about 4 minutes a round): AGG_RUNS (3),
# AGG_SECS (2), AGG_RATES ("99 999 4999"), AGG_THREADS ("1 16 256"),
# AGG_CARDS ("1 4096"), AGG_MODES ("perf user kernel"), AGG_OFFCPU (1: the
# off-CPU part too).  Needs root (BPF).  The table goes to stdout and to
# build/bench/agg-bench.txt.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYM=$ROOT/bin/sym
OUT=$ROOT/build/bench/agg
RUNS=${AGG_RUNS:-3}
SECS=${AGG_SECS:-2}
RATES=${AGG_RATES-99 999 4999}
THREADS=${AGG_THREADS:-1 16 256}
CARDS=${AGG_CARDS:-1 4096}
MODES=${AGG_MODES-perf user kernel}
OFFCPU=${AGG_OFFCPU:-1}
. "$ROOT/tests/bench/lib.sh"
note() { echo "agg-bench: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
	note "skipped: BPF needs root"
	exit 0
fi
[ -x "$SYM" ] || { note "no $SYM: make first"; exit 1; }
mkdir -p "$OUT"
gcc -O2 -g -fno-omit-frame-pointer -pthread -I"$ROOT/libsym" \
	-o "$OUT/agg-work" "$ROOT/tests/bench/agg-work.c" || exit 1
if ! "$SYM" record -q --aggregate user -o "$OUT/probe.raw" -- true \
	2> "$OUT/probe.err"; then
	note "skipped: $(head -1 "$OUT/probe.err")"
	exit 0
fi
stats0=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$stats0' EXIT
trap 'exit 1' INT TERM

# run NAME MODE HZ THREADS CARD [block]: one run; appends its figures
# "work_cpu ops agent bpf kmem lost samples evrow loop" to $OUT/NAME.res
run() {
	_n=$1 _m=$2 _hz=$3 _t=$4 _c=$5 _b=${6:-}
	_w="$OUT/agg-work $_t $SECS $_c $_b"
	case $_m in
	none) $_w > "$OUT/w.out" 2> /dev/null; : > "$OUT/r.err" ;;
	*)
		set -- -o "$OUT/r.raw"
		[ "$_m" = perf ] || set -- "$@" --aggregate "$_m"
		if [ -n "$_b" ]; then
			set -- "$@" --off-cpu
		else
			set -- "$@" -F "$_hz"
		fi
		"$SYM" record "$@" -- $_w > "$OUT/w.out" 2> "$OUT/r.err" ;;
	esac
	awk -v f="$OUT/r.err" -v raw="$OUT/r.raw" -v m="$_m" '
	function num(re,   s) { s = ""; while ((getline l < f) > 0)
		if (match(l, re)) { s = substr(l, RSTART, RLENGTH); gsub(/[^0-9.]/, "", s) }
		close(f); return s == "" ? 0 : s }
	function hdr(k,   l, a) { if (m == "none") return 0
		while ((getline l < raw) > 0) { split(l, a, " "); if (a[1] == k) { close(raw); return a[2] } }
		close(raw); return 0 }
	{ print $4, $2, num("agent CPU [0-9.]+"), num("programs ran [0-9.]+"),
		num("(buffers|rings) [0-9.]+"), hdr("lost"), hdr("samples"),
		num("\\([0-9.]+ events a row"),
		num("unwinding [0-9.]+ us") * hdr("samples") / 1e6 }' \
		"$OUT/w.out" >> "$OUT/$_n.res"
}

# med NAME FIELD: the median of field FIELD of NAME's runs
med() { median $(awk -v f="$2" '{ print $f }' "$OUT/$1.res"); }

rm -f "$OUT"/*.res
note "load before: $(uptime)"
start=$(date +%s)
r=0
while [ $r -lt "$RUNS" ]; do
	r=$((r + 1))
	for t in $THREADS; do
		for c in $CARDS; do
			run "none-$t-$c" none 0 "$t" "$c"
			for hz in $RATES; do
				for m in $MODES; do
					run "$m-$hz-$t-$c" "$m" "$hz" "$t" "$c"
				done
			done
			[ "$OFFCPU" = 1 ] || continue
			run "noneb-$t-$c" none 0 "$t" "$c" block
			for m in user kernel; do
				run "off$m-$t-$c" "$m" 0 "$t" "$c" block
			done
		done
	done
	note "round $r of $RUNS done ($(($(date +%s) - start)) s); load: $(uptime | sed 's/.*average: //')"
done

# row NAME BASE LABEL: one line of the table
row() {
	bw=$(med "$2" 1) bo=$(med "$2" 2)
	w=$(med "$1" 1) o=$(med "$1" 2)
	awk -v l="$3" -v w="$w" -v o="$o" -v bw="$bw" -v bo="$bo" \
	    -v a="$(med "$1" 3)" -v b="$(med "$1" 4)" -v k="$(med "$1" 5)" \
	    -v lo="$(med "$1" 6)" -v s="$(med "$1" 7)" -v e="$(med "$1" 8)" \
	    -v u="$(med "$1" 9)" -v secs="$SECS" 'BEGIN {
		ov = (o > 0 && bo > 0 && bw > 0) ? 100 * ((w / o) / (bw / bo) - 1) : 0
		printf "%-26s %7.1f %7.1f %7.1f %7.0f %7.2f %7d %8d %6s\n", l,
			ov, 100 * a / secs, 100 * u / secs, 1000 * b, k, lo, s,
			(e > 0 ? sprintf("%.2f", e) : "-") }'
}

{
	echo "## agg-bench ($(date -u +%Y-%m-%dT%H:%MZ), $RUNS runs of $SECS s, medians; load at the end:$(uptime | sed 's/.*average://'))"
	printf "%-26s %7s %7s %7s %7s %7s %7s %8s %6s\n" \
		"case (mode hz threads card)" "work%" "agent%" "loop%" \
		"bpf ms" "kmem MB" lost samples ev/row
	for t in $THREADS; do
		for c in $CARDS; do
			for hz in $RATES; do
				for m in $MODES; do
					row "$m-$hz-$t-$c" "none-$t-$c" "$m $hz $t $c"
				done
			done
			[ "$OFFCPU" = 1 ] || continue
			for m in user kernel; do
				row "off$m-$t-$c" "noneb-$t-$c" "off-cpu $m - $t $c"
			done
		done
	done
} | tee "$OUT/../agg-bench.txt"
