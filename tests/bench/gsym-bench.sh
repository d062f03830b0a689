#!/bin/sh
# gsym-bench.sh - tables against LLVM's GSYM, `make bench`'s part for
# issue 19: on libc (libc6-dbg), python3.11d (python3.11-dbg) and libjvm
# (openjdk-17-dbg),
#
#   size  the table `sym store add` stores against the file
#         `llvm-gsymutil-14 --convert` writes from the same debug file
#         (goal: at most 1.0x), each conversion's wall time and peak RSS
#         beside it;
#   warm  100,000 unsorted addresses (seeded, uniform over the text)
#         looked up by `sym lookup -f -i` in that store against
#         tests/bench/gsym-lookup.cpp, a C++ harness on libLLVM-14's
#         GsymReader::lookup() that prints the same fields (function
#         name, then DIR/BASE:LINE, per frame).  Whole processes,
#         alternating, GSYM_BENCH_RUNS (5) each; wall and CPU medians
#         (goal: GSYM's at least 50x ours on libjvm, 40x on the others).
#
# `sym lookup` runs with --threads=1: the peer uses one thread, and on a
# shared 2-core machine a second thread measures the load.  Every warm
# run, ours and the peer's, is pinned to CPU BENCH_CPU (0; empty: not
# pinned), as tests/bench/symprof-alloc-bench.sh's are: this VM's two
# vCPUs differ in speed by up to 60%, and unpinned the runs of one
# median fell on either.  The section
# is printed, written to $BENCH_DIR/gsym/report.md and appended to
# $BENCH_DIR/report.md.  GSYM files are kept in $BENCH_DIR/gsym and made
# again only when the debug file is newer.  The exit status is 1 when
# something fails, not when a goal is missed.
#
# Knobs: GSYM_BENCH_RUNS GSYM_BENCH_ADDRS GSYM_BENCH_INPUTS BENCH_DIR SYM
# BENCH_CPU.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM=${SYM:-$ROOT/bin/sym}
OUT=${BENCH_DIR:-$ROOT/build/bench}
RUNS=${GSYM_BENCH_RUNS:-5}
NADDR=${GSYM_BENCH_ADDRS:-100000}
INPUTS=${GSYM_BENCH_INPUTS:-"libc:/lib/x86_64-linux-gnu/libc.so.6
python3.11d:/usr/bin/python3.11d
libjvm:/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"}
W=$OUT/gsym
HEADING="## Tables against LLVM's GSYM (issue 19)"
mkdir -p "$W" || exit 1

note() { echo "gsym-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"

command -v llvm-gsymutil-14 > /dev/null || { note "no llvm-gsymutil-14"; exit 0; }
command -v llvm-config-14 > /dev/null || { note "no llvm-config-14 (llvm-14-dev)"; exit 0; }
[ -x /usr/bin/time ] || { note "no /usr/bin/time"; exit 0; }
PIN=
if [ -n "${BENCH_CPU-0}" ] && command -v taskset > /dev/null; then
	PIN="taskset -c ${BENCH_CPU-0}"
fi

# The harness and cputime, built when stale.
GL=$W/gsym-lookup
CT=$W/cputime
# shellcheck disable=SC3013
if [ ! -x "$GL" ] || [ tests/bench/gsym-lookup.cpp -nt "$GL" ]; then
	# shellcheck disable=SC2046
	c++ -O2 $(llvm-config-14 --cxxflags) -o "$GL" \
		tests/bench/gsym-lookup.cpp \
		$(llvm-config-14 --ldflags --libs) || { note "cannot build $GL"; exit 1; }
fi
# shellcheck disable=SC3013
if [ ! -x "$CT" ] || [ tests/bench/cputime.c -nt "$CT" ]; then
	cc -O2 -Ilibsym -o "$CT" tests/bench/cputime.c || exit 1
fi

# conv LABEL CMD...: run once, write "wall rss" (s, MB) to $W/LABEL.conv.
conv() {
	_l=$1
	shift
	/usr/bin/time -v "$@" > /dev/null 2> "$W/time.txt" || {
		note "$_l failed: $*"
		tail -3 "$W/time.txt" >&2
		fail=1
	}
	awk -F': ' '/Elapsed \(wall/ { n = split($2, t, ":"); s = 0;
			for (i = 1; i <= n; i++) s = s * 60 + t[i]; w = s }
		/Maximum resident/ { r = $2 / 1024 }
		END { printf "%.2f s / %.0f MB\n", w, r }' "$W/time.txt" > "$W/$_l.conv"
}

# warm LABEL CMD...: one whole process with stdin $in, append
# "wall cpu" to $W/LABEL; its output to $W/LABEL.out, or to
# /dev/null for a LABEL ending in "-null" (the same printing, without the
# file system's work for a 7 to 38 MB file, which weighs alike on both
# tools and so pulls their ratio toward 1).
warm() {
	_l=$1
	shift
	_o=$W/$_l.out
	case $_l in *-null) _o=/dev/null ;; esac
	$PIN "$CT" "$W/ct.txt" "$@" < "$in" > "$_o" || {
		note "$_l failed: $*"
		fail=1
	}
	awk '{ printf "%.5f %.5f\n", $3, $1 + $2 }' "$W/ct.txt" >> "$W/$_l"
}

