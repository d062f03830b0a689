#!/bin/sh
# kernel-dwarf-bench.sh - a debug vmlinux's table, cold, against
# llvm-symbolizer, for `make bench` (issue 18).  The input is Debian 12's
# linux-image-6.1.0-*-cloud-amd64-dbg vmlinux (590 MB, 164 MB of
# .debug_info) and its 20,000 sampled .text addresses, which
# tests/e2e/t0161-kernel-dwarf.sh fetches into fixtures/build/kdbg/;
# skipped (0) when they are not there.  Alternating, KDWARF_BENCH_RUNS
# (3) times each, medians of CPU seconds (user + sys) and peak RSS
# (/usr/bin/time):
#  - `sym store add` into an empty store (the whole table built, stored);
#  - `sym addr2line --no-cache -f -i` on the 20,000 link-time addresses
#    (the whole table built, then the lookups);
#  - `llvm-symbolizer --inlining` on the same addresses at link time.
# The section is printed, written to $BENCH_DIR/kdwarf/report.md and
# appended to $BENCH_DIR/report.md, with the load (uptime) of each run.
# The exit status is 1 when something fails.
#
# Knobs: KDWARF_BENCH_RUNS BENCH_DIR SYM.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM=${SYM:-$ROOT/bin/sym}
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/kdwarf
RUNS=${KDWARF_BENCH_RUNS:-3}
K=$ROOT/fixtures/build/kdbg
HEADING="## A debug vmlinux, cold: sym against llvm-symbolizer"
note() { echo "kernel-dwarf-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"

V=$(echo "$K"/x/usr/lib/debug/boot/vmlinux-*)
if [ ! -f "$K/done" ] || [ ! -f "$V" ] || ! command -v llvm-symbolizer \
	> /dev/null; then
	note "skipping: no $K/done (run tests/e2e/t0161-kernel-dwarf.sh) or no llvm-symbolizer"
	exit 0
fi
mkdir -p "$W" || exit 1

# measure NAME CMD...: one run; appends "NAME cpu rss load" to $W/runs.
measure() {
	name=$1; shift
	/usr/bin/time -f '%U %S %M' -o "$W/time" "$@" > "$W/$name.out" \
		2> "$W/$name.err" < "$W/in" || { note "$name failed"; return 1; }
	load=$(uptime | sed 's/.*load average: \([0-9.]*\).*/\1/')
	awk -v n="$name" -v l="$load" '{ printf "%s %.2f %d %s\n", n, $1 + $2, $3, l }' \
		"$W/time" >> "$W/runs"
}

: > "$W/runs"
for i in $(seq "$RUNS"); do
	rm -rf "$W/st"
	: > "$W/in"
	measure store-add "$SYM" store add --store "$W/st" "$V" || exit 1
	cp "$K/vmlinux.addrs" "$W/in"
	measure addr2line "$SYM" addr2line --no-cache -f -i -e "$V" || exit 1
	cp "$K/vmlinux.addrs" "$W/in"
	measure llvm llvm-symbolizer --inlining --obj="$V" || exit 1
done
rm -rf "$W/st"

col() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$W/runs"; }
{
	echo "$HEADING"
	echo
	echo "$(basename "$V") ($(cat "$K/done")), 20,000 .text addresses;"
	echo "medians of $RUNS alternating runs; CPU = user + sys."
	echo
	echo "| command | CPU s | peak RSS MB | loads (1 min) |"
	echo "|---|---:|---:|---|"
	for n in store-add addr2line llvm; do
		printf '| %s | %s | %s | %s |\n' "$n" \
			"$(median $(col $n 2))" \
			"$(awk -v r="$(median $(col $n 3))" 'BEGIN { printf "%.0f", r / 1024 }')" \
			"$(col $n 4 | tr '\n' ' ' | sed 's/ $//')"
	done
	echo
	echo "store-add = \`sym store add\`; addr2line = \`sym addr2line --no-cache -f -i\` on the same link-time addresses; llvm = \`llvm-symbolizer --inlining\` on the link-time addresses."
} > "$W/report.md"
cat "$W/report.md"
append_report "$HEADING" "$W/report.md" "$OUT/report.md"
