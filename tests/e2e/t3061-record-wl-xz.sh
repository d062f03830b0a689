#!/bin/bash
# t3061-record-wl-xz.sh - the default sym record (CFI unwinding of a copy of
# the user stack) on Debian's own xz (tests/e2e/lib/workloads-lib.sh): the
# program's output and exit status are unchanged, >= 99% of its stacks
# are whole (reach _start, __libc_start_main or a thread's start) and every
# other one is flagged, and the shares of its top 10 functions, self and
# total, agree with perf record --call-graph dwarf's within 99.9%
# family-wise intervals.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
record_workload xz

done_testing
