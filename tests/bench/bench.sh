#!/bin/sh
# bench.sh - `make bench`: sym addr2line against its peers on real inputs.
#
# For each input (libc.so.6 with its libc6-dbg debug file found by build
# ID, and /usr/bin/python3.11d with its DWARF inside), BENCH_ADDRS (100,000)
# instruction addresses are drawn from `objdump -d` with a fixed seed
# (without replacement when there are enough; in random, so unsorted,
# order).  Then, with the page cache warm, each tool symbolizes them from
# stdin in a fresh process:
#
#   sym              bin/sym addr2line -a -f -i -C -e F   (table built in
#                    the process: a cold start)
#   llvm-symbolizer  llvm-symbolizer --obj=F --inlining -C -a
#   addr2line        addr2line -a -f -i -C -e F
#   eu-addr2line     eu-addr2line -a -f -i -C -e F
#
# Wall time (clock around the process) and peak RSS (/usr/bin/time %M) are
# the medians of BENCH_RUNS runs (3).  eu-addr2line takes about 10 s on
# libc and about 60 s on python3.11d, so it runs BENCH_EU_RUNS times (1);
# BENCH_SKIP_EU=1 leaves it out.  Then tests/bench/lookup-bench.c measures
# the lookup cost once the table is built, in ns per address.
#
# Sanity, not correctness (make check does that): every tool must print
# one group per address, and the share of addresses where our number of
# frames equals each peer's is shown.
#
# Knobs: BENCH_RUNS BENCH_EU_RUNS BENCH_SKIP_EU BENCH_ADDRS BENCH_SEED
#        BENCH_INPUTS ("name=path ...") BENCH_DIR (build/bench) SYM
# The table is printed and written to $BENCH_DIR/report.md.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SYM=${SYM:-$ROOT/bin/sym}
RUNS=${BENCH_RUNS:-3}
EU_RUNS=${BENCH_EU_RUNS:-1}
SKIP_EU=${BENCH_SKIP_EU:-0}
NADDR=${BENCH_ADDRS:-100000}
SEED=${BENCH_SEED:-20240601}
OUT=${BENCH_DIR:-$ROOT/build/bench}
INPUTS=${BENCH_INPUTS:-"libc=/lib/x86_64-linux-gnu/libc.so.6 python3.11d=/usr/bin/python3.11d"}
UTIL="python3 $ROOT/tests/bench/benchutil.py"
TIME=/usr/bin/time
export LC_ALL=C

die() { echo "bench: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }

[ -x "$SYM" ] || die "no $SYM; run make first"
[ -x "$TIME" ] || die "no $TIME (Debian package time)"
mkdir -p "$OUT"

# --- lookup-bench, built against lib/libsym.a when stale ---------------
# (test -nt is not POSIX, but dash, bash and busybox sh all have it.)
LB="$OUT/lookup-bench"
# shellcheck disable=SC3013
if [ ! -x "$LB" ] || [ tests/bench/lookup-bench.c -nt "$LB" ] ||
   [ lib/libsym.a -nt "$LB" ]; then
	if [ ! -f lib/libsym.a ] || [ ! -f lib/libsym.pc ]; then
		die "no lib/libsym.a or lib/libsym.pc; run make first"
	fi
	# The static library's dependencies, as its .pc file lists them.
	deps=$(sed -n 's/^Requires.private: *//p' lib/libsym.pc | tr , ' ')
	# shellcheck disable=SC2046,SC2086
	${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Ilibsym -o "$LB" \
		tests/bench/lookup-bench.c lib/libsym.a \
		$(pkg-config --libs $deps) \
		$(sed -n 's/^Libs.private: *//p' lib/libsym.pc) ||
		die "cannot build $LB"
fi

# run_one TOOL FILE ADDRS OUTFILE: one timed run; prints "wall rss_kb".
run_one() {
	tool=$1 f=$2 addrs=$3 o=$4
	case $tool in
	sym) set -- "$SYM" addr2line -a -f -i -C -e "$f" ;;
	llvm-symbolizer) set -- llvm-symbolizer --obj="$f" --inlining -C -a ;;
	addr2line) set -- addr2line -a -f -i -C -e "$f" ;;
	eu-addr2line) set -- eu-addr2line -a -f -i -C -e "$f" ;;
	esac
	t0=$(date +%s%N)
	if ! "$TIME" -f '%M' -o "$OUT/time.tmp" "$@" < "$addrs" > "$o" \
	     2> "$o.err"; then
		t1=$(date +%s%N)
		note "$tool failed on $f (exit status; see $o.err):"
		head -3 "$o.err" >&2
		return 1
	fi
	t1=$(date +%s%N)
	rss=$(tail -1 "$OUT/time.tmp")
	echo "$(( (t1 - t0) / 1000000 )) $rss"
}

