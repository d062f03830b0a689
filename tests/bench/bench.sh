#!/bin/sh
# bench.sh - `make bench`: sym against llvm-symbolizer (and addr2line,
# eu-addr2line) on real inputs, cold and warm, as issue 3 asks.
#
# Inputs: libc.so.6 with its libc6-dbg debug file found by build ID,
# /usr/bin/python3.11d with its DWARF inside, and libjvm.so of OpenJDK 17
# when its debug file (openjdk-17-dbg) is installed.  For each, BENCH_ADDRS
# (100,000) instruction addresses are drawn from `objdump -d` with a fixed
# seed (without replacement when there are enough; in random, so unsorted,
# order).  The page cache is warm (files read first).  Every figure below
# is a whole fresh process reading the addresses on stdin:
#
# Cold (no store):
#   sym              bin/sym addr2line --no-cache --stats -a -f -i -C -e F
#   llvm-symbolizer  llvm-symbolizer --obj=F --inlining -C -a
#   addr2line        addr2line -a -f -i -C -e F
#   eu-addr2line     eu-addr2line -a -f -i -C -e F
# Store:
#   store add        bin/sym store add --store DIR F       (into an empty
#                    store each run: build + store)
# Warm (the store filled by `store add`):
#   sym lookup       bin/sym lookup --store DIR BUILDID -a -f -i -C
#   sym addr2line    bin/sym addr2line --store DIR -a -f -i -C -e F
#
# Wall time (clock around the process) and peak RSS (/usr/bin/time %M) are
# medians of BENCH_RUNS runs (3); the warm runs, which are short, of
# BENCH_WARM_RUNS (5).  eu-addr2line runs BENCH_EU_RUNS times (1);
# BENCH_SKIP_EU=1 leaves it out.  On a big input (more than BENCH_BIG_MB,
# 100, MB of uncompressed .debug_*: libjvm) GNU addr2line (22 s, 2.4 GB)
# and eu-addr2line (11 minutes) are left out unless BENCH_BIG_PEERS=1.
#
# Size: the stored table's bytes (sym store ls) against the uncompressed
# bytes of the .debug_* sections it came from (benchutil.py debugsize), and
# where they go (tests/bench/table-size.c: the bytes of each area).
# tests/bench/lookup-bench.c measures the in-library lookup cost, in ns
# per address and lookups per second, on a built table and from the store;
# tests/bench/memprobe.c what this machine's memory costs (the latency of
# a dependent read and the cost of one more random cache line, by working
# set), which bounds that figure on tables larger than the cache.
#
# Sanity, not correctness (make check does that): every tool must print
# one group per address; the share of addresses where our number of frames
# equals each peer's is shown; the warm outputs must equal the cold one
# byte for byte, and the warm sym addr2line must say it used the store.
#
# Knobs: BENCH_RUNS BENCH_WARM_RUNS BENCH_EU_RUNS BENCH_SKIP_EU BENCH_ADDRS
#        BENCH_SEED BENCH_BIG_MB BENCH_BIG_PEERS
#        BENCH_INPUTS ("name=path ...") BENCH_DIR (build/bench) SYM
# The report is printed and written to $BENCH_DIR/report.md.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SYM=${SYM:-$ROOT/bin/sym}
COMPAT=${COMPAT:-$ROOT/bin/compat/llvm-symbolizer}
RUNS=${BENCH_RUNS:-3}
WRUNS=${BENCH_WARM_RUNS:-5}
EU_RUNS=${BENCH_EU_RUNS:-1}
SKIP_EU=${BENCH_SKIP_EU:-0}
NADDR=${BENCH_ADDRS:-100000}
SEED=${BENCH_SEED:-20240601}
BIG_MB=${BENCH_BIG_MB:-100}
BIG_PEERS=${BENCH_BIG_PEERS:-0}
OUT=${BENCH_DIR:-$ROOT/build/bench}
JVM=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
UTIL="python3 $ROOT/tests/bench/benchutil.py"
TIME=/usr/bin/time
export LC_ALL=C
# Nothing here may read or fill the user's store.
SYM_STORE=$OUT/store-default
export SYM_STORE

