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
# Cases, at each rate of BENCH_RECORD_RATES ("99 9999") Hz, the lowest
# and highest of which give the per-sample slope: 9999 Hz, since on this
# VM a few microseconds a sample between 99 and 999 Hz were below the
# runs' own spread (2-3% of the workload's CPU); "" skips this part:
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
# below perf record's at the same settings.  Issue 16, for the default
# mode (dwarf): at most 1% of one CPU at 99 Hz, kernel side plus agent
# (the steady-state model: per-sample cost, the slope between the two
# rates, x 99); agent CPU at most 0.3 x perf record --call-graph dwarf +
# perf script's.  They are judged and printed, not enforced: on a shared
# machine the noise exceeds 1%.
#
# Then Debian's own programs (tests/e2e/lib/workloads-lib.sh: python3.11, xz,
# sort, gzip, zstd -T2), BENCH_RUNS runs each of: alone, under the default
# sym record, under perf record -e cpu-clock --call-graph dwarf (then perf
# script), at BENCH_WL_RATES ("99 999") Hz: wall time and CPU (cputime's
# third field is the wall time), the agent's CPU, and the share of whole
# stacks (tests/e2e/lib/workloads_check.py whole, the same judgement for
# both) at the highest rate.  BENCH_WORKLOADS picks programs ("" skips
# the section).
#
# Knobs: BENCH_RUNS BENCH_RECORD_WORK BENCH_RECORD_RATES BENCH_WORKLOADS
# BENCH_WL_RATES BENCH_DIR SYM
# The report is printed and written to $BENCH_DIR/record-report.md.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYM=${SYM:-$ROOT/bin/sym}
RUNS=${BENCH_RUNS:-3}
WORK=${BENCH_RECORD_WORK:-300000}
RATES=${BENCH_RECORD_RATES-99 9999}
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

# The burner at each rate (not indented: its report is a here-document)
if [ -n "$RATES" ]; then
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


def slope(c):
    """Case c's cost per sample, the slope from the lowest rate to the
    highest: (workload's, the kernel side; agent's) in seconds, or None."""
    if (c, lo) not in stats or (c, hi) not in stats or lo == hi:
        return None
    (w0, a0, n0), (w1, a1, n1) = stats[(c, lo)], stats[(c, hi)]
    if n1 <= n0:
        return None
    return (w1 - w0) / (n1 - n0), (a1 - a0) / (n1 - n0)


for c in ("sym-fp", "perf-fp", "sym-dwarf", "perf-dwarf"):
    if slope(c):
        pw, pa = slope(c)
        print("- %s: per-sample cost (slope %d -> %d Hz): agent %.1f us, "
              "workload (kernel side) %.1f us; the agent's steady-state "
              "share of a CPU: %.3f%% at %d Hz, %.3f%% at %d Hz" %
              (c, lo, hi, 1e6 * pa, 1e6 * pw, 100 * pa * lo, lo,
               100 * pa * hi, hi))
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
for c, what in (("sym-fp", "fp mode"), ("sym-dwarf", "the default, dwarf")):
    if slope(c):
        pw, pa = slope(c)
        ss = 100 * (pw + pa) * 99
        print("- goal: %s at 99 Hz costs <= 1%% of one CPU, steady state "
              "(kernel side %.1f us + agent %.1f us a sample, the slope %d "
              "-> %d Hz, x 99 a second): %.2f%% (%s)" %
              (what, 1e6 * pw, 1e6 * pa, lo, hi, ss,
               "met" if ss <= 1 else "missed"))
        if (c, 99) in inproc:
            # At 99 Hz the agent meets each PC and file fewer times than
            # at the high rate, so its own measure there is higher.
            own = med(inproc[(c, 99)]) / 1e6
            ss = 100 * (pw + max(pa, own)) * 99
            print("  - the same with the agent's own measure at 99 Hz "
                  "(reading and unwinding %.1f us a sample): %.2f%% (%s)" %
                  (1e6 * own, ss, "met" if ss <= 1 else "missed"))
