#!/bin/sh
# symprof-bench.sh - `make bench`: what libsymprof costs (issues 6 and 16), as
# ratios in one run.
#
# 1. CPU overhead.  tests/bench/symprof-work.c (BENCH_SYMPROF_THREADS
#    threads, each 32 frames deep, spinning BENCH_SYMPROF_WORK million
#    iterations; built without frame pointers, as Debian builds its
#    code, so every stack is unwound with CFI) runs without a profiler, with libsymprof preloaded at 99
#    and 999 Hz (what `sym run -F` sets up, without sym's own start-up in
#    the figure: per-thread CPU timers, the profile written at exit), and
#    under `sym record -F 99` / `-F 999` when `sym record --help` works.
#    The figure is CPU time (user + system from wait4(), the whole process
#    tree), because the machine is shared: wall time would measure the
#    other tenants.  Median of BENCH_RUNS runs (3), the variants
#    interleaved run by run.  Overhead = median / median(no profiler) - 1.
#    Beside it: the overhead on the working threads' own CPU time (where
#    the signals and the handler land: no start-up, exit or drain thread
#    in it), samples per second of CPU, the share of whole (unflagged)
#    stacks, the drain thread's own CPU (a comment in the raw file), and
#    the fixed cost of start-up and exit (a
#    run with almost no work, median of 5).  At 999 Hz the kernel's
#    CPU-time timers expire on the scheduler tick (CONFIG_HZ, 250 here),
#    so a thread gets at most one signal per tick and the overrun is
#    folded into the sample's weight: the rate, and the cost, stop growing
#    at CONFIG_HZ.
#
# 2. Per-sample cost, in two parts (tests/bench/symprof-handler-bench.c,
#    thread CPU time, the minimum of 3 repetitions):
#    - the floor: a signal sent to the thread and delivered to an empty
#      handler (the kernel's part, paid by every signal-driven sampler);
#    - our handler's own work: sp_handler() (tools/symprof/handler.c)
#      called directly on a context 8, 32 and 128 frames deep, writing
#      into its ring (emptied after each call, as the drain thread does):
#      frames with frame pointers, frames without (16 bytes each), and
#      frames without of 256 bytes each (about what Debian's python3.11
#      and xz use); the handler copies the used stack, so its cost
#      follows the bytes, not the frames;
#    - the drain thread's CFI unwind of the same record (cfi.c, without
#      its cache: an upper bound), with the frames it finds.
#    And the model: (samples x (floor + handler at 32 frames) + drain
#    thread) / CPU without profiler, to set against the measured overhead,
#    which on a busy machine is within the noise at 99 Hz.
#
# 3. Debian's own programs (issue 16; tests/e2e/lib/workloads-lib.sh: python3.11,
#    xz -9, sort, gzip -9, zstd -T2, about 2 s of CPU each): the wall time
#    without a profiler, under sym run at 99 Hz and under perf record
#    --call-graph dwarf at 99 Hz (perf's own start-up and build-id pass at
#    the end included, as a user waits for them), with the CPU time of
#    the whole (GNU time: perf's own process counts), in BENCH_WL_RUNS (5)
#    rounds of the three back to back in a rotating order; each profiler's
#    overhead is against the unprofiled run of its round, median over the
#    rounds (the load of a shared machine drifts over minutes).  A
#    profiler "wins" when its wall time was the lower in every round.
#    Beside it, sym run's cost model: (samples x (floor + handler for its
#    largest copy) + drain thread) / CPU; and the share of whole stacks of
#    each (workloads_check.py complete: an outermost frame reached, every
#    return after a call; perf's script judged the same way: its whole).
#    BENCH_WL=0 leaves this part out.
#
# Goals (issues 6 and 16): overhead <= 1 % at 99 Hz; handler <= 1.5 us at
# 32 frames without frame pointers.  Each is reported as met or not, never
# asserted.
#
# Knobs: BENCH_RUNS BENCH_SYMPROF_WORK (1000) BENCH_SYMPROF_THREADS (2)
#        BENCH_WL (1) BENCH_WL_RUNS (5) BENCH_DIR (build/bench) SYM CC.
# The report is printed and written to $BENCH_DIR/symprof.md.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SYM=${SYM:-$ROOT/bin/sym}
OUT=${BENCH_DIR:-$ROOT/build/bench}
RUNS=${BENCH_RUNS:-3}
WORK=${BENCH_SYMPROF_WORK:-1000}
THREADS=${BENCH_SYMPROF_THREADS:-2}
DEPTH=32
W=$OUT/symprof
export LC_ALL=C