die() { echo "bench: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }

[ -x "$SYM" ] || die "no $SYM; run make first"
[ -x "$TIME" ] || die "no $TIME (Debian package time)"
mkdir -p "$OUT"

# debug_file, usable_input
. "$ROOT/tests/bench/lib.sh"

if [ -z "${BENCH_INPUTS:-}" ]; then
	INPUTS="libc=/lib/x86_64-linux-gnu/libc.so.6 python3.11d=/usr/bin/python3.11d"
	if [ -r "$JVM" ] && [ -n "$(debug_file "$JVM")" ]; then
		INPUTS="$INPUTS libjvm=$JVM"
	else
		note "skipping libjvm: no $JVM with its debug file (apt-get install openjdk-17-jre-headless openjdk-17-dbg)"
	fi
else
	INPUTS=$BENCH_INPUTS
fi

# --- lookup-bench and table-size, built against lib/libsym.a when stale --
# (test -nt is not POSIX, but dash, bash and busybox sh all have it.)
LB="$OUT/lookup-bench"
TS="$OUT/table-size"
for tool in lookup-bench table-size; do
	# shellcheck disable=SC3013
	if [ -x "$OUT/$tool" ] && [ ! "tests/bench/$tool.c" -nt "$OUT/$tool" ] &&
	   [ ! lib/libsym.a -nt "$OUT/$tool" ]; then
		continue
	fi
	if [ ! -f lib/libsym.a ] || [ ! -f lib/libsym.pc ]; then
		die "no lib/libsym.a or lib/libsym.pc; run make first"
	fi
	# The static library's dependencies, as its .pc file lists them.
	deps=$(sed -n 's/^Requires.private: *//p' lib/libsym.pc | tr , ' ')
	# shellcheck disable=SC2046,SC2086
	${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Ilibsym -o "$OUT/$tool" \
		"tests/bench/$tool.c" lib/libsym.a \
		$(pkg-config --libs $deps) \
		$(sed -n 's/^Libs.private: *//p' lib/libsym.pc) ||
		die "cannot build $OUT/$tool"
done
# The memory probe needs nothing but libc (and libsym/base.h, the
# project header every C file includes, for its ban list).
MP="$OUT/memprobe"
# shellcheck disable=SC3013
if [ ! -x "$MP" ] || [ tests/bench/memprobe.c -nt "$MP" ]; then
	${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Ilibsym -o "$MP" \
		tests/bench/memprobe.c ||
		die "cannot build $MP"
fi

# run_one TOOL FILE ADDRS OUTFILE [STORE BUILDID]: one timed run; prints
# "wall_ms rss_kb".
run_one() {
	r_tool=$1 r_f=$2 r_addrs=$3 r_o=$4 r_st=${5:-} r_bid=${6:-}
	case $r_tool in
	sym) set -- "$SYM" addr2line --no-cache --stats -a -f -i -C -e "$r_f" ;;
	llvm-symbolizer) set -- llvm-symbolizer --obj="$r_f" --inlining -C -a ;;
	addr2line) set -- addr2line -a -f -i -C -e "$r_f" ;;
	eu-addr2line) set -- eu-addr2line -a -f -i -C -e "$r_f" ;;
	store-add) set -- "$SYM" store add --store "$r_st" "$r_f" ;;
	sym-lookup) set -- "$SYM" lookup --store "$r_st" "$r_bid" -a -f -i -C ;;
	sym-addr2line) set -- "$SYM" addr2line --store "$r_st" --stats -a -f -i -C -e "$r_f" ;;
	compat) set -- env SYM_STORE="$r_st" "$COMPAT" --obj="$r_f" --inlining -C -a ;;
	esac
	rm -f "$r_o"	# its truncation is not the tool's time
	t0=$(date +%s%N)
	if ! "$TIME" -f '%M' -o "$OUT/time.tmp" "$@" < "$r_addrs" > "$r_o" \
	     2> "$r_o.err"; then
		note "$r_tool failed on $r_f (exit status; see $r_o.err):"
		head -3 "$r_o.err" >&2
		return 1
	fi
	t1=$(date +%s%N)
	rss=$(tail -1 "$OUT/time.tmp")
	echo "$(( (t1 - t0) / 1000000 )) $rss"
}