for m in ("fp", "dwarf"):
    for hz in rates:
        s, p = stats.get(("sym-" + m, hz)), stats.get(("perf-" + m, hz))
        if s and p and p[1] > 0:
            goal = 0.3 if m == "dwarf" else 1.0
            print("- goal: agent CPU at most %.1f x perf's, %s %d Hz: sym "
                  "%.3f s, perf %.3f s%s, ratio %.2f (%s)" %
                  (goal, m, hz, s[1], p[1],
                   " (record + script)" if m == "dwarf" else "",
                   s[1] / p[1], "met" if s[1] <= goal * p[1] else "missed"))
EOF
else
	echo "# sym record: overhead budget (tests/bench/record-bench.sh)" > "$REPORT"
fi

# ---- Debian's own programs ----
WLS=${BENCH_WORKLOADS-python xz sort gzip zstd}
WL_RATES=${BENCH_WL_RATES:-99 999}
if [ -n "$WLS" ]; then
	T=$OUT/wl
	SYM_ROOT=$ROOT
	mkdir -p "$T"
	. "$ROOT/tests/e2e/lib/workloads-lib.sh"
	wl_inputs || { note "cannot make the workloads' inputs"; exit 1; }
	export SYM_STORE="$WL/store" SYM
	WL_HI=$(echo $WL_RATES | tr ' ' '\n' | sort -n | tail -1)
	: > "$T/results"
	# wlone NAME CASE HZ: one run; appends "name case hz wall
	# script-wall work agent script samples whole/total".
	wlone() {
		rm -f "$T"/*.t "$T/out.raw" "$T/p.data" "$T/p.txt"
		k=- n=0
		case $2 in
		none)	wl_run "$1" "$T/o" "$CPUTIME" "$T/outer.t" \
				"$CPUTIME" "$T/inner.t" ;;
		sym)	wl_run "$1" "$T/o" "$CPUTIME" "$T/outer.t" "$SYM" record \
				-q -F "$3" -o "$T/out.raw" -- "$CPUTIME" "$T/inner.t"
			n=$(awk '$1 == "samples" { print $2 }' "$T/out.raw") ;;
		perf)	wl_run "$1" "$T/o" "$CPUTIME" "$T/outer.t" perf record \
				-q -e cpu-clock -F "$3" --call-graph dwarf \
				-o "$T/p.data" -- "$CPUTIME" "$T/inner.t"
			"$CPUTIME" "$T/script.t" perf script --no-inline \
				-F comm,pid,tid,ip,dso -i "$T/p.data" \
				> "$T/p.txt" 2> /dev/null
			n=$(grep -c '^[^[:space:]]' "$T/p.txt") ;;
		esac
		if [ "$2" != none ] && [ "$3" = "$WL_HI" ]; then
			f=$T/out.raw
			[ "$2" = perf ] && f=$T/p.txt
			k=$(python3 "$ROOT/tests/e2e/lib/workloads_check.py" whole \
				"$f" | awk '{ print $2 "/" $3 }')
		fi
		[ -f "$T/script.t" ] || echo "0 0 0" > "$T/script.t"
		awk -v name="$1" -v c="$2" -v hz="$3" -v n="${n:-0}" -v k="$k" '
			FILENAME ~ /outer/ { wall = $3; cpu = $1 + $2 }
			FILENAME ~ /inner/ { work = $1 + $2 }
			FILENAME ~ /script/ { s = $1 + $2; swall = $3 }
			END { printf "%s %s %s %.6f %.6f %.6f %.6f %.6f %s %s\n",
				name, c, hz, wall, swall, work, cpu - work + s,
				s, n, k }' \
			"$T/outer.t" "$T/inner.t" "$T/script.t" >> "$T/results"
	}
	note "workloads: $WLS; $RUNS runs of each alone, under sym and under perf at $WL_RATES Hz"
	r=0
	while [ "$r" -lt "$RUNS" ]; do
		for w in $WLS; do
			wl_have "$w" || { note "skipping $w: $wl_why"; continue; }
			wlone "$w" none 0
			for hz in $WL_RATES; do
				wlone "$w" sym "$hz"
				[ "$HAVE_PERF" = 1 ] && wlone "$w" perf "$hz"
			done
		done
		r=$((r + 1))
	done
	python3 "$ROOT/tests/bench/record-wl-report.py" "$T/results" \
		>> "$REPORT"
fi
cat "$REPORT"
