#!/bin/sh
# Issue 24, items 8 and 5 (the fetch part):
#   - /healthz and /metrics answer 405 with Allow: GET, HEAD to other
#     methods, as docs/http-api.md says (any method was served before);
#   - an upstream that accepts and never answers (the stub with a delay of
#     an hour) costs a fetch at most --fetch-first-byte-ms: the GET gets
#     502 naming the deadline, not a hang;
#   - a federation GET /buildid/<id>/debuginfo queued behind a fetch that
#     hangs gets 503 with Retry-After after --fetch-wait-ms (it had no
#     answer after 400 s before).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
. "$(dirname "$0")/lib/attack-lib.sh"
need curl python3

fixture_debug gcc-O2-d5-cxx || plan_skip "cannot build the fixtures"

plan 19

start_symd --quiet || exit 1
U=$SYMD_URL
for m in POST PUT DELETE; do
	for p in healthz metrics; do
		symd_curl -o "$T/body" -D "$T/head" -X $m "$U/$p" > /dev/null
		is "$m /$p: 405" "$(sed -n '1s/^HTTP\/1.1 \([0-9]*\).*/\1/p' "$T/head")" 405
	done
done
ok "the 405 says Allow: GET, HEAD" grep -qi '^Allow: GET, HEAD' "$T/head"
ok "the 405 has a JSON error body" grep -q '^{"error":' "$T/body"
is "GET /healthz still 200" "$(http_status "$U/healthz")" 200
is "HEAD /metrics 200" "$(http_status -I "$U/metrics")" 200
stop_symd

start_stub_debuginfod --file "$dbg" || exit 1
hang=$STUB_URL/delay=3600
id1=0123456789abcdef0123456789abcdef01234567
id2=1123456789abcdef0123456789abcdef01234567
id3=2123456789abcdef0123456789abcdef01234567

# The first-byte deadline ends the fetch; the wait is longer.
start_symd --quiet --debuginfod-urls "$hang" --fetch-first-byte-ms 1500 \
	--fetch-wait-ms 20000 || exit 1
t0=$(date +%s)
code=$(curl -s -o "$T/b1" -w '%{http_code}' --max-time 15 "$SYMD_URL/buildid/$id1/debuginfo")
t1=$(date +%s)
is "hanging upstream: 502" "$code" 502
ok "hanging upstream: answered within 6 s (took $((t1 - t0)) s)" [ $((t1 - t0)) -le 6 ]
ok "hanging upstream: the error names the deadline" grep -q 'within 1500 ms' "$T/b1"
stop_symd

# An upstream that answers after 1 s and then takes 4 s more (8 pieces
# 0.5 s apart): its first byte is in time, so the transfer goes on past
# --fetch-first-byte-ms and the file arrives.
start_symd --quiet --debuginfod-urls "$STUB_URL/delay=1/trickle=0.5" \
	--fetch-first-byte-ms 2500 || exit 1
t0=$(date +%s)
code=$(curl -s -o "$T/got" -w '%{http_code}' --max-time 20 "$SYMD_URL/buildid/$id/debuginfo")
t1=$(date +%s)
is "slow transfer that started in time: 200 (after $((t1 - t0)) s)" "$code" 200
ok "slow transfer: the file is the upstream's" cmp -s "$T/got" "$dbg"
stop_symd

# One fetch worker, held by a hanging fetch; the second GET waits in the
# queue.  Both get 503 with Retry-After once --fetch-wait-ms is over.
start_symd --quiet --debuginfod-urls "$hang" --fetch-workers 1 \
	--fetch-wait-ms 2000 || exit 1
curl -s -o /dev/null -D "$T/h2" --max-time 15 "$SYMD_URL/buildid/$id2/debuginfo" &
p2=$!
sleep 0.3
t0=$(date +%s)
curl -s -o "$T/b3" -D "$T/h3" --max-time 15 "$SYMD_URL/buildid/$id3/debuginfo"
t1=$(date +%s)
wait $p2
is "queued federation GET: 503" "$(sed -n '1s/^HTTP\/1.1 \([0-9]*\).*/\1/p' "$T/h3")" 503
ok "queued federation GET: Retry-After" grep -qi '^Retry-After: [0-9]' "$T/h3"
ok "queued federation GET: answered within 5 s (took $((t1 - t0)) s)" [ $((t1 - t0)) -le 5 ]
is "the hanging one: 503 too" "$(sed -n '1s/^HTTP\/1.1 \([0-9]*\).*/\1/p' "$T/h2")" 503
stop_symd
