#!/bin/bash
# t0110-oracle-libc.sh - inline chains of `sym addr2line` against
# llvm-symbolizer on Debian's stripped libc.so.6, whose debug file (from
# libc6-dbg: zlib-compressed, DWARF 5, 4,126 CUs) sym must find by build ID
# under /usr/lib/debug on its own. 20,000 sampled instruction addresses;
# >= 99.5% must agree. GNU addr2line and eu-addr2line run on the same
# sample for reference (diagnostics only; on this measure GNU agrees on
# about 94% and eu on about 99.9%).
. "$(dirname "$0")/lib/lib.sh"
need python3 llvm-symbolizer objdump nm c++filt readelf
[ -x "$SYM" ] || plan_skip "$SYM not built"

libc=/lib/x86_64-linux-gnu/libc.so.6
[ -f "$libc" ] || plan_skip "no $libc"
id=$(readelf -n "$libc" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -f "$dbg" ] || plan_skip "no debug file for $libc (install libc6-dbg)"
plan 1

peers=
command -v addr2line > /dev/null && peers="$peers --peer gnu"
command -v eu-addr2line > /dev/null && peers="$peers --peer eu"
# --symtab-obj: llvm-symbolizer names frames from the stripped file's
# .dynsym only; the debug file's .symtab names count as agreeing too.
# shellcheck disable=SC2086
oracle_point "libc.so.6 (debug file by build ID) agrees with llvm-symbolizer" \
	--sample 20000 --symtab-obj "$dbg" $peers -q "$libc"
done_testing
