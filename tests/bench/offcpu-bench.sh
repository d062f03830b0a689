#!/bin/bash
# offcpu-bench.sh - `make bench`: what `sym record --off-cpu` costs at
# about 10,000 context switches a second, against no profiler and against
# Debian's libbpf-tools `offcputime` on the same workload (issue 20's
# figure: the workload's throughput drops by at most 5%, and the agent's
# CPU is at most offcputime's).
#
# Workload: fixtures/src/prof_pingpong.c, two threads handing a byte back
# and forth over two pipes, each computing a fixed number of loop
# iterations per turn (calibrated once to BENCH_OFFCPU_WORK_US, 40 us, of
# CPU, then scaled until the fixture alone runs at BENCH_OFFCPU_SWITCHES,
# 10,000, switches a second): every round each thread blocks once.  It starts stopped; the
# profiler attaches to it (-p, like t3111), then it runs
# BENCH_OFFCPU_ROUNDS (20,000) rounds, prints its own measure (wall, CPU,
# context switches over the rounds) and holds until killed.
#
# Cases, alternating within each of BENCH_RUNS runs (5): none, sym
# (`sym record --off-cpu -p`, its defaults: each process's stack copy
# size learned from its unwinds, up to 8 KiB), sym-fixed (the same with
# --fixed-stack: the whole 8 KiB at every switch-out, as before the
# learning), sym-kernel (`--off-cpu --aggregate kernel`: frame-pointer
# stacks summed in BPF maps, no copy, no ring), sd and sd-kernel
# (`--sched-delay`, ring and kernel: the run-queue delay of the same
# switches, with the wake-up programs), offcputime (`offcputime -p
# --stack-storage-size 65536`, as t3111).  BENCH_OFFCPU_CASES picks some
# (none and offcputime are the references of the ratios).  Measured per
# run:
#   rounds/s     the workload's rounds per second of wall time
#   cpu/round    its CPU (both threads, user + system) per round: this
#                includes the BPF program's time at each switch-out,
#                which runs in the workload's context, and is far less
#                noisy than wall time on a shared machine
#   agent        the profiler process's CPU (all its threads,
#                /proc/PID/task/*/schedstat) from attach to the end of
#                the rounds
#   bpf          the run time of its BPF programs over the same window
#                (run_time_ns; statistics on through tests/bench/bpfstats.c
#                for the bench's duration only), on every context switch
#                of the machine, not only the workload's
#   bpf-own      the same less the programs' cost on the machine's other
#                switches, which grows with the run's wall time, not
#                with the workload: each tool's programs are first
#                timed for BENCH_OFFCPU_IDLE_S (1) s with the workload
#                stopped (ns per run: the filter's cost, c), then the
#                window's runs beyond two per workload switch (its
#                switch-out and its switch-in) are charged c each and
#                taken off
#   lost         events the profiler lost (sym: the file's header)
# Printed as medians: throughput against none (rounds/s, and the inverse
# of cpu/round), agent and agent + bpf in us per round (two switch-outs
# and two switch-ins of the workload) and in ms per second at the
# workload's rate alone (median rounds/s of none), and the ratio sym /
# offcputime of agent + bpf.  Per round, not per second of the run: on a
# loaded machine the runs' wall times differ by more than the costs.  Judged, not enforced: on a shared machine
# the noise can exceed 5%.
#
# Where sym's BPF time goes: the cases sym-no-kstack, sym-no-ustack and
# sym-no-ring (BENCH_OFFCPU_CASES="none sym sym-no-kstack sym-no-ustack
# sym-no-ring offcputime") are `sym record --off-cpu` with one part of
# each event left out (SYM_OFFCPU_COST_OMIT: no kernel stack, no user
# stack copy, no ring buffer output; their profiles are wrong); sym's BPF
# us/round less theirs is that part's cost, in the same runs.
#
# Knobs: BENCH_RUNS BENCH_OFFCPU_ROUNDS BENCH_OFFCPU_WORK_US BENCH_DIR SYM
# BENCH_OFFCPU_SWITCHES (10000: the work a turn is scaled from
# BENCH_OFFCPU_WORK_US's calibration until the fixture alone runs at that
# many switches a second, the issue's rate; 0: BENCH_OFFCPU_WORK_US as it
# is, which on the 2026-12-05 machine gave 18,000 to 25,000)
# BENCH_OFFCPU_CFLAGS (more flags for the fixture, e.g.
# -fno-omit-frame-pointer)
# SYM_RECORD_ARGS (more options for sym record, e.g. --stack-size 2048)
# SYM_BASE (another sym binary, e.g. one built at an older commit: adds
# the case sym-base, its `sym record --off-cpu` with the same options,
# alternating with the others, and the ratio of the agents' CPU, so that a
# change is judged within one run on a shared machine).
# The report is printed and written to $BENCH_DIR/offcpu-report.md.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYM=${SYM:-$ROOT/bin/sym}
RUNS=${BENCH_RUNS:-5}
IDLE_S=${BENCH_OFFCPU_IDLE_S:-1}
ROUNDS=${BENCH_OFFCPU_ROUNDS:-20000}
WORK_US=${BENCH_OFFCPU_WORK_US:-40}
SWITCHES_S=${BENCH_OFFCPU_SWITCHES:-10000}
D=${BENCH_DIR:-$ROOT/build/bench}
OFFCPUTIME=$(command -v offcputime || echo /usr/sbin/offcputime)
REPORT=$D/offcpu-report.md
SYM_BASE=${SYM_BASE:-}

