#!/bin/sh
# symd's queues (issue 24, items 10 and 5): an upload's 201 does not wait
# behind an unrelated conversion (ingest runs on its own thread, the
# conversion is queued after it); when the queue is full, a client (an
# address) holding most of it gives up its newest queued cold lookup for
# another client's new one, and gets the 503 itself; a queued lookup
# whose client went away is dropped.  The "long conversion" is held by
# the SYM_TEST_CONVERT_HOLD hook (work.c): it waits while
# $SYM_TEST_CONVERT_HOLD/<build-id> exists, whatever the CPU's speed.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl python3 objdump

exeA=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
exeB=$(fixture gcc-O2-d4-c) || plan_skip "cannot build the fixtures"
idA=$("$SYM" buildid "$exeA" | cut -d' ' -f1)
idB=$("$SYM" buildid "$exeB" | cut -d' ' -f1)
dbgA="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$idA" | cut -c1-2)/$(echo "$idA" | cut -c3-).debug"
[ -r "$dbgA" ] || plan_skip "no debug file for $idA"
addrA=0x$(objdump -d "$exeA" | awk '/<main>:/{print $1; exit}')
addrB=0x$(objdump -d "$exeB" | awk '/<main>:/{print $1; exit}')
CHECK="python3 $SYM_ROOT/tests/e2e/lib/symd_check.py"
curl --interface 127.0.0.2 -s -o /dev/null "http://127.0.0.1:9/" 2>/dev/null
[ $? = 45 ] && plan_skip "cannot bind 127.0.0.2 (curl --interface)"

plan 14

mkdir "$T/hold"
: > "$T/hold/$idA"
echo q-token > "$T/token"
auth="Authorization: Bearer q-token"
export SYM_TEST_CONVERT_HOLD="$T/hold"
start_symd --workers 1 --queue-max 8 --upload-token-file "$T/token" || exit 1
unset SYM_TEST_CONVERT_HOLD
U=$SYMD_URL

# healthz_field NAME: a number of GET /healthz.
healthz_field() {
	curl -s --max-time 5 "$U/healthz" |
		sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"
}

# wait_healthz NAME VALUE: until GET /healthz says so, 5 s at most.
wait_healthz() {
	_i=0
	while [ "$(healthz_field "$1")" != "$2" ] && [ $_i -lt 100 ]; do
		sleep 0.05; _i=$((_i + 1))
	done
}

# --- item 10: ingest is not behind a conversion ----------------------
is "upload of A: 201" "$(http_status -X PUT -H "$auth" --data-binary @"$dbgA" "$U/v1/debuginfo/$idA")" 201
wait_healthz jobs_running 1
is "A's conversion is running (held) on the only cpu worker" \
	"$(healthz_field jobs_running)" 1
is "A answers pending while it is held" \
	"$($CHECK status "$U" "$idA" "$addrA" 0 | cut -d' ' -f1)" pending
is "upload of B answers 201 while A's conversion runs" \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X PUT -H "$auth" --data-binary @"$exeB" "$U/v1/debuginfo/$idB")" 201
is "A is still held (B's 201 did not wait for it)" \
	"$($CHECK status "$U" "$idA" "$addrA" 0 | cut -d' ' -f1)" pending

# --- item 5: a client's share of a full queue ------------------------
# The cpu worker is held: nothing leaves the queue (8 jobs at most; B's
# conversion holds one).  127.0.0.1 fills the rest with cold IDs.
python3 -c "
import json, random
r = random.Random(5)
print(json.dumps({'modules': [{'build_id': '%040x' % r.getrandbits(160),
    'addresses': ['0x10']} for _ in range(16)], 'wait_ms': 0}))" > "$T/flood"
st=$(http_status -X POST --data-binary @"$T/flood" "$U/v1/symbolize")
is "the queue is full (1 conversion + 7 cold IDs of one client)" \
	"$(healthz_field jobs_queued)" 8
echo "# the flooding request answered $st"
cold() {
	printf '{"modules":[{"build_id":"%s","addresses":["0x10"]}],"wait_ms":%s}' "$1" "$2"
}
is "another client's new cold ID is queued, not refused" \
	"$(curl -s -o "$T/c2" -w '%{http_code}' --max-time 10 --interface 127.0.0.2 \
		-X POST -d "$(cold 2222222222222222222222222222222222222222 0)" "$U/v1/symbolize")" 200
ok "and says pending" grep -q '"status":"pending"' "$T/c2"
is "the flooding client's next cold ID gets the 503" \
	"$(http_status -X POST -d "$(cold 1111111111111111111111111111111111111111 0)" "$U/v1/symbolize")" 503
is "the queue is still 8 jobs" "$(healthz_field jobs_queued)" 8

# A third client waits for a cold ID, then goes away (a reset, as from a
# killed client with unread data): its job goes.
python3 - "$SYMD_PORT" "$(cold 3333333333333333333333333333333333333333 20000)" <<'PY'
import socket, struct, sys, time
s = socket.socket()
s.bind(("127.0.0.3", 0))
s.connect(("127.0.0.1", int(sys.argv[1])))
body = sys.argv[2].encode()
s.sendall(b"POST /v1/symbolize HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
time.sleep(0.3)
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
PY
wait_healthz jobs_queued 7
is "a queued lookup whose client went away is dropped" \
	"$(healthz_field jobs_queued)" 7

# --- release the hold: everything drains -----------------------------
rm -f "$T/hold/$idA"
is "A answers once its conversion is let go" \
	"$($CHECK status "$U" "$idA" "$addrA" 10000 | cut -d' ' -f1)" ok
is "B answers" "$($CHECK status "$U" "$idB" "$addrB" 10000 | cut -d' ' -f1)" ok
is "the other client's cold ID was looked up (missing: no upstream)" \
	"$($CHECK status "$U" 2222222222222222222222222222222222222222 0x10 10000 | cut -d' ' -f1)" missing
done_testing
