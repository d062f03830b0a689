#!/bin/sh
# symd's HTTP API end to end: a real symd on 127.0.0.1, curl and a small
# Python client; uploads, symbolization checked frame by frame against
# `sym addr2line`, every kind of bad request (each followed by a good one),
# the debuginfod routes, metrics, kill -9 during an upload, and a graceful
# stop.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl python3 objdump c++filt

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
stripped=$(fixture stripped-buildid-gcc-O2-d5-cxx)
stripped2=$(fixture stripped-buildid-clang-O2-d4-c)
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
dbg="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
other=$(fixture gcc-O2-d4-c)
CHECK="python3 $SYM_ROOT/tests/e2e/lib/symd_check.py"
export SYM

plan 58

echo secret-token > "$T/token"
start_symd --upload-token-file "$T/token" --header-timeout-ms 500 \
	--max-body 64K --max-addresses 2000 || exit 1
U=$SYMD_URL
auth="Authorization: Bearer secret-token"

# A valid request that must keep working after each bad one.
still_ok() {
	ok "still answers after: $1" sh -c \
		"$CHECK status $U $id 0x$(objdump -d "$exe" | awk '/<main>:/{print $1; exit}') 0 | grep -q '^ok '"
}

is "healthz" "$(http_status "$U/healthz")" 200
is "same build ID for the stripped file" "$("$SYM" buildid "$stripped" | cut -d' ' -f1)" "$id"
is "HEAD before upload: 404" "$(http_status -I "$U/v1/debuginfo/$id")" 404

# --- uploads ---------------------------------------------------------
is "upload without token: 401" \
	"$(http_status -X PUT --data-binary @"$dbg" "$U/v1/debuginfo/$id")" 401
is "upload with a wrong token: 403" \
	"$(http_status -X PUT -H 'Authorization: Bearer nope' --data-binary @"$dbg" "$U/v1/debuginfo/$id")" 403
is "upload of another build's file: 422" \
	"$(http_status -X PUT -H "$auth" --data-binary @"$other" "$U/v1/debuginfo/$id")" 422
printf 'not an ELF file at all\n' > "$T/junk"
is "upload of a non-ELF: 422" \
	"$(http_status -X PUT -H "$auth" --data-binary @"$T/junk" "$U/v1/debuginfo/$id")" 422
head -c 3000 "$dbg" > "$T/trunc"
is "upload of a truncated ELF: 422" \
	"$(http_status -X PUT -H "$auth" --data-binary @"$T/trunc" "$U/v1/debuginfo/$id")" 422
is "upload to a path-trick build ID: 400" \
	"$(http_status -X PUT -H "$auth" --data-binary @"$dbg" "$U/v1/debuginfo/..%2f..%2fetc")" 400
is "upload of the debug file: 201" \
	"$(http_status -X PUT -H "$auth" --data-binary @"$dbg" "$U/v1/debuginfo/$id")" 201
is "HEAD after upload: 200" "$(http_status -I "$U/v1/debuginfo/$id")" 200
ok "nothing is left in incoming/" sh -c "[ -z \"\$(ls '$T/symd-store/incoming')\" ]"

# --- symbolize --------------------------------------------------------
ok "300 addresses agree with sym addr2line (function, file, line, column, inlines)" \
	$CHECK compare "$U" "$id" "$exe" 300
still_ok "the first symbolize"
body=$(curl -sS -X POST -d "{\"addresses\":[\"0x0\"],\"wait_ms\":0}" "$U/v1/symbolize/$id")
is "an address with no answer gets an empty list" "$body" \
	"{\"modules\":[{\"build_id\":\"$id\",\"status\":\"ok\",\"source\":\"dwarf\",\"frames\":[[]]}]}"
# A stripped executable uploaded alone: its table is its symbols only.
sid=$("$SYM" buildid "$stripped2" | cut -d' ' -f1)
is "upload of a stripped executable alone: 201" \
	"$(http_status -X PUT -H "$auth" --data-binary @"$stripped2" "$U/v1/debuginfo/$sid")" 201
is "its module's source is symtab" \
	"$(curl -sS -X POST -d "{\"addresses\":[\"0x0\"],\"wait_ms\":20000}" "$U/v1/symbolize/$sid" |
	   python3 -c 'import json,sys; m=json.load(sys.stdin)["modules"][0]; print(m["status"], m.get("source"))')" \
	"ok symtab"
