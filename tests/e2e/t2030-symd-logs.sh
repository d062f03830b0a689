#!/bin/sh
# symd's log (docs/symd.8, symd/log.h), in both formats: the start line
# with the version and every option; exactly one access line per request
# with every field right (the client's port, method, path without the
# query, status, body bytes as curl counted them, a duration within
# curl's, the build IDs of the URL or of the symbolize body); a failing
# upstream and a failing conversion logged with the build ID and where
# the file came from.  Then stderr a pipe nobody reads: symd keeps
# answering, counts the lines it drops, says so once stderr drains, and
# still stops.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
need curl python3 objcopy mkfifo sed

CHECK="python3 $SYM_ROOT/tests/e2e/lib/log_check.py"
exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
other=$(fixture gcc-O2-d4-c)
A=$("$SYM" buildid "$exe" | cut -d' ' -f1)
O=$("$SYM" buildid "$other" | cut -d' ' -f1)
dbg="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$A" | cut -c1-2)/$(echo "$A" | cut -c3-).debug"
# A file whose conversion fails: compressed debug sections over
# --max-inflate's per-section limit (bad input, "badconv").
objcopy --compress-debug-sections=zlib "$other" "$T/other.z" ||
	plan_skip "objcopy cannot compress"
# Build IDs no upstream has: the stub answers 500 for each.
F=00112233445566778899aabbccddeeff00112233
F2=44556677445566778899aabbccddeeff00112233
echo secret > "$T/token"
auth="Authorization: Bearer secret"
start_stub_debuginfod --mode 500 || plan_skip "the stub did not start"

now() { date +%s.%N; }

# req METHOD PATH IDS [CURL ARGS]: one request on a connection of its
# own; what the log must say of it goes to $T/expect.
req() {
	_m=$1 _p=$2 _ids=$3
	shift 3
	if [ "$_m" = HEAD ]; then set -- -I "$@"; else set -- -X "$_m" "$@"; fi
	_w=$(curl -s -o /dev/null --max-time 60 "$@" -w \
		'%{local_port} %{http_code} %{size_download} %{time_total}' \
		"$U$_p")
	# shellcheck disable=SC2086
	set -- $_w
	echo "$1 $_m ${_p%%\?*} $2 $3 $4 $_ids" >> "$T/expect"
}

# One daemon per format, the same requests.
for fmt in text json; do
	rm -rf "$T/symd-store" "$T/expect" "$T/symd.err"
	start_symd --log-format "$fmt" --upload-token-file "$T/token" \
		--debuginfod-urls "$STUB_URL" --max-inflate 4K,, || exit 1
	U=$SYMD_URL
	t0=$(now)
	req GET /healthz -
	req PUT "/v1/debuginfo/$A" "$A" -H "$auth" --data-binary @"$dbg"
	req POST /v1/symbolize "$A,$F" -d "{\"modules\":[{\"build_id\":\"$A\",\"addresses\":[\"0x1000\"]},{\"build_id\":\"$F\",\"addresses\":[\"0x10\"]},{\"build_id\":\"$A\",\"addresses\":[\"0x1010\"]}],\"wait_ms\":20000}"
	req GET "/buildid/$A/debuginfo" "$A"
	req HEAD "/buildid/$A/debuginfo" "$A"
	req GET "/buildid/$F2/debuginfo" "$F2"
	req PUT "/v1/debuginfo/$O" "$O" -H "$auth" --data-binary @"$T/other.z"
	req POST "/v1/symbolize/$O" "$O" -d '{"addresses":["0x1000"],"wait_ms":20000}'
	req GET '/no/such"path?q=1' -
	req POST /v1/symbolize - -d '{"modules":'
	req GET /metrics -
	# The window ends when symd has stopped: a request is logged when
	# symd's loop sees its reply drained, which on a loaded machine can
	# come after curl has read it and the next command has run.
	stop_symd TERM
	t1=$(now)
	is "$fmt: symd stopped with status 0" "$SYMD_STATUS" 0
	cp "$T/symd.err" "$T/log.$fmt"
	tap_points "$fmt" $CHECK start "$fmt" "$T/log.$fmt"
	tap_points "$fmt" $CHECK access "$fmt" "$T/log.$fmt" "$T/expect" "$t0" "$t1"
	tap_points "$fmt" $CHECK event "$fmt" "$T/log.$fmt" fetch_failed \
		build_id="$F" upstream="$STUB_URL" http_status=500 kind=debuginfo \
		error='*'
	tap_points "$fmt" $CHECK event "$fmt" "$T/log.$fmt" fetch_failed \
		build_id="$F2" upstream="$STUB_URL" http_status=500
	tap_points "$fmt" $CHECK event "$fmt" "$T/log.$fmt" convert_failed \
		build_id="$O" source=store \
		error="compressed section over the decompression limits"
	tap_points "$fmt" $CHECK event "$fmt" "$T/log.$fmt" stopped msg='*'
