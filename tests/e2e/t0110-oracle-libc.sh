#!/bin/bash
# t0110-oracle-libc.sh - inline chains of `sym addr2line` against
# llvm-symbolizer on Debian's stripped libc.so.6, whose debug file (from
# libc6-dbg: zlib-compressed, DWARF 5, 4,126 CUs) sym must find by build ID
# under /usr/lib/debug on its own. 20,000 sampled instruction addresses;
# >= 99.5% must agree on whole paths and full names (tests/oracle.py).
# GNU addr2line and eu-addr2line are measured by tests/peers.py (t0132).
. "$(dirname "$0")/lib/lib.sh"
need python3 llvm-symbolizer objdump readelf
[ -x "$SYM" ] || plan_skip "$SYM not built"

libc=/lib/x86_64-linux-gnu/libc.so.6
[ -f "$libc" ] || plan_skip "no $libc"
id=$(readelf -n "$libc" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -f "$dbg" ] || plan_skip "no debug file for $libc (install libc6-dbg)"
plan 1

# --symtab-obj: llvm-symbolizer names frames from the stripped file's
# .dynsym only; the debug file's .symtab names count as agreeing too.
# shellcheck disable=SC2086
oracle_point "libc.so.6 (debug file by build ID) agrees with llvm-symbolizer" \
	--sample 20000 --symtab-obj "$dbg" -q "$libc"
done_testing