ROWS="$OUT/rows.txt"
LROWS="$OUT/lookup-rows.txt"
SAN="$OUT/sanity.txt"
: > "$ROWS"
: > "$LROWS"
: > "$SAN"
status=0

for spec in $INPUTS; do
	name=${spec%%=*}
	f=${spec#*=}
	if [ ! -r "$f" ]; then
		note "skipping $name: no $f"
		continue
	fi
	# The debug file, for the page cache (and to say when it is missing).
	bid=$(readelf -n "$f" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -1)
	dbg=
	if [ -n "$bid" ]; then
		d=/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug
		[ -r "$d" ] && dbg=$d
	fi
	if [ -z "$dbg" ] && ! readelf -S "$f" | grep -q '\.debug_info'; then
		note "skipping $name: no debug info for $f (build ID $bid)"
		continue
	fi

	addrs="$OUT/$name.addrs"
	# shellcheck disable=SC3013
	if [ ! -s "$addrs" ] || [ "$f" -nt "$addrs" ] ||
	   [ "$(wc -l < "$addrs")" -ne "$NADDR" ] ||
	   [ "$(cat "$addrs.seed" 2>/dev/null)" != "$SEED" ]; then
		objdump -d --no-show-raw-insn "$f" |
			$UTIL sample "$SEED" "$NADDR" > "$addrs"
		echo "$SEED" > "$addrs.seed"
	fi
	# Warm the page cache: the files and every tool binary.
	cat "$f" ${dbg:+"$dbg"} "$SYM" > /dev/null
	note "$name: $f${dbg:+ (debug: $dbg)}, $NADDR addresses"

	tools="sym llvm-symbolizer addr2line"
	[ "$SKIP_EU" = 1 ] || tools="$tools eu-addr2line"
	for tool in $tools; do
		n=$RUNS
		[ "$tool" = eu-addr2line ] && n=$EU_RUNS
		walls='' rsss='' ok=1
		i=0
		while [ $i -lt "$n" ]; do
			i=$((i + 1))
			if r=$(run_one "$tool" "$f" "$addrs" \
				       "$OUT/$name.$tool.out"); then
				walls="$walls ${r% *}"
				rsss="$rsss ${r#* }"
			else
				ok=0
				break
			fi
		done
		if [ $ok = 0 ]; then
			echo "$name $tool failed failed $n" >> "$ROWS"
			[ "$tool" = sym ] && status=1
			continue
		fi
		# shellcheck disable=SC2086
		wall=$($UTIL median $walls)
		# shellcheck disable=SC2086
		rss=$($UTIL median $rsss)
		echo "$name $tool $wall $rss $n" >> "$ROWS"
		note "  $tool: wall ms [$walls ], rss kB [$rsss ]"
		if ! $UTIL frames "$OUT/$name.$tool.out" "$NADDR" \
		     > "$OUT/$name.$tool.frames"; then
			echo "$name: $tool did not print one group per address" >> "$SAN"
			[ "$tool" = sym ] && status=1
		fi
	done
	for tool in llvm-symbolizer addr2line eu-addr2line; do
		if [ ! -s "$OUT/$name.$tool.frames" ] ||
		   [ ! -s "$OUT/$name.sym.frames" ]; then
			continue
		fi
		# shellcheck disable=SC2086
		pct=$($UTIL agree "$OUT/$name.sym.frames" "$OUT/$name.$tool.frames")
		echo "$name: same number of frames as $tool on $pct% of addresses" >> "$SAN"
	done

	if "$LB" -r 7 "$f" "$addrs" > "$OUT/$name.lookup" 2> "$OUT/$name.lookup.err"; then
		# shellcheck disable=SC2046
		echo "$name $(awk '{ printf "%s ", $2 }' "$OUT/$name.lookup")" >> "$LROWS"
	else
		note "lookup-bench failed on $name:"
		head -3 "$OUT/$name.lookup.err" >&2
		status=1
	fi
done

# --- report ----------------------------------------------------------------
{
	echo "$NADDR unsorted instruction addresses per input (objdump -d, seed $SEED), page cache warm."
	echo "Wall time and peak RSS: median of $RUNS runs (eu-addr2line: $EU_RUNS run(s)), each a cold process."
	echo "Ratios are ours/peer: below 1 means we use less."
	echo
	echo "| input | tool | runs | wall s | peak RSS MB | ours/peer wall | ours/peer RSS |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	awk '
	{ key = $1; if ($2 == "sym") { ow[key] = $3; orss[key] = $4 } }
	{ row[NR] = $0 }
	END {
		for (i = 1; i <= NR; i++) {
			split(row[i], f, " ")
			if (f[3] == "failed") {
				printf "| %s | %s | %s | failed | failed | - | - |\n", f[1], f[2], f[5]
				continue
			}
			w = f[3] / 1000; r = f[4] / 1024
			if (f[2] == "sym" || !(f[1] in ow)) { rw = "-"; rr = "-" }
			else {
				rw = sprintf("%.2f", ow[f[1]] / f[3])
				rr = sprintf("%.2f", orss[f[1]] / f[4])
			}
			printf "| %s | %s | %s | %.2f | %.1f | %s | %s |\n", f[1], f[2], f[5], w, r, rw, rr
		}
	}' "$ROWS"
	echo
	echo "Lookup cost once the table is built (tests/bench/lookup-bench.c, median of 7 passes over the same addresses):"
	echo
	echo "| input | table build s | table MB | RSS after build MB | frames/addr | single unsorted ns | single sorted ns | batch unsorted ns | batch sorted ns |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	# addresses build_s table_bytes rss_kb frames_per_addr su ss bu bs
	awk '{ printf "| %s | %.2f | %.1f | %.1f | %s | %s | %s | %s | %s |\n", $1, $3, $4 / 1048576, $5 / 1024, $6, $7, $8, $9, $10 }' "$LROWS"
	echo
	echo "Sanity (frame counts per address, not correctness):"
	echo
	sed 's/^/- /' "$SAN"
} > "$OUT/report.md"

# The same, as an aligned text table for the terminal.
echo
printf '%-12s %-16s %4s %8s %12s %15s %14s\n' input tool runs "wall s" "peak RSS MB" "ours/peer wall" "ours/peer RSS"
awk '
{ key = $1; if ($2 == "sym") { ow[key] = $3; orss[key] = $4 } }
{ row[NR] = $0 }
END {
	for (i = 1; i <= NR; i++) {
		split(row[i], f, " ")
		if (f[3] == "failed") {
			printf "%-12s %-16s %4s %8s %12s %15s %14s\n", f[1], f[2], f[5], "failed", "failed", "-", "-"
			continue
		}
		if (f[2] == "sym" || !(f[1] in ow)) { rw = "-"; rr = "-" }
		else {
			rw = sprintf("%.2f", ow[f[1]] / f[3])
			rr = sprintf("%.2f", orss[f[1]] / f[4])
		}
		printf "%-12s %-16s %4s %8.2f %12.1f %15s %14s\n", f[1], f[2], f[5], f[3] / 1000, f[4] / 1024, rw, rr
	}
}' "$ROWS"
echo
echo "lookup cost once the table is built, ns per address (median of 7 passes):"
printf '%-12s %8s %9s %9s %8s %9s %9s %9s %9s\n' input "build s" "table MB" "RSS MB" frames/a "single-u" "single-s" "batch-u" "batch-s"
awk '{ printf "%-12s %8.2f %9.1f %9.1f %8s %9s %9s %9s %9s\n", $1, $3, $4 / 1048576, $5 / 1024, $6, $7, $8, $9, $10 }' "$LROWS"
echo "(u = addresses in random order, s = sorted; single = sym_table_lookup, batch = sym_table_lookup_batch)"
echo
sed 's/^/sanity: /' "$SAN"
echo
echo "report: $OUT/report.md"
exit $status
