#!/bin/bash
# t3015-record-fpchain.sh - fp mode on a workload that spends most of its
# time in libc's clock_gettime() and the vDSO (fixtures/src/prof_clock.c:
# main -> spin -> clock_gettime@plt -> clock_gettime -> vDSO).  libc
# keeps no frame pointer, so the kernel's frame-pointer walk from there
# skips spin (frame-pointer build) or stops inside libc
# (-fomit-frame-pointer build): plausible, wrong stacks, hundreds per run.
# Every stack that is not right must carry a flag.  dwarf mode on the
# same program gets >= 99% right, which shows that the checker's idea of
# "right" is sound.  Where in the clock path the samples land (the PLT
# stub, libc, the vDSO, the kernel under them) depends on the machine's
# clock source and CPU; record_check.py judges each part by its real
# chain, and t3014 checks that judgement on stacks written by hand.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/record-lib.sh"
need objdump
need_perf
plan 6

prof_cc clock prof_clock.c -O2 -g -fno-omit-frame-pointer
prof_cc clock-nofp prof_clock.c -O2 -g -fomit-frame-pointer

"$SYM" record -q -F 999 -g fp -o "$T/fp.raw" -- "$T/clock" 1
is "fp record of the frame-pointer build exits 0" "$?" 0
check fpchain "$T/fp.raw" "$T/clock" --mode fp

"$SYM" record -q -F 999 -g fp -o "$T/nofp.raw" -- "$T/clock-nofp" 1
is "fp record of the -fomit-frame-pointer build exits 0" "$?" 0
check fpchain "$T/nofp.raw" "$T/clock-nofp" --mode fp

"$SYM" record -q -F 999 -g dwarf -o "$T/dwarf.raw" -- "$T/clock" 1
is "dwarf record exits 0" "$?" 0
check fpchain "$T/dwarf.raw" "$T/clock" --mode dwarf

done_testing
