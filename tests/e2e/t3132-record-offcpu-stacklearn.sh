#!/bin/bash
# t3132-record-offcpu-stacklearn.sh - the off-CPU agent's stack copy
# size, learned per process from its unwinds (tools/agent/stacklearn.h),
# keeps stacks whole: fixtures/src/prof_deepstack.c naps first from a
# shallow stack (phase A), then at the bottom of 30 frames of ~300 bytes
# (B, through nap_b), then the same again (C, through nap_c), each phase
# started by a SIGUSR1 from the test.  The test reads the
# recorder's BPF map "stack_sizes" (bpftool) to start B only once a size
# below the deep stack is learned, and C only once the size has grown
# past it.  Checked: A's size is below what B
# needs; B's stacks that ran off the learned copy are flagged (under
# [broken stack]) and as many as the summary's "cut" count, at least one,
# never passed off as whole; B's whole and cut stacks are its switches
# in nanosleep, as the kernel counted them (getrusage); every one of C's
# naps is in one whole stack (_start ... main;deep_counted;deep;
# dive x30;nap_c;nap;__nanosleep;__clock_nanosleep); by the end the size is
# learned again, above B's need and below the ceiling; the summary's
# counts (cut, grown, learned); --fixed-stack copies the whole ceiling (no cut, no
# size learned) and is refused without the agent.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need bpftool
need_bpf_record --off-cpu
plan 14

# (30 frames, about 9.5 KiB: under load the fixture is preempted in
# deeper code than its naps, its loader's or printf's, and phase A
# learned up to 7,680 bytes here, near the 8,271 that 26 frames needed,
# and once it timed out waiting for a size below that; and 1.5 times
# the need, learned again in phase C, stays below the ceiling, the
# recorder's 16 KiB)
NAPS=60 DEPTH=30 CEIL=16384
prof_cc fix prof_deepstack.c -O2 -g -fomit-frame-pointer

# learned REC PID: the size in recorder REC's map stack_sizes for PID
# (nothing when it has none).
learned() {
	for _f in /proc/"$1"/fdinfo/*; do
		sed -n 's/^map_id:[[:space:]]*//p' "$_f" 2>/dev/null
	done | sort -u | while read -r _id; do
		bpftool map show id "$_id" 2>/dev/null |
			grep -q ' name stack_sizes ' || continue
		bpftool -j map lookup id "$_id" key $(printf '%d %d %d %d' \
			$(($2 & 255)) $(($2 >> 8 & 255)) $(($2 >> 16 & 255)) \
			$(($2 >> 24 & 255))) 2>/dev/null |
			python3 -c 'import json, sys
d = json.load(sys.stdin)
v = d.get("formatted", d).get("value")
print(v if isinstance(v, int) else
      int.from_bytes(bytes(int(x, 16) for x in v), "little"))'
	done
}
# wait_until DESC CMD...: up to 60 s for CMD to succeed (a deadline
# against a hang, not a measure).
wait_until() {
	_d=$1; shift
	for _i in $(seq 600); do
		"$@" && return 0
		sleep 0.1
	done
	echo "Bail out! timed out waiting for $_d"
	kill "$REC" 2> /dev/null
	exit 1
}
size_below() { s=$(learned "$REC" "$PID"); [ -n "$s" ] && [ "$s" -gt 0 ] && [ "$s" -lt "$1" ]; }
size_above() { s=$(learned "$REC" "$PID"); [ -n "$s" ] && [ "$s" -gt "$1" ]; }
has() { grep -q "$1" "$T/fix.out"; }

NEED=$("$T/fix" 0 "$DEPTH" | awk '$1 == "need" { print $2 }')
"$SYM" record --off-cpu --stack-size "$CEIL" -o "$T/l.raw" -- \
	"$T/fix" "$NAPS" "$DEPTH" > "$T/fix.out" 2> "$T/l.err" &
REC=$!
wait_until "phase A" has '^phase A done'
PID=$(awk '$1 == "pid" { print $2 }' "$T/fix.out")
# (a size below B's need is cut there)
wait_until "a size learned in phase A" size_below "$NEED"
SIZE_A=$s
echo "# phase A: pid $PID learned $SIZE_A bytes"
kill -USR1 "$PID"
wait_until "phase B" has '^phase B done'
# grown to the ceiling at the first cut (and learned again if B had
# enough whole naps after it): above B's need
wait_until "the size grown" size_above "$NEED"
SIZE_B=$s
echo "# phase B needed about $NEED bytes; the size after it: $SIZE_B bytes"
kill -USR1 "$PID"
wait "$REC"
is "record exits 0" "$?" 0
sed 's/^/# /' "$T/l.err" "$T/fix.out"
ok "phase A's learned size ($SIZE_A) is below phase B's need ($NEED)" \
	test "$SIZE_A" -gt 0 -a "$SIZE_A" -lt "$NEED"