done

# --- stderr a pipe nobody reads ------------------------------------------
# The log buffer is 1 MiB and the pipe 64 KiB: 5,000 requests with long
# paths log about 2 MB, so lines must be dropped; every request is still
# answered, and symd stops with its stderr still blocked.
mkfifo "$T/fifo"
exec 3<> "$T/fifo"	# a reader exists (so opening does not block), unread
# symd.out still holds the last symd's line, and the job's redirection
# empties it in the child, maybe after the loop below has read it: empty
# it here (a CI run bailed out when the loop read the old line).
: > "$T/symd.out"
"$SYMD" --listen 127.0.0.1:0 --store "$T/blocked-store" \
	> "$T/symd.out" 2> "$T/fifo" &
SYMD_PID=$!
at_exit 'kill -9 $SYMD_PID 2>/dev/null'
PORT=$(symd_port "$T/symd.out" "$SYMD_PID")
[ -n "$PORT" ] || { echo "Bail out! symd did not start"; exit 1; }
U=http://127.0.0.1:$PORT
python3 - "$PORT" > "$T/flood" <<'EOF'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
codes = {}
for i in range(5000):
    c.request("GET", "/flood/%05d/" % i + "x" * 240)
    r = c.getresponse()
    r.read()
    codes[r.status] = codes.get(r.status, 0) + 1
print(" ".join("%d:%d" % kv for kv in sorted(codes.items())))
EOF
is "blocked stderr: 5,000 requests all answered" "$(cat "$T/flood")" "404:5000"
is "blocked stderr: healthz still answers" "$(http_status "$U/healthz")" 200
dropped=$(curl -s --max-time 30 "$U/metrics" |
	sed -n 's/^symd_log_dropped_lines_total //p')
ok "blocked stderr: lines dropped and counted ($dropped)" \
	test "${dropped:-0}" -gt 0
# Drain the pipe: the writer goes on and says what it lost.
cat <&3 > "$T/drained" &
CAT_PID=$!
at_exit 'kill $CAT_PID 2>/dev/null'
curl -s -o /dev/null --max-time 30 "$U/healthz"
i=0
while [ $i -lt 600 ] && ! grep -q ' warn log_dropped ' "$T/drained"; do
	sleep 0.05; i=$((i + 1))
done
ok "drained: a log_dropped line says how many were lost" \
	grep -q " warn log_dropped lines=[1-9][0-9]* total=[1-9]" "$T/drained"
# Block it again, fill it, and stop: symd must not wait for its reader.
kill "$CAT_PID"; wait "$CAT_PID" 2>/dev/null
python3 - "$PORT" <<'EOF'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
for i in range(5000):
    c.request("GET", "/again/%05d/" % i + "x" * 240)
    c.getresponse().read()
EOF
kill -TERM "$SYMD_PID"
# running PID: it exists and has not exited (a zombie has exited; kill -0
# still finds it).  Read from /proc: procps's ps is not on every machine.
# One read of the state: a test of the file first, then a read, could
# see it there and then gone (the shell reaps the zombie in between),
# and an empty state is not "Z" (test 55 failed so, 1 run in 6).
running() {
	_st=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)
	[ -n "$_st" ] && [ "$_st" != Z ]
}
# The log gives its writer 2 s (SYMD_LOG_STOP_MS); 60 s is no race with
# it, only a bound on a symd stuck on its stderr.
i=0
while [ $i -lt 1200 ] && running "$SYMD_PID"; do
	sleep 0.05; i=$((i + 1))
done
# What a failure leaves for whoever reads the log: each thread's state
# and where it waits, and what symd printed.
why() {
	for t in /proc/"$SYMD_PID"/task/*; do
		echo "# thread ${t##*/}: $(sed 's/.*) //' "$t/stat" 2>/dev/null |
			cut -d' ' -f1) wchan=$(cat "$t/wchan" 2>/dev/null)"
	done
	sed 's/^/# symd.out: /' "$T/symd.out"
}
if running "$SYMD_PID"; then
	why
	kill -9 "$SYMD_PID"
	_tap 1 "blocked stderr: symd stops (it hung on its stderr)"
	wait "$SYMD_PID"
else
	wait "$SYMD_PID"
	st=$?
	[ "$st" = 0 ] || why
	is "blocked stderr: symd stops with status 0" "$st" 0
fi
exec 3<&-

plan "$_tap_n"
done_testing
