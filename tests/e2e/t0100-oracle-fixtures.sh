#!/bin/bash
# t0100-oracle-fixtures.sh - inline chains of `sym addr2line` against
# llvm-symbolizer on every fixture variant of fixtures/build/MANIFEST:
# gcc and clang, -O0/-O2/-O3, DWARF 4 and 5, C and C++, LTO, split DWARF,
# stripped binaries with their debug file found by build ID, by
# .gnu_debuglink (beside and in .debug/) and only through
# --debuginfo-path, zlib and zstd compression, dwz (single and -m).
# One TAP point per binary: >= 99.5% of 1,000 sampled instruction
# addresses (all, when fewer) must agree on every frame's function (its
# full name), whole file path and line. See tests/oracle.py for the rules.
. "$(dirname "$0")/lib/lib.sh"
need python3 llvm-symbolizer objdump gcc clang
[ -x "$SYM" ] || plan_skip "$SYM not built"

B=$(fixture MANIFEST) || { echo "Bail out! fixtures/build.sh failed"; exit 1; }
B=$(dirname "$B")
M=$B/MANIFEST
grep -v '^#' "$M" | cut -f1 > "$T/names"
plan "$(wc -l < "$T/names")"

# Two at a time (prove -j2 runs other tests beside this one), outputs
# collected per binary, then reported in MANIFEST order.
mkdir -p "$T/out"
export SYM SYM_ROOT M T
# shellcheck disable=SC2016
tr '\n' '\0' < "$T/names" | xargs -0 -P 2 -I{} sh -c '
	o="$T/out/$(echo "$1" | tr / _)"
	python3 "$SYM_ROOT/tests/oracle.py" --manifest "$M" -q "$1" > "$o" 2>&1
	echo $? > "$o.rc"' sh {}

while read -r name; do
	o="$T/out/$(echo "$name" | tr / _)"
	kind=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' "$M")
	oracle=$(awk -F'\t' -v n="$name" '$1 == n { print $4 }' "$M")
	if ! command -v "$oracle" > /dev/null 2>&1; then
		skip "$name ($kind): $oracle not installed"
		continue
	fi
	rc=$(cat "$o.rc" 2>/dev/null || echo 2)
	_tap "$rc" "$name ($kind) agrees with $oracle"
	sed 's/^\([^#]\)/# \1/' "$o"
done < "$T/names"
done_testing
