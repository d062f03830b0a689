#!/bin/bash
# t3111-record-offcpu-peer.sh - sym record --off-cpu against Debian's
# libbpf-tools offcputime on one run of fixtures/src/prof_offcpu.c, built
# with frame pointers and with -fomit-frame-pointer, with two threads
# contending for a mutex ("mutex"): per thread (main, writer, the two
# lockers) and kernel path (nanosleep, pipe read, futex wait) the
# blocked totals agree within 5%, and our user stacks are whole (main -> run_rounds ->
# sleep_6ms -> __nanosleep -> __clock_nanosleep) where offcputime's
# frame-pointer walk cuts them (it goes from clock_nanosleep to
# run_rounds: libc's clock_nanosleep keeps no frame pointer).  Both
# stacks are printed as diagnostics.
#
# The fixture starts stopped (SIGSTOP before its exec); both profilers
# attach to it, and it runs only once both hold their BPF links: they see the same blocks.  It holds after its rounds, so
# that offcputime can still read /proc/PID to symbolize.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
OFFCPUTIME=$(command -v offcputime || echo /usr/sbin/offcputime)
[ -x "$OFFCPUTIME" ] || plan_skip "no offcputime (libbpf-tools)"
need_bpf_record --off-cpu
plan 4

# attached PID: process PID holds a BPF link (its programs are attached;
# sym record -p sets its targets before it attaches).
attached() { grep -qs '^link_type:' /proc/"$1"/fdinfo/*; }

# wait_for WHAT CMD...: up to 30 s for CMD to succeed.
wait_for() {
	_w=$1; shift
	for _i in $(seq 300); do
		"$@" && return 0
		sleep 0.1
	done
	echo "# timed out waiting for $_w" >&2
	return 1
}

# peer NAME FLAGS...: one run under both, two TAP points.
peer() {
	name=$1; shift
	prof_cc "$name" prof_offcpu.c -O2 -g -pthread "$@"
	sh -c 'kill -STOP $$; exec "$0" 150 hold mutex' "$T/$name" \
		> "$T/$name.out" &
	fix=$!
	at_exit "kill -9 $fix 2>/dev/null"
	wait_for "the fixture to stop" \
		sh -c "grep -q '^State:.*T' /proc/$fix/status"
	"$SYM" record -q --off-cpu -p "$fix" -o "$T/$name.raw" &
	rec=$!
	# (a big stack map: with its default 1,024 entries, hash collisions
	# lose whole kernel paths, bcc's known -EEXIST problem)
	"$OFFCPUTIME" --stack-storage-size=65536 -p "$fix" \
		> "$T/$name.oc" 2> "$T/$name.oc.err" &
	oc=$!
	wait_for "sym record" attached "$rec"
	wait_for "offcputime" attached "$oc"
	kill -CONT "$fix"
	wait_for "the rounds" grep -q '^rounds' "$T/$name.out"
	kill -INT "$oc"
	wait "$oc"
	kill -TERM "$fix"
	wait "$rec"
	is "$name: sym record -p exits 0 when the fixture ends" "$?" 0
	"$SYM" fold -q --tid --value off-cpu "$T/$name.raw" > "$T/$name.fold"
	check peer "$T/$name.fold" "$T/$name.oc" "$T/$name.out"
}

peer fp -fno-omit-frame-pointer
peer omitfp -fomit-frame-pointer

done_testing
