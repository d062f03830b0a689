#!/bin/sh
# record-bench.sh - `make bench`: the overhead budget of sym record (design
# note 5: cost = per-sample cost x rate), against no profiler and against
# perf record.
#
# Workload: fixtures/src/prof_burn.c built with frame pointers, running a
# fixed amount of work (prof_burn -n BENCH_RECORD_WORK rounds, about 4 s of
# CPU), so that any slowdown shows as more CPU time.  For each case, each
# of BENCH_RUNS runs (3) measures, with tests/bench/cputime.c (wait4()
# rusage of a command and its descendants, in microseconds):
#   work   user+sys CPU of the workload itself (an inner cputime): it
#          includes what the kernel spends taking the samples (interrupt,
#          callchain walk, stack copy), which is charged to the workload
#   agent  CPU of everything else the profiler ran: the outer cputime
#          around the profiler minus the workload, minus what the inner
#          cputime costs by itself (measured in the 'none' case); for perf
#          in dwarf mode, plus `perf script` (perf unwinds there, sym
#          record unwinds while recording)
# Cases, at each rate of BENCH_RECORD_RATES ("99 999") Hz:
#   none        the workload alone
#   sym fp      sym record -g fp (kernel callchain + CFI leaf repair)
#   perf fp     perf record -e cpu-clock -g
#   sym dwarf   sym record -g dwarf (8 KiB stack copies, unwound here)
#   perf dwarf  perf record -e cpu-clock --call-graph dwarf + perf script
# Printed, as medians: work and agent CPU, overhead = (work + agent) /
# work(none) - 1, the workload's own slowdown, samples, agent CPU per
# sample, and the ratio of sym's agent CPU to perf's.  The per-sample cost
# of each mode is also given as the slope between the two rates,
# (agent@high - agent@low) / (samples@high - samples@low), which takes out
# the fixed start-up cost; and, for sym record, as it measures itself
# (thread CPU time of reading the rings, unwinding and aggregating,
# divided by the samples: the summary line it prints without -q).
#
# Goals (issue 5): overhead <= 1% at 99 Hz in fp mode; sym's agent CPU
# below perf record's at the same settings.  They are judged and printed,
# not enforced: on a shared machine the noise exceeds 1%.
#
# Knobs: BENCH_RUNS BENCH_RECORD_WORK BENCH_RECORD_RATES BENCH_DIR SYM
# The report is printed and written to $BENCH_DIR/record-report.md.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYM=${SYM:-$ROOT/bin/sym}
RUNS=${BENCH_RUNS:-3}
WORK=${BENCH_RECORD_WORK:-300000}
RATES=${BENCH_RECORD_RATES:-99 999}
OUT=${BENCH_DIR:-$ROOT/build/bench}/record
REPORT=${BENCH_DIR:-$ROOT/build/bench}/record-report.md

note() { echo "record-bench: $*" >&2; }

mkdir -p "$OUT"
cd "$OUT"
gcc -O2 -g -fno-omit-frame-pointer -o burn "$ROOT/fixtures/src/prof_burn.c"

if ! "$SYM" record -q -o probe.raw -- true 2> probe.err; then
	note "sym record cannot sample here, skipped: $(head -1 probe.err)"
	exit 0
fi
HAVE_PERF=1
if ! command -v perf > /dev/null 2>&1; then
	note "no perf (Debian package linux-perf): perf cases skipped"
	HAVE_PERF=0
fi

gcc -O2 -I"$ROOT/libsym" -o cputime "$ROOT/tests/bench/cputime.c"
CPUTIME=$OUT/cputime
# t_cpu FILE: user+sys seconds of a cputime output.
t_cpu() { awk 'END { printf "%.6f", $1 + $2 }' "$1"; }

# one CASE HZ RUN: run CASE once, append "case hz work agent samples" to
# results.
one() {
	c=$1 hz=$2 u=-
	rm -f inner.t outer.t script.t out.raw p.data p.err
	case $c in
	none)
		# The same nesting as below: what the inner cputime itself
		# costs is measured here and taken off the agents.
		$CPUTIME outer.t $CPUTIME inner.t ./burn -n "$WORK" ;;
	sym-fp|sym-dwarf)
		mode=${c#sym-}
		$CPUTIME outer.t "$SYM" record -F "$hz" -g "$mode" \
			-o out.raw -- $CPUTIME inner.t ./burn -n "$WORK" \
			2> sym.err
		n=$(awk '$1 == "samples" { print $2 }' out.raw)
		# Its own measure: thread CPU time of reading the rings and
		# unwinding, per sample.
		u=$(sed -n 's/.*unwinding \([0-9.]*\) us per sample.*/\1/p' \
			sym.err) ;;
	perf-fp|perf-dwarf)
		if [ "$c" = perf-fp ]; then cg=fp; else cg=dwarf; fi
		$CPUTIME outer.t perf record -e cpu-clock -F "$hz" \
			--call-graph "$cg" -o p.data -- \
			$CPUTIME inner.t ./burn -n "$WORK" \
			2> p.err > /dev/null || { note "perf record failed:"; \
			cat p.err >&2; return 0; }
		n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' p.err | tail -1)
		if [ "$c" = perf-dwarf ]; then
			$CPUTIME script.t perf script -i p.data \
				> /dev/null 2>&1 || true
		fi ;;
	esac
	w=$(t_cpu inner.t)
	a=$(awk -v o="$(t_cpu outer.t)" -v w="$w" \
		'BEGIN { printf "%.6f", o - w }')
	[ -f script.t ] && a=$(awk -v a="$a" -v s="$(t_cpu script.t)" \
		'BEGIN { printf "%.6f", a + s }')
	echo "$c $hz $w $a ${n:-0} ${u:--}" >> results
}

