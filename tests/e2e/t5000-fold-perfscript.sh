#!/bin/bash
# t5000-fold-perfscript.sh - `sym fold --from perf-script`: perf script text
# to folded stacks, as FlameGraph's stackcollapse-perf.pl folds it.
#
#  1. FlameGraph's own regression data (../shared/conformance/
#     flamegraph-stackcollapse): 13 captures x 6 options, one TAP point per
#     case, compared byte for byte as upstream's test.sh does.  Its README
#     counts 8 of them as stale: perf-java-* and perf-vertx-* with --pid
#     and --tid were recorded before upstream PR #147 (2023), since which
#     the script drops the 'L' of Java class names ("Ljava/lang/Thread")
#     in every java process, "java-PID" included.  Those 8 are compared
#     with the expected file after that one change (and sorted again, as
#     the change moves lines): the rest of each file must still match.
#     Without ../shared this part is one skipped point.
#  2. Small hand-written inputs for what the captures lack: inline chains,
#     Go and C++ names, quotes, --addrs with a known DSO, event filtering,
#     a cut last sample, CRLF, stdin and -o, and the errors.
#  3. A real capture made here: `perf record -g` on a small program, whose
#     folded totals must equal perf's own sample count and event count,
#     with the process's real PID/TID in the root frame and the program's
#     call chain in the stacks.  Skipped when perf cannot record here.
. "$(dirname "$0")/lib/lib.sh"
[ -x "$SYM" ] || plan_skip "$SYM not built"
CONF=$SHARED/conformance/flamegraph-stackcollapse
FOLD="$SYM fold --from perf-script"

OPTS="pid tid kernel jit all addrs"
ncases=1
if [ -d "$CONF/input" ]; then
	ninputs=$(ls "$CONF"/input/*.txt | wc -l)
	ncases=$((ninputs * 6))
fi
plan $((ncases + 28 + 5))

# --- 1. conformance ------------------------------------------------------

# The stale cases of the README.
stale() {
	case $1 in
	perf-java-*:pid | perf-java-*:tid | perf-vertx-*:pid | \
	perf-vertx-*:tid) return 0 ;;
	esac
	return 1
}

# An expected file with the 'L' of Java class frames dropped in stacks of
# java* processes, as stackcollapse-perf.pl does since PR #147.
drop_java_l() {
	awk '{
		n = split($0, w, " "); count = w[n]
		stack = substr($0, 1, length($0) - length(count) - 1)
		m = split(stack, f, ";")
		if (f[1] ~ /^java/)
			for (i = 2; i <= m; i++)
				if (f[i] ~ /^L/ && f[i] ~ /\//)
					f[i] = substr(f[i], 2)
		s = f[1]
		for (i = 2; i <= m; i++)
			s = s ";" f[i]
		print s " " count
	}' "$1" | LC_ALL=C sort
}

if [ ! -d "$CONF/input" ]; then
	skip "FlameGraph conformance: $CONF is absent"
else
	for opt in $OPTS; do
		for in in "$CONF"/input/*.txt; do
			b=${in##*/}; b=${b%.txt}
			id="$b:$opt"
			exp="$CONF/expected/$b-collapsed-$opt.txt"
			$FOLD --"$opt" "$in" 2>/dev/null > "$T/out"
			note=
			if stale "$id"; then
				drop_java_l "$exp" > "$T/exp"
				exp=$T/exp
				note=" (stale upstream file: compared without the Java 'L', PR #147)"
			fi
			if diff -u "$exp" "$T/out" > "$T/diff"; then
				_tap 0 "conformance $id$note"
			else
				_tap 1 "conformance $id$note"
				head -20 "$T/diff" | sed 's/^/#   /'
			fi
		done
	done
fi

# --- 2. hand-written inputs ----------------------------------------------

cat > "$T/a.txt" <<'EOF'
# a comment
prog 100/101 [000] 1.000: 10 cycles: 
	          7f0001 leaf+0x1f (/usr/lib/libx.so)
	          7f0002 outer->inner (/usr/lib/libx.so)
	          7f0003 [unknown] (/usr/lib/libx.so)
	          7f0004 [unknown] ([unknown])
	ffffffff81000001 do_syscall_64 ([kernel.kallsyms])

