#!/bin/sh
# lazy-bench.sh - cold first answers, `make bench`'s part for issue 19:
# `sym addr2line` with an empty store (the lazy path for few addresses,
# the full build past LAZY_MAX) against llvm-symbolizer, on 1 and 1,000
# unsorted addresses of libjvm's, python3.11d's and libc's text, each a
# whole process, alternating, with wall and CPU time to the microsecond
# (tests/bench/cputime.c) and peak RSS (/usr/bin/time).  Goal (issue 19): at most 0.5x llvm-symbolizer's
# wall time and at most its peak RSS.  Also the full build alone
# (--lazy=never) for the same 1 address, to show what the lazy path
# saves.
#
# The addresses are uniform over the executable sections (seeded, so
# every run asks the same).  Figures are medians of LAZY_BENCH_RUNS
# (default 3) runs; CPU time (user + system) is given too, the figure to
# trust when the machine is shared.  The section is printed, written to
# $BENCH_DIR/lazy/report.md and appended to $BENCH_DIR/report.md.  The
# exit status is 1 when something fails, not when a goal is missed.
#
# Knobs: LAZY_BENCH_RUNS BENCH_DIR SYM.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM=${SYM:-$ROOT/bin/sym}
OUT=${BENCH_DIR:-$ROOT/build/bench}
RUNS=${LAZY_BENCH_RUNS:-3}
W=$OUT/lazy
HEADING="## Cold first answers (issue 19)"
mkdir -p "$W" || exit 1

note() { echo "lazy-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"

command -v llvm-symbolizer > /dev/null || { note "no llvm-symbolizer"; exit 0; }
[ -x /usr/bin/time ] || { note "no /usr/bin/time"; exit 0; }

# cputime (tests/bench/cputime.c) times to the microsecond: /usr/bin/time
# prints hundredths, too coarse for python3.11d's 20 to 50 ms runs.
CT=$W/cputime
if [ ! -x "$CT" ] || [ tests/bench/cputime.c -nt "$CT" ]; then
	${CC:-cc} -O2 -Ilibsym -o "$CT" tests/bench/cputime.c || exit 1
fi

# timed LABEL CMD...: run once with stdin from $in, append "wall rss cpu"
# (s, MB, s): wall and CPU (user + system) from cputime, peak RSS from
# /usr/bin/time around it (the largest of the tree: the command's).
timed() {
	_l=$1
	shift
	/usr/bin/time -f '%M' -o "$W/rss.txt" "$CT" "$W/ct.txt" "$@" \
		< "$in" > /dev/null 2> "$W/err.txt" || {
		note "$_l failed: $*"
		tail -3 "$W/err.txt" >&2
		fail=1
	}
	awk -v r="$(tail -1 "$W/rss.txt")" '{ printf "%.4f %.0f %.4f\n",
		$3, r / 1024, $1 + $2 }' "$W/ct.txt" >> "$W/$_l"
}

fail=0
{
	echo "$HEADING"
	echo
	echo "Store empty, whole processes, medians of $RUNS; wall s / peak MB /"
	echo "CPU s (user + system: the figure to trust on a shared machine)."
	echo
	echo "| input | addresses | sym addr2line | llvm-symbolizer | ratio (wall, RSS, CPU) | full build (--lazy=never) |"
	echo "|---|---|---|---|---|---|"
} > "$W/report.md"
for input in libjvm:/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so \
	     python3.11d:/usr/bin/python3.11d \
	     libc:/lib/x86_64-linux-gnu/libc.so.6; do
	name=${input%%:*}
	f=${input#*:}
	usable_input "$name" "$f" || continue
	obj=${dbg:-$f}
	for n in 1 1000; do
		in=$W/$name.$n
		text_addrs "$obj" "$n" > "$in"
		rm -f "$W/sym" "$W/llvm" "$W/full"
		i=0
		while [ "$i" -lt "$RUNS" ]; do
			timed sym "$SYM" addr2line --no-cache -fiC -e "$obj"
			timed llvm llvm-symbolizer --obj="$obj"
			[ "$n" = 1 ] && timed full "$SYM" addr2line --no-cache \
				--lazy=never -fiC -e "$obj"
			i=$((i + 1))
		done
		sc=$(median $(cut -d' ' -f3 "$W/sym"))
		lc=$(median $(cut -d' ' -f3 "$W/llvm"))
		sw=$(median $(cut -d' ' -f1 "$W/sym"))
		sr=$(median $(cut -d' ' -f2 "$W/sym"))
		lw=$(median $(cut -d' ' -f1 "$W/llvm"))
		lr=$(median $(cut -d' ' -f2 "$W/llvm"))
		full=-
		if [ -f "$W/full" ]; then
			full="$(median $(cut -d' ' -f1 "$W/full")) s / $(median $(cut -d' ' -f2 "$W/full")) MB / $(median $(cut -d' ' -f3 "$W/full")) s"
		fi
		echo "| $name | $n | $sw s / $sr MB / $sc s | $lw s / $lr MB / $lc s | $(awk -v a="$sw" -v b="$lw" -v c="$sr" -v d="$lr" -v e="$sc" -v f="$lc" 'BEGIN { printf "%.2fx, %.2fx, %.2fx", b ? a / b : 0, d ? c / d : 0, f ? e / f : 0 }') | $full |" >> "$W/report.md"
	done
done
cat "$W/report.md"
append_report "$HEADING" "$W/report.md" "$OUT/report.md"
exit "$fail"