col() { awk -v c="$1" '{ print $c }' "$2"; }

fail=0
load=$(uptime | sed 's/.*load average: //')
{
	echo "$HEADING"
	echo
	echo "Size: the stored table against \`llvm-gsymutil-14 --convert\` of the"
	echo "same debug file (conversion wall / peak RSS beside each).  Warm:"
	echo "$NADDR unsorted addresses, whole processes, medians of $RUNS"
	echo "alternating runs, wall s (CPU s), the output to a file; ratio ="
	echo "GSYM's / ours; the same to /dev/null in the runs between.  Load"
	echo "before: $load.  Runs pinned: ${PIN:-no}."
	echo
	echo "| input | sym table | GSYM | size ratio | sym lookup | GsymReader | warm ratio (wall, CPU) | to /dev/null: sym, GsymReader, ratio | frames sym / GSYM |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} > "$W/report.md"
echo "$INPUTS" | while IFS= read -r input; do
	[ -n "$input" ] || continue
	name=${input%%:*}
	f=${input#*:}
	usable_input "$name" "$f" || continue
	obj=${dbg:-$f}
	g=$W/$name.gsym
	# shellcheck disable=SC3013
	if [ ! -s "$g" ] || [ "$obj" -nt "$g" ]; then
		conv "$name.gsymutil" llvm-gsymutil-14 --convert "$obj" --out-file "$g"
	fi
	st=$W/store.$name
	rm -rf "$st"
	conv "$name.symadd" "$SYM" store --store="$st" add "$f"
	bid=$("$SYM" store --store="$st" ls | awk 'NR == 1 { print $1 }')
	tsz=$("$SYM" store --store="$st" info "$bid" | awk '/^size:/ { print $2 }')
	gsz=$(wc -c < "$g")
	in=$W/$name.addrs
	[ -s "$in" ] || text_addrs "$obj" "$NADDR" > "$in"
	rm -f "$W/sym" "$W/gsym" "$W/sym-null" "$W/gsym-null"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		warm sym "$SYM" lookup --store="$st" --threads=1 -f -i "$bid"
		warm gsym "$GL" "$g"
		warm sym-null "$SYM" lookup --store="$st" --threads=1 -f -i "$bid"
		warm gsym-null "$GL" "$g"
		i=$((i + 1))
	done
	sw=$(median $(col 1 "$W/sym")); sc=$(median $(col 2 "$W/sym"))
	gw=$(median $(col 1 "$W/gsym")); gc=$(median $(col 2 "$W/gsym"))
	nsw=$(median $(col 1 "$W/sym-null"))
	ngw=$(median $(col 1 "$W/gsym-null"))
	sf=$(($(wc -l < "$W/sym.out") / 2))
	gf=$(($(wc -l < "$W/gsym.out") / 2))
	awk -v n="$name" -v t="$tsz" -v g="$gsz" -v sw="$sw" -v sc="$sc" \
	    -v gw="$gw" -v gc="$gc" -v sf="$sf" -v gf="$gf" \
	    -v nsw="$nsw" -v ngw="$ngw" \
	    -v sa="$(cat "$W/$name.symadd.conv")" \
	    -v ga="$(cat "$W/$name.gsymutil.conv" 2>/dev/null)" 'BEGIN {
		printf "| %s | %d B (%s) | %d B (%s) | %.3fx | %.4f (%.4f) | %.3f (%.3f) | %.1fx, %.1fx | %.4f, %.3f, %.1fx | %d / %d |\n",
			n, t, sa, g, ga, t / g, sw, sc, gw, gc,
			gw / sw, gc / sc, nsw, ngw, ngw / nsw, sf, gf }' >> "$W/report.md"
done
echo >> "$W/report.md"
echo "Load after: $(uptime | sed 's/.*load average: //')." >> "$W/report.md"
publish "$HEADING" "$W/report.md" "$OUT/report.md"
exit "$fail"