prog 100/102 [001] 1.001: 5 cycles: 
	          7f0005 net/http.(*Client).Do (/usr/bin/goprog)
	          7f0006 ns::(anonymous namespace)::f(int) (/usr/bin/prog)
	          7f0007 RegExp:[&<>"'] (/tmp/perf-100.map)
	          7f0008 a;b (/usr/bin/prog)

prog 100/101 [000] 1.002: 7 instructions: 
	          7f0001 leaf (/usr/lib/libx.so)

java 200/201 [002] 1.003: 3 cycles: 
	          7f0009 Ljava/lang/Thread;::run (/tmp/perf-200.map)
	          7f000a start_thread (/usr/lib/libc.so.6)
	          7f000b main (/usr/lib/vmlinux)

EOF

# Warnings go to stderr; tmp paths are replaced by T/ to compare them.
errs() { sed "s|$T/|T/|" "$T/err"; }

run_compare "names: offsets, inline chains, unknown frames, Go, C++, quotes, Java; first event kept" \
	sh -c "$FOLD '$T/a.txt' 2> '$T/err'" <<'EOF'
java;main;start_thread;java/lang/Thread:::run 3
prog;a:b;RegExp:[&<>];ns::(anonymous namespace)::f;net/http.(*Client).Do 5
prog;do_syscall_64;[unknown];[libx.so];outer;inner_[i];leaf 10
EOF
is "a second event is reported" "$(errs)" \
	"sym fold: 'T/a.txt': kept event 'cycles' only (the first one); left out 1 sample of other events, such as 'instructions': choose one with --event-filter"

run_compare "--all --tid --addrs" \
	sh -c "$FOLD --all --tid --addrs '$T/a.txt' 2>/dev/null" <<'EOF'
java-200/201;main_[k];start_thread;java/lang/Thread:::run_[j] 3
prog-100/101;do_syscall_64_[k];[unknown <7f0004>];[libx.so <7f0003>];outer;inner_[i];leaf 10
prog-100/102;a:b;RegExp:[&<>]_[j];ns::(anonymous namespace)::f;net/http.(*Client).Do 5
EOF

run_compare "--event-filter keeps the named event, quietly" \
	$FOLD --event-filter=instructions --pid "$T/a.txt" <<'EOF'
prog-100;leaf 7
EOF

run_compare "--kernel alone; --jit alone" \
	sh -c "$FOLD --kernel '$T/a.txt' 2>/dev/null | grep '^java'; $FOLD --jit '$T/a.txt' 2>/dev/null | grep '^java'" <<'EOF'
java;main_[k];start_thread;java/lang/Thread:::run 3
java;main;start_thread;java/lang/Thread:::run_[j] 3
EOF

# Default perf script fields: no PID, a period; -F without period: 1 each;
# a header with no frames; a cut last sample.
printf '%s\n' \
	'V8 WorkerThread 25607 4794564.109216:     250000 cpu-clock: ' \
	'	7f01 f (/x)' \
	'' \
	'V8 WorkerThread 25607 4794564.109217:     250000 cpu-clock: ' \
	'	7f01 f (/x)' \
	'' \
	'sh 7 cpu-clock: ' \
	'' \
	'sh 7 cpu-clock: ' \
	'	7f02 g (/y)' > "$T/b.txt"
run_compare "periods summed, comm with a space, 'comm-?' without a PID, empty stack" \
	sh -c "$FOLD --pid '$T/b.txt' 2> '$T/err'" <<'EOF'
V8_WorkerThread-?;f 500000
sh-? 1
EOF
is "a cut last sample is left out and reported" "$(errs)" \
	"sym fold: 'T/b.txt': the input ends inside a sample (no blank line after its frames): that sample is left out"

sed 's/$/\r/' "$T/a.txt" > "$T/crlf.txt"
$FOLD "$T/a.txt" > "$T/lf.out" 2>/dev/null
$FOLD "$T/crlf.txt" > "$T/crlf.out" 2>/dev/null
ok "CRLF input folds as LF input" cmp "$T/lf.out" "$T/crlf.out"

ok "stdin with -" sh -c "$FOLD - < '$T/a.txt' 2>/dev/null | cmp - '$T/lf.out'"
ok "stdin without FILE" sh -c "$FOLD < '$T/a.txt' 2>/dev/null | cmp - '$T/lf.out'"
ok "-o FILE" sh -c "$FOLD -o '$T/o.out' '$T/a.txt' 2>/dev/null && cmp '$T/o.out' '$T/lf.out'"

# Unrecognized lines are skipped with their line number.
{ cat "$T/a.txt"; echo 'this is not perf'; echo 'prog 1/1 1.0: 1 cycles:'; echo '	1 z (/z)'; echo; } > "$T/junk.txt"
$FOLD "$T/junk.txt" > "$T/junk.out" 2> "$T/junk.err"
is "an unrecognized line is skipped: status" "$?" 0
ok "an unrecognized line is reported with its number" \
	grep -q "line 23: neither a sample header nor a frame, skipped: 'this is not perf'" "$T/junk.err"
ok "the samples around it are kept" grep -qx 'prog;z 1' "$T/junk.out"

# Errors: message with the line number, status 1, nothing on stdout.
fails() {	# fails DESC PATTERN CMD...: status 1, PATTERN on stderr, no stdout
	_d=$1 _p=$2; shift 2
	"$@" > "$T/f.out" 2> "$T/f.err"
	_rc=$?
	if [ $_rc = 1 ] && grep -q -- "$_p" "$T/f.err" && [ ! -s "$T/f.out" ]; then
		_tap 0 "$_d"
	else
		_tap 1 "$_d"
		echo "#   status $_rc (want 1), stderr:"; sed 's/^/#   /' "$T/f.err" | head -5
		echo "#   stdout: $(head -c 200 "$T/f.out")"
	fi
}
printf 'prog 1/1 1.0: 1 cycles:\n\t1 a\0b (/x)\n\n' > "$T/nul.txt"
fails "a NUL byte is an error" "'$T/nul.txt' line 2: NUL byte" $FOLD "$T/nul.txt"
{ echo 'prog 1/1 1.0: 1 cycles:'; head -c 1100000 /dev/zero | tr '\0' x; echo; } > "$T/long.txt"
fails "a line over 1 MiB is an error" "line 2: longer than 1048576 bytes" $FOLD "$T/long.txt"
{ echo 'prog 1/1 1.0: 1 cycles:'; for i in $(seq 1 8200); do echo "	1 f$i (/x)"; done; echo; } > "$T/deep.txt"
fails "a stack over 8192 frames is an error" "line 8193: stack deeper than 8192 frames" $FOLD "$T/deep.txt"
printf 'prog 1/1 1.0: 99999999999999999999 cycles:\n\t1 f (/x)\n\n' > "$T/big.txt"
fails "a period over 64 bits is an error" "line 1: period '99999999999999999999' does not fit 64 bits" $FOLD "$T/big.txt"
printf 'Hello,\nthis is a letter (not a profile).\n\nRegards\n' > "$T/text.txt"
printf 'p 1/1 1.0: 18446744073709551615 cycles:\n\t1 f (/x)\n\np 1/1 1.0: 1 cycles:\n\t1 g (/x)\n\n' > "$T/sum.txt"
fails "a sum over 64 bits is an error" "a count does not fit 64 bits" $FOLD "$T/sum.txt"
fails "text that is not perf script is an error" "no samples: is this .perf script. output" $FOLD "$T/text.txt"
fails "a missing file is an error" "'$T/nope.txt'" $FOLD "$T/nope.txt"
fails "without --from, perf script text is read as folded stacks, with a hint" "looks like perf script text: .sym fold --from perf-script. reads it" $SYM fold "$T/a.txt"
$SYM fold --from perf-scrip "$T/a.txt" > /dev/null 2> "$T/u.err"
is "an unknown --from is a usage error" "$?" 2
$FOLD "$T/a.txt" "$T/b.txt" > /dev/null 2>&1
is "two input files are a usage error" "$?" 2
ok "--help names every option" sh -c "$SYM fold --help | grep -q -- --event-filter && $SYM help fold | grep -q -- --addrs"
ok "sym help lists fold" sh -c "$SYM help | grep -q '^   fold '"

# An empty input: no samples, no error.
: > "$T/empty.txt"
run_compare "an empty input folds to nothing" $FOLD "$T/empty.txt" <<'EOF'
EOF

# Many copies of a capture add up (the conformance vertx capture, 20 times
# through a pipe: 200,000 lines; `make bench`-style figures are in
# docs/views.md).  Each copy's cut last sample is ended by the blank line
# put after it, so it counts there.
if [ -f "$CONF/input/perf-vertx-stacks-01.txt" ]; then
	one=$($FOLD "$CONF/input/perf-vertx-stacks-01.txt" 2>/dev/null | awk '{ s += $NF } END { print s }')
	s=$(date +%s%N)
	tot=$(for i in $(seq 1 20); do cat "$CONF/input/perf-vertx-stacks-01.txt"; echo; done |
		$FOLD 2>/dev/null | awk '{ s += $NF } END { print s }')
	ms=$(( ($(date +%s%N) - s) / 1000000 ))
	is "20 copies through a pipe (200k lines, $ms ms): total is 20 x (one copy's + its cut last sample)" \
		"$tot" "$((one * 20 + 20))"
else
	skip "many copies: $CONF is absent"
fi

# --- 3. a real capture -----------------------------------------------------

perf_skip() {
	for _i in 1 2 3 4 5; do skip "real perf capture: $1"; done
}

cat > "$T/foldprog.c" <<'EOF'
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i * i;
}

