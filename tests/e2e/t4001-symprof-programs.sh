#!/bin/sh
# libsymprof never changes what a program does: programs that fork and
# exec (and vfork, and system()), dlopen and dlclose, throw C++
# exceptions through sampled frames, use SIGPROF themselves, or malloc
# from many threads print the same output and exit with the same status
# with and without it, and each profile it writes parses (libsym's
# reader) and is coherent.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
plan 30

for f in symprof_forkexec symprof_dlopen symprof_exc symprof_sigprof \
	 symprof_malloc; do
	sp_build "$f" || echo "# cannot build $f"
done

# same NAME MODE ARGS...: sp_same in MODE (cpu, wall or process) at
# 250 Hz.
same() {
	_sn=$1 _sm=$2; shift 2
	sp_same "$_sm" "-F 250 --mode $_sm" "$_sn" "$@"
}

# fork, exec, vfork, system(), in each mode; without %p only the
# process sym run started writes, and no temporary file is left.
for m in cpu wall process; do
	same symprof_forkexec $m
done
is "one file per run, no leftovers" "$(ls "$T" | grep -c 'symprof_forkexec\..*raw')" 3
# With %p every profiled process writes its own: the parent, the
# exec'd children (2), the forked child and the shell of system().
mkdir "$T/pp"
sp_run -F 250 -o "$T/pp/fe.%p.raw" -- "$T/symprof_forkexec" > "$T/pp.out" 2> "$T/pp.err"
is "with %p: same output" \
	"$(cmp -s "$T/pp.out" "$T/symprof_forkexec.plain" && echo same)" same
is "with %p: five processes, five files" "$(ls "$T/pp" | grep -c '^fe\.[0-9]*\.raw$')" 5
sp_check "with %p: every file parses and is coherent" "$T"/pp/fe.*.raw
is "with %p: each file holds its own process only" \
	"$(for f in "$T"/pp/fe.*.raw; do
		p=${f##*/fe.}; p=${p%.raw}
		awk -v p="$p" '$1 == "stack" && $4 != p {bad = 1}
			$1 == "process" && $2 != p {bad = 1}
			END {print bad ? "bad" : "ok"}' "$f"
	done | sort -u)" ok

# dlopen by bare name through the program's RUNPATH ($ORIGIN): the
# interposed dlopen must leave the program as the caller.
same symprof_dlopen cpu 60
dso_bid=$(readelf -n "$T/libsymprof_dso.so" | sed -n 's/.*Build ID: *//p')
is "dlopen: the library's map has its build ID" \
	"$(awk '$1 == "map" && $10 ~ /libsymprof_dso\.so$/ {print $9}' \
		"$T/symprof_dlopen.cpu.raw" | sort -u)" "$dso_bid"
n=$(sp_val inmap "$T/symprof_dlopen.cpu.raw" /libsymprof_dso.so \
	"$T/libsymprof_dso.so" dso_spin)
echo "# dlopen: $n samples in dso_spin"
ok "dlopen: samples land in the dlopened dso_spin" test "$n" -gt 0

# C++ exceptions through sampled frames, on three threads.
same symprof_exc cpu

# The program's own SIGPROF: its handler, raise(), ITIMER_PROF, blocked,
# sigwaitinfo, SIG_IGN, signal().  In cpu mode sampling moves to a
# real-time signal when the program installs its handler.
same symprof_sigprof cpu
ok "sigprof: sampling moved to another signal" \
	grep -q '^# libsymprof: sampling moved from signal 27' "$T/symprof_sigprof.cpu.raw"
# A sample may interrupt a signal's handler at its first instruction (the
# program's SIGPROF and ours come due on the same tick): the trampoline's
# pc (__restore_rt, where the handler returns to) is exact, as eu-stack
# shows it, and so is the pc the signal frame saved after it (1 run in 3
# in CI, under load).  The checker takes that stack, and refuses an exact
# pc anywhere else but the leaf.
libc=$(awk '$1 == "map" && $10 ~ /\/libc\.so\.6$/ {print $10 " " $7 " " $8; exit}' \
	"$T/symprof_sigprof.cpu.raw")
restore=$(python3 -c "import sys
d = open(sys.argv[1], 'rb').read()
i = d.find(bytes([0x48, 0xc7, 0xc0, 15, 0, 0, 0, 0x0f, 0x05]))
print('%x' % (i - int(sys.argv[2], 16) + int(sys.argv[3], 16)) if i > 0 else '')" $libc)
lid=$(awk '$1 == "map" && $10 ~ /\/libc\.so\.6$/ {print $2; exit}' "$T/symprof_sigprof.cpu.raw")
# sig_stack FILE PC: the profile plus one stack whose second frame is PC
# in libc, exact, and whose third is exact.
sig_stack() {
	awk -v s="stack 1 4000000 1 1 - p$lid:1000 p$lid:$2 p$lid:2000 r$lid:$2" '
		$1 == "samples" { $2 = $2 + 1 } $1 == "end" { print s } { print }' \
		"$T/symprof_sigprof.cpu.raw" > "$1"
}
sig_stack "$T/sig-ok.raw" "$restore"
sig_stack "$T/sig-bad.raw" "$(printf %x $((0x$restore + 1)))"
ok "raw-check: exact at __restore_rt ($restore) and right after it is coherent" \
	"$RAWCHECK" "$T/sig-ok.raw"
is "raw-check: exact anywhere else, it is not" \
	"$("$RAWCHECK" "$T/sig-bad.raw" | sed 's/.*: //')" \
	"frame kind (p leaf, r others) ($(grep -c '^stack' "$T/symprof_sigprof.cpu.raw"), 1)"
# Process mode: SIGPROF is shared; when the program sets ITIMER_PROF
# itself, sampling stops (with a notice) and its timer is its own.
same symprof_sigprof process
# SIGPROF ignored on entry (inherited SIG_IGN): another signal is used,
# and the program still sets and uses its own handler.
sh -c 'trap "" PROF; exec "$0" run -F 250 -o "$1" -- "$2"' "$SYM" \
	"$T/ign.raw" "$T/symprof_sigprof" > "$T/ign.out" 2> "$T/ign.err"
is "sigprof with SIGPROF ignored on entry: same output" \
	"$(cmp -s "$T/ign.out" "$T/symprof_sigprof.plain" && echo same)" same
sed 's/^/# stderr: /' "$T/ign.err"
ok "and the profiler says which signal it uses instead" \
	grep -q 'libsymprof: SIGPROF already has a handler; sampling with signal' "$T/ign.err"

# Many threads in malloc: two waves of 16.
same symprof_malloc cpu 16 200000
same symprof_malloc wall 16 60000
dropped=$(sp_hdr "$T/symprof_malloc.cpu.raw" dropped)
echo "# malloc: $(sp_hdr "$T/symprof_malloc.cpu.raw" samples) samples, $dropped dropped"
done_testing
