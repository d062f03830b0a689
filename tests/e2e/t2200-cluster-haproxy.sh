#!/bin/sh
# Three symd nodes behind a real HAProxy (Debian 12's 2.6) running the
# shipped docs/cluster/haproxy.cfg, only its bind and server lines and its
# health-check pace rewritten; a real debuginfod (elfutils) as the nodes'
# upstream.  20 build IDs:
#  1. sym upload through the proxy: each build ID lands on exactly one
#     node (HEAD on every node directly);
#  2. symbolize each through the proxy (/v1/symbolize/<id>): every frame
#     as sym addr2line gives it (whole paths), and each build ID converted
#     once in the cluster, on the node it was uploaded to;
#  3. kill -9 the node with the most build IDs: every answer still right,
#     at once (HAProxy retries a refused connection on the build ID's next
#     node), its build IDs converted once more on the others (from the
#     upstream: without an object store a node's files die with it) and
#     no other build ID converted again; the failover's latencies printed;
#  4. the node restarted with an empty store and put back (HAProxy's
#     runtime API, its new port): answers right;
#  5. SIGUSR1 drains a node (its /healthz 503): HAProxy takes it out, its
#     build IDs are answered by the others; SIGUSR1 again puts it back;
#  6. a rolling stop: SIGTERM with --drain-ms while a client keeps asking
#     through the proxy: no request fails;
#  7. a multi-module POST /v1/symbolize (no build ID in the URL) reaching
#     any node is answered in full.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
. "$(dirname "$0")/lib/proxy-lib.sh"
need curl haproxy debuginfod python3 objdump awk

CHECK="python3 $SYM_ROOT/tests/e2e/lib/symd_check.py"
"$SYM_ROOT/fixtures/build.sh" >&2 || plan_skip "cannot build the fixtures"
N=20
ls "$SYM_ROOT/fixtures/build" | grep -E '^(gcc|clang)-O[0-3]-d[45]-(c|cxx)$' |
	head -n $N > "$T/names"
[ "$(wc -l < "$T/names")" = $N ] || plan_skip "fewer than $N fixtures"
mkdir "$T/files"
while read -r f; do
	cp "$SYM_ROOT/fixtures/build/$f" "$T/files/$f"
	echo "$("$SYM" buildid "$T/files/$f" | cut -d' ' -f1) $T/files/$f"
done < "$T/names" > "$T/ids"
mkdir "$T/want"
[ "$(cut -d' ' -f1 "$T/ids" | sort -u | wc -l)" = $N ] ||
	plan_skip "the fixtures' build IDs are not distinct"

start_debuginfod "$T/files" $(cut -d' ' -f1 "$T/ids") ||
	plan_skip "debuginfod did not start"
echo secret > "$T/token"
node_args="--upload-token-file $T/token --debuginfod-urls $DEBUGINFOD_URL
	--drain-ms 3000 --quiet"
# shellcheck disable=SC2086
start_cluster $node_args
case $? in
0) ;;
2) plan_skip "haproxy did not start" ;;
*) echo "Bail out! the cluster did not start"; exit 1 ;;
esac