die() { echo "symprof-bench: $*" >&2; exit 1; }
note() { echo "symprof-bench: $*" >&2; }

[ -x "$SYM" ] || die "no $SYM; run make first"
[ -r lib/libsymprof.so ] || die "no lib/libsymprof.so; run make first"
mkdir -p "$W"
LIB=$ROOT/lib/libsymprof.so

CFL="-D_GNU_SOURCE -std=gnu11 -O2 -g"
${CC:-cc} $CFL -fomit-frame-pointer -Ilibsym -pthread -o "$W/work" \
	tests/bench/symprof-work.c || die "cannot build symprof-work"
${CC:-cc} $CFL -fno-omit-frame-pointer -Wall -Wextra -Itools/symprof \
	-Ilibsym -o "$W/hbench" tests/bench/symprof-handler-bench.c \
	tools/symprof/handler.c tools/symprof/cfi.c tools/symprof/maps.c ||
	die "cannot build symprof-handler-bench"

REC=0
if "$SYM" record --help > /dev/null 2>&1; then
	REC=1
else
	note "sym record is not available: compared with no profiler only"
fi

# cpu NAME CMD...: run CMD, append its user+system seconds (wait4's
# rusage: microseconds, the whole tree) to $W/NAME, and the CPU seconds of
# its working threads (symprof-work's own report) to $W/NAME.work.
cpu() {
	_n=$1; shift
	if ! python3 -c '
import os, sys
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    os.dup2(w, 1)
    os.execvp(sys.argv[1], sys.argv[1:])
os.close(w)
out = os.fdopen(r).read()
_, st, ru = os.wait4(pid, 0)
if os.waitstatus_to_exitcode(st) != 0:
    sys.exit(1)
work = [l.split()[1] for l in out.splitlines() if l.startswith("work_cpu_ns ")]
print("%.6f %.6f" % (ru.ru_utime + ru.ru_stime,
                     int(work[0]) / 1e9 if work else 0))' "$@" > "$W/.t" 2> "$W/.err"; then
		note "$_n failed: $(tail -3 "$W/.err" | tr '\n' ' ')"
		return 0
	fi
	awk '{print $1}' "$W/.t" >> "$W/$_n"
	awk '{print $2}' "$W/.t" >> "$W/$_n.work"
}

median() {
	[ -s "$1" ] || { echo nan; return; }
	sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}

rm -f "$W"/none* "$W"/p99* "$W"/p999* "$W"/r99* "$W"/r999*
note "overhead: $RUNS runs of $THREADS threads x ${WORK}M iterations at depth $DEPTH"
r=0
while [ $r -lt "$RUNS" ]; do
	r=$((r + 1))
	cpu none env "$W/work" "$THREADS" "$DEPTH" "$WORK"
	cpu p99 env LD_PRELOAD="$LIB" SYMPROF_HZ=99 SYMPROF_OUT="$W/p99.raw" \
		"$W/work" "$THREADS" "$DEPTH" "$WORK"
	cpu p999 env LD_PRELOAD="$LIB" SYMPROF_HZ=999 SYMPROF_OUT="$W/p999.raw" \
		"$W/work" "$THREADS" "$DEPTH" "$WORK"
	if [ $REC = 1 ]; then
		cpu r99 "$SYM" record -F 99 -o "$W/r99.raw" -- \
			"$W/work" "$THREADS" "$DEPTH" "$WORK"
		cpu r999 "$SYM" record -F 999 -o "$W/r999.raw" -- \
			"$W/work" "$THREADS" "$DEPTH" "$WORK"
	fi
	note "run $r of $RUNS done"
done
# The fixed part: start-up (handler, drain thread, mapping table) and the
# write at exit, on a run with almost no work; median of 5.
rm -f "$W"/none0 "$W"/p0
for r in 1 2 3 4 5; do
	cpu none0 env "$W/work" "$THREADS" "$DEPTH" 1
	cpu p0 env LD_PRELOAD="$LIB" SYMPROF_HZ=99 SYMPROF_OUT="$W/p0.raw" \
		"$W/work" "$THREADS" "$DEPTH" 1
