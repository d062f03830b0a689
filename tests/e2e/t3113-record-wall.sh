#!/bin/bash
# t3113-record-wall.sh - sym record --wall: CPU samples and off-CPU time
# in one profile, in ns.  On fixtures/src/prof_spin.c (4 threads spin
# 500 ms of CPU each on 2 CPUs, never blocking, and print their own wall
# and CPU time): per thread the cpu value is within 10% of its CPU time,
# the off-cpu value (here: preempted, waiting for a CPU) within 5% of
# wall - cpu, and the two add up to its wall time within 5%.  On
# prof_offcpu.c (sleep and pipe waits) the off-cpu value passes t3110's
# truth check (shares within 3 points of the fixture's, totals within
# 5%, whole stacks).  Also the header and value types, usage errors.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_bpf_record --wall
plan 6

prof_cc fix prof_spin.c -O2 -g -pthread -fomit-frame-pointer
hdr() { awk -v k="$2" '$1 == k { $1 = ""; print substr($0, 2) }' "$1"; }
fold() { "$SYM" fold -q --tid "$@"; }

"$SYM" record --wall -F 999 -o "$T/w.raw" -- "$T/fix" 4 500 \
	> "$T/w.out" 2> "$T/w.err"
is "record exits 0" "$?" 0
sed 's/^/# /' "$T/w.err"
fold --value cpu "$T/w.raw" > "$T/cpu.fold"
fold --value off-cpu "$T/w.raw" > "$T/off.fold"
check wall "$T/cpu.fold" "$T/off.fold" "$T/w.out"
is "header: event, unit, frequency" \
	"$(hdr "$T/w.raw" event) $(hdr "$T/w.raw" weight-unit) $(hdr "$T/w.raw" frequency)" \
	"wall ns 999"
is "value types" "$(hdr "$T/w.raw" value-type | tr '\n' ' ')" \
	"wall nanoseconds cpu nanoseconds off-cpu nanoseconds "

prof_cc offfix prof_offcpu.c -O2 -g -pthread -fomit-frame-pointer
"$SYM" record --wall -o "$T/o.raw" -- "$T/offfix" 100 > "$T/o.out" 2> "$T/o.err"
fold --value off-cpu "$T/o.raw" > "$T/o.fold"
check truth "$T/o.fold" "$T/o.out"

usage() { "$SYM" record "$@" -o "$T/u.raw" -- true 2> "$T/u.err"; echo $?; }
is "usage: --wall with --off-cpu, --sched-delay, --sample-prob" \
	"$(usage --wall --off-cpu) $(usage --wall --sched-delay) $(usage --wall --sample-prob 0.5)" \
	"2 2 2"

done_testing
