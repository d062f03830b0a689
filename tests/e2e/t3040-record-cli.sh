#!/bin/bash
# t3040-record-cli.sh - sym record's command line: usage errors, what it
# samples (-p, -a, a command), how it stops (SIGINT, SIGTERM, --duration,
# the command's end) always with a complete file, --continuous --rotate,
# --format pprof, and an output that cannot be written (found out before
# sampling); a command that cannot run, or perf events refused, leave no
# file.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_perf
plan 36

prof_cc burn prof_burn.c -O2 -g -fno-omit-frame-pointer
cd "$T" || exit 1
complete() { [ "$(head -1 "$1")" = "sym-raw 1" ] && [ "$(tail -1 "$1")" = end ]; }
samples() { awk '$1 == "samples" { print $2 }' "$1"; }

# Usage errors: exit 2, one message, nothing written.
usage_err() {
	_d=$1; shift
	"$SYM" record -o u.raw "$@" > u.out 2>&1
	_rc=$?
	is "$_d: exit 2" "$_rc" 2
}
usage_err "no target" 
usage_err "-a and a command" -a -- true
usage_err "-F 0" -F 0 -- true
usage_err "-F abc" -F abc -- true
usage_err "-g frames" -g frames -- true
usage_err "--rotate without --continuous" --rotate 5 -- true
usage_err "--stack-size 70000" -g dwarf --stack-size 70000 -- true
ok "nothing written on usage errors" test ! -e u.raw

"$SYM" record -q -o nx.raw -- ./no-such-program > nx.out 2>&1
is "a command that cannot run: exit 1" "$?" 1
ok "... says so" grep -q "cannot run './no-such-program'" nx.out
ok "... and writes no file (no empty profile)" test ! -e nx.raw
"$SYM" record -q --format pprof -o nx.pb.gz -- ./no-such-program > nx.out 2>&1
ok "nor with --format pprof" test ! -e nx.pb.gz
echo old > kept.raw
"$SYM" record -q -o kept.raw -- ./no-such-program > nx.out 2>&1
is "an earlier file of that name is left as it was" "$(cat kept.raw)" old
# Perf events refused: a user without CAP_PERFMON may not sample the
# whole system at any kernel.perf_event_paranoid above 0.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	mkdir -p nobody && chmod 777 nobody
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$SYM" record -q -a -d 1 -o nobody/a.raw > refused.out 2>&1
	is "perf events refused: exit 1" "$?" 1
	ok "... says why" grep -q "Permission denied" refused.out
	ok "... and writes no file" test -z "$(ls -A nobody)"
else
	skip "perf events refused: needs root (to become nobody) and perf_event_paranoid > 0"
	skip "... says why"
	skip "... and writes no file"
fi
true & gone=$!; wait $gone
"$SYM" record -q -p "$gone" -o gone.raw > gone.out 2>&1
is "-p of a process that is gone: exit 1" "$?:$(cat gone.out)" \
	"1:sym record: no process $gone"

# -p: a process that was already running.
./burn 3 & bp=$!
sleep 0.2
"$SYM" record -q -F 999 -d 0.6 -p "$bp" -o p.raw
is "-p PID -d 0.6: exit 0" "$?" 0
ok "-p: samples of that process only" awk -v p="$bp" '
	$1 == "stack" { n++; if ($4 != p) bad++ }
	END { exit !(n > 0 && bad == 0) }' p.raw
kill "$bp"; wait "$bp" 2>/dev/null

# A program replaced on disk, and one deleted, while they run: their
# mappings keep the build ID of what is mapped (/proc/PID/map_files).
bid() { readelf -n "$1" | awk '/Build ID:/ { print $3 }'; }
mapbid() { awk -v p="$2" '$1 == "map" && $4 == p && $10 ~ /\/(rep|del)( |%20|$)/ { print $9; exit }' "$1"; }
cp burn rep && cp burn del
prof_cc other prof_vdso.c -O2 -g
want=$(bid rep)
./rep 30 & p1=$!
./del 30 & p2=$!
# Each has exec'd its file before the file changes on disk: on a loaded
# machine a fixed sleep was not always enough.
for p in "$p1" "$p2"; do
	for _i in $(seq 200); do
		case $(readlink "/proc/$p/exe") in */rep|*/del) break ;; esac
		sleep 0.05
	done