is "an unknown build ID is missing (no upstream)" \
	"$($CHECK status "$U" 00112233445566778899aabbccddeeff00112233 0x10 3000 | cut -d' ' -f1)" missing

# --- bad requests, each followed by a good one -------------------------
for case in \
	'malformed JSON|{"modules": [|400' \
	'wrong type|{"modules": {"build_id": 1}}|400' \
	'negative address|{"modules":[{"build_id":"'$id'","addresses":[-1]}]}|400' \
	'non-hex build ID|{"modules":[{"build_id":"xyz","addresses":[1]}]}|400' \
	'path trick in a build ID|{"modules":[{"build_id":"../../etc/passwd","addresses":[1]}]}|400' \
	'absurd build ID|{"modules":[{"build_id":"'$(printf '%0300d' 0)'","addresses":[1]}]}|400' \
	'trailing garbage|{"modules":[]} x|400'; do
	d=${case%%|*}; rest=${case#*|}; b=${rest%|*}; want=${rest##*|}
	is "$d: $want" "$(http_status -X POST -d "$b" "$U/v1/symbolize")" "$want"
done
still_ok "bad JSON"
python3 -c "import json; print(json.dumps({'modules':[{'build_id':'$id','addresses':list(range(3000))}]}))" > "$T/many"
is "too many addresses: 413" "$(http_status -X POST --data-binary @"$T/many" "$U/v1/symbolize")" 413
head -c 100000 /dev/zero | tr '\0' ' ' > "$T/big"
is "body over the limit: 413" "$(http_status -X POST --data-binary @"$T/big" "$U/v1/symbolize")" 413
is "bad build ID in the URL: 400" "$(http_status -X POST -d '{"addresses":[1]}' "$U/v1/symbolize/zz")" 400
is "GET on symbolize: 405" "$(http_status "$U/v1/symbolize")" 405
is "unknown route: 404" "$(http_status "$U/nope")" 404
ok "errors are JSON" sh -c "curl -s -X POST -d '{' '$U/v1/symbolize' | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"error\"]'"
is "a slow client trickling its headers is cut off (408 or closed)" \
	"$($CHECK raw 127.0.0.1 "$SYMD_PORT" "$(printf 'POST /v1/symbolize HTTP/1.1\r\nHost: x\r\n' | od -An -tx1 | tr -d ' \n')" 0.05 | sed 's/ Request Timeout//')" \
	"HTTP/1.1 408"
is "a malformed request line: 400" \
	"$($CHECK raw 127.0.0.1 "$SYMD_PORT" "$(printf 'BLAH\r\n\r\n' | od -An -tx1 | tr -d ' \n')" | cut -d' ' -f1-2)" \
	"HTTP/1.1 400"
still_ok "slow and malformed clients"

# --- debuginfod protocol ----------------------------------------------
curl -sS -o "$T/got.debug" "$U/buildid/$id/debuginfo"
ok "GET /buildid/<id>/debuginfo is byte-identical" cmp "$T/got.debug" "$dbg"
ok "X-DEBUGINFOD-SIZE is sent" sh -c "curl -sI '$U/buildid/$id/debuginfo' | grep -qi '^x-debuginfod-size: $(stat -c %s "$dbg")'"
objcopy --dump-section .debug_line="$T/want.line" "$dbg" "$T/dump.tmp"
curl -sS -o "$T/got.line" "$U/buildid/$id/section/.debug_line"
ok "GET /buildid/<id>/section/.debug_line is the section's bytes" cmp "$T/got.line" "$T/want.line"
is "a missing executable: 404" "$(http_status "$U/buildid/$id/executable")" 404
ucid=$("$SYM" buildid "$other" | cut -d' ' -f1)
curl -sS -o /dev/null -X PUT -H "$auth" --data-binary @"$other" "$U/v1/executable/$ucid"
curl -sS -o "$T/got.exe" "$U/buildid/$ucid/debuginfo"
ok "an uploaded executable with DWARF is served as its debuginfo too" cmp "$T/got.exe" "$other"
is "a bad section name: 404" "$(http_status "$U/buildid/$id/section/..%2fx")" 404
if command -v debuginfod-find >/dev/null; then
	rm -rf "$T/dcache"
	got=$(env DEBUGINFOD_URLS="$U" DEBUGINFOD_CACHE_PATH="$T/dcache" debuginfod-find debuginfo "$id" 2>/dev/null)
	ok "debuginfod-find against symd gets the same file" cmp "$got" "$dbg"
else
	skip "no debuginfod-find"
fi

# --- a 1 GiB upload streams to disk --------------------------------------
# Not an ELF file, so it is refused once received; what counts here is
# that symd never held it in memory.
code=$( (printf '\177ELF'; head -c 1073741824 /dev/zero) |
	curl -s -o /dev/null -w '%{http_code}' --max-time 120 -X PUT -H "$auth" \
		-H 'Content-Type: application/octet-stream' -T - "$U/v1/executable/$id")
is "1 GiB upload (chunked) received and refused as not ELF: 422" "$code" 422
hwm=$(awk '/^VmHWM:/ {print $2}' /proc/$SYMD_PID/status)
if ldd "$SYMD" 2>/dev/null | grep -q libasan; then
	# ASan keeps freed memory in quarantine (256 MB by default).
	skip "peak RSS (${hwm} kB) is not meaningful under AddressSanitizer"
else
	ok "symd's peak RSS stayed under 200 MB during the 1 GiB upload (${hwm} kB)" \
		test "$hwm" -lt 204800
fi
ok "the refused upload left nothing behind" sh -c "[ -z \"\$(ls '$T/symd-store/incoming')\" ]"

# --- metrics ----------------------------------------------------------
curl -sS "$U/metrics" > "$T/metrics"
ok "metrics count requests by route and status" grep -q 'symd_requests_total{route="symbolize",code="200"}' "$T/metrics"
ok "metrics count frames and store bytes" sh -c "grep -q '^symd_frames_total [1-9]' '$T/metrics' && grep -q '^symd_store_bytes [1-9]' '$T/metrics'"

# --- delete -------------------------------------------------------------
is "DELETE without token: 401" "$(http_status -X DELETE "$U/v1/debuginfo/$id")" 401
is "DELETE: 204" "$(http_status -X DELETE -H "$auth" "$U/v1/debuginfo/$id")" 204
is "after DELETE the file is gone" "$(http_status -I "$U/v1/debuginfo/$id")" 404

# --- kill -9 during an upload, then restart ---------------------------
curl -sS -X PUT -H "$auth" --data-binary @"$dbg" "$U/v1/debuginfo/$id" >/dev/null
$CHECK status "$U" "$id" 0x1000 5000 >/dev/null
# An upload that trickles, killed in the middle.
python3 - "$SYMD_PORT" "$exe" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
data = open(sys.argv[2], "rb").read()
s.sendall(b"PUT /v1/executable/" + b"ab" * 20 + b" HTTP/1.1\r\nHost: x\r\n"
          b"Authorization: Bearer secret-token\r\nContent-Length: %d\r\n\r\n"
          % len(data))
for i in range(0, len(data), 4096):
    try:
        s.sendall(data[i:i + 4096])
    except OSError:
        break
    time.sleep(0.05)
PY
trickle=$!
sleep 0.5
stop_symd KILL
kill "$trickle" 2>/dev/null
wait "$trickle" 2>/dev/null
ok "the store verifies after kill -9" "$SYM" store verify --store "$T/symd-store"
start_symd --upload-token-file "$T/token" || exit 1
ok "the cut-short upload was swept at start-up" sh -c "[ -z \"\$(ls '$T/symd-store/incoming')\" ]"

U=$SYMD_URL
ok "after restart the same answers" $CHECK compare "$U" "$id" "$exe" 100

# --- clients that reset while a big answer is on its way -----------------
fds() { ls /proc/"$SYMD_PID"/fd | wc -l; }
before=$(fds)
main=0x$(objdump -d "$exe" | awk '/<main>:/{print $1; exit}')
for i in 1 2 3; do $CHECK abort "$SYMD_PORT" "$id" "$main" 50000 16; done
sleep 1
ok "connections reset mid-answer are all closed ($before fds before, $(fds) after)" \
	test "$(fds)" -le $((before + 2))
still_ok "clients that reset mid-answer"

# --- graceful stop ------------------------------------------------------
kill -TERM "$SYMD_PID"
for i in $(seq 100); do kill -0 "$SYMD_PID" 2>/dev/null || break; sleep 0.1; done
ok "SIGTERM stops symd within 10 s" sh -c "! kill -0 $SYMD_PID 2>/dev/null"
stop_symd TERM
is "SIGTERM: exit status 0" "$SYMD_STATUS" 0
ok "SIGTERM: logged as stopped" grep -q ' info stopped ' "$T/symd.err"
done_testing
