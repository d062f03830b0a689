#!/bin/bash
# t3130-record-bpf-faults.sh - sym record's BPF modes when BPF is refused
# or missing, and after a SIGKILL.
#
# - Not root (setpriv to nobody; the kernel refuses it BPF) and a kernel
#   without BTF (/sys/kernel/btf hidden under a tmpfs in a private mount
#   namespace): --wall falls back to its CPU part through perf events,
#   says what is missing and that it did, and writes a CPU profile
#   (event cpu-clock) of fixtures/src/prof_spin.c whose samples are the
#   spinner's, in whole stacks, about one per 1/F s of its CPU time;
#   --off-cpu and --sched-delay, which have no CPU part, fail with exit 1
#   and the same message, and write no file.
# - A kernel that refuses the tp_btf programs: raw_tp, and a line that
#   says so and why.
# - SIGKILL (t3110 checks --off-cpu): with --sched-delay and with --wall
#   too the kernel releases the agent's programs, nothing is left in
#   /sys/fs/bpf, and the next run of the same mode starts.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
[ "$(id -u)" = 0 ] || plan_skip "not root: the test switches users and mounts"
need setpriv unshare bpftool
"$SYM" record -q --wall -o "$T/.probe.raw" -- true > "$T/.probe.err" 2>&1 ||
	plan_skip "sym record --wall cannot run: $(head -1 "$T/.probe.err")"
plan 19

# nobody must be allowed to sample its own processes (user space): at
# most 2, restored at exit.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$paranoid" -gt 2 ]; then
	echo 2 > /proc/sys/kernel/perf_event_paranoid
	at_exit "echo $paranoid > /proc/sys/kernel/perf_event_paranoid"
fi

chmod 711 "$T" && mkdir -m 777 "$T/out"
prof_cc fix prof_spin.c -O2 -g -pthread -fomit-frame-pointer
chmod 755 "$T/fix"
hdr() { awk -v k="$2" '$1 == k { $1 = ""; print substr($0, 2) }' "$1"; }

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# no_btf CMD...: CMD with /sys/kernel/btf empty.
no_btf() {
	unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$@"' \
		sh "$@"
}

# cpu_ok NAME: NAME.raw is a CPU profile of one spinner thread: the
# stack clone3;start_thread;spinner;spin_until holds at least 90% of the
# samples, and their number, with the samples the file counts as lost
# or throttled (a non-root recorder's ring is small, and a loaded
# machine drains it late: the kernel's timing, said in the file), lies
# between its CPU time and its time on a CPU (wall less the kernel's
# run-queue time) x 999 Hz, -10% and +10% (from the fixture's line in
# NAME.out): cpu-clock runs on wall-clock time, so it samples the vCPU's
# stolen time between two expiries, which the CPU time leaves out, and
# loses the periods a longer steal spans (docs/record.md, "Wall time";
# CI's ASan pass once had 291 samples for 300 ms of CPU and 374 ms on a
# CPU).  A recording the kernel let sample user space only (not root: the
# recorder says "sampling user space only") has no samples in the
# spinner's system calls: its lower bound is the user part of the CPU
# time (prof_spin.c's user_ns; it was 73% of it, and 237 to 258 samples
# came for 300 ms of CPU, on 2026-12-03's machine).  But user_ns is
# sampled by the kernel's ticks, and under load it once said 300 ms of
# user time for 300 ms of CPU while 238 samples came: so the spinner
# reads its clock once per 200,000 additions here (PROF_SPIN_ADDS), not
# 10,000, and its system calls are about 0.1% of its CPU time.
cpu_ok() {
	"$SYM" fold -q "$T/out/$1.raw" > "$T/$1.fold" || return 1
	miss=$(awk '$1 == "lost" || $1 == "throttled" { n += $2 }
		END { print n + 0 }' "$T/out/$1.raw")
	user=0
	grep -q "sampling user space only" "$T/$1.err" && user=1
	awk -v out="$T/out/$1.out" -v miss="$miss" -v user="$user" '
	{ n = $NF; all += n
	  if ($1 ~ /^clone3;start_thread;spinner;spin_until(;|$)/) spin += n }
	END { while ((getline l < out) > 0) {
		split(l, f, " ")
		if (f[1] == "thread") {
			held = f[4] - f[8]; cpu = user ? f[10] : f[6] } }
	  lo = cpu * 999 / 1e9; hi = held * 999 / 1e9
	  printf "# %d samples (and %d lost or throttled), %d in " \
		"spinner;spin_until; %.0f to %.0f expected (%s time, time " \
		"on a CPU)\n", all, miss, spin, lo, hi,
		user ? "user CPU" : "CPU"
	  exit !(all > 0 && spin >= 0.9 * all && all + miss >= 0.9 * lo &&
		 all + miss <= 1.1 * hi) }' "$T/$1.fold"
}

# fallback NAME WHY-REGEX RUNNER...: --wall under RUNNER, then
# --off-cpu and --sched-delay.
fallback() {
	_n=$1 _why=$2; shift 2
	PROF_SPIN_ADDS=200000 "$@" "$SYM" record --wall -F 999 \
		-o "$T/out/$_n.raw" -- "$T/fix" 1 300 \
		> "$T/out/$_n.out" 2> "$T/$_n.err"
	is "$_n: --wall falls back, exit 0" "$?" 0
	sed 's/^/# /' "$T/$_n.err"
	ok "$_n: the message names what is missing and the fallback" \
		grep -q -- "--wall: $_why.*recording the CPU part only, through perf events" \
		"$T/$_n.err"
	is "$_n: a CPU profile" "$(hdr "$T/out/$_n.raw" event) \
$(hdr "$T/out/$_n.raw" value-type | wc -l)" "cpu-clock 0"
	ok "$_n: the spinner's CPU, in whole stacks" cpu_ok "$_n"
	for _m in off-cpu sched-delay; do
		"$@" "$SYM" record --$_m -o "$T/out/$_n-$_m.raw" -- true \
			2> "$T/$_n-$_m.err"
		_rc=$?
		sed 's/^/# /' "$T/$_n-$_m.err"
		ok "$_n: --$_m fails (exit $_rc), names it, writes nothing" \
			test "$_rc" = 1 -a ! -e "$T/out/$_n-$_m.raw" \
			-a "$(grep -c -- "--$_m: $_why" "$T/$_n-$_m.err")" = 1
	done
}

fallback nobody 'the kernel refused BPF (Operation not permitted): it needs root, or CAP_BPF and CAP_PERFMON, and no lockdown' as_nobody
fallback nobtf 'the kernel has no BTF (/sys/kernel/btf/vmlinux: No such file or directory)' no_btf

# A kernel that refuses the tp_btf programs (SYM_OFFCPU_ATTACH=fail-tp_btf
# makes the load fail as one would): raw_tp is loaded, and the recorder
# says why, since raw_tp has no task storage and costs more a switch.
SYM_OFFCPU_ATTACH=fail-tp_btf "$SYM" record --off-cpu -o "$T/fb.raw" -- true \
	2> "$T/fb.err"
_rc=$?
sed 's/^/# /' "$T/fb.err"
ok "tp_btf refused: raw_tp loaded (exit $_rc), and the recorder says why" \
	test "$_rc" = 0 -a "$(grep -c 'tp_btf programs could not be loaded (Operation not supported; .*raw_tp instead' "$T/fb.err")" = 1 \
	-a "$(grep -c 'off-CPU (raw_tp)' "$T/fb.err")" = 1

# SIGKILL: the programs go with the process (nothing pinned).
bpf_sigkill sched-delay
bpf_sigkill wall

done_testing