"$SYM" fold -q "$T/l.raw" > "$T/l.fold"
# count ERE: the samples of the folded stacks matching ERE.
count() { awk -v p="$1" '$0 ~ p { n += $NF } END { print n + 0 }' "$T/l.fold"; }
# The whole stack of a nap in phase X, root first, to the kernel's
# nanosleep (a nap, not a preemption on the way).
want() {
	printf '^_start;__libc_start_main_impl;__libc_start_call_main;main;deep_counted;deep'
	for _i in $(seq "$DEPTH"); do printf ';dive'; done
	printf ';nap_%s;nap;__nanosleep;__clock_nanosleep;.*;do_nanosleep;schedule;__schedule [0-9]+$' "$1"
}
whole_b=$(count "$(want b)") whole_c=$(count "$(want c)")
# Stacks through nap_X, all kinds (naps, preemptions on the way), and
# those of them whole (from _start) or flagged.
prefix() {
	printf '^_start;__libc_start_main_impl;__libc_start_call_main;main;deep_counted;deep'
	for _i in $(seq "$DEPTH"); do printf ';dive'; done
	printf ';nap_%s;' "$1"
}
all_b=$(count ';nap_b;') all_c=$(count ';nap_c;')
whole_all_b=$(count "$(prefix b)") whole_all_c=$(count "$(prefix c)")
flag_all_b=$(count '^\[broken stack\];.*;nap_b;')
broken_b=$(count '^\[broken stack\];.*;nap_b;nap;__nanosleep;__clock_nanosleep;.*;do_nanosleep;schedule;__schedule [0-9]+$')
broken=$(count '^\[broken stack\]')
broken_dive=$(count '^\[broken stack\];.*;(dive|wait_go);')
sumline=$(grep 'stack copies learned per process' "$T/l.err")
field() { echo "$sumline" | sed -n "s/.*$1.*/\\1/p"; }
cut=$(field 'learned size: \([0-9]*\) events')
grown=$(field 'sizes grown \([0-9]*\) times')
nlearned=$(field 'processes, \([0-9]*\) at a learned size')
final=$(field 'at a learned size (\([0-9]*\) to')
echo "# B: $whole_b whole naps, $broken_b cut; C: $whole_c whole naps; all flagged: $broken ($broken_dive in dive); summary: cut $cut, grown $grown, $nlearned learned, final size $final"
grep '^\[broken stack\]' "$T/l.fold" | head -3 | sed 's/^/# /'
# (for a failure: the stacks through nap_b or nap_c that are not naps,
# and the flagged stacks not through dive)
grep -E ';nap_[bc];' "$T/l.fold" | grep -Ev ';nap;__nanosleep;__clock_nanosleep;.*;do_nanosleep;schedule;__schedule [0-9]+$' | sed 's/^/# not a nap: /'
grep '^\[broken stack\]' "$T/l.fold" | grep -Ev ';(dive|wait_go);' | sed 's/^/# flagged, not in dive: /'
ok "phase B: some stacks ran off the learned copy (cut $cut)" \
	test "${cut:-0}" -ge 1
# (the wait for the signal before B is deeper than A's naps: it may be
# cut too; other flagged stacks, such as the exec of the fixture from
# the recorder's child, unwound in the image it leaves, are not cuts)
is "the flagged stacks of phase B and the wait before it are the summary's cut" \
	"$broken_dive" "$cut"
is "phase B: every stack through nap_b is whole or flagged, none silently cut" \
	"$((whole_all_b + flag_all_b))" "$all_b"
# The truth is the kernel's count of the fixture's switches in the
# phase ("switches X V I"): each voluntary one is a nap stack (the
# phase's only sleep is nanosleep; a wakeup with the timer not yet
# expired sleeps again, so a nap may switch out twice, and a nap whose
# timer fired before it was switched out does not at all); an
# involuntary one is a nap stack when the timer woke the nap inside
# schedule(), before the switch, else a preemption elsewhere.
switches() { awk -v p="$1" '$1 == "switches" && $2 == p { print $3, $4 }' "$T/fix.out"; }
read -r vol_b invol_b <<< "$(switches b)"
read -r vol_c invol_c <<< "$(switches c)"
# in_switches N V I: V <= N <= V + I
in_switches() { [ -n "$2" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$(($2 + $3))" ]; }
ok "phase B: whole + cut naps ($whole_b + $broken_b) are its switches in nanosleep (voluntary $vol_b, involuntary $invol_b; $NAPS naps)" \
	in_switches "$((whole_b + broken_b))" "$vol_b" "$invol_b"
ok "the size grew (grown $grown)" test "${grown:-0}" -ge 1
is "phase C: every stack through nap_c is whole" "$whole_all_c" "$all_c"
ok "phase C: the naps in whole stacks of $DEPTH dives ($whole_c) are its switches in nanosleep (voluntary $vol_c, involuntary $invol_c; $NAPS naps)" \
	in_switches "$whole_c" "$vol_c" "$invol_c"
ok "after growth the size is learned again, above B's need ($NEED) and below the ceiling: $final" \
	test "${nlearned:-0}" = 1 -a "${final:-0}" -gt "$NEED" -a "${final:-0}" -lt "$CEIL"

# --fixed-stack: the whole ceiling every time, nothing learned or cut.
"$SYM" record --off-cpu --fixed-stack --stack-size "$CEIL" -o "$T/f.raw" -- \
	"$T/fix" 40 "$DEPTH" > "$T/f.out" 2> "$T/f.err" &
REC=$!
for _p in A B; do
	wait_until "phase $_p (--fixed-stack)" grep -q "^phase $_p done" "$T/f.out"
	kill -USR1 "$(awk '$1 == "pid" { print $2 }' "$T/f.out")"
done
wait "$REC"
is "--fixed-stack: record exits 0" "$?" 0
grep -q "the whole $CEIL bytes at every event (--fixed-stack)" "$T/f.err"
ok "--fixed-stack: the summary says so" test $? = 0
"$SYM" fold -q "$T/f.raw" > "$T/f.fold"
grep '^\[broken stack\]' "$T/f.fold" | sed 's/^/# /'
is "--fixed-stack: no stack through dive flagged" \
	"$(grep -c '^\[broken stack\];.*;dive;' "$T/f.fold")" 0
"$SYM" record --fixed-stack -o "$T/u.raw" -- true 2> "$T/u.err"
is "--fixed-stack without the agent: usage error" "$?" 2
