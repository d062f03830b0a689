#!/bin/bash
# t0120-oracle-python.sh - inline chains of `sym addr2line` against
# llvm-symbolizer on /usr/bin/python3.11d (python3.11-dbg: DWARF inside,
# -Og, about 20,000 inlined subroutines). 10,000 sampled instruction
# addresses; >= 99.5% must agree on whole paths and full names
# (tests/oracle.py). The other peers: tests/peers.py (t0132).
. "$(dirname "$0")/lib/lib.sh"
need python3 llvm-symbolizer objdump
[ -x "$SYM" ] || plan_skip "$SYM not built"

py=/usr/bin/python3.11d
[ -f "$py" ] || plan_skip "no $py (install python3.11-dbg)"
plan 1

# shellcheck disable=SC2086
oracle_point "python3.11d agrees with llvm-symbolizer" \
	--sample 10000 -q "$py"
done_testing