: > results
CASES="sym-fp sym-dwarf"
[ "$HAVE_PERF" = 1 ] && CASES="sym-fp perf-fp sym-dwarf perf-dwarf"
note "$RUNS runs of: none, then $CASES at $RATES Hz; $WORK rounds each"
r=0
while [ "$r" -lt "$RUNS" ]; do
	# Interleaved, so that a change in the machine's load hits every case.
	one none 0
	for hz in $RATES; do
		for c in $CASES; do
			one "$c" "$hz"
		done
	done
	r=$((r + 1))
done

python3 - "$RATES" > "$REPORT" <<'EOF'
import statistics, sys
rates = [int(x) for x in sys.argv[1].split()]
rows = {}
inproc = {}
for line in open("results"):
    c, hz, w, a, n, u = line.split()
    rows.setdefault((c, int(hz)), []).append((float(w), float(a), int(n)))
    if u != "-":
        inproc.setdefault((c, int(hz)), []).append(float(u))
med = lambda xs: statistics.median(xs)
base = med([w for w, a, n in rows[("none", 0)]])
wrap = med([a for w, a, n in rows[("none", 0)]])
for k in rows:
    rows[k] = [(w, max(0.0, a - wrap), n) for w, a, n in rows[k]]
print("# sym record: overhead budget (tests/bench/record-bench.sh)\n")
print("Workload CPU without a profiler: %.3f s (median of %d); the "
      "measuring wrapper itself: %.4f s, taken off every agent\n" %
      (base, len(rows[("none", 0)]), wrap))
print("| case | Hz | work CPU s | agent CPU s | overhead | workload "
      "slowdown | samples | agent us/sample | reading+unwinding "
      "us/sample |")
print("|---|---|---|---|---|---|---|---|---|")
stats = {}
for hz in rates:
    for c in ("sym-fp", "perf-fp", "sym-dwarf", "perf-dwarf"):
        if (c, hz) not in rows:
            continue
        r = rows[(c, hz)]
        w, a, n = med([x[0] for x in r]), med([x[1] for x in r]), \
            med([x[2] for x in r])
        stats[(c, hz)] = (w, a, n)
        print("| %s | %d | %.3f | %.3f | %+.2f%% | %+.2f%% | %d | %s | %s |" %
              (c, hz, w, a, 100 * ((w + a) / base - 1), 100 * (w / base - 1),
               n, "%.1f" % (1e6 * a / n) if n else "-",
               "%.1f" % med(inproc[(c, hz)]) if (c, hz) in inproc else "-"))
print()
lo, hi = min(rates), max(rates)
for c in ("sym-fp", "perf-fp", "sym-dwarf", "perf-dwarf"):
    if (c, lo) in stats and (c, hi) in stats and lo != hi:
        (w0, a0, n0), (w1, a1, n1) = stats[(c, lo)], stats[(c, hi)]
        if n1 > n0:
            pa = (a1 - a0) / (n1 - n0)
            print("- %s: per-sample cost (slope %d -> %d Hz): agent %.1f us, "
                  "workload (kernel side) %.1f us; the agent's steady-state "
                  "share of a CPU: %.3f%% at %d Hz, %.3f%% at %d Hz" %
                  (c, lo, hi, 1e6 * pa, 1e6 * (w1 - w0) / (n1 - n0),
                   100 * pa * lo, lo, 100 * pa * hi, hi))
print()
if ("sym-fp", 99) in stats:
    w, a, n = stats[("sym-fp", 99)]
    ov = 100 * ((w + a) / base - 1)
    nones = [x[0] for x in rows[("none", 0)]]
    print("- goal: overhead <= 1%% at 99 Hz in fp mode, measured directly "
          "(one %.1f s run, the agent's start-up included): %+.2f%% (%s); "
          "the runs without a profiler alone spread %.2f%%" %
          (base, ov, "met" if ov <= 1 else "missed",
           100 * (max(nones) - min(nones)) / base))
    if ("sym-fp", lo) in stats and ("sym-fp", hi) in stats and lo != hi:
        (w0, a0, n0), (w1, a1, n1) = stats[("sym-fp", lo)], \
            stats[("sym-fp", hi)]
        if n1 > n0:
            per = ((w1 - w0) + (a1 - a0)) / (n1 - n0)
            ss = 100 * per * 99
            print("- goal: overhead <= 1%% at 99 Hz in fp mode, steady "
                  "state (per-sample cost of workload and agent, the slope "
                  "%d -> %d Hz, x 99 samples a second): %.2f%% (%s)" %
                  (lo, hi, ss, "met" if ss <= 1 else "missed"))
for m in ("fp", "dwarf"):
    for hz in rates:
        s, p = stats.get(("sym-" + m, hz)), stats.get(("perf-" + m, hz))
        if s and p and p[1] > 0:
            print("- goal: agent CPU below perf's, %s %d Hz: sym %.3f s, "
                  "perf %.3f s%s, ratio %.2f (%s)" %
                  (m, hz, s[1], p[1],
                   " (record + script)" if m == "dwarf" else "",
                   s[1] / p[1], "met" if s[1] < p[1] else "missed"))
EOF
cat "$REPORT"
