#!/bin/bash
# t3112-record-sched-delay.sh - sym record --sched-delay against known
# truth and against perf: fixtures/src/prof_spin.c runs 4 threads that
# spin 500 ms of CPU each and never block, on this 2-CPU machine.  Each
# thread's run-queue delay (sched-delay) is within 5 points of the share
# of its wall time the kernel counted itself (schedstat's run_delay), in
# stacks through spinner -> spin_until; it agrees within 10% with `perf
# sched timehist` of the same run (perf sched record runs at the same
# time, around sym record); and it is 50% +-5 points of the wall time.
# The fixture runs at nice -20, so that the other work on the machine
# (nice 0, 1/87 of its weight) takes little of its 2 CPUs -- but with
# sched_autogroup on, nice weighs only within the session, and other
# sessions' load shows; that point is then skipped, with the figures,
# when it moved the kernel's run_delay share off 50% (on this shared machine
# at load 10: 89-91%, which the other points still check).  Also: the header's event and
# value types, the woken/preempted split, the raw_tp fallback, usage
# errors; an exec between a side-band read and the drain (injected).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_bpf_record --sched-delay
need perf
perf sched record -N -B -o "$T/.probe.data" -- true > /dev/null 2>&1 ||
	plan_skip "perf sched record cannot run"
plan 13

prof_cc fix prof_spin.c -O2 -g -pthread -fomit-frame-pointer
hdr() { awk -v k="$2" '$1 == k { $1 = ""; print substr($0, 2) }' "$1"; }
fold() { "$SYM" fold -q --tid "$@"; }

# perf sched record (system-wide; -N -B: no build-ID pass, in which perf
# 6.1 sometimes aborts, see t3092) around sym record of the fixture.  The
# spinners' whole stacks fit in 512 bytes: a 2 KiB copy keeps each event
# small, so the ring buffer holds a 200 ms round of a machine where the 4
# threads are preempted often (with the default 8 KiB, 759 of 1,452
# events were lost on a quiet run, counted, and the totals short).  A
# 64 MiB ring (SYM_OFFCPU_RING) holds every event of the run (about 1,500
# of 2.5 KiB), so none is lost even when the recorder waits for a CPU
# longer than a 4 MiB ring lasts (it did once at load 3).
perf sched record -q -N -B -o "$T/perf.data" -- \
	env SYM_OFFCPU_RING=67108864 \
	"$SYM" record --sched-delay --stack-size 2048 -o "$T/sd.raw" -- \
	nice -n -20 "$T/fix" 4 500 \
	> "$T/sd.out" 2> "$T/sd.err"
is "perf sched record and sym record exit 0" "$?" 0
sed 's/^/# /' "$T/sd.err"
ok "no event lost (the totals below are whole)" \
	grep -q ', lost 0 (ring buffer full) + 0 ' "$T/sd.err"
perf sched timehist --state -i "$T/perf.data" > "$T/th.txt" 2> /dev/null
fold --value sched-delay "$T/sd.raw" > "$T/sd.fold"
# (a failure's recorder summary goes to stderr, the CI log's part: how
# the unwinds stopped, which mapping the unwinder could not take)
check delay "$T/sd.fold" "$T/sd.out" "$T/th.txt" ||
	sed 's/^/t3112: /' "$T/sd.err" >&2

nominal_point "$T/sd.fold" "$T/sd.out"

is "header: event, unit" \
	"$(hdr "$T/sd.raw" event) $(hdr "$T/sd.raw" weight-unit)" \
	"sched-delay ns"
is "value types" "$(hdr "$T/sd.raw" value-type | tr '\n' ' ')" \
	"sched-delay nanoseconds sched-delay-woken nanoseconds sched-delay-preempted nanoseconds "
# Spinning threads wait after preemption; the woken part is their start.
sum() { fold --value "$1" "$T/sd.raw" | awk '/spin_until/ { s += $NF } END { printf "%.0f", s }'; }
all=$(sum sched-delay) pre=$(sum sched-delay-preempted)
ok "preempted: >= 95% of the delay in spin_until ($pre of $all ns)" \
	awk -v a="$all" -v p="$pre" 'BEGIN { exit !(a > 0 && p >= 0.95 * a) }'

# An exec after a side-band read, with 300 ms between that read and the
# drain (injected): the drain holds waits of the new image, whose
# mappings the recorder had not read, so it reads the side-band again
# (record.c, sb_catch_up()).  Without that, 76-82 of about 700 waits had
# an unmapped leaf and 81% of the delay was in spin_until (3 of 3 runs);
# the first test above failed so in CI under ASan, without the injection,
# when the first read fell between nice's exec and the fixture's.
SYM_RECORD_DRAIN_DELAY_MS=300 "$SYM" record --sched-delay --stack-size 2048 \
	-o "$T/ex.raw" -- sh -c "sleep 0.5; exec '$T/fix' 4 300" \
	> "$T/ex.out" 2> "$T/ex.err"
ok "an exec between the side-band read and the drain: no unmapped leaf" \
	grep -q 'unmapped leaves 0,' "$T/ex.err"
share=$(fold --value sched-delay "$T/ex.raw" |
	awk '{ t += $NF } /spin_until/ { s += $NF } END { if (t) printf "%.3f", s / t }')
ok "... and >= 95% of its delay in spin_until ($share)" \
	awk -v s="$share" 'BEGIN { exit !(s >= 0.95) }'

SYM_OFFCPU_ATTACH=raw_tp "$SYM" record --sched-delay --stack-size 2048 \
	-o "$T/raw.raw" -- \
	"$T/fix" 4 200 > "$T/raw.out" 2> "$T/raw.err"
ok "raw_tp fallback attached" grep -q 'off-CPU (raw_tp)' "$T/raw.err"
fold --value sched-delay "$T/raw.raw" > "$T/raw.fold"
python3 "$SYM_ROOT/tests/e2e/lib/offcpu_check.py" nominal "$T/raw.fold" \
	"$T/raw.out" > "$T/rawn.out"
rc=$?
sed 's/^/# /; s/^# # /# /' "$T/rawn.out"
# (the share against the kernel's run_delay, whatever the load)
ok "raw_tp: each thread's delay within 5 points of its own share" awk '
	/sched-delay/ { gsub(/%/, ""); n++; d = $5 - $NF; if (d < 0) d = -d
		if (d > 5) bad = 1 }
	END { exit !(n == 4 && !bad) }' "$T/rawn.out"

usage() { "$SYM" record "$@" -o "$T/u.raw" -- true 2> "$T/u.err"; echo $?; }
is "usage: --sched-delay with --off-cpu, with -F" \
	"$(usage --sched-delay --off-cpu) $(usage --sched-delay -F 99)" "2 2"
is "usage: --min-block with --sched-delay is accepted" \
	"$(usage --sched-delay --min-block 1ms)" 0

done_testing