done

# Per-sample cost: the minimum of 3 repetitions of each.
best() {
	_k=$1; shift
	for _i in 1 2 3; do
		"$W/hbench" "$@" | awk -v k="$_k" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}'
	done | sort -n | head -1
}
note "per-sample cost"
FLOOR=$(best floor_ns floor 100000)
# prow DEPTH FRAMES: one line of the per-sample table.
prow() {
	_h=$(best handler_ns handler "$1" 200000 "$2")
	_u=$(best unwind_ns unwind "$1" 5000 "$2")
	_o=$("$W/hbench" unwind "$1" 1 "$2")
	_b=$(echo "$_o" | awk '{print $4}')
	_f=$(echo "$_o" | awk '{print $6}')
	awk -v fl="$FLOOR" -v h="$_h" -v u="$_u" -v d="$1" -v k="$2" \
	    -v b="$_b" -v f="$_f" 'BEGIN {
		printf "| %s frames, %s | %s | %.0f ns | %.0f ns | %.0f ns | %.1f us, %s frames |\n",
			d, k, b, fl, h, fl + h, u / 1000, f }'
	echo "$_b $_h" >> "$W/.hfit"
	[ "$1 $2" = "32 nofp256" ] && echo "$_h" > "$W/.h32"
	[ "$1 $2" = "32 nofp" ] && echo "$_h" > "$W/.h32small"
	return 0
}
: > "$W/.hfit"
for k in fp nofp nofp256; do
	for d in 8 32 128; do
		prow "$d" "$k"
	done