# owner ID: the node (1-3) holding ID's upload, as HEAD on each says.
owners() {
	while read -r id _; do
		o=
		for n in 1 2 3; do
			eval "port=\$PORT$n"
			[ "$(http_status -I "http://127.0.0.1:$port/v1/debuginfo/$id")" = 200 ] &&
				o="$o$n"
		done
		echo "$id ${o:--}"
	done < "$T/ids"
}

# conversions N: node N's symd_conversions_total (all outcomes).
conversions() {
	eval "port=\$PORT$1"
	curl -s --max-time 30 "http://127.0.0.1:$port/metrics" |
		awk '/^symd_conversions_total/ { s += $NF } END { print s + 0 }'
}


# --- 1. uploads through the proxy ------------------------------------------
echo "# step 1 at $(date +%T)"
"$SYM" upload --server "$P" --token-file "$T/token" $(sed "s|^|$T/files/|" "$T/names") \
	> "$T/up" 2>&1
is "sym upload through the proxy: status 0" "$?" 0
owners > "$T/owners"
is "each build ID is on exactly one node" \
	"$(awk '$2 !~ /^[123]$/' "$T/owners" | wc -l)" 0
for n in 1 2 3; do
	echo "# node$n holds $(awk -v n=$n '$2 == n' "$T/owners" | wc -l) build IDs"
done

# --- 2. symbolize through the proxy ----------------------------------------
echo "# step 2 at $(date +%T)"
proxy_all_right "warm-up"
same=0
for n in 1 2 3; do
	eval "C$n=$(conversions $n)"
	eval "c=\$C$n"
	[ "$c" = "$(awk -v n=$n '$2 == n' "$T/owners" | wc -l)" ] && same=$((same + 1))
done
is "each build ID converted once, on the node it was uploaded to" "$same" 3

# --- 3. kill -9 the busiest node ---------------------------------------------
echo "# step 3 at $(date +%T)"
victim=$(awk '{ c[$2]++ } END { for (n in c) if (c[n] > m) { m = c[n]; v = n }
	print v }' "$T/owners")
lost=$(awk -v n="$victim" '$2 == n' "$T/owners" | wc -l)
eval "kill -9 \$PID$victim; wait \$PID$victim 2>/dev/null"
t0=$(date +%s.%N)
proxy_all_right "node$victim killed"
echo "# failover: $N build IDs checked in $(echo "$(date +%s.%N) - $t0" | bc) s"
more=0
for n in 1 2 3; do
	[ "$n" = "$victim" ] && continue
	eval "before=\$C$n"
	more=$((more + $(conversions $n) - before))
done
is "only the dead node's $lost build IDs converted again" "$more" "$lost"
proxy_wait_up 2
ok "HAProxy's health check took node$victim out" test "$(proxy_up)" = 2
# The latency of each request through the proxy now, as a profiler
# backend sees it (a diagnostic: no timing is asserted).
python3 - "$P" "$T/ids" <<'EOF'
import json, sys, time, urllib.request
lat = []
for line in open(sys.argv[2]):
    bid = line.split()[0]
    for _ in range(5):
        t = time.monotonic()
        req = urllib.request.Request(sys.argv[1] + "/v1/symbolize/" + bid,
            data=json.dumps({"addresses": ["0x1000"]}).encode(), method="POST")
        urllib.request.urlopen(req, timeout=60).read()
        lat.append(time.monotonic() - t)
lat.sort()
print("# after failover: %d requests, p50 %.2f ms, p99 %.2f ms" % (
    len(lat), 1e3 * lat[len(lat) // 2], 1e3 * lat[int(len(lat) * 0.99)]))
EOF

# --- 4. the node back, its store empty ---------------------------------------
echo "# step 4 at $(date +%T)"
rm -rf "$T/node$victim"
# shellcheck disable=SC2086
start_symd_node node$victim $node_args || exit 1
eval "PID$victim=$NODE_PID PORT$victim=$NODE_PORT"
haproxy_cmd "set server symd_nodes/node$victim addr 127.0.0.1 port $NODE_PORT" > /dev/null
proxy_wait_up 3
ok "node$victim restarted with an empty store is back in the ring" \
	test "$(proxy_up)" = 3
proxy_all_right "node$victim back"

# --- 5. SIGUSR1: drain a node, then undrain it -----------------------------
echo "# step 5 at $(date +%T)"
d=$(( victim % 3 + 1 ))
eval "dpid=\$PID$d dport=\$PORT$d"
kill -USR1 "$dpid"
i=0
while [ $i -lt 600 ] && [ "$(proxy_up)" != 2 ]; do sleep 0.05; i=$((i + 1)); done
is "SIGUSR1: node$d's /healthz says 503" \
	"$(http_status "http://127.0.0.1:$dport/healthz")" 503
ok "SIGUSR1: HAProxy took node$d out" test "$(proxy_up)" = 2
served=$(curl -s --max-time 30 "http://127.0.0.1:$dport/metrics" |
	awk '/^symd_requests_total.*route="symbolize/ { s += $NF } END { print s + 0 }')
proxy_all_right "node$d draining"
is "a draining node gets no symbolize request through the proxy" \
	"$(curl -s --max-time 30 "http://127.0.0.1:$dport/metrics" |
	awk '/^symd_requests_total.*route="symbolize/ { s += $NF } END { print s + 0 }')" \
	"$served"
kill -USR1 "$dpid"
proxy_wait_up 3
ok "SIGUSR1 again: node$d back in the ring" test "$(proxy_up)" = 3

# --- 6. a rolling stop: SIGTERM with --drain-ms under load -------------------
echo "# step 6 at $(date +%T)"
python3 - "$P" "$T/ids" "$T/stop-now" > "$T/load" 2>&1 <<'EOF' &
import json, os, sys, urllib.error, urllib.request
ids = [l.split()[0] for l in open(sys.argv[2])]
ok = bad = 0
errs = {}
while not os.path.exists(sys.argv[3]) or ok + bad < 200:
    bid = ids[(ok + bad) % len(ids)]
    req = urllib.request.Request(sys.argv[1] + "/v1/symbolize/" + bid,
        data=json.dumps({"addresses": ["0x1000"], "wait_ms": 20000}).encode(),
        method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            st = json.loads(r.read())["modules"][0]["status"]
            if st == "ok":
                ok += 1
                continue
            errs[st] = errs.get(st, 0) + 1
    except urllib.error.HTTPError as e:
        errs[e.code] = errs.get(e.code, 0) + 1
    except Exception as e:
        errs[type(e).__name__] = errs.get(type(e).__name__, 0) + 1
    bad += 1
print(ok, bad, errs)
EOF
LOAD=$!
sleep 0.5
eval "kill -TERM \$PID$d; wait \$PID$d"
is "node$d stopped with status 0 after its drain" "$?" 0
: > "$T/stop-now"
wait "$LOAD"
echo "# during the rolling stop: $(cat "$T/load") (ok, failed, why)"
is "no request failed while node$d drained and stopped" \
	"$(cut -d' ' -f2 "$T/load")" 0

# --- 7. a multi-module request, any node -------------------------------------
echo "# step 7 at $(date +%T)"
$CHECK compare-multi "$P" "$T/ids" "$T/want" 100 > "$T/cmp" 2>&1
st=$?
sed 's/^/# /' "$T/cmp"
is "a request of all $N modules through the proxy: every frame right" "$st" 0

# --- 8. the same behind nginx (docs/cluster/nginx.conf) ---------------------
# symbolize N: node N's symbolize requests so far.
symbolize_count() {
	eval "port=\$PORT$1"
	curl -s --max-time 30 "http://127.0.0.1:$port/metrics" |
		awk '/^symd_requests_total.*route="symbolize/ { s += $NF } END { print s + 0 }'
}
if command -v nginx > /dev/null 2>&1; then
	# shellcheck disable=SC2086
	start_symd_node node$d $node_args || exit 1
	eval "PID$d=$NODE_PID PORT$d=$NODE_PORT"
	start_nginx "$PORT1" "$PORT2" "$PORT3" || exit 1
	h0="$(symbolize_count 1) $(symbolize_count 2) $(symbolize_count 3)"
	SYMD_CHECK_ROUTE=id $CHECK compare-many "$NGINX_URL" "$T/ids" "$T/want" 100 \
		> "$T/cmp" 2>&1
	st=$?
	sed 's/^/# /' "$T/cmp"
	is "nginx: all $N build IDs answered right" "$st" 0
	h1="$(symbolize_count 1) $(symbolize_count 2) $(symbolize_count 3)"
	SYMD_CHECK_ROUTE=id $CHECK compare-many "$NGINX_URL" "$T/ids" "$T/want" 100 \
		> /dev/null 2>&1
	h2="$(symbolize_count 1) $(symbolize_count 2) $(symbolize_count 3)"
	echo "# nginx: symbolize requests per node: $h0, $h1, $h2"
	# One request per build ID a round: each build ID went to the same
	# node both times when every node's count moved by the same amount.
	is "nginx: each build ID stays on its node" "$(python3 -c 'import sys
a, b, c = ([int(x) for x in v.split()] for v in sys.argv[1:])
print(" ".join(str((y - x) - (z - y)) for x, y, z in zip(a, b, c)))' \
		"$h0" "$h1" "$h2")" "0 0 0"
else
	skip "nginx: not installed"
	skip "nginx: not installed"
fi

plan "$_tap_n"
done_testing
