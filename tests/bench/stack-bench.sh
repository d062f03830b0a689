#!/bin/sh
# stack-bench.sh - `sym stack --core`'s part of `make bench` (issue 17):
# a core of a process that maps libjvm, symbolized by sym stack against
# eu-stack and gdb.  Goals: store warm, at least 10 times faster than
# `eu-stack -i --core` and `gdb -batch`, with a lower peak RSS than both;
# store cold (the tables built on the way), no slower than eu-stack.
#
# The program is a small Java class (three threads parked in
# Object.wait(), the main one in Thread.sleep()) run by Debian's
# openjdk-17 (`java -Xmx64m -XX:+UseSerialGC`); libjvm's debug file comes
# from openjdk-17-dbg, found by build ID.  Once it is ready it is killed
# with SIGABRT and dumps core through a core_pattern this script sets and
# restores (root only; under the lock the core tests take, see
# tests/e2e/lib/core-lib.sh).  Then, each a whole process, with wall time
# (date around it) and peak RSS (/usr/bin/time %M):
#
#   sym warm   sym stack -i --core CORE --executable JAVA, the store
#              filled by one untimed run before (STACK_BENCH_RUNS, 5)
#   sym cold   the same with an empty store each run (STACK_BENCH_COLD_RUNS,
#              3): libjvm's table (34 MB) is built from its 500 MB of DWARF
#   eu-stack   eu-stack -i --core CORE -e JAVA (STACK_BENCH_PEER_RUNS, 3)
#   gdb        gdb -batch -nx -ex 'thread apply all bt' JAVA CORE (the
#              same runs)
#
# Figures are medians.  Sanity: sym shows as many threads as eu-stack and
# gdb, and its frames are compared with eu-stack -i -s's
# (tests/e2e/lib/stack-compare.py, printed).  The section is printed,
# written to $BENCH_DIR/stack/report.md and appended to $BENCH_DIR/report.md
# (replacing an earlier one of this script); the core is deleted unless
# STACK_BENCH_KEEP=1.  The exit status is 1 when something fails, not when
# a goal is missed.
#
# Knobs: STACK_BENCH_RUNS STACK_BENCH_COLD_RUNS STACK_BENCH_PEER_RUNS
#        STACK_BENCH_KEEP BENCH_DIR SYM.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM=${SYM:-$ROOT/bin/sym}
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/stack
RUNS=${STACK_BENCH_RUNS:-5}
CRUNS=${STACK_BENCH_COLD_RUNS:-3}
PRUNS=${STACK_BENCH_PEER_RUNS:-3}
JDK=/usr/lib/jvm/java-17-openjdk-amd64
JAVA=$JDK/bin/java
JVM=$JDK/lib/server/libjvm.so
TIME=/usr/bin/time
HEADING="## sym stack --core: a JVM's core (libjvm)"
note() { echo "stack-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"

[ "$(id -u)" = 0 ] || { note "skipping: not root (core_pattern)"; exit 0; }
for c in "$JDK/bin/javac" "$JAVA" eu-stack gdb flock "$TIME"; do
	command -v "$c" > /dev/null ||
		{ note "skipping: no $c (openjdk-17-jdk-headless, elfutils, gdb)"; exit 0; }
done
usable_input libjvm "$JVM" || exit 0
[ -n "$dbg" ] || { note "skipping: no debug file for $JVM (openjdk-17-dbg)"; exit 0; }
mkdir -p "$W/cores" || exit 1
chmod 1777 "$W/cores"

# The program.
cat > "$W/Park.java" <<'EOT'
import java.nio.file.*;
public class Park {
    public static void main(String[] a) throws Exception {
        Object lock = new Object();
        for (int i = 0; i < 3; i++) {
            Thread t = new Thread(() -> {
                synchronized (lock) {
                    try { lock.wait(); } catch (InterruptedException e) { }
                }
            });
            t.setDaemon(true);
            t.start();
        }
        Files.createFile(Paths.get(a[0]));
        while (true) Thread.sleep(10);
    }
}
EOT
if [ ! -s "$W/Park.class" ] || [ "$W/Park.java" -nt "$W/Park.class" ]; then
	"$JDK/bin/javac" -d "$W" "$W/Park.java" || exit 1
fi

# The core, under the core tests' lock; core_pattern restored on exit.
exec 9> "${TMPDIR:-/tmp}/sym-test-core-pattern.lock"
flock -w 600 9 || { note "core_pattern still locked after 600 s"; exit 1; }
old=$(cat /proc/sys/kernel/core_pattern) || exit 1
trap 'printf "%s\n" "$old" > /proc/sys/kernel/core_pattern' EXIT
trap 'exit 130' INT TERM
echo "$W/cores/core.%p" > /proc/sys/kernel/core_pattern || exit 1
rm -f "$W"/cores/core.* "$W/ready"
sh -c 'ulimit -c unlimited
	"$1" -Xmx64m -XX:+UseSerialGC -cp "$2" Park "$2/ready" & p=$!
	i=0
	while [ ! -e "$2/ready" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.5
	kill -ABRT $p; wait $p; exit 0' sh "$JAVA" "$W" > "$W/java.out" 2>&1
core=
for i in 1 2 3 4 5 6 7 8 9 10; do
	core=$(ls "$W"/cores/core.* 2>/dev/null | head -1)
	[ -n "$core" ] && break
	sleep 0.5
done
printf '%s\n' "$old" > /proc/sys/kernel/core_pattern
trap - EXIT
flock -u 9
[ -n "$core" ] || { note "no core written"; cat "$W/java.out" >&2; exit 1; }
[ "${STACK_BENCH_KEEP:-0}" = 1 ] || trap 'rm -f "$core"' EXIT
core_mb=$(du -m "$core" | cut -f1)

now() { date +%s.%N; }
# timed NAME RUNS STORE CMD...: RUNS runs of CMD (stdout to $W/NAME.out),
# each run's wall seconds and peak RSS KiB appended to $W/NAME.times; the
# directory STORE (not "-") is removed before each run.  A sym run must
# succeed; eu-stack exits 1 on frames it could not read, which is data.
timed() {
	_n=$1 _r=$2 _s=$3
	shift 3
	: > "$W/$_n.times"
	_i=0
	while [ $_i -lt "$_r" ]; do
		[ "$_s" = - ] || rm -rf "$_s"
		_t0=$(now)
		if ! "$TIME" -f %M -o "$W/$_n.rss" "$@" > "$W/$_n.out" \
			2> "$W/$_n.err"; then
			case $_n in sym*)
				note "$_n failed"; cat "$W/$_n.err" >&2; return 1 ;;
			esac
		fi
		echo "$_t0 $(now) $(tail -1 "$W/$_n.rss")" |
			awk '{ printf "%.3f %d\n", $2 - $1, $3 }' >> "$W/$_n.times"
		_i=$((_i + 1))
	done
}
col() { awk -v c="$2" '{ print $c }' "$W/$1.times"; }
med() { median $(col "$1" "$2"); }

timed sym-cold "$CRUNS" "$W/store-cold" env SYM_STORE="$W/store-cold" \
	"$SYM" stack -i --core "$core" --executable "$JAVA" || exit 1
rm -rf "$W/store"
SYM_STORE=$W/store "$SYM" stack -i --core "$core" --executable "$JAVA" \
	> /dev/null 2>&1
timed sym-warm "$RUNS" - env SYM_STORE="$W/store" \
	"$SYM" stack -i --core "$core" --executable "$JAVA" || exit 1
timed eu "$PRUNS" - eu-stack -i --core "$core" -e "$JAVA"
timed gdb "$PRUNS" - gdb -batch -nx -ex 'set pagination off' \
	-ex 'thread apply all bt' "$JAVA" "$core"
rm -rf "$W/store-cold"

# Sanity: threads and frames; sym's frames against eu-stack -i -s's.
thr_sym=$(grep -c '^TID' "$W/sym-warm.out")
thr_eu=$(grep -c '^TID' "$W/eu.out")
thr_gdb=$(grep -c '^Thread .*(LWP' "$W/gdb.out")
fr_sym=$(grep -c '^#' "$W/sym-warm.out")
fr_eu=$(grep -c '^#' "$W/eu.out")
fr_gdb=$(grep -c '^#' "$W/gdb.out")
eu-stack -i -s --core "$core" -e "$JAVA" > "$W/eu-s.out" 2>&1
python3 "$ROOT/tests/e2e/lib/stack-compare.py" "$W/sym-warm.out" \
	"$W/eu-s.out" eu "$JAVA" > "$W/compare.txt"
agree=$(head -1 "$W/compare.txt")

SW=$(med sym-warm 1) SC=$(med sym-cold 1) EU=$(med eu 1) GDB=$(med gdb 1)
RW=$(med sym-warm 2) RC=$(med sym-cold 2) REU=$(med eu 2) RGDB=$(med gdb 2)
ratio() { echo "$1 $2" | awk '{ printf "%.1f", ($2 > 0) ? $1 / $2 : 0 }'; }
goal() { echo "$1" | awk "{ print (\$1 $2) ? \"met\" : \"NOT met\" }"; }
R_EU=$(ratio "$EU" "$SW") R_GDB=$(ratio "$GDB" "$SW") R_COLD=$(ratio "$SC" "$EU")
{
	echo "$HEADING"
	echo
	echo "Input: a core of \`java -Xmx64m -XX:+UseSerialGC Park\`" \
		"(openjdk-17, $thr_sym threads, SIGABRT), $core_mb MB on disk;" \
		"libjvm's debug file from openjdk-17-dbg."
	echo "Threads sym/eu-stack/gdb: $thr_sym/$thr_eu/$thr_gdb; frames" \
		"sym -i $fr_sym, eu-stack -i $fr_eu, gdb $fr_gdb (gdb has no" \
		"CFI or frame-pointer walk through the Java frames: past the" \
		"first it stops or guesses); sym against eu-stack -i -s: $agree."
	echo "Host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" \
		"at the end; medians of $RUNS warm, $CRUNS cold, $PRUNS peer runs."
	echo
	echo "| what | wall s | peak RSS MiB | each run (s) |"
	echo "|---|---|---|---|"
	for n in sym-warm sym-cold eu gdb; do
		case $n in
		sym-warm) w=$SW r=$RW d="sym stack -i, store warm" ;;
		sym-cold) w=$SC r=$RC d="sym stack -i, store cold (tables built)" ;;
		eu) w=$EU r=$REU d="eu-stack -i --core" ;;
		gdb) w=$GDB r=$RGDB d="gdb -batch thread apply all bt" ;;
		esac
		echo "| $d | $w | $(echo "$r" | awk '{ printf "%.0f", $1 / 1024 }') | $(col $n 1 | tr '\n' ' ')|"
	done
	echo
	echo "Goals (issue 17): store warm at least 10x faster than eu-stack:" \
		"$(goal "$R_EU" '>= 10') (${R_EU}x); than gdb:" \
		"$(goal "$R_GDB" '>= 10') (${R_GDB}x); peak RSS below both:" \
		"$(goal "$RW $REU $RGDB" '< $2 && $1 < $3')." \
		"Store cold no slower than eu-stack:" \
		"$(goal "$SC $EU" '<= $2') (cold/eu-stack ${R_COLD})."
	echo
} > "$W/report.md"
append_report "$HEADING" "$W/report.md" "$OUT/report.md"
cat "$W/report.md"
exit 0
