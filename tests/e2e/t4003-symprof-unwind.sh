#!/bin/sh
# libsymprof's CFI unwind on code without frame pointers
# (fixtures/src/symprof_unwind.c, built -fomit-frame-pointer), and its
# faults: each is bounded and flagged, never guessed.
#   - 40 frameless frames: every stack whole, from the leaf to _start,
#     with exactly 40 dive() frames;
#   - 300 frames: cut at 256 frames and flagged truncated;
#   - 60 frames of 1 KiB: the stack copy (32 KiB) ends first: flagged
#     truncated, only dive_big() frames above the leaf;
#   - a library without any CFI: the frames up to its first are kept, the
#     stack ends there, flagged unwind; none without the flag holds it;
#   - a signal handler in the middle: unwound through the signal frame
#     (the interrupted pc written as an exact `p` frame) to raiser(),
#     main() and _start, unflagged;
#   - a coroutine's stack, unmapped and mapped again between runs: the
#     handler reads nothing there (the leaf alone, flagged unwind).
# Each run prints the same and exits the same as without the profiler.
# And the unwinder came with no dependency: libsymprof.so still needs
# libc alone (libc.so.6 and its loader, nothing else); and the handler
# stays async-signal-safe: handler.o calls no libc function but memcpy,
# memset, syscall, __errno_location, pthread_sigmask, sigemptyset and
# sigaddset (no malloc, no locks, no dl_iterate_phdr), and otherwise only
# libsymprof's own sp_* (whose handler-side paths handler.c documents).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
plan 25

is "libsymprof.so needs libc alone" \
	"$(readelf -d "$SYM_ROOT/lib/libsymprof.so" |
		sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort | tr '\n' ' ')" \
	"ld-linux-x86-64.so.2 libc.so.6 "

H=$SYM_ROOT/build/tools/symprof/handler.o
is "the handler calls only async-signal-safe libc functions" \
	"$( { nm -u "$H" || echo "no $H"; } 2>&1 | awk '{print $NF}' |
		grep -v -x -e sp -e 'sp_[a-z_]*' -e _GLOBAL_OFFSET_TABLE_ -e memcpy \
			-e memset -e syscall -e __errno_location \
			-e pthread_sigmask -e sigemptyset -e sigaddset |
		tr '\n' ' ')" ""

ok "symprof_unwind builds (no frame pointers; a library without CFI)" \
	sp_build symprof_unwind
P=$T/symprof_unwind
ok "libsymprof_nocfi.so has no .eh_frame" \
	sh -c "! readelf -SW '$T/libsymprof_nocfi.so' | grep -q eh_frame"

# prof NAME ARGS...: profile one mode at 250 Hz into $T/NAME.raw (its
# stacks, resolved, in $T/NAME.st), one TAP point for the same output
# and status as without the profiler.
prof() {
	_n=$1; shift
	"$P" "$@" > "$T/$_n.plain" 2>&1
	_p=$?
	sp_run -F 250 -o "$T/$_n.raw" -- "$P" "$@" > "$T/$_n.out" 2>&1
	_q=$?
	is "$_n: same output and status with the profiler" \
		"$_q $(cat "$T/$_n.out")" "$_p $(cat "$T/$_n.plain")"
	sp_val stacks "$T/$_n.raw" "$P" > "$T/$_n.st"
	echo "# $_n: $(sp_hdr "$T/$_n.raw" samples) samples;" \
		"$(grep '^# libsymprof: signal' "$T/$_n.raw")"
}

# count FILE AWK-CONDITION: the samples of the stacks that meet it ($1
# count, $2 flags, $3 frames).
count() {
	awk "$2"' {n += $1} END {print n + 0}' "$1"
}

prof deep deep 40 100
all=$(count "$T/deep.st" 1)
is "40 frames: no stack flagged" "$(count "$T/deep.st" '$2 != "-"')" 0
is "40 frames: every stack ends at _start" \
	"$(count "$T/deep.st" '$3 ~ /;r:_start$/')" "$all"
exact="p:spin"
i=0
while [ $i -lt 40 ]; do exact="$exact;r:dive"; i=$((i + 1)); done
n=$(count "$T/deep.st" "index(\$3, \"$exact;r:main;\") == 1")
echo "# 40 frames: $n of $all samples are spin under exactly 40 dive() and main"
ok "40 frames: at least 90% are spin under exactly 40 dive() frames, then main" \
	test "$n" -gt 0 -a $((n * 10)) -ge $((all * 9))