done > "$W/.ptab"
# Debian's programs: wall time and whole stacks, sym run against perf.
# timed NAME PREFIX...: one run of workload NAME after PREFIX (GNU time
# around all of it); prints its wall and CPU seconds (user + system, the
# profiler's own processes included).
timed() {
	_n=$1; shift
	wl_run "$_n" "$W/wl.out" /usr/bin/time -o "$W/wl.time" \
		-f '%e %U %S' "$@"
	[ "$(cat "$W/wl.out.rc")" = 0 ] || note "$_n failed under: $*"
	awk '{print $1, $2 + $3}' "$W/wl.time"
}
# variant NAME V: one run of variant V (none, run, perf) of NAME.
variant() {
	case $2 in
	none) timed "$1" ;;
	run) timed "$1" "$SYM" run -F 99 -o "$W/wl.$1.raw" -- ;;
	perf) timed "$1" perf record -q -e cpu-clock -F 99 --call-graph dwarf \
		-o "$W/wl.$1.data" -- ;;
	esac
}
# whole RAW|PERFSCRIPT: the share of whole, unflagged stacks
# workloads_check finds (a perf script's frames judged the same way).
whole() {
	python3 tests/e2e/lib/workloads_check.py whole "$1" 2>/dev/null |
		awk '$1 == "whole" && $3 > 0 {printf "%.2f%%", 100 * $2 / $3}'
}
# The handler's work for a copy of B bytes, from the per-sample table's
# smallest and largest copies (linear: it is a memcpy).
hfit() {
	sort -n "$W/.hfit" | awk -v b="$1" 'NR == 1 {b1 = $1; h1 = $2} {b2 = $1; h2 = $2}
		END {printf "%.1f", h1 + (b - b1) * (h2 - h1) / (b2 - b1)}'
}
WLROWS=$W/.wltab
: > "$WLROWS"
if [ "${BENCH_WL:-1}" = 1 ] && command -v perf > /dev/null 2>&1; then
	T=$W/wl SYM_ROOT=$ROOT
	mkdir -p "$T"
	. tests/e2e/lib/workloads-lib.sh
	wl_inputs || die "cannot make the workloads' inputs"
	export SYM_STORE="$WL/store"
	WLRUNS=${BENCH_WL_RUNS:-5}
	for n in $WORKLOADS; do
		wl_have "$n" || { note "$n: $wl_why"; continue; }
		note "workload $n: $WLRUNS rounds"
		rm -f "$W/wl.$n".*
		# Each round runs the three variants back to back, in an
		# order that rotates, and each profiler is compared with the
		# run without one of its own round: the machine's load drifts
		# over minutes, less within a round.
		r=0
		while [ $r -lt "$WLRUNS" ]; do
			case $((r % 3)) in
			0) order="none run perf" ;;
			1) order="run perf none" ;;
			2) order="perf none run" ;;
			esac
			for v in $order; do
				echo "$v $(variant "$n" "$v")"
			done | awk '{w[$1] = $2; c[$1] = $3}
				END {print w["none"], w["run"], w["perf"], c["none"], c["run"], c["perf"]}' \
				>> "$W/wl.$n.rounds"
			r=$((r + 1))
		done
		perf script --no-inline -F comm,pid,tid,ip,dso \
			-i "$W/wl.$n.data" > "$W/wl.$n.txt" 2> /dev/null
		_raw=$W/wl.$n.raw
		awk -v n="$n" -v d="$(wl_desc "$n")" \
		    -v wr="$(whole "$_raw")" -v wp="$(whole "$W/wl.$n.txt")" \
		    -v s="$(sed -n 's/^samples //p' "$_raw")" \
		    -v dr="$(sed -n 's/^# libsymprof: drain thread cpu_ns //p' "$_raw")" \
		    -v h="$(hfit "$(sed -n 's/.*largest \([0-9]*\) bytes.*/\1/p' "$_raw")")" \
		    -v fl="$FLOOR" '
		function med(a, k,   i, j, t) {
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		}
		{ k++; none[k] = $1; ow[k] = $2 / $1 - 1; pw[k] = $3 / $1 - 1
		  oc[k] = $5 / $4 - 1; pc[k] = $6 / $4 - 1; cpu[k] = $4
		  wins += $2 < $3 }
		END {
			win = (wins == k) ? "sym run" : (wins == 0) ? "perf" : \
				sprintf("not resolved (sym run %d of %d)", wins, k)
			c0 = med(cpu, k)
			model = 100 * (s * (fl + h) + dr) / 1e9 / c0
			printf "| %s (%s) | %.2f s | %s | %+.1f %% | %+.1f %% | %.2f %% | %s | %+.1f %% | %+.1f %% | %s |\n",
				n, d, med(none, k), wr, 100 * med(ow, k), 100 * med(oc, k),
				model, wp, 100 * med(pw, k), 100 * med(pc, k), win
		}' "$W/wl.$n.rounds" >> "$WLROWS"
	done
fi

H32=$(cat "$W/.h32")
H32S=$(cat "$W/.h32small")
B32=$(best both_ns both 32 100000 nofp256)

N=$(median "$W/none")
NW=$(median "$W/none.work")
# row NAME LABEL RAW: one line of the overhead table.
row() {
	_m=$(median "$W/$1")
	_w=$(median "$W/$1.work")
	_s=- _d=- _c=-
	if [ -r "$3" ]; then
		_s=$(sed -n 's/^samples //p' "$3")
		_c=$(awk '$1 == "stack" {n += $2; if ($6 == "-") w += $2}
			END {if (n) printf "%.2f %%", 100 * w / n}' "$3")
		_d=$(sed -n 's/^# libsymprof: drain thread cpu_ns //p' "$3")
		[ -n "$_d" ] && _d=$(awk -v d="$_d" 'BEGIN {printf "%.1f ms", d / 1e6}')
		[ -n "$_d" ] || _d=-
	fi
	awk -v n="$N" -v nw="$NW" -v m="$_m" -v w="$_w" -v s="$_s" -v d="$_d" \
	    -v l="$2" -v c="$_c" 'BEGIN {
		if (m == "nan") { printf "| %s | failed | | | | | |\n", l; exit }
		o = (n > 0) ? 100 * (m / n - 1) : 0
		ow = (nw > 0 && w > 0) ? sprintf("%+.2f %%", 100 * (w / nw - 1)) : "-"
		r = (s != "-" && m > 0) ? sprintf("%.0f", s / m) : "-"
		printf "| %s | %.4f s | %+.2f %% | %s | %s | %s | %s |\n", l, m, o, ow, r, c, d
	}'
}

