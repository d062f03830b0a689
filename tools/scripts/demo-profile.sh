#!/bin/sh
# demo-profile.sh - the profiling half of `make demo`
# (tools/scripts/demo.sh runs it after the crash steps; it also runs on
# its own):
#
#   tools/scripts/demo-profile.sh [OUTDIR]
#
# A stripped CPU-bound program is recorded, its stacks are symbolized by
# symd, whose debug files come from a real debuginfod server (the program)
# and from a CI upload (its shared library), and the profile is drawn as a
# flame graph, a report with error bars, folded stacks and a pprof file.
#
#  7. Build the workload, fixtures/src/demo_work.c, and the library it
#     spends 20% of its time in, fixtures/src/demo_helper.c
#     (libdemo_helper.so), with gcc -O2 -g -fno-omit-frame-pointer; split
#     off each one's DWARF into a debug file named by build ID and strip
#     both, as they would ship.
#  8. Start Debian's debuginfod on a free port, indexing a directory that
#     holds only the program's debug file, and wait until it serves it.
#  9. Start symd on 127.0.0.1 with a fresh store in a temporary directory,
#     with that debuginfod as its upstream.
# 10. The CI path: `sym upload` the library's debug file to symd (and
#     again: the second upload is skipped, the server has it).
# 11. Record the workload with `sym record` (perf events); where perf
#     events are not available, with `sym run` (libsymprof, LD_PRELOAD).
# 12. `sym symbolize --server`: symd fetches the program's debug file from
#     debuginfod, converts both debug files once, and answers.
# 13. The views: `sym pprof`, `sym fold`, `sym flamegraph`, `sym report`.
# 14. Check the result against the workload's design, print where the
#     files are; every process started here is stopped on the way out.
#
# Environment:
#   SYM_DEMO_OUT       where the files go, when OUTDIR is not given
#                      (default build/demo in the source tree)
#   SYM_DEMO_RECORDER  auto (default: sym record, or sym run when perf
#                      events are refused), record, or run (forces the
#                      libsymprof path)
#   SYM_DEMO_SECONDS   CPU seconds of the workload (default 4)
#   SYM, SYMD          the binaries (default bin/sym, bin/symd)
#   CC                 the C compiler (default gcc)
#
# Fails (non-zero exit) when a step fails, or when the report, the folded
# stacks or the flame graph do not name the workload's hot functions with
# the shares it is built to have (tools/scripts/demo_check.py).  Ctrl-C, a
# failure or a normal exit all stop symd, debuginfod and the workload, and remove
# the temporary directory; only OUTDIR stays.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYM=${SYM:-$ROOT/bin/sym}
SYMD=${SYMD:-$ROOT/bin/symd}
CC=${CC:-gcc}
OUT=${1:-${SYM_DEMO_OUT:-$ROOT/build/demo}}
RECORDER=${SYM_DEMO_RECORDER:-auto}
SECS=${SYM_DEMO_SECONDS:-4}
check() { python3 "$ROOT/tools/scripts/demo_check.py" "$@"; }
export LC_ALL=C

