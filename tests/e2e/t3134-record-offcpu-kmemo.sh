#!/bin/bash
# t3134-record-offcpu-kmemo.sh - the kernel stack memo
# (tools/agent/bpf/kmemo.bpf.h, docs/record.md "The kernel stack memo")
# gives the stacks the kernel's walk gives, on real workloads: with
# SYM_KMEMO=check every stack the memo gives is walked as well, in the BPF
# program, and the summary counts those that differ (none).
#
# - prof_pingpong (two threads blocking in read(2), at the issue's rate of
#   switches): most stacks come from the memo, none differs.  On this
#   path the syscall's random stack offset (CONFIG_RANDOMIZE_KSTACK_OFFSET)
#   moves the frames at every block, so the memo's two parts and the
#   addresses that move with them are what is tested.
# - prof_offcpu with the mutex (-fomit-frame-pointer: sleep, pipe, futex),
#   --sched-delay on prof_spin (preemption, from interrupts), Debian's
#   python3.11 on t3131's script, and -a while short programs run: none
#   differs; prof_offcpu's truth (t3110's) holds with the memo on.  The
#   first and the python script block in two places in turn: most of
#   their stacks come from the memo's two ways.
# - SYM_KMEMO=fault makes every comparison pass: the check must count
#   differences there, or it could not catch a memo that lies.
# - SYM_KMEMO=off: no stack from the memo; raw_tp (no task storage):
#   none either.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_bpf_record --off-cpu
grep -qw __schedule /proc/kallsyms && grep -qw do_syscall_64 /proc/kallsyms ||
	plan_skip "no __schedule or do_syscall_64 in /proc/kallsyms"
plan 21

prof_cc pp prof_pingpong.c -O2 -g -pthread
prof_cc fix prof_offcpu.c -O2 -g -pthread -fomit-frame-pointer
prof_cc spin prof_spin.c -O2 -g -pthread

# km ERR: "HITS DIFFERED" of the summary's memo line ("0 x" without it).
km() {
	sed -n 's/.*: \([0-9]*\) kernel stacks from the kernel stack memo, each walked again: \([0-9]*\) differed.*/\1 \2/p' "$1" |
		grep . || echo "0 x"
}
blocks() { sed -n 's/.* \([0-9]*\) blocks written by BPF.*/\1/p' "$1"; }

# rec NAME MODE ARGS...: sym record with SYM_KMEMO=MODE into $T/NAME.*
rec() {
	_n=$1 _m=$2; shift 2
	SYM_KMEMO=$_m "$SYM" record -o "$T/$_n.raw" "$@" > "$T/$_n.out" \
		2> "$T/$_n.err"
	is "$_n: record exits 0" "$?" 0
	grep 'kernel stack memo' "$T/$_n.err" | sed 's/^/# /'
}

iters=$("$T/pp" -c 80)
rec pp check --off-cpu -- "$T/pp" 5000 "$iters"
read -r hit bad <<< "$(km "$T/pp.err")"
n=$(blocks "$T/pp.err")
ok "pingpong: most stacks from the memo ($hit of $n blocks)" \
	test "${hit:-0}" -ge $((${n:-1} * 3 / 4))
is "pingpong: none differs from its walk" "$bad" 0

rec mutex check --off-cpu -- "$T/fix" 100 mutex
read -r hit bad <<< "$(km "$T/mutex.err")"
n=$(blocks "$T/mutex.err")
ok "prof_offcpu: stacks from the memo ($hit of $n blocks)" \
	test "${hit:-0}" -gt 0
is "prof_offcpu: none differs from its walk" "$bad" 0
"$SYM" fold -q --tid --value off-cpu "$T/mutex.raw" > "$T/mutex.fold"
check truth "$T/mutex.fold" "$T/mutex.out"

rec delay check --sched-delay -- "$T/spin" 4 300
read -r hit bad <<< "$(km "$T/delay.err")"
is "--sched-delay on prof_spin: none of $hit differs from its walk" "$bad" 0

# (prof_offcpu.py, t3131's, alternates sleep and read in both of its
# processes: the memo's two ways a thread find both)
if [ -x /usr/bin/python3.11 ]; then
	rec py check --off-cpu -- /usr/bin/python3.11 \
		"$SYM_ROOT/fixtures/src/prof_offcpu.py" 50 20000
	read -r hit bad <<< "$(km "$T/py.err")"
	n=$(blocks "$T/py.err")
	ok "python3.11, sleep and read in turn: stacks from the memo ($hit of $n blocks)" \
		test "${hit:-0}" -gt $((${n:-1} / 4))
	is "python3.11: none differs from its walk" "$bad" 0
else
	skip "no /usr/bin/python3.11" 3
fi

# -a for two seconds while a shell runs short programs (each a new
# process: exec, page faults, pipes) and prof_pingpong runs, whose
# stacks the memo gives
( for _ in $(seq 200); do ls /usr/lib > /dev/null; cat /proc/self/status \
	> /dev/null; done ) &
busy=$!
"$T/pp" 100000 "$iters" > /dev/null &
pp=$!
SYM_KMEMO=check timeout -s INT 2 "$SYM" record --off-cpu -a \
	-o "$T/all.raw" > "$T/all.out" 2> "$T/all.err"
kill "$pp" 2> /dev/null
wait "$busy" "$pp"
read -r hit bad <<< "$(km "$T/all.err")"
grep 'kernel stack memo' "$T/all.err" | sed 's/^/# /'
ok "-a: stacks from the memo ($hit)" test "${hit:-0}" -gt 100
is "-a: none differs from its walk" "$bad" 0

rec fault fault --off-cpu -- "$T/fix" 50 mutex
read -r hit bad <<< "$(km "$T/fault.err")"
ok "a memo that lies (SYM_KMEMO=fault) is caught: $bad of $hit differ" \
	test "${bad:-0}" -gt 0

rec off off --off-cpu -- "$T/fix" 20
ok "SYM_KMEMO=off: the summary says the memo is off" \
	grep -q 'kernel stack memo is off' "$T/off.err"
SYM_OFFCPU_ATTACH=raw_tp rec raw check --off-cpu -- "$T/pp" 500 "$iters"
ok "raw_tp: no stack from the memo (it has no task storage)" \
	grep -q 'raw_tp' "$T/raw.err"
read -r hit bad <<< "$(km "$T/raw.err")"
is "raw_tp: no stack from the memo" "$hit" 0

done_testing