# measure NAME TOOL N FILE ADDRS [STORE BUILDID]: N runs of TOOL; appends
# "name tool wall_ms rss_kb n" (medians) to $ROWS; fails when a run fails.
# Before each store-add run the store is emptied.
measure() {
	m_name=$1 m_tool=$2 m_n=$3 m_f=$4 m_addrs=$5 m_st=${6:-} m_bid=${7:-}
	walls='' rsss='' i=0
	while [ $i -lt "$m_n" ]; do
		i=$((i + 1))
		[ "$m_tool" = store-add ] && rm -rf "$m_st"
		if r=$(run_one "$m_tool" "$m_f" "$m_addrs" \
			       "$OUT/$m_name.$m_tool.out" "$m_st" "$m_bid"); then
			walls="$walls ${r% *}"
			rsss="$rsss ${r#* }"
		else
			echo "$m_name $m_tool failed failed $m_n" >> "$ROWS"
			return 1
		fi
	done
	# shellcheck disable=SC2086
	echo "$m_name $m_tool $($UTIL median $walls) $($UTIL median $rsss) $m_n" >> "$ROWS"
	note "  $m_tool: wall ms [$walls ], rss kB [$rsss ]"
}

ROWS="$OUT/rows.txt"		# name tool wall_ms rss_kb runs
SROWS="$OUT/size-rows.txt"	# name table_bytes chunks debug_bytes debug_disk mdb_bytes
LROWS="$OUT/lookup-rows.txt"	# name key value ...
CROWS="$OUT/cold-stats.txt"	# name: --stats of the last cold sym run
SAN="$OUT/sanity.txt"
: > "$ROWS"
: > "$SROWS"
: > "$LROWS"
: > "$CROWS"
: > "$SAN"
status=0
START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

