#!/bin/bash
# t3000-record-shares.sh - sym record on a 70/30 CPU burner built with
# frame pointers (fixtures/src/prof_burn.c): the recorded shares of burn70
# and burn30 lie in the 99.9% binomial interval around 70/30, and stacks
# reach main in >= 99% of samples, in fp mode (where gcc's frameless
# leaves make the kernel's chain skip main unless the leaf is repaired
# from CFI) and in dwarf mode, and at most 1% of them are flagged (the
# fp-mode chain checks must not flag right stacks, which end at libc's
# __libc_start_call_main).  The header says what was recorded.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_perf
plan 9

prof_cc burn prof_burn.c -O2 -g -fno-omit-frame-pointer

"$SYM" record -q -F 999 -g fp -o "$T/fp.raw" -- "$T/burn" 1.5
is "fp record exits 0" "$?" 0
check shares "$T/fp.raw" "$T/burn" --mode fp
hdr() { awk -v k="$2" '$1 == k { $1 = ""; print substr($0, 2) }' "$1"; }
is "header: mode, event, frequency, period, unit" \
	"$(hdr "$T/fp.raw" mode) $(hdr "$T/fp.raw" event) $(hdr "$T/fp.raw" frequency) $(hdr "$T/fp.raw" period) $(hdr "$T/fp.raw" weight-unit)" \
	"fp cpu-clock 999 1001001 ns"
d=$(hdr "$T/fp.raw" duration)
ok "duration $d covers the run" awk -v d="$d" 'BEGIN { exit !(d >= 1.4 && d < 10) }'
# Weights are count x period: the file turns counts into CPU time.
ok "each stack's weight is count x period" awk '
	$1 == "period" { p = $2 }
	$1 == "stack" && $3 != $2 * p { bad++ }
	END { exit bad > 0 }' "$T/fp.raw"
ok "one 'flagged' line per flag" awk '
	$1 == "flagged" { n[$2]++ }
	END { exit !(n["truncated"] == 1 && n["badreturn"] == 1 &&
		     n["leaf"] == 1 && n["unwind"] == 1 && n["kernel"] == 1) }' \
	"$T/fp.raw"

"$SYM" record -q -F 999 -g dwarf -o "$T/dwarf.raw" -- "$T/burn" 1.5
is "dwarf record exits 0" "$?" 0
check shares "$T/dwarf.raw" "$T/burn" --mode dwarf
is "dwarf header mode" "$(hdr "$T/dwarf.raw" mode)" dwarf

done_testing
