#!/bin/bash
# t3050-record-faults.sh - stacks the default sym record (CFI unwinding)
# must flag rather than guess (fixtures/src/prof_faults.c): through a
# module without any CFI (built without unwind tables, dlopen()ed), the
# frames up to it are kept and the stack is flagged unwind; a recursion
# deeper than --max-depth is flagged truncated and cut at the limit; one
# whose frames need more than the 8 KiB stack copy is flagged unwind; a
# signal handler's stacks go on through the signal frame (the trampoline
# and its interrupted frame exact, the trampoline named __restore_rt as
# eu-stack names it) down to main and _start.  Also: sym record passes the
# command's exit status on when the command ended by itself, and exits 0
# when it was asked to stop (SIGINT), even if the command died of it too.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_perf
plan 13

prof_cc faults prof_faults.c -O1 -g -fno-omit-frame-pointer -ldl
prof_cc libnocfi.so prof_faults.c -O1 -DLIB -shared -fPIC -nostartfiles \
	-fno-asynchronous-unwind-tables -fno-unwind-tables \
	-Wl,--no-eh-frame-hdr
ok "libnocfi.so has no CFI" sh -c "! readelf -wf '$T/libnocfi.so' | grep -q FDE"

for m in nocfi deep wide signal; do
	lib=
	[ $m = nocfi ] && lib=$T/libnocfi.so
	"$SYM" record -q -F 999 -o "$T/$m.raw" -- "$T/faults" $m $lib 1
	is "$m: record exits 0" "$?" 0
	check faults $m "$T/$m.raw" "$T/faults"
done

# Looked up at its PC - 1, the trampoline's frame fell on the NOP glibc
# puts before __restore_rt, in no symbol: libc.so.6+? in the profile.
"$SYM" fold -q "$T/signal.raw" > "$T/signal.fold" 2> /dev/null
is "signal: the trampoline under on_prof is __restore_rt" \
	"$(awk '{ n = split($1, f, ";"); for (i = 2; i <= n; i++)
		if (f[i] == "on_prof") print f[i - 1] }' "$T/signal.fold" |
		sort -u)" __restore_rt
"$SYM" record -q -o "$T/st.raw" -- sh -c 'exit 7'
is "the command's exit status is passed on" "$?" 7
"$SYM" record -q -o "$T/st.raw" -- sh -c 'kill -TERM $$'
is "a command killed by a signal: 128 + N" "$?" 143
# Ctrl-C at a terminal: SIGINT to the recorder and the command at once.
setsid -w "$SYM" record -q -o "$T/st.raw" -- sh -c 'kill -INT 0; sleep 5'
is "SIGINT to both: the recorder stopped as asked, exit 0" "$?" 0

done_testing
