#!/bin/sh
# t0141-go-profile.sh - a Go service profiled end to end: `sym record`
# (dwarf mode, the default) of a stripped Go program (fixtures/src/goprof:
# three hot functions on two goroutines, built with -ldflags='-s -w -B'),
# which writes the runtime's own runtime/pprof CPU profile of the same
# run; then `sym upload` of the binary to a real symd and `sym symbolize
# --server` of the profile through it.
#  - the recorder maps the binary under the GNU build ID `sym buildid`
#    reads (Go's linker keeps it out of PT_NOTE);
#  - at least 99% of the frame samples resolve;
#  - at least 99% of the stacks that do not pass a system stack switch
#    reach the runtime's outermost frame (goexit, mstart, rt0_go,
#    sigtramp), Go frames unwound by .gopclntab's pcsp (docs/record.md);
#    those that do (systemstack, mcall, morestack: the goroutine's frames
#    are on another stack, which the runtime's own profiler reaches
#    through the g) are counted and left out on both sides (at most 15%);
#  - the self and total shares of the top functions agree with
#    runtime/pprof's, read by `go tool pprof -raw` (the peer's reader),
#    within 99.9% family-wise intervals (workloads_check.py go, which
#    names and counts what it rules out: runtime/pprof's excess
#    runtime.asyncPreempt leaves, runtime.goexit and the `go` statement's
#    wrapper main.main.func3, which runtime/pprof leaves out).
# No timing is asserted: the counts, not the run time, make the test.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need go python3 flock curl
plan 5
bail() { echo "Bail out! $*"; exit 1; }

CHECK=$SYM_ROOT/tests/e2e/lib/workloads_check.py
export SYM
if ! "$SYM_ROOT/fixtures/build-go.sh" goprof > "$T/build.log" 2>&1; then
	sed 's/^/#   /' "$T/build.log"
	bail "cannot build fixtures/src/goprof"
fi
B=$SYM_ROOT/fixtures/build/go/goprof/goprof-sw

# 200 rounds: about 10 s of CPU on two goroutines, so about 1000 samples
# of runtime/pprof's 100 Hz.
"$SYM" record -q -F 999 -o "$T/rec.raw" -- "$B" 200 "$T/cpu.pprof" \
	> "$T/rec.out" 2> "$T/rec.err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q '^goprof ' "$T/rec.out" || [ ! -s "$T/cpu.pprof" ]
then
	sed 's/^/#   /' "$T/rec.err"
	bail "sym record of goprof-sw failed ($rc)"
fi
grep -a '^samples \|^flagged ' "$T/rec.raw" | sed 's/^/# /'

bid=$("$SYM" buildid "$B" | cut -d' ' -f1)
ok "the recorder maps goprof-sw under sym buildid's $bid" \
	grep -aq "^map [0-9]* file [0-9]* .* $bid $B\$" "$T/rec.raw"

echo token > "$T/token"
start_symd --upload-token-file "$T/token" || bail "symd did not start"
ok "sym upload of goprof-sw to symd" \
	"$SYM" upload --server "$SYMD_URL" --token-file "$T/token" "$B"
python3 "$CHECK" user-raw "$T/rec.raw" "$T/user.raw" ||
	bail "cannot read $T/rec.raw"
"$SYM" symbolize -v --server "$SYMD_URL" -o "$T/user.sym" "$T/user.raw" \
	2> "$T/sym.err"
ok "sym symbolize --server of the recorded stacks" test -s "$T/user.sym"
sed 's/^/# /' "$T/sym.err"
# Every frame of the binary resolves through symd (the summary's figure
# of distinct frames; the check below counts frame samples).
ok "symd resolves at least 99% of goprof-sw's distinct frames" \
	awk -v b="$B" '$6 == b && $5 == "gopclntab" && $2 + 0 >= 99 { f = 1 } END { exit !f }' \
	"$T/sym.err"
stop_symd

go tool pprof -raw "$T/cpu.pprof" > "$T/pprof.txt" 2> "$T/pprof.err" ||
	bail "go tool pprof -raw failed: $(cat "$T/pprof.err")"
python3 "$CHECK" go "$T/user.sym" "$T/pprof.txt" --top 8 \
	--wrappers main.main.func3 > "$T/go.out" 2>&1
_tap $? "frames resolve, stacks are whole, and the function shares agree with runtime/pprof's (99.9%)"
sed 's/^/# /' "$T/go.out"
