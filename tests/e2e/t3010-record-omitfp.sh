#!/bin/bash
# t3010-record-omitfp.sh - the 70/30 burner built with -fomit-frame-pointer:
# in dwarf mode (CFI unwinding of the copied user stack) stacks still
# reach main in >= 99% of samples; in fp mode, where the kernel's
# frame-pointer walk follows a register that holds data, every stack that
# does not reach main correctly carries a flag: broken stacks are not
# passed off as valid.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_perf
plan 5

prof_cc burn-nofp prof_burn.c -O2 -g -fomit-frame-pointer

"$SYM" record -q -F 999 -g dwarf -o "$T/dwarf.raw" -- "$T/burn-nofp" 1.5
is "dwarf record exits 0" "$?" 0
check omitfp "$T/dwarf.raw" "$T/burn-nofp" --mode dwarf

"$SYM" record -q -F 999 -g fp -o "$T/fp.raw" -- "$T/burn-nofp" 1
is "fp record exits 0" "$?" 0
check omitfp "$T/fp.raw" "$T/burn-nofp" --mode fp
n=$(awk '$1 == "flagged" { s += $3 } END { print s + 0 }' "$T/fp.raw")
ok "fp mode counts its flagged stacks in the header ($n)" test "$n" -gt 0

done_testing