for spec in $INPUTS; do
	name=${spec%%=*}
	f=${spec#*=}
	usable_input "$name" "$f" || continue
	bid=$("$SYM" buildid "$f" | awk '{ print $1 }')

	addrs="$OUT/$name.addrs"
	# shellcheck disable=SC3013
	if [ ! -s "$addrs" ] || [ "$f" -nt "$addrs" ] ||
	   [ "$(wc -l < "$addrs")" -ne "$NADDR" ] ||
	   [ "$(cat "$addrs.seed" 2>/dev/null)" != "$SEED" ]; then
		objdump -d --no-show-raw-insn "$f" |
			$UTIL sample "$SEED" "$NADDR" > "$addrs"
		echo "$SEED" > "$addrs.seed"
	fi
	# Warm the page cache: the files and our binary.
	cat "$f" ${dbg:+"$dbg"} "$SYM" > /dev/null
	# shellcheck disable=SC2086
	dsize=$($UTIL debugsize "$f" ${dbg:+"$dbg"})
	big=0
	[ "${dsize%% *}" -gt $((BIG_MB * 1000000)) ] && big=1
	note "$name: $f${dbg:+ (debug: $dbg)}, build ID $bid, $NADDR addresses, .debug_* ${dsize%% *} bytes uncompressed"

	# --- cold processes -------------------------------------------------
	tools="sym llvm-symbolizer"
	if [ $big = 0 ] || [ "$BIG_PEERS" = 1 ]; then
		tools="$tools addr2line"
		[ "$SKIP_EU" = 1 ] || tools="$tools eu-addr2line"
	else
		note "  $name is big: no addr2line or eu-addr2line (BENCH_BIG_PEERS=1 adds them)"
	fi
	for tool in $tools; do
		n=$RUNS
		[ "$tool" = eu-addr2line ] && n=$EU_RUNS
		if ! measure "$name" "$tool" "$n" "$f" "$addrs"; then
			[ "$tool" = sym ] && status=1
			continue
		fi
		if ! $UTIL frames "$OUT/$name.$tool.out" "$NADDR" \
		     > "$OUT/$name.$tool.frames"; then
			echo "$name: $tool did not print one group per address" >> "$SAN"
			[ "$tool" = sym ] && status=1
		fi
	done
	sed "s/^/$name: /" "$OUT/$name.sym.out.err" >> "$CROWS" 2>/dev/null || :
	for tool in llvm-symbolizer addr2line eu-addr2line; do
		if [ ! -s "$OUT/$name.$tool.frames" ] ||
		   [ ! -s "$OUT/$name.sym.frames" ] ||
		   ! echo " $tools " | grep -q " $tool "; then
			continue
		fi
		pct=$($UTIL agree "$OUT/$name.sym.frames" "$OUT/$name.$tool.frames")
		echo "$name: same number of frames as $tool on $pct% of addresses" >> "$SAN"
	done

	# --- the store: build and store, then warm lookups -------------------
	st="$OUT/store.$name"
	if measure "$name" store-add "$RUNS" "$f" /dev/null "$st"; then
		# build ID, kind, size, chunks, ...
		ls_line=$("$SYM" store ls --store "$st" | awk -v b="$bid" '$1 == b')
		tbytes=$(echo "$ls_line" | awk '{ print $3 }')
		chunks=$(echo "$ls_line" | awk '{ print $4 }')
		mdb=$(stat -c %s "$st/data.mdb")
		echo "$name ${tbytes:-0} ${chunks:-0} $dsize $mdb" >> "$SROWS"
		for tool in sym-lookup sym-addr2line; do
			if ! measure "$name" "$tool" "$WRUNS" "$f" "$addrs" "$st" "$bid"; then
				status=1
				continue
			fi
			if ! cmp -s "$OUT/$name.$tool.out" "$OUT/$name.sym.out"; then
				echo "$name: $tool (warm) output DIFFERS from the cold sym addr2line output" >> "$SAN"
				status=1
			else
				echo "$name: $tool (warm) output is identical to the cold sym addr2line output" >> "$SAN"
			fi
		done
		if ! grep -q 'table from cache' "$OUT/$name.sym-addr2line.out.err"; then
			echo "$name: warm sym addr2line did NOT use the store: $(head -1 "$OUT/$name.sym-addr2line.out.err")" >> "$SAN"
			status=1
		fi
		sed "s/^/$name: /" "$OUT/$name.sym-addr2line.out.err" >> "$CROWS"
		# Issue 15: the drop-in, warm, answers as llvm-symbolizer does.
		if measure "$name" compat "$WRUNS" "$f" "$addrs" "$st" "$bid"; then
			if [ -f "$OUT/$name.llvm-symbolizer.out" ] &&
			   cmp -s "$OUT/$name.compat.out" "$OUT/$name.llvm-symbolizer.out"; then
				echo "$name: compat llvm-symbolizer (warm) output is identical to llvm-symbolizer's" >> "$SAN"
			else
				echo "$name: compat llvm-symbolizer (warm) output DIFFERS from llvm-symbolizer's" >> "$SAN"
			fi
		else
			status=1
		fi
		sopt="-s $st -b $bid"
	else
		status=1
		sopt=
	fi

	# --- in-library lookup cost -------------------------------------------
	# shellcheck disable=SC2086
	if "$LB" -r 7 $sopt "$f" "$addrs" > "$OUT/$name.lookup" \
	       2> "$OUT/$name.lookup.err"; then
		echo "$name $(awk '{ printf "%s %s ", $1, $2 }' "$OUT/$name.lookup")" >> "$LROWS"
	else
		note "lookup-bench failed on $name:"
		head -3 "$OUT/$name.lookup.err" >&2
		status=1
	fi
	# Where the table's bytes go.
	if ! "$TS" "$f" > "$OUT/$name.sizes" 2>&1; then
		note "table-size failed on $name"
		status=1
	fi
done
# This machine's memory, to read the in-library figures against.
if ! "$MP" > "$OUT/memprobe.txt" 2> "$OUT/memprobe.err"; then
	note "memprobe failed:"
	head -3 "$OUT/memprobe.err" >&2
	: > "$OUT/memprobe.txt"
	status=1
fi
END=$(date +%s)
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report ----------------------------------------------------------------
# Goals of issue 3 (warm speed-up over llvm-symbolizer per input).
GOALS="libjvm=100 python3.11d=20"

report() {
	echo "$NADDR unsorted instruction addresses per input (objdump -d, seed $SEED), page cache warm."
	echo "Each figure is a whole fresh process; wall time and peak RSS are medians of $RUNS runs"
	echo "(warm runs: $WRUNS; eu-addr2line: $EU_RUNS).  Load average before: $LOAD0, after: $LOAD1;"
	echo "the run took $((END - START)) s."
	echo
	echo "### Warm: the table already in the store"
	echo
	echo "speed-up = llvm-symbolizer's wall time / ours (above 1: we are faster)."
	echo
	echo "| input | llvm-symbolizer s | sym lookup s | speed-up | sym addr2line (store) s | speed-up | RSS MB (lookup / addr2line / llvm) | goal | met |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
	awk -v goals="$GOALS" '
	BEGIN { n = split(goals, g, " "); for (i = 1; i <= n; i++) { split(g[i], kv, "="); goal[kv[1]] = kv[2] } }
	$3 != "failed" { w[$1, $2] = $3; r[$1, $2] = $4 }
	!($1 in seen) { seen[$1] = 1; order[++k] = $1 }
	END {
		for (i = 1; i <= k; i++) {
			m = order[i]
			if (!((m, "llvm-symbolizer") in w) || !((m, "sym-lookup") in w)) continue
			L = w[m, "llvm-symbolizer"]; a = w[m, "sym-lookup"]; b = w[m, "sym-addr2line"]
			s1 = L / (a > 0 ? a : 1); s2 = L / (b > 0 ? b : 1)
			if (m in goal) {
				gs = sprintf(">= %dx", goal[m])
				met = (s1 >= goal[m] ? "lookup yes" : "lookup NO") ", " (s2 >= goal[m] ? "addr2line yes" : "addr2line NO")
			} else { gs = "-"; met = "-" }
			printf "| %s | %.2f | %.3f | %.1fx | %.3f | %.1fx | %.1f / %.1f / %.1f | %s | %s |\n", m, L / 1000, a / 1000, s1, b / 1000, s2, r[m, "sym-lookup"] / 1024, r[m, "sym-addr2line"] / 1024, r[m, "llvm-symbolizer"] / 1024, gs, met
		}
	}' "$ROWS"
	echo
	echo "Issue 15's drop-in, warm: bin/compat/llvm-symbolizer --obj=F --inlining -C -a on the store, against"
	echo "sym addr2line -a -f -i -C on the store and llvm-symbolizer itself (ratio = compat / other: at most 1 is no slower)."
	echo
	echo "| input | compat s | compat / sym addr2line | compat / llvm-symbolizer | RSS MB |"
	echo "|---|---:|---:|---:|---:|"
	awk '
	$3 != "failed" { w[$1, $2] = $3; r[$1, $2] = $4 }
	!($1 in seen) { seen[$1] = 1; order[++k] = $1 }
	END {
		for (i = 1; i <= k; i++) {
			m = order[i]
			if (!((m, "compat") in w)) continue
			c = w[m, "compat"]; a = w[m, "sym-addr2line"]; L = w[m, "llvm-symbolizer"]
			ra = "-"; rl = "-"
			if (a > 0) ra = sprintf("%.2f", c / a)
			if (L > 0) rl = sprintf("%.4f", c / L)
			printf "| %s | %.3f | %s | %s | %.1f |\n", m, c / 1000, ra, rl, r[m, "compat"] / 1024
		}
	}' "$ROWS"
	echo
	echo "### Cold: no store"
	echo
	echo "sym = sym addr2line --no-cache (the table built in the process); store add = sym store add into an empty store"
	echo "(build + store, no lookups).  Ratios are ours/peer: below 1 means we use less."
	echo
	echo "| input | tool | runs | wall s | peak RSS MB | sym/peer wall | sym/peer RSS | store add/peer wall |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	awk '
	$3 != "failed" { w[$1, $2] = $3; r[$1, $2] = $4 }
	{ row[NR] = $0 }
	END {
		for (i = 1; i <= NR; i++) {
			split(row[i], f, " ")
			if (f[2] == "sym-lookup" || f[2] == "sym-addr2line" || f[2] == "compat") continue
			if (f[3] == "failed") {
				printf "| %s | %s | %s | failed | failed | - | - | - |\n", f[1], f[2], f[5]
				continue
			}
			rw = rr = ra = "-"
			if (f[2] != "sym" && f[2] != "store-add" && ((f[1], "sym") in w)) {
				rw = sprintf("%.2f", w[f[1], "sym"] / f[3])
				rr = sprintf("%.2f", r[f[1], "sym"] / f[4])
				if ((f[1], "store-add") in w)
					ra = sprintf("%.2f", w[f[1], "store-add"] / f[3])
			}
			t = f[2]; if (t == "sym") t = "sym --no-cache"; if (t == "store-add") t = "sym store add"
			printf "| %s | %s | %s | %.2f | %.1f | %s | %s | %s |\n", f[1], t, f[5], f[3] / 1000, f[4] / 1024, rw, rr, ra
		}
	}' "$ROWS"
	echo
	echo "Cold goal of issue 3 (libjvm): build + store in at most 0.75x llvm-symbolizer's time, peak RSS at most 1 GiB:"
	echo
	awk '
	$3 != "failed" { w[$1, $2] = $3; r[$1, $2] = $4 }
	END {
		if (!(("libjvm", "llvm-symbolizer") in w)) { print "- libjvm was not measured."; exit }
		L = w["libjvm", "llvm-symbolizer"]
		split("sym store-add", ts, " ")
		for (i = 1; i <= 2; i++) {
			t = ts[i]; if (!(("libjvm", t) in w)) continue
			x = w["libjvm", t] / L; m = r["libjvm", t]
			printf "- %s: %.2f s = %.2fx llvm-symbolizer (%.2f s): %s; peak RSS %.0f MB (%.2f GiB): %s.\n", (t == "sym" ? "sym addr2line --no-cache" : "sym store add"), w["libjvm", t] / 1000, x, L / 1000, (x <= 0.75 ? "met" : "NOT met"), m / 1024, m / 1048576, (m <= 1048576 ? "met" : "NOT met")
		}
	}' "$ROWS"
	echo
	echo "Where the cold and warm time goes (sym addr2line --stats, the last run of each):"
	echo
	echo '```'
	cat "$CROWS"
	echo '```'
	echo
	echo "### Size: the stored table against the DWARF it came from"
	echo
	echo "| input | table MB (sym store ls) | chunks | .debug_* MB uncompressed | .debug_* MB on disk | table / uncompressed | data.mdb MB | goal <= 25% |"
	echo "|---|---:|---:|---:|---:|---:|---:|---|"
	awk '{ p = 100 * $2 / $4; printf "| %s | %.1f | %s | %.1f | %.1f | %.1f%% | %.1f | %s |\n", $1, $2 / 1e6, $3, $4 / 1e6, $5 / 1e6, p, $7 / 1e6, (p <= 25 ? "met" : "NOT met") }' "$SROWS"
	echo
	echo "(MB = 10^6 bytes here; the .debug_* sizes are those of the debug file and the file itself, compressed"
	echo "sections counted at their uncompressed size.)"
	echo
	echo "Where the bytes go (tests/bench/table-size.c: each area of the table, docs/table-format.md):"
	echo
	echo '```'
	for spec in $INPUTS; do
		[ -s "$OUT/${spec%%=*}.sizes" ] && cat "$OUT/${spec%%=*}.sizes"
	done
	echo '```'
	echo
	echo "### In-library lookups (tests/bench/lookup-bench.c, median of 7 passes over the same addresses, one core)"
	echo
	echo "On the table built in memory: single = sym_table_lookup() per address, batch = sym_table_lookup_batch();"
	echo "store = sym_store_lookup() on the store filled above (first = the first call of the process, which"
	echo "also checks each chunk's CRC).  u = addresses in random order, s = sorted.  ns per address."
	echo
	echo "| input | table build s | table MB | RSS after build MB | frames/addr | single u | single s | batch u | batch s | store first ms | store u | store s |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk '{
		delete v; for (i = 2; i < NF; i += 2) v[$i] = $(i + 1)
		printf "| %s | %.2f | %.1f | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, v["build_s"], v["table_bytes"] / 1e6, v["rss_kb"] / 1024, v["frames_per_addr"], v["single_unsorted_ns"], v["single_sorted_ns"], v["batch_unsorted_ns"], v["batch_sorted_ns"], ("store_first_ms" in v ? v["store_first_ms"] : "-"), ("store_unsorted_ns" in v ? v["store_unsorted_ns"] : "-"), ("store_sorted_ns" in v ? v["store_sorted_ns"] : "-")
	}' "$LROWS"
	echo
	echo "Unsorted lookups per second on one core, against the goal of 10 M/s:"
	echo
	echo "(batch and store: unsorted input to sym_table_lookup_batch() and sym_store_lookup(),"
	echo "which sort each window themselves; single: one sym_table_lookup() call per address)"
	echo
	echo "| input | single u M/s | batch u M/s | store u M/s | goal 10 M/s (store u) | goal 10 M/s (single u) |"
	echo "|---|---:|---:|---:|---|---|"
	awk '{
		delete v; for (i = 2; i < NF; i += 2) v[$i] = $(i + 1)
		su = 1e3 / v["single_unsorted_ns"]; bu = 1e3 / v["batch_unsorted_ns"]
		stn = ("store_unsorted_ns" in v && v["store_unsorted_ns"] > 0) ? 1e3 / v["store_unsorted_ns"] : 0
		stu = stn > 0 ? sprintf("%.2f", stn) : "-"
		printf "| %s | %.2f | %.2f | %s | %s | %s |\n", $1, su, bu, stu, (stn == 0 ? "-" : stn >= 10 ? "met" : sprintf("NOT met (%.1fx short)", 10 / stn)), (su >= 10 ? "met" : sprintf("NOT met (%.1fx short)", 10 / su))
	}' "$LROWS"
	echo
	echo "What bounds these figures (docs/bench.md, \"What bounds libjvm's figure\"): a lookup reads a few"
	echo "cache lines at random places of its table, so a table larger than the last-level cache pays this"
	echo "machine's memory for each.  tests/bench/memprobe.c, on this machine, in 4 KiB pages:"
	echo
	echo "| working set MB | dependent read ns (latency) | random line ns, 32 in flight (throughput) |"
	echo "|---:|---:|---:|"
	awk '$1 ~ /^chase_ns_/ { sub("chase_ns_", "", $1); c[$1] = $2; o[++n] = $1 }
	     $1 ~ /^line_ns_/ { sub("line_ns_", "", $1); l[$1] = $2 }
	     END { for (i = 1; i <= n; i++) printf "| %s | %s | %s |\n", o[i], c[o[i]], l[o[i]] }' "$OUT/memprobe.txt"
	echo
	echo "Table MB against the size where a dependent read turns slow shows which inputs pay memory"
	echo "latency per lookup; \"s\" (sorted input: the best locality) against \"u\" shows how much of that"
	echo "the batch pipeline hides."
	echo
	echo "### Sanity (frame counts per address and identical warm output; not correctness)"
	echo
	sed 's/^/- /' "$SAN"
}
report > "$OUT/report.md"
echo
cat "$OUT/report.md"
echo
echo "report: $OUT/report.md"
exit $status