prof deep300 deep 300 100
n=$(count "$T/deep300.st" '$3 ~ /^p:spin;/')
is "300 frames: the spin stacks are flagged truncated" \
	"$(count "$T/deep300.st" '$3 ~ /^p:spin;/ && $2 == "truncated"')" "$n"
is "300 frames: cut at 256 frames, all spin and dive" \
	"$(awk '$3 ~ /^p:spin;/ {k = split($3, f, ";"); d = 0
		for (i = 2; i <= k; i++) d += f[i] == "r:dive"
		print k, d}' "$T/deep300.st" | sort -u)" "256 255"

prof big big 60 100
n=$(count "$T/big.st" '$3 ~ /^p:spin;/')
is "60 frames of 1 KiB: the spin stacks are flagged truncated" \
	"$(count "$T/big.st" '$3 ~ /^p:spin;/ && $2 == "truncated"')" "$n"
is "60 frames of 1 KiB: only dive_big above spin, 25 to 40 of them (32 KiB)" \
	"$(awk '$3 ~ /^p:spin;/ {k = split($3, f, ";"); bad = k < 26 || k > 41
		for (i = 2; i <= k; i++) bad += f[i] != "r:dive_big"
		print bad ? "bad: " $3 : "ok"}' "$T/big.st" | sort -u)" ok

prof nocfi nocfi 100
# The library's frames are named libsymprof_nocfi.so:ADDR (no symbols
# asked for): each ends its stack, flagged unwind.
is "no CFI: no unflagged stack goes through the library" \
	"$(count "$T/nocfi.st" '$2 == "-" && /libsymprof_nocfi/')" 0
is "no CFI: the library's first frame ends the stack, flagged unwind" \
	"$(awk '/libsymprof_nocfi/ {k = split($3, f, ";"); c = 0
		for (i = 1; i <= k; i++) c += f[i] ~ /libsymprof_nocfi/
		print ($2 == "unwind" && c == 1 && f[k] ~ /libsymprof_nocfi/) ? "ok" : "bad: " $0}' \
		"$T/nocfi.st" | sort -u)" ok
is "no CFI: its callback's stacks keep spin and cfi_cb" \
	"$(awk '$3 ~ /^p:spin;/ {print $3 ~ /^p:spin;r:cfi_cb;r:libsymprof_nocfi[^;]*$/ ? "ok" : "bad: " $3}' \
		"$T/nocfi.st" | sort -u)" ok
n=$(count "$T/nocfi.st" '$3 ~ /^p:libsymprof_nocfi[^;]*$/')
echo "# no CFI: $n samples with their leaf in the library, alone"
ok "no CFI: samples in the library itself keep their leaf alone" test "$n" -gt 0

prof signal signal 100
n=$(count "$T/signal.st" '$3 ~ /^p:spin;r:in_handler;/')
ok "signal: samples in the handler" test "$n" -gt 0
is "signal: through the signal frame to raiser, main and _start, unflagged" \
	"$(awk '$3 ~ /^p:spin;r:in_handler;/ {
		print ($2 == "-" && $3 ~ /;p:libc[^;]*;p:libc[^;]*;(r:libc[^;]*;)*r:raiser;r:main;.*;r:_start$/) ? "ok" : "bad: " $0}' \
		"$T/signal.st" | sort -u)" ok
# The trampoline's pc is exact: named __restore_rt, as eu-stack names it
# (at its pc - 1 it fell on the NOP glibc puts before it, in no symbol).
"$SYM" fold -q "$T/signal.raw" > "$T/signal.fold" 2> /dev/null
is "signal: the trampoline under in_handler is __restore_rt" \
	"$(awk '{ n = split($1, f, ";"); for (i = 2; i <= n; i++)
		if (f[i] == "in_handler") print f[i - 1] }' "$T/signal.fold" |
		sort -u)" __restore_rt

prof coro coro 100
n=$(count "$T/coro.st" '$3 ~ /^p:spin$/')
echo "# coroutine: $n samples on the coroutine's stack"
is "coroutine stack: the leaf alone, flagged unwind, nothing read there" \
	"$(awk '$3 ~ /^p:spin/ {print ($2 == "unwind" && $3 == "p:spin") ? "ok" : "bad: " $0}' \
		"$T/coro.st" | sort -u)" ok
done_testing