started=$(date +%s)
# say TITLE: a step's title, with the seconds since the start.
if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s\033[0m  [%d s]\n' "$*" $(($(date +%s) - started)); }
else
	say() { printf '\n== %s  [%d s]\n' "$*" $(($(date +%s) - started)); }
fi
# run CMD...: show CMD (sym for the sym binary, the temporary directory
# left out of paths), then run it.
run() {
	printf '%s\n' "$*" | sed -e "s|^$SYM |sym |" -e "s|${T:-//}/||g" -e 's/^/$ /'
	"$@"
}
fail() { echo "demo: FAILED: $*" >&2; exit 1; }

# --- processes and cleanup ------------------------------------------------
# Every background process goes into PIDS; stop_all() runs on any exit:
# normal, `set -e`, fail(), Ctrl-C (SIGINT reaches the whole foreground
# process group, but background jobs of a script ignore it), SIGTERM or
# SIGHUP.  symd gets SIGTERM (it finishes what it writes), then SIGKILL
# after 5 s; debuginfod gets SIGKILL at once (its database is scratch and
# it takes seconds to stop on SIGTERM).
T=
PIDS=
SYMD_PID=
DBGD_PID=
stop_all() {
	for p in $PIDS; do
		if [ "$p" = "$DBGD_PID" ]; then
			kill -KILL "$p" 2>/dev/null || true
		else
			kill -TERM "$p" 2>/dev/null || true
		fi
	done
	for p in $PIDS; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	PIDS=
	[ -z "$T" ] || rm -rf "$T"
}
# shellcheck disable=SC2154  # rc is set inside the trap
trap 'rc=$?; trap - EXIT; stop_all; exit $rc' EXIT
trap 'echo "demo: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- what is needed ---------------------------------------------------------
[ -x "$SYM" ] || fail "no $SYM; run make first"
[ -x "$SYMD" ] || fail "no $SYMD; run make first"
for c in "$CC" objcopy strip debuginfod curl python3; do
	command -v "$c" >/dev/null 2>&1 ||
		fail "$c is not installed (tools/scripts/install-deps.sh installs it)"
done
case $RECORDER in
auto|record|run) ;;
*) fail "SYM_DEMO_RECORDER must be auto, record or run, not '$RECORDER'" ;;
esac
case $SECS in
''|*[!0-9.]*) fail "SYM_DEMO_SECONDS must be a number of seconds" ;;
esac

T=$(mktemp -d "${TMPDIR:-/tmp}/sym-demo-profile.XXXXXX")
# Nothing goes to the default store (~/.cache/sym), whose entries would
# name files of $T after they are deleted: a store in $T instead.
export SYM_STORE="$T/store-sym"
mkdir -p "$OUT" || fail "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
# This run's files only: a stale flame.svg must not pass for a new one.
rm -f "$OUT/demo.raw" "$OUT/demo.sym.raw" "$OUT/demo.pb.gz" \
	"$OUT/demo.folded" "$OUT/flame.svg" "$OUT/report.txt" \
	"$OUT/shares.json" "$OUT/symbolize.txt"

