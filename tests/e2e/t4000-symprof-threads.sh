#!/bin/sh
# libsymprof on symprof_threads: four threads doing 10/20/30/40 % of the
# work.  With per-thread CPU timers (thread-timer), each thread's samples
# fall inside the 99.9 % binomial interval of its measured CPU share.
# The process-wide setitimer(ITIMER_PROF) path's gap from the CPU shares
# is printed as a known bias, not asserted.  Every stack of this
# frame-pointer program reaches main or the thread's start routine, the
# frameless leaf (spin) has its caller (stage_b, recovered from CFI), and
# wall mode samples the main thread while it blocks in pthread_join.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
plan 13

ok "symprof_threads builds" sp_build symprof_threads
P=$T/symprof_threads
UNITS=${SP_UNITS:-60}

sp_run -F 250 -o "$T/cpu.raw" -- "$P" "$UNITS" > "$T/cpu.out"
is "runs under sym run (cpu)" "$? $(wc -l < "$T/cpu.out")" "0 4"
sp_check "the profile parses (libsym) and is coherent" "$T/cpu.raw"
is "mode thread-timer, event cpu-clock" \
	"$(sp_hdr "$T/cpu.raw" mode) $(sp_hdr "$T/cpu.raw" event)" \
	"thread-timer cpu-clock"
sp_py shares "$T/cpu.raw" "$T/cpu.out"
_tap $? "per-thread shares inside their 99.9% binomial intervals (thread-timer)"
sp_py reach "$T/cpu.raw" "$P" main worker_main
_tap $? "every stack reaches main or worker_main"
sp_py leaf "$T/cpu.raw" "$P" spin stage_b
_tap $? "the frameless leaf spin always has its caller stage_b"
is "no stack is flagged" \
	"$(grep '^flagged' "$T/cpu.raw" | awk '{s += $3} END {print s}')" 0

sp_run -F 250 --mode process -o "$T/proc.raw" -- "$P" "$UNITS" > "$T/proc.out"
is "runs under sym run --mode process" "$? $(wc -l < "$T/proc.out")" "0 4"
sp_check "the process-timer profile parses" "$T/proc.raw"
is "mode process-timer" "$(sp_hdr "$T/proc.raw" mode)" process-timer
sp_py bias "$T/proc.raw" "$T/proc.out"

# Wall clock: the main thread, blocked in pthread_join, is sampled too.
sp_run -F 250 --mode wall -o "$T/wall.raw" -- "$P" $((UNITS / 2)) > "$T/wall.out"
sp_check "wall mode: the profile parses" "$T/wall.raw"
main_pid=$(sed -n 's/^process \([0-9]*\) .*/\1/p' "$T/wall.raw")
mainw=$(sp_val tidsamples "$T/wall.raw" "$main_pid")
w4=$(sp_val tidsamples "$T/wall.raw" "$(awk '$2 == 4 {print $4}' "$T/wall.out")")
echo "# wall: main thread $mainw samples, worker 4 $w4"
ok "wall mode: the blocked main thread has at least half of worker 4's samples" \
	test "$mainw" -ge $((w4 / 2)) -a "$w4" -gt 0
done_testing