note() { echo "offcpu-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"

if [ "$(id -u)" != 0 ]; then
	note "skipped: BPF needs root"
	exit 0
fi
if [ ! -x "$OFFCPUTIME" ]; then
	note "skipped: no offcputime (libbpf-tools)"
	exit 0
fi
mkdir -p "$D/offcpu"
W=$D/offcpu
if ! "$SYM" record -q --off-cpu -o "$W/probe.raw" -- true 2> "$W/probe.err"
then
	note "skipped: sym record --off-cpu cannot run: $(head -1 "$W/probe.err")"
	exit 0
fi

# Under bpfstats (BPF statistics on while it runs), once.
if [ -z "${OFFCPU_BENCH_STATS:-}" ]; then
	gcc -O2 -Wall -I"$ROOT/libsym" -o "$W/bpfstats" "$ROOT/tests/bench/bpfstats.c" -lbpf
	OFFCPU_BENCH_STATS=1 exec "$W/bpfstats" "$0" "$@"
fi

# (BENCH_OFFCPU_CFLAGS=-fno-omit-frame-pointer: a build whose frame-pointer
# walks, offcputime's and --aggregate kernel's, follow real frames; by
# default -O2 keeps none, and the walks follow whatever rbp holds)
# shellcheck disable=SC2086
gcc -O2 -g -pthread ${BENCH_OFFCPU_CFLAGS:-} -o "$W/pp" "$ROOT/fixtures/src/prof_pingpong.c"
ITERS0=$("$W/pp" -c "$WORK_US") ITERS=$ITERS0

# The issue's rate: the fixture's own measure at ITERS is "rounds N
# wall_ns W ... switches S"; a round's wall time is r = o + 2 k ITERS
# (two turns of k ns an iteration, o the hand-offs), so two linear steps
# from the 40 us calibration put it at SWITCHES_S switches a second (k
# from that calibration, o measured).  0 keeps WORK_US as it is.
rate_at() { "$W/pp" 4000 "$1" | awk '$1 == "rounds" {
	printf "%.6f %.6f\n", $4 / $2, $8 / $2 }'; }
if [ "$SWITCHES_S" != 0 ]; then
	for step in 1 2; do
		read -r rw sr <<< "$(rate_at "$ITERS")"
		ITERS=$(awk -v it="$ITERS" -v rw="$rw" -v sr="$sr" \
			-v k="$(awk -v u="$WORK_US" -v i="$ITERS0" 'BEGIN {
				print u * 1e3 / i }')" -v t="$SWITCHES_S" 'BEGIN {
			o = rw - 2 * k * it; if (o < 0) o = 0
			n = (sr * 1e9 / t - o) / (2 * k)
			printf "%d\n", n < 1 ? 1 : n }')
		note "step $step: $(awk -v rw="$rw" -v sr="$sr" 'BEGIN {
			printf "%.0f switches/s", sr * 1e9 / rw }'), next ITERS $ITERS"
	done
	WORK_US=$(awk -v u="$WORK_US" -v i="$ITERS" -v i0="$ITERS0" 'BEGIN {
		printf "%.0f\n", u * i / i0 }')
fi

# task_ns PID: CPU ns of all of PID's threads.
task_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null |
	awk '{ s += $1 } END { printf "%d\n", s }'; }
