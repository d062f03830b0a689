#!/bin/sh
# go-bench.sh - Go binaries' part of `make bench` (issue 18): tables from
# .gopclntab against llvm-symbolizer on the same program with DWARF.
#
# The fixture is fixtures/build-go.sh's Go 1.19 program: gofix-sw (built
# -ldflags='-s -w': the table comes from .gopclntab) and gofix-dwarf (with
# DWARF).  Addresses: every instruction of gofix-dwarf (objdump -d).  Each
# figure is the median of GO_BENCH_RUNS (5) runs, wall-clock:
#  - cold, all addresses: `sym addr2line --no-cache -f -i` (builds the
#    table from .gopclntab, then looks every address up) on gofix-sw, sym
#    on gofix-dwarf (from DWARF), and `llvm-symbolizer --inlining` on
#    gofix-dwarf;
#  - cold, one address: the same with a single address (sym's table build
#    and llvm-symbolizer's start on the one CU it needs);
#  - the phases sym's --stats reports: table build and lookups, for both
#    of sym's tables (warm lookups: the table is built, nothing else).
# The section is printed, written to $BENCH_DIR/go/report.md and appended
# to $BENCH_DIR/report.md (replacing an earlier one of this script).  The
# exit status is 1 when something fails, not when the goal is missed.
#
# Knobs: GO_BENCH_RUNS BENCH_DIR SYM.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM=${SYM:-$ROOT/bin/sym}
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/go
RUNS=${GO_BENCH_RUNS:-5}
HEADING="## Go binaries: tables from .gopclntab"
note() { echo "go-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"

for c in go llvm-symbolizer objdump; do
	command -v $c > /dev/null 2>&1 || { note "skipping: no $c"; exit 0; }
done
fixtures/build-go.sh > /dev/null 2>&1 || { note "the Go fixture does not build"; exit 1; }
G=$ROOT/fixtures/build/go
mkdir -p "$W" || exit 1
objdump -d --no-show-raw-insn "$G/gofix-dwarf" |
	sed -n 's/^ *\([0-9a-f]*\):\t.*/0x\1/p' > "$W/addrs" || exit 1
head -1 "$W/addrs" > "$W/addr1"
n=$(wc -l < "$W/addrs")

now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.3f\n", $2 - $1 }'; }
# timed NAME INPUT CMD...: RUNS wall times of CMD < INPUT into $W/NAME.t;
# the last run's stderr in $W/NAME.err.
timed() {
	_n=$1 _in=$2
	shift 2
	: > "$W/$_n.t"
	_i=0
	while [ $_i -lt "$RUNS" ]; do
		_t0=$(now)
		"$@" < "$_in" > /dev/null 2> "$W/$_n.err" ||
			{ note "$_n failed: $*"; cat "$W/$_n.err" >&2; exit 1; }
		secs "$_t0" "$(now)" >> "$W/$_n.t"
		_i=$((_i + 1))
	done
	median $(cat "$W/$_n.t")
}
# stat NAME WHAT: the median of the ms --stats reports for WHAT ("build",
# "lookups") over the runs of NAME (each run's stderr kept).
A2L="$SYM addr2line --no-cache --stats -f -i -e"
phase() {
	_v=
	_i=0
	while [ $_i -lt "$RUNS" ]; do
		$A2L "$2" < "$W/addrs" 2>&1 > /dev/null |
			sed -n "s/.* $3 \([0-9.]*\) ms.*/\1/p" > "$W/ph"
		_v="$_v $(cat "$W/ph")"
		_i=$((_i + 1))
	done
	median $_v
}

SW_ALL=$(timed sw-all "$W/addrs" $A2L "$G/gofix-sw")
grep -q "table source: gopclntab" "$W/sw-all.err" ||
	{ note "gofix-sw's table is not from .gopclntab"; exit 1; }
DW_ALL=$(timed dw-all "$W/addrs" $A2L "$G/gofix-dwarf")
LL_ALL=$(timed ll-all "$W/addrs" llvm-symbolizer --obj="$G/gofix-dwarf" \
	--inlining)
SW_1=$(timed sw-1 "$W/addr1" $A2L "$G/gofix-sw")
DW_1=$(timed dw-1 "$W/addr1" $A2L "$G/gofix-dwarf")
LL_1=$(timed ll-1 "$W/addr1" llvm-symbolizer --obj="$G/gofix-dwarf" \
	--inlining)
SW_B=$(phase sw "$G/gofix-sw" build)
DW_B=$(phase dw "$G/gofix-dwarf" build)
SW_L=$(phase sw "$G/gofix-sw" lookups)
DW_L=$(phase dw "$G/gofix-dwarf" lookups)
ratio() { echo "$1 $2" | awk '{ printf "%.1f", ($2 > 0) ? $1 / $2 : 0 }'; }
R_ALL=$(ratio "$LL_ALL" "$SW_ALL")
R_1=$(ratio "$LL_1" "$SW_1")
GOAL=$(echo "$R_ALL $R_1" | awk '{ g = "NOT met" } $1 >= 5 {
	g = "met for a run over all addresses, NOT for one address" }
	$1 >= 5 && $2 >= 5 { g = "met" } END { print g }')

{
	echo "$HEADING"
	echo
	echo "Input: fixtures/build-go.sh's Go 1.19 program, $n instruction" \
		"addresses of gofix-dwarf; gofix-sw is the same program built" \
		"-ldflags='-s -w' (its table comes from .gopclntab)."
	echo "Host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" \
		"at the end; $RUNS runs each, median wall-clock seconds."
	echo
	echo "| what | sym, .gopclntab (gofix-sw) | sym, DWARF (gofix-dwarf) | llvm-symbolizer (gofix-dwarf) | llvm / sym .gopclntab |"
	echo "|---|---|---|---|---|"
	echo "| cold, $n addresses | $SW_ALL | $DW_ALL | $LL_ALL | ${R_ALL}x |"
	echo "| cold, 1 address | $SW_1 | $DW_1 | $LL_1 | ${R_1}x |"
	echo "| table build (--stats, ms) | $SW_B | $DW_B | | |"
	echo "| warm lookups of $n addresses (--stats, ms) | $SW_L | $DW_L | | |"
	echo
	echo "Goal (issue 18): a table from .gopclntab builds at least 5x faster" \
		"than llvm-symbolizer answers on the DWARF build: $GOAL; warm" \
		"lookups as fast as from the DWARF table."
	echo
} > "$W/report.md"
append_report "$HEADING" "$W/report.md" "$OUT/report.md"
cat "$W/report.md"
exit 0
