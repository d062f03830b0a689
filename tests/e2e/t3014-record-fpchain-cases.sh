#!/bin/bash
# t3014-record-fpchain-cases.sh - the judgement of t3015's checker
# (tests/e2e/record_check.py fpchain) on stacks written by hand at the
# addresses of prof_clock built as t3015 builds it: right and wrong stacks
# with a leaf in each part of the clock path (the program's
# clock_gettime@plt stub and .plt's header, libc, the vDSO, under kernel
# frames, spin, main), among them a PLT stub leaf whose chain skips spin,
# which fp mode must flag; then the fp and dwarf verdicts on whole
# profiles.  Needs no perf: it runs wherever t3015 would be skipped too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record-lib.sh"
need objdump
plan 24

prof_cc clock prof_clock.c -O2 -g -fno-omit-frame-pointer
mkdir "$T/cases"
tap_points "fpchain" python3 "$SYM_ROOT/tests/e2e/record_check.py" \
	fpchain-cases "$T/clock" "$T/cases"

done_testing