# bpf_ns PID: "run_time_ns run_cnt" of the BPF programs PID holds.
bpf_ns() {
	for id in $(sed -n 's/^prog_id:\t*//p' /proc/"$1"/fdinfo/* 2>/dev/null |
		    sort -u); do
		bpftool prog show id "$id" 2>/dev/null
	done | awk '{ for (i = 1; i < NF; i++) { if ($i == "run_time_ns")
		s += $(i + 1); if ($i == "run_cnt") n += $(i + 1) } }
		END { printf "%d %d\n", s, n }'
}

# one CASE RUN: one run of the workload under CASE; appends a line
# "case rounds_per_s cpu_per_round_ns agent_ns bpf_ns wall_ns lost
#  switches bpf_own_ns" to $W/runs.
one() {
	c=$1 i=$2 agent= lost=0
	out=$W/$c.$i.out
	sh -c 'kill -STOP $$; exec "$0" "$1" "$2" hold' "$W/pp" "$ROUNDS" \
		"$ITERS" > "$out" &
	fix=$!
	wait_for stopped "$fix"
	case $c in
	sym|sym-fixed|sym-kernel|sd|sd-kernel|sym-base|sym-no-*)
		_a=${SYM_RECORD_ARGS:-} _s=$SYM _omit=
		case $c in
		sym) _a="--off-cpu $_a" ;;
		sym-fixed) _a="--off-cpu --fixed-stack $_a" ;;
		sym-kernel) _a="--off-cpu --aggregate kernel $_a" ;;
		sd) _a="--sched-delay $_a" ;;
		sd-kernel) _a="--sched-delay --aggregate kernel $_a" ;;
		sym-base) _a="--off-cpu $_a" _s=$SYM_BASE ;;
		sym-no-*) _a="--off-cpu $_a" _omit=${c#sym-no-} ;;
		esac
		# shellcheck disable=SC2086
		SYM_OFFCPU_COST_OMIT=$_omit "$_s" record -q $_a -p "$fix" \
			-o "$W/sym.raw" 2> "$W/sym.err" &
		agent=$! ;;
	offcputime)
		"$OFFCPUTIME" --stack-storage-size=65536 -p "$fix" \
			> "$W/oc.txt" 2> "$W/oc.err" &
		agent=$! ;;
	esac
	a0=0 b0=0 a1=0 b1=0 n0=0 n1=0 f=0
	if [ -n "$agent" ]; then
		wait_for attached "$agent"
		# the programs' cost per run on the other switches alone
		read -r i0 j0 <<< "$(bpf_ns "$agent")"
		sleep "$IDLE_S"
		read -r i1 j1 <<< "$(bpf_ns "$agent")"
		f=$(awk -v t=$((i1 - i0)) -v n=$((j1 - j0)) 'BEGIN {
			printf "%.1f\n", (n > 0 ? t / n : 0) }')
		a0=$(task_ns "$agent")
		read -r b0 n0 <<< "$(bpf_ns "$agent")"
	fi
	kill -CONT "$fix"
	wait_for grep -q '^rounds' "$out"
	if [ -n "$agent" ]; then
		a1=$(task_ns "$agent")
		read -r b1 n1 <<< "$(bpf_ns "$agent")"
	fi
	[ "$c" = offcputime ] && kill -INT "$agent"
	kill -TERM "$fix"
	wait "$fix" 2> /dev/null || true
	[ -n "$agent" ] && { wait "$agent" || true; }
	[ "$c" != none ] && [ "$c" != offcputime ] && lost=$(awk '$1 == "lost" { print $2 }' "$W/sym.raw")
	awk -v c="$c" -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v l="${lost:-0}" \
	    -v n=$((n1 - n0)) -v f="$f" '
	$1 == "rounds" { o = n - 2 * $8; if (o < 0) o = 0
		own = b - o * f; if (own < 0) own = 0
		printf "%s %.1f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\n", c,
		$2 / ($4 / 1e9), $6 / $2, a, b, $4, l, $8, own }' "$out" >> "$W/runs"
}

: > "$W/runs"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
CASES=${BENCH_OFFCPU_CASES:-none sym sym-fixed sym-kernel sd sd-kernel offcputime}
[ -n "$SYM_BASE" ] && case " $CASES " in *" sym-base "*) ;; *) CASES="$CASES sym-base" ;; esac
for i in $(seq "$RUNS"); do
	for c in $CASES; do
		one "$c" "$i"
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

med() { median $(awk -v c="$1" -v k="$2" '$1 == c { print $k }' "$W/runs"); }
# per_round CASE: the agent's CPU, and with its BPF programs', in us
# per round, the medians over the runs.
per_round() { median $(awk -v c="$1" -v n="$ROUNDS" '$1 == c {
	printf "%.3f\n", $4 / 1e3 / n }' "$W/runs"); }
bpf_round() { median $(awk -v c="$1" -v n="$ROUNDS" '$1 == c {
	printf "%.3f\n", $5 / 1e3 / n }' "$W/runs"); }
sum_round() { median $(awk -v c="$1" -v n="$ROUNDS" '$1 == c {
	printf "%.3f\n", ($4 + $5) / 1e3 / n }' "$W/runs"); }
own_round() { median $(awk -v c="$1" -v n="$ROUNDS" '$1 == c {
	printf "%.3f\n", ($4 + $9) / 1e3 / n }' "$W/runs"); }

{
	echo "## Off-CPU cost at ~$SWITCHES_S context switches/s (offcpu-bench.sh)"
	echo
	echo "prof_pingpong: $ROUNDS rounds, $ITERS iterations (~$WORK_US us" \
	     "of CPU) per turn; $RUNS alternating runs, medians; load average" \
	     "$load0 before, $load1 after; sym record options:" \
	     "${SYM_RECORD_ARGS:-(defaults)}; fixture built with -O2 -g${BENCH_OFFCPU_CFLAGS:+ $BENCH_OFFCPU_CFLAGS}."
	echo
	echo "| case | switches/s | rounds/s | vs none | CPU/round | throughput by CPU vs none | agent us/round | BPF us/round | agent + BPF us/round | agent + BPF-own us/round | agent + BPF ms/s at none's rate | lost |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	r0=$(med none 2) c0=$(med none 3)
	for c in $CASES; do
		sw=$(median $(awk -v c="$c" '$1 == c {
			printf "%.0f\n", $8 / ($6 / 1e9) }' "$W/runs"))
		r=$(med "$c" 2) cr=$(med "$c" 3)
		awk -v c="$c" -v sw="$sw" -v r="$r" -v r0="$r0" -v cr="$cr" \
		    -v c0="$c0" -v a="$(per_round "$c")" -v ab="$(sum_round "$c")" \
		    -v l="$(med "$c" 7)" -v ow="$(own_round "$c")" \
		    -v b="$(bpf_round "$c")" 'BEGIN {
			printf "| %s | %d | %.0f | %+.1f%% | %.1f us | %+.1f%% | %.2f | %.2f | %.2f | %.2f | %.1f | %d |\n",
			c, sw, r, (r / r0 - 1) * 100, cr / 1e3,
			(c0 / cr - 1) * 100, a, b, ab, ow, ab * r0 / 1e3, l }'
	done
	ao=$(sum_round offcputime) oo=$(own_round offcputime)
	echo
	for c in $CASES; do
		case $c in none|offcputime) continue ;; esac
		awk -v c="$c" -v s="$(sum_round "$c")" -v o="$ao" \
		    -v os="$(own_round "$c")" -v oo="$oo" 'BEGIN {
		printf "%s / offcputime: agent + BPF CPU %.2f; agent + BPF-own CPU (the other switches taken off) %.2f\n",
		c, (o > 0 ? s / o : 0), (oo > 0 ? os / oo : 0) }'
	done
	for c in $CASES; do
		case $c in sym-no-*) ;; *) continue ;; esac
		awk -v p="${c#sym-no-}" -v s="$(bpf_round sym)" \
		    -v b="$(bpf_round "$c")" 'BEGIN {
		printf "part %s: BPF %.2f us a round (sym %.2f less sym-no-%s %.2f)\n",
		p, s - b, s, p, b }'
	done
	if [ -n "$SYM_BASE" ]; then
		awk -v s="$(per_round sym)" -v b="$(per_round sym-base)" \
		    -v sb="$(sum_round sym)" -v bb="$(sum_round sym-base)" 'BEGIN {
			printf "\nsym / sym-base (%s): agent CPU %.2f, agent + BPF %.2f\n",
			ENVIRON["SYM_BASE"], (b > 0 ? s / b : 0), (bb > 0 ? sb / bb : 0) }'
	fi
	echo
	echo "Per run (case rounds/s cpu/round-ns agent-ns bpf-ns wall-ns lost switches bpf-own-ns):"
	echo
	sed 's/^/    /' "$W/runs"
} > "$W/report"
cat "$W/report"
append_report "## Off-CPU cost at ~10,000 context switches/s (offcpu-bench.sh)" \
	"$W/report" "$REPORT"
