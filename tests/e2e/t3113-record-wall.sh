#!/bin/bash
# t3113-record-wall.sh - sym record --wall: CPU samples and off-CPU time
# in one profile, in ns.  On fixtures/src/prof_spin.c (4 threads spin
# 500 ms of CPU each on 2 CPUs, never blocking, and print their own wall
# and CPU time): per thread the cpu value is within 10% of its CPU time,
# the off-cpu value (here: preempted, waiting for a CPU) within 5% of
# wall - cpu, and the two add up to its wall time within 5%.  On
# prof_offcpu.c (sleep and pipe waits) the off-cpu value passes t3110's
# truth check (shares within 3 points of the fixture's, totals within
# 5%, whole stacks); with 10 ms of CPU a round ("burn") and a contended
# mutex in two other threads ("mutex"), the main thread's --wall time is
# 50% CPU, 30% sleep, 20% pipe (within 3 points of the fixture's own
# shares).  Also the header and value types, usage errors.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_bpf_record --wall
plan 7

# -F 977, not 999: the BPF sampler is one cpu-clock event per CPU, which
# charges each sample to the thread on the CPU; at 999 Hz its period is
# within 0.1% of a quarter of the scheduler's tick (CONFIG_HZ=250, this
# VM's and Debian's), so the samples keep their phase against the
# switches for seconds and move up to 7% of a thread's samples to
# another (docs/record.md "Wall time": sd 3.3% at 999 Hz, 1.2% at 977)

prof_cc fix prof_spin.c -O2 -g -pthread -fomit-frame-pointer
hdr() { awk -v k="$2" '$1 == k { $1 = ""; print substr($0, 2) }' "$1"; }
fold() { "$SYM" fold -q --tid "$@"; }

"$SYM" record --wall -F 977 -o "$T/w.raw" -- "$T/fix" 4 500 \
	> "$T/w.out" 2> "$T/w.err"
is "record exits 0" "$?" 0
sed 's/^/# /' "$T/w.err"
fold --value cpu "$T/w.raw" > "$T/cpu.fold"
fold --value off-cpu "$T/w.raw" > "$T/off.fold"
check wall "$T/cpu.fold" "$T/off.fold" "$T/w.out"
is "header: event, unit, frequency" \
	"$(hdr "$T/w.raw" event) $(hdr "$T/w.raw" weight-unit) $(hdr "$T/w.raw" frequency)" \
	"wall ns 977"
is "value types" "$(hdr "$T/w.raw" value-type | tr '\n' ' ')" \
	"wall nanoseconds cpu nanoseconds off-cpu nanoseconds "

prof_cc offfix prof_offcpu.c -O2 -g -pthread -fomit-frame-pointer
"$SYM" record --wall -o "$T/o.raw" -- "$T/offfix" 100 > "$T/o.out" 2> "$T/o.err"
fold --value off-cpu "$T/o.raw" > "$T/o.fold"
check truth "$T/o.fold" "$T/o.out"

# The same fixture with 10 ms of CPU first in each round and a mutex two
# other threads contend for: the main thread's --wall time is its CPU
# 50%, sleep 30%, pipe 20%, each within 3 points of the fixture's own
# shares of its wall time, and adds up to it within 5%.
"$SYM" record --wall -F 977 -o "$T/b.raw" -- "$T/offfix" 100 burn mutex \
	> "$T/b.out" 2> "$T/b.err"
fold --value cpu "$T/b.raw" > "$T/bcpu.fold"
fold --value off-cpu "$T/b.raw" > "$T/boff.fold"
check wallshares "$T/bcpu.fold" "$T/boff.fold" "$T/b.out"

usage() { "$SYM" record "$@" -o "$T/u.raw" -- true 2> "$T/u.err"; echo $?; }
is "usage: --wall with --off-cpu, --sched-delay, --sample-prob" \
	"$(usage --wall --off-cpu) $(usage --wall --sched-delay) $(usage --wall --sample-prob 0.5)" \
	"2 2 2"

done_testing