__attribute__((noinline)) static void work(double secs)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		spin();
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
}

int main(void)
{
	printf("%d\n", (int)getpid());
	fflush(stdout);
	work(0.6);
	return 0;
}
EOF

if ! command -v perf > /dev/null 2>&1; then
	perf_skip "perf is not installed (Debian package linux-perf)"
elif ! cc -O0 -g -fno-omit-frame-pointer -o "$T/foldprog" "$T/foldprog.c"; then
	perf_skip "cannot compile the workload"
elif ! perf record -q -e cpu-clock -F 499 -g -o "$T/perf.data" -- "$T/foldprog" > "$T/pid" 2> "$T/record.err" ||
     ! [ -s "$T/perf.data" ]; then
	perf_skip "perf record fails here: $(head -1 "$T/record.err")"
else
	pid=$(cat "$T/pid")
	# perf's own figures: samples and the sum of their periods.
	perf report -i "$T/perf.data" --stdio 2>/dev/null > "$T/report"
	nsamples=$(sed -n "s/^# Samples: \([0-9]*\) *of event.*/\1/p" "$T/report" | head -1)
	# (perf report writes 1K past 999: then count perf script's headers)
	case $nsamples in
	'' | *[!0-9]*)
		nsamples=$(perf script -i "$T/perf.data" -F comm,tid 2>/dev/null | grep -c .) ;;
	esac
	evcount=$(sed -n 's/^# Event count (approx.): \([0-9]*\)$/\1/p' "$T/report" | head -1)
	# perf script's default fields have the period; -F without it, 1 each.
	perf script -i "$T/perf.data" 2>/dev/null > "$T/script.txt"
	perf script -i "$T/perf.data" -F comm,pid,tid,time,event,ip,sym,dso \
		2>/dev/null > "$T/script-pid.txt"
	$FOLD "$T/script.txt" > "$T/real.out" 2> "$T/real.err"
	is "real capture: folds without error" "$?" 0
	is "real capture: folded total = perf's event count ($nsamples samples)" \
		"$(awk '{ s += $NF } END { print s }' "$T/real.out")" "$evcount"
	$FOLD --tid "$T/script-pid.txt" > "$T/real-tid.out" 2>> "$T/real.err"
	is "real capture without periods: folded total = perf's sample count" \
		"$(awk '{ s += $NF } END { print s }' "$T/real-tid.out")" "$nsamples"
	# (a sample taken before the exec would have comm perf-exec)
	is "real capture: root frame is foldprog-PID/TID with the real PID" \
		"$(cut -d';' -f1 "$T/real-tid.out" | grep '^foldprog' | sort -u)" \
		"foldprog-$pid/$pid"
	# Most samples are in spin(), called from work(), from main().
	in_spin=$(awk '/;main;work;spin( |;)/ { s += $NF } END { print s + 0 }' "$T/real-tid.out")
	ok "real capture: main;work;spin holds most samples ($in_spin of $nsamples)" \
		test $((in_spin * 2)) -gt "$nsamples"
	sed 's/^/# /' "$T/real.err" | head -5
fi

done_testing
