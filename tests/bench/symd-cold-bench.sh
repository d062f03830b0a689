#!/bin/sh
# symd-cold-bench.sh - the cold first answer through symd (issue 19):
# libjvm's debug file (openjdk-17-dbg) already in the store's file area,
# or on Debian's debuginfod on 127.0.0.1 (indexing a directory that holds
# a link to it), no table; one POST /v1/symbolize/<id> of N unsorted addresses of libjvm's
# text with wait_ms 60000, timed from the request to its answer, which
# must be "ok" (full frames).  Goal: p50 <= 2 s for N = 1,000.
#
# Two symd configurations alternate in one run:
#   lazy   --lazy-max N: the conversion answers the batch from a lazy
#          table (sym_module_table_for()) before it builds the full table
#   full   --lazy-max 0: the full table first (the path before issue 19)
# After each answer, the full table's answer to the same batch must be
# the same bytes of "frames" (a lazy answer that differs is a failure).
#
# "In the file area" is made as a user gets it: symd holds the
# conversion (SYM_TEST_CONVERT_HOLD), the file is uploaded, symd is
# killed (-9) before it converts, and a new symd starts on that store.
# Figures are medians of SYMD_COLD_RUNS (default 3) runs; the load
# (uptime) is printed beside them.  The section goes to
# $BENCH_DIR/symd-cold/report.md and is appended to $BENCH_DIR/report.md.
# The exit status is 1 when something fails, not when a goal is missed.
#
# Knobs: SYMD_COLD_RUNS SYMD_COLD_ADDRS (default "1000 100") BENCH_DIR.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM=$ROOT/bin/sym
SYMD=$ROOT/bin/symd
OUT=${BENCH_DIR:-$ROOT/build/bench}
RUNS=${SYMD_COLD_RUNS:-3}
SIZES=${SYMD_COLD_ADDRS:-1000 100}
W=$OUT/symd-cold
HEADING="## Cold first answer through symd (issue 19)"
JVM=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
mkdir -p "$W" || exit 1

