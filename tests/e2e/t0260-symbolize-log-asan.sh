#!/bin/bash
# t0260-symbolize-log-asan.sh - `sym symbolize-log` turns a real
# AddressSanitizer report written with symbolization off
# (ASAN_OPTIONS=symbolize=0) into the report the runtime writes when it
# symbolizes itself with llvm-symbolizer, frame for frame.
#
# The program is fixtures/src/heap_uaf.cc built by clang++ -fsanitize=address
# -O1 -g (fixture asan-clang): a use after free reached through inlined
# calls, so the rewritten frames must number the inlined functions as
# the runtime does.  Both runs have ASLR off (setarch -R) and
# environments of the same size (symbolize=0 and symbolize=1 are as long,
# and both name the symbolizer), so every address agrees; only the pid
# is masked.  The whole reports are compared too: the summary line is
# rewritten as well, and nothing else may differ (docs/symbolize-log.md).
. "$(dirname "$0")/lib/lib.sh"
need setarch clang++ llvm-symbolizer
[ -x "$SYM" ] || plan_skip "$SYM not built"
REAL=/usr/bin/llvm-symbolizer
[ -x "$REAL" ] || plan_skip "$REAL missing"
setarch -R true 2> /dev/null ||
	plan_skip "setarch -R (no ASLR) is not permitted here"
PROG=$(fixture asan-clang) || {
	echo "Bail out! cannot build the fixtures"
	exit 1
}
SRC=$SYM_ROOT/fixtures/src/heap_uaf.cc
plan 7

cd "$T" || exit 1
# report SYMBOLIZE: the program's report (stderr), the pid masked.
report() {
	env ASAN_SYMBOLIZER_PATH="$REAL" \
		ASAN_OPTIONS="symbolize=$1:detect_leaks=0" setarch -R "$PROG" \
		2>&1 > /dev/null | sed 's/==[0-9]*==/==PID==/g'
}
report 0 > raw.txt
report 1 > want.txt
frames() { grep '^ *#[0-9]' "$1"; }

ok "the runtime's own report names the frames" \
	grep -q "#0 0x[0-9a-f]* in fix::peek.* $SRC:[0-9]*:[0-9]*\$" want.txt
ok "the raw report has frames without names" \
	grep -q '^    #0 0x[0-9a-f]*  (/.*+0x[0-9a-f]*) (BuildId: [0-9a-f]*)$' \
	raw.txt

"$SYM" symbolize-log raw.txt > got.txt 2> got.err
frames want.txt > want.frames
frames got.txt > got.frames
same_file "every frame line as the runtime writes it (cold store)" \
	want.frames got.frames
same_file "the whole report as the runtime writes it" want.txt got.txt
is "nothing left unplaced, nothing on stderr" "$(cat got.err)" ""

"$SYM" symbolize-log < raw.txt > stdin.txt 2> stdin.err
same_file "from stdin, warm store: the same report" want.txt stdin.txt
ok "the store holds the program's table" \
	sh -c "'$SYM' store ls | grep -q \
'$(sed -n 's/.*(BuildId: \([0-9a-f]*\)).*/\1/p' raw.txt | head -1)'"
done_testing