done
cp other rep.new && mv rep.new rep && rm del
"$SYM" record -q -F 999 -d 1 -p "$p1,$p2" -o repl.raw
is "a replaced program: its map has the running file's build ID" \
	"$(mapbid repl.raw "$p1")" "$want"
is "a deleted program: its map has the running file's build ID" \
	"$(mapbid repl.raw "$p2")" "$want"
kill "$p1" "$p2"; wait "$p1" "$p2" 2>/dev/null

# The header says the kernel's release, by which kernel debug files are
# looked up by name.
is "the header's release is uname -r's" \
	"$(awk '$1 == "release" { print $2 }' repl.raw)" "$(uname -r)"

# A process in its own PID namespace is named by that namespace and its
# PID there.
if unshare -p -f true 2>/dev/null; then
	"$SYM" record -q -F 999 -o ns.raw -- unshare -p -f --mount-proc \
		./burn 0.4
	ok "a PID namespace: the process line has its own namespace and PID 1" \
		awk '$1 == "pidns" { ns = $2 }
		     $1 == "process" && $5 == "burn" && $3 != ns && $4 == 1 { n++ }
		     END { exit !(n == 1) }' ns.raw
else
	skip "unshare -p is not permitted here"
fi

# Stopping: SIGINT, SIGTERM and --duration write a complete file and end
# the command.
"$SYM" record -q -o int.raw -- sleep 31.5 & rp=$!
sleep 0.5; kill -INT "$rp"; wait "$rp"
is "SIGINT: exit 0" "$?" 0
ok "SIGINT: the file is complete" complete int.raw
ok "SIGINT: the command was ended" sh -c '! pgrep -x -f "sleep 31.5" > /dev/null'
start=$(date +%s%N)
"$SYM" record -q -d 0.5 -o dur.raw -- sleep 30
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
ok "--duration 0.5 stops (exit $rc after $ms ms)" test "$rc" = 0 -a "$ms" -lt 10000
ok "--duration: the file is complete" complete dur.raw

# --continuous --rotate: complete files one after another; the last one
# is written at SIGTERM.
"$SYM" record -q -F 999 --continuous --rotate 0.4 -o 'c-%n.raw' -- ./burn 30 &
cp=$!
sleep 1.7; kill -TERM "$cp"; wait "$cp"
is "--continuous: exit 0 at SIGTERM" "$?" 0
n=$(ls c-*.raw 2>/dev/null | wc -l)
ok "--rotate 0.4 over 1.7 s: 4 or more files ($n)" test "$n" -ge 4
bad=0
for f in c-*.raw; do complete "$f" || bad=$((bad + 1)); done
is "every rotated file is complete" "$bad" 0
ok "no temporary file left" sh -c '! ls *.tmp.* 2> /dev/null'

# pprof: sym convert reads it back with the same samples.
"$SYM" record -q -F 999 --format pprof -o b.pb.gz -- ./burn 0.5
is "--format pprof: exit 0" "$?" 0
"$SYM" convert -o b.raw b.pb.gz
ok "the pprof file converts back, samples in the header ($(samples b.raw))" \
	test "$(samples b.raw)" -gt 0

# -a: the whole machine.
if "$SYM" record -q -a -F 199 -d 0.5 -o all.raw 2> all.err ||
   ! grep -q CAP_PERFMON all.err; then
	ok "-a -d 0.5 writes a complete file" complete all.raw
else
	skip "-a is not permitted here: $(head -1 all.err)"
fi

# An output that cannot be written: exit 1 before anything runs.
start=$(date +%s%N)
"$SYM" record -q -o /nonexistent/x.raw -- sleep 20 > ro.out 2>&1
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
is "unwritable output: exit 1 at once, with the reason" \
	"$rc:$(cat ro.out):$((ms < 5000))" \
	"1:sym record: '/nonexistent/x.raw': No such file or directory:1"

done_testing