note() { echo "symd-cold-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"

usable_input libjvm "$JVM" || exit 0
[ -n "$dbg" ] || { note "no separate debug file of libjvm"; exit 0; }
command -v debuginfod > /dev/null || { note "no debuginfod (the server)"; exit 0; }
id=$("$SYM" buildid "$JVM" | cut -d' ' -f1)
pids=
trap 'for p in $pids; do kill -9 $p 2>/dev/null; done' EXIT

# start_symd DIR ARGS...: symd on a free port; sets URL and PID.
start_symd() {
	_d=$1
	shift
	: > "$W/symd.out"	# before the job's own redirection: no old port
	"$SYMD" --listen 127.0.0.1:0 --store "$_d" --upload-token-file \
		"$W/token" "$@" > "$W/symd.out" 2>> "$W/symd.err" &
	PID=$!
	pids="$pids $PID"
	_i=0
	URL=
	while [ $_i -lt 200 ] && [ -z "$URL" ]; do
		_p=$(sed -n 's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$W/symd.out")
		[ -n "$_p" ] && URL=http://127.0.0.1:$_p
		sleep 0.05
		_i=$((_i + 1))
	done
	[ -n "$URL" ]
}

# files_only DIR: a store in DIR with libjvm's debug file, no table.
files_only() {
	rm -rf "$1" "$W/hold"
	mkdir -p "$W/hold"
	: > "$W/hold/$id"
	SYM_TEST_CONVERT_HOLD=$W/hold start_symd "$1" || return 1
	_c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 120 -X PUT \
		-H "Authorization: Bearer bench" --data-binary @"$dbg" \
		"$URL/v1/debuginfo/$id")
	kill -9 "$PID"
	wait "$PID" 2> /dev/null
	[ "$_c" = 201 ] || { note "upload: HTTP $_c"; return 1; }
}

# body N: the request of N seeded addresses of libjvm's text (lib.sh's
# text_addrs, the addresses lazy-bench.sh asks too).
body() {
	text_addrs "$dbg" "$1" | python3 -c 'import json, sys
print(json.dumps({"addresses": sys.stdin.read().split(), "wait_ms": 60000}))'
}

# one WHERE MODE N: one cold answer; appends "seconds" to $W/t.WHERE.MODE.N
one() {
	_s=$W/store
	_lm=$3
	[ "$2" = full ] && _lm=0
	if [ "$1" = files ]; then
		files_only "$_s" || { fail=1; return; }
		start_symd "$_s" --max-wait-ms 120000 --lazy-max "$_lm" || { fail=1; return; }
	else
		rm -rf "$_s"
		start_symd "$_s" --max-wait-ms 120000 --lazy-max "$_lm" --debuginfod-urls "$DBGD_URL" ||
			{ fail=1; return; }
	fi
	rm -f "$W/ans.json"
	_t=$(curl -s -o "$W/ans.json" -w '%{time_total}' --max-time 120 \
		-X POST --data-binary @"$W/body.$3" "$URL/v1/symbolize/$id")
	_st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["modules"][0]["status"])' "$W/ans.json" 2>/dev/null)
	if [ "$_st" != ok ]; then
		note "$1 $2 $3: status '$_st' after $_t s"
		fail=1
	else
		echo "$_t" >> "$W/t.$1.$2.$3"
	fi
	# The full table's answer must be the same frames.
	_i=0
	while [ $_i -lt 600 ]; do
		curl -s -o "$W/full.json" --max-time 120 -X POST \
			--data-binary @"$W/body.$3" "$URL/v1/symbolize/$id"
		[ "$(curl -s --max-time 10 "$URL/metrics" | awk '$1 == "symd_conversions_total{result=\"ok\"}" { print $2 }')" = 1 ] && break
		sleep 0.2
		_i=$((_i + 1))
	done
	curl -s -o "$W/full.json" --max-time 120 -X POST \
		--data-binary @"$W/body.$3" "$URL/v1/symbolize/$id"
	if [ "$_st" = ok ] && ! python3 -c '
import json, sys
a, b = (json.load(open(f))["modules"][0]["frames"] for f in sys.argv[1:])
sys.exit(a != b)' "$W/ans.json" "$W/full.json"; then
		note "$1 $2 $3: the first answer's frames differ from the full table's"
		fail=1
	fi
	curl -s --max-time 10 "$URL/metrics" | grep '^symd_quick' > "$W/quick.$1.$2.$3"
	kill "$PID"
	wait "$PID" 2> /dev/null
}

fail=0
echo bench > "$W/token"
: > "$W/symd.err"
# Debian's debuginfod, as in tests/e2e/lib/debuginfod-lib.sh: without
# DEBUGINFOD_URLS (it would federate to itself), on a free port (retried:
# another process may take the probed one first; 0.188 binds every
# interface, and is asked on 127.0.0.1 only), ready once it serves the
# file.
rm -rf "$W/dbgd"
mkdir -p "$W/dbgd/files"
ln -s "$dbg" "$W/dbgd/files/libjvm.debug"
DBGD_URL=
for try in 1 2 3; do
	port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	env -u DEBUGINFOD_URLS debuginfod -F -L -p "$port" \
		-d "$W/dbgd/db-$try.sqlite" -t 0 -g 0 "$W/dbgd/files" \
		> "$W/dbgd/log" 2>&1 &
	dpid=$!
	pids="$pids $dpid"
	_i=0
	while [ $_i -lt 300 ] && kill -0 "$dpid" 2> /dev/null; do
		if [ "$(curl -s -o /dev/null -m 30 -w '%{http_code}' \
			"http://127.0.0.1:$port/buildid/$id/debuginfo")" = 200 ]; then
			DBGD_URL=http://127.0.0.1:$port
			break
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	[ -n "$DBGD_URL" ] && break
	kill -9 "$dpid" 2> /dev/null
done
[ -n "$DBGD_URL" ] || { note "debuginfod did not come up"; tail -5 "$W/dbgd/log" >&2; exit 1; }
rm -f "$W"/t.*
for n in $SIZES; do
	body "$n" > "$W/body.$n"
done
load0=$(uptime | sed 's/.*load average: //')
r=0
while [ "$r" -lt "$RUNS" ]; do
	for n in $SIZES; do
		for where in files debuginfod; do
			for mode in lazy full; do
				one "$where" "$mode" "$n"
			done
		done
	done
	r=$((r + 1))
done
load1=$(uptime | sed 's/.*load average: //')
{
	echo "$HEADING"
	echo
	echo "libjvm ($(stat -c %s "$dbg") bytes of debug file), no table; one POST of N"
	echo "unsorted addresses, wait_ms 60000, request to \"ok\" answer; medians of"
	echo "$RUNS alternating runs (all seconds); load average $load0 before, $load1 after."
	echo
	echo "| debug file | N | lazy (--lazy-max N) | full table first (--lazy-max 0) | ratio |"
	echo "|---|---|---|---|---|"
	for n in $SIZES; do
		for where in files debuginfod; do
			l=$(median $(cat "$W/t.$where.lazy.$n" 2>/dev/null))
			f=$(median $(cat "$W/t.$where.full.$n" 2>/dev/null))
			echo "| $([ $where = files ] && echo "in the file area" || echo "on a debuginfod on 127.0.0.1") | $n | $l | $f | $(awk -v a="$l" -v b="$f" 'BEGIN { printf "%.2fx", b ? a / b : 0 }') |"
		done
	done
} > "$W/report.md"
cat "$W/report.md"
append_report "$HEADING" "$W/report.md" "$OUT/report.md"
exit "$fail"