# free_port: a TCP port nothing answers on now, picked at random from
# 20000-59999 (debuginfod takes a port number, not 0; if the port is
# taken before debuginfod binds it, debuginfod exits and is retried).
free_port() {
	while :; do
		_p=$(($(od -An -N2 -tu2 /dev/urandom) % 40000 + 20000))
		[ "$(http_code "http://127.0.0.1:$_p/")" = 000 ] && break
	done
	echo "$_p"
}
http_code() { curl -s -o /dev/null -m 5 -w '%{http_code}' "$1" 2>/dev/null; }
# debug_path DIR ID: DIR/.build-id/xx/rest.debug
debug_path() {
	_rest=${2#??}
	echo "$1/.build-id/${2%"$_rest"}/$_rest.debug"
}

say "7. Build the workload: a stripped program and its stripped library"
echo "   demo_work: hash_keys() 40% (inlined mix64), walk_grid() 30%"
echo "   (inlined smooth_row), demo_checksum() 20% in libdemo_helper.so,"
echo "   count_primes() 10% of its CPU time"
W=$T/work
mkdir -p "$W"
CFLAGS="-O2 -g -fno-omit-frame-pointer -Wl,--build-id"
# shellcheck disable=SC2086,SC2016  # $ORIGIN is for the linker
( cd "$W" &&
  run "$CC" $CFLAGS -fPIC -shared -o libdemo_helper.so \
	"$ROOT/fixtures/src/demo_helper.c" &&
  run "$CC" $CFLAGS -I"$ROOT/fixtures/src" -o demo_work \
	"$ROOT/fixtures/src/demo_work.c" -L. -ldemo_helper \
	-Wl,-rpath,'$ORIGIN' ) || fail "cannot build the workload"
prog_id=$("$SYM" buildid "$W/demo_work" | awk '{ print $1 }')
lib_id=$("$SYM" buildid "$W/libdemo_helper.so" | awk '{ print $1 }')
if [ -z "$prog_id" ] || [ -z "$lib_id" ]; then fail "no build IDs"; fi
# The program's debug file goes to the directory debuginfod serves, the
# library's to what CI keeps; both binaries ship stripped.
prog_dbg=$(debug_path "$T/debuginfod-root" "$prog_id")
lib_dbg=$(debug_path "$T/ci" "$lib_id")
mkdir -p "$(dirname "$prog_dbg")" "$(dirname "$lib_dbg")"
run objcopy --only-keep-debug "$W/demo_work" "$prog_dbg"
run objcopy --only-keep-debug "$W/libdemo_helper.so" "$lib_dbg"
run strip --strip-all "$W/demo_work" "$W/libdemo_helper.so"
"$SYM" buildid "$W/demo_work" "$W/libdemo_helper.so" | sed "s|$T/||"
echo "   debug files: ${prog_dbg#"$T"/} (for debuginfod)"
echo "                ${lib_dbg#"$T"/} (for the CI upload)"

say "8. A real debuginfod server, serving the program's debug file"
# And those of the C library and the dynamic linker the program loads,
# from Debian's libc6-dbg when it is installed, as a distribution's
# debuginfod (debuginfod.debian.net) would serve them: then every user
# frame resolves, down to _start.
sys_ids=
for lib in $(ldd "$W/demo_work" 2>/dev/null |
	     sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p')
do
	case $lib in "$W"/*) continue ;; esac	# ours: the upload's
	id=$("$SYM" buildid "$lib" 2>/dev/null | awk '{ print $1 }')
	[ -n "$id" ] || continue
	dbg=$(debug_path /usr/lib/debug "$id")
	if [ -f "$dbg" ]; then
		to=$(debug_path "$T/debuginfod-root" "$id")
		mkdir -p "${to%/*}"
		cp "$dbg" "$to"
		sys_ids="$sys_ids $id"
		echo "   also $lib's debug file (${dbg})"
	else
		echo "   no debug file for $lib here ($dbg): its frames will show as"
		echo "   $(basename "$lib")+0xADDR (install libc6-dbg to see them named)"
	fi
done
echo "   (debuginfod 0.188 has no listen-address flag: it binds every"
echo "   interface while the demo runs; the demo talks to it on 127.0.0.1)"
DBGD_URL=
for _try in 1 2 3; do
	port=$(free_port)
	printf '$ %s\n' "debuginfod -F -p $port -d DB -t 0 -g 0 debuginfod-root &"
	# Without DEBUGINFOD_URLS: a server that inherits it federates to
	# itself and hangs on every miss.
	env -u DEBUGINFOD_URLS debuginfod -F -p "$port" -d "$T/debuginfod.sqlite" \
		-t 0 -g 0 "$T/debuginfod-root" > "$T/debuginfod.log" 2>&1 &
	DBGD_PID=$!
	PIDS="$PIDS $DBGD_PID"
	# It answers in about 0.2 s; it indexes the files meanwhile (about
	# 1 s for ours, several for libc's, whose sources it lists): step 12
	# waits for that, the recording runs in between.
	i=0
	while [ $i -lt 100 ] && kill -0 "$DBGD_PID" 2>/dev/null; do
		if [ "$(http_code "http://127.0.0.1:$port/metrics")" = 200 ]; then
			DBGD_URL=http://127.0.0.1:$port
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$DBGD_URL" ] && break
	kill -KILL "$DBGD_PID" 2>/dev/null || true
	wait "$DBGD_PID" 2>/dev/null || true
done
[ -n "$DBGD_URL" ] ||
	fail "debuginfod did not start: $(tail -5 "$T/debuginfod.log")"
echo "   $DBGD_URL answers; it is indexing debuginfod-root"

say "9. symd on 127.0.0.1 with a fresh store, debuginfod as its upstream"
echo demo-token > "$T/token"
printf '$ %s\n' "symd --listen 127.0.0.1:0 --store STORE --debuginfod-urls $DBGD_URL --upload-token-file token &"
# libdebuginfod's client cache goes to the temporary directory too.
# The file exists before the loop below reads it: the background
# job's redirection is done in the child, maybe after the first sed,
# whose failure (status 2) set -e would make the demo's.
: > "$T/symd.out"
env DEBUGINFOD_CACHE_PATH="$T/debuginfod-client" \
	"$SYMD" --listen 127.0.0.1:0 --store "$T/store" \
	--debuginfod-urls "$DBGD_URL" --upload-token-file "$T/token" \
	> "$T/symd.out" 2> "$T/symd.log" &
SYMD_PID=$!
PIDS="$PIDS $SYMD_PID"
port=
i=0
while [ $i -lt 200 ] && kill -0 "$SYMD_PID" 2>/dev/null; do
	port=$(sed -n 's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$T/symd.out")
	[ -n "$port" ] && break
	sleep 0.05
	i=$((i + 1))
done
[ -n "$port" ] || fail "symd did not start: $(cat "$T/symd.log")"
URL=http://127.0.0.1:$port
cat "$T/symd.out"

say "10. CI: upload the library's debug file (sym upload), twice"
run "$SYM" upload --server "$URL" --token-file "$T/token" "$lib_dbg" ||
	fail "sym upload failed"
echo "   A second run, as the next CI build of the same library would do:"
run "$SYM" upload --server "$URL" --token-file "$T/token" "$lib_dbg" ||
	fail "sym upload (again) failed"

say "11. Record the workload ($SECS s of CPU)"
if [ "$RECORDER" = auto ]; then
	# Perf events may be refused (a container, perf_event_paranoid,
	# seccomp): a tiny recording tells.
	if "$SYM" record -q -o "$T/probe.raw" -- true > "$T/probe.log" 2>&1
	then
		RECORDER=record
	else
		echo "   perf events are not available here:"
		sed 's/^/     /' "$T/probe.log" | head -3
		echo "   falling back to libsymprof (sym run)"
		RECORDER=run
	fi
fi
if [ "$RECORDER" = record ]; then
	run "$SYM" record -F 999 -o "$OUT/demo.raw" -- "$W/demo_work" "$SECS" ||
		fail "sym record failed"
else
	# CPU-time timers expire on the kernel's tick (CONFIG_HZ, often
	# 250): a higher rate only makes each sample weigh more.
	run "$SYM" run -F 250 -o "$OUT/demo.raw" -- "$W/demo_work" "$SECS" ||
		fail "sym run failed"
fi
[ -s "$OUT/demo.raw" ] || fail "no profile written"
echo "   $(grep -c '^stack ' "$OUT/demo.raw") unique stacks," \
	"$(sed -n 's/^samples //p' "$OUT/demo.raw") samples," \
	"$(sed -n 's/^mode //p' "$OUT/demo.raw") stacks; frames are build IDs" \
	"and addresses:"
grep '^map .* file ' "$OUT/demo.raw" | awk '{ print "     " $9 "  " $10 }' |
	sed "s|$T/||"

say "12. Symbolize through symd: it fetches from debuginfod and converts"
# debuginfod must have indexed the debug files first (a 404 now would be
# remembered by symd as "absent").
i=0
for id in $prog_id $sys_ids; do
	while [ "$(http_code "$DBGD_URL/buildid/$id/debuginfo")" != 200 ]; do
		kill -0 "$DBGD_PID" 2>/dev/null || fail "debuginfod died:
$(tail -5 "$T/debuginfod.log")"
		[ $i -lt 600 ] ||
			fail "debuginfod did not index $id within 60 s"
		sleep 0.1
		i=$((i + 1))
	done
done
# shellcheck disable=SC2086  # the IDs, one word each
echo "   debuginfod serves" $prog_id $sys_ids
run "$SYM" symbolize --server "$URL" -v -o "$OUT/demo.sym.raw" "$OUT/demo.raw" \
	2> "$OUT/symbolize.txt" || {
	cat "$OUT/symbolize.txt" >&2
	fail "sym symbolize failed"
}
sed "s|$T/||" "$OUT/symbolize.txt"
# The summary's line for each of our two modules (frames, % resolved,
# share of frame samples, % of those resolved): every sample's frame
# resolved, bar rounding (a frame outside any function, such as a return
# address past a noreturn call, has no symbol and almost no samples).
for m in demo_work libdemo_helper.so; do
	line=$(grep "/$m (" "$OUT/symbolize.txt" || true)
	echo "$line" | awk '{ exit !($4 + 0 >= 99.0) }' ||
		fail "frames of $m did not resolve: $line"
done
grep -q "GET /buildid/$prog_id/debuginfo 200" "$T/debuginfod.log" ||
	fail "symd did not fetch $prog_id from debuginfod"
echo "   debuginfod's log, symd's fetch:"
grep "GET /buildid/$prog_id/debuginfo 200" "$T/debuginfod.log" |
	grep -v 'UA:curl' | sed 's/^.*): /     /' || true
echo "   symd's counters: fetched from upstream, converted (the upload too):"
curl -s -m 5 "$URL/metrics" |
	grep -E '^symd_(fetches|conversions)_total\{result="ok"\}' |
	sed 's/^/     /' || true

say "13. The views: pprof, folded stacks, flame graph, report"
# Each view warns on stderr when more than 2% of the samples have stacks
# the recorder flagged as broken (docs/views.md, "Broken stacks"), and
# all four say the same: it is shown once.
shown_warning=
# view_stderr CMD: the stderr of `sym CMD` ($T/view.err), unless it is
# the warning shown already (but for the part on how CMD shows them).
view_stderr() {
	_w=$(sed -e "s/^sym $1:/sym:/" -e 's/; they [^:]*:$/:/' "$T/view.err")
	if [ -n "$_w" ] && [ "$_w" = "$shown_warning" ]; then
		echo "   (the same warning on broken stacks from sym $1)"
	else
		cat "$T/view.err"
		shown_warning=$_w
	fi
}
run "$SYM" pprof -q -o "$OUT/demo.pb.gz" "$OUT/demo.sym.raw" \
	2> "$T/view.err" || { cat "$T/view.err"; fail "sym pprof failed"; }
view_stderr pprof
run "$SYM" fold --kernel -o "$OUT/demo.folded" "$OUT/demo.sym.raw" \
	2> "$T/view.err" || { cat "$T/view.err"; fail "sym fold failed"; }
view_stderr fold
run "$SYM" flamegraph --kernel --title "demo_work" \
	--subtitle "sym $RECORDER, symbolized by symd" \
	-o "$OUT/flame.svg" "$OUT/demo.sym.raw" 2> "$T/view.err" || {
	cat "$T/view.err"
	fail "sym flamegraph failed"
}
view_stderr flamegraph
printf '$ %s\n' "sym report --top 12 $OUT/demo.sym.raw > $OUT/report.txt"
"$SYM" report --top 12 "$OUT/demo.sym.raw" > "$OUT/report.txt" \
	2> "$T/view.err" || { cat "$T/view.err"; fail "sym report failed"; }
view_stderr report
cat "$OUT/report.txt"

say "14. Check: the hot functions, with the shares the workload is built for"
# (one process: the shares of demo.sym.raw, then the report, the folded
# stacks and the SVG against them; tools/scripts/demo_check.py says how)
check all "$OUT" ||
	fail "the views do not show the workload's hot functions and shares"
echo "   ok: report, folded stacks and flame graph agree with the design"

# symd stops on SIGTERM with status 0: anything else (a crash at exit, a
# sanitizer's report) is a failure of the demo.
kill -TERM "$SYMD_PID"
i=0
while kill -0 "$SYMD_PID" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -0 "$SYMD_PID" 2>/dev/null && fail "symd did not stop on SIGTERM in 10 s"
st=0
wait "$SYMD_PID" || st=$?
PIDS=$(echo " $PIDS " | sed "s/ $SYMD_PID / /")
[ "$st" = 0 ] || fail "symd exited with status $st on SIGTERM:
$(tail -20 "$T/symd.log")"
stop_all
elapsed=$(($(date +%s) - started))
say "Done in ${elapsed} s; symd and debuginfod are stopped.  The files:"
for f in flame.svg report.txt demo.pb.gz demo.folded demo.sym.raw demo.raw \
	 symbolize.txt; do
	printf '   %-14s %s\n' "$f" "$OUT/$f"
done
echo "   Open $OUT/flame.svg in a browser (no network needed); read"
echo "   demo.pb.gz with Google's pprof: pprof -top $OUT/demo.pb.gz"