{
	echo "## libsymprof (issues 6, 16): $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "### CPU overhead ($THREADS threads x ${WORK}M iterations, $DEPTH frames deep without frame pointers; median CPU time of $RUNS runs)"
	echo
	echo "| profiler | CPU (user+sys) | overhead | overhead on the working threads | samples/s of CPU | whole stacks | drain thread |"
	echo "|---|---|---|---|---|---|---|"
	echo "| none | $N s | | | | | |"
	awk -v a="$(median "$W/none0")" -v b="$(median "$W/p0")" 'BEGIN {
		printf "| libsymprof start-up and exit, once per process (a run with no work) | %+.1f ms | | | | | |\n", 1000 * (b - a) }' 
	row p99 "libsymprof 99 Hz" "$W/p99.raw"
	row p999 "libsymprof 999 Hz" "$W/p999.raw"
	if [ $REC = 1 ]; then
		row r99 "sym record 99 Hz" "$W/r99.raw"
		row r999 "sym record 999 Hz" "$W/r999.raw"
	else
		echo "| sym record | not available | | | | | |"
	fi
	echo
	echo "### Per-sample cost (thread CPU time, best of 3)"
	echo
	echo "| stack (fp: frame pointers; nofp: none, 16-byte frames; nofp256: none, 256-byte frames) | bytes copied | floor: kernel delivery to an empty handler | our handler's own work | total | drain thread's CFI unwind (uncached), frames found |"
	echo "|---|---|---|---|---|---|"
	cat "$W/.ptab"
	echo
	echo "Signal and handler together, 32 frames of 256 bytes without frame pointers (tgkill to sp_handler): $B32 ns."
	if [ -s "$WLROWS" ]; then
		echo
		echo "### Debian's programs at 99 Hz: whole stacks and overhead, sym run against perf record --call-graph dwarf (medians of ${BENCH_WL_RUNS:-5} rounds, each profiler against the unprofiled run of its round)"
		echo
		echo "| program | wall, no profiler | sym run: whole stacks | sym run: wall overhead | sym run: CPU overhead | sym run: model | perf: whole stacks | perf: wall overhead | perf: CPU overhead (perf's own included) | less wall time in every round |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		cat "$WLROWS"
	fi
	echo
	dr() { sed -n 's/^# libsymprof: drain thread cpu_ns //p' "$1" 2>/dev/null; }
	# The run-to-run spread without a profiler: (max - min) / median.
	spread=$(sort -n "$W/none" | awk '{a[NR] = $1} END {
		if (NR < 2) { print 0; exit }
		printf "%.2f", 100 * (a[NR] - a[1]) / a[int((NR + 1) / 2)] }')
	awk -v n="$N" -v f="$FLOOR" -v h="$H32" -v hs="$H32S" -v sp="$spread" \
	    -v s99="$(sed -n 's/^samples //p' "$W/p99.raw" 2>/dev/null)" \
	    -v s999="$(sed -n 's/^samples //p' "$W/p999.raw" 2>/dev/null)" \
	    -v d99="$(dr "$W/p99.raw")" -v d999="$(dr "$W/p999.raw")" \
	    -v m99="$(median "$W/p99")" 'BEGIN {
		x99 = 100 * (s99 * (f + h) + d99) / 1e9 / n
		x999 = 100 * (s999 * (f + h) + d999) / 1e9 / n
		printf "Model ((samples x (floor + handler) + drain thread) / CPU without profiler): 99 Hz %.3f %%, 999 Hz %.3f %%.\n", x99, x999
		printf "Run-to-run spread without a profiler: %.2f %% of the median.\n", sp
		o99 = 100 * (m99 / n - 1)
		v = (o99 <= 1) ? "met" : (o99 <= sp) ? "not resolved (within the run-to-run spread)" : "NOT met"
		printf "\nGoals: overhead at 99 Hz <= 1 %%: %s (measured %+.2f %%, model %.3f %%); handler <= 1.5 us at 32 frames without frame pointers: %s (%.0f ns with 256-byte frames, %.0f ns with 16-byte ones).\n",
			v, o99, x99, (h <= 1500) ? "met" : "NOT met", h, hs
	}'
} > "$W/report.md"
cp "$W/report.md" "$OUT/symprof.md"
cat "$OUT/symprof.md"
