#!/bin/sh
# Issue 22's whole picture: three symd nodes behind a real HAProxy
# (docs/cluster/haproxy.cfg as shipped, bind and server lines rewritten)
# sharing a bucket on real Ceph (ceph-mon, ceph-osd on MemStore,
# radosgw), all on 127.0.0.1, started and stopped here; no debuginfod
# upstream, so the bucket is the only shared copy.  20 build IDs:
#  1. sym upload through the proxy: every file in the bucket;
#  2. symbolize each through the proxy: every frame as sym addr2line says
#     (whole paths), 20 conversions in the cluster, one per build ID;
#  3. kill -9 the node with the most build IDs: every answer still right,
#     and no table converted a second time: the survivors download the
#     dead node's tables from the bucket (their /metrics); the failover's
#     request latencies printed;
#  4. radosgw stopped: warm answers still right through the proxy, and an
#     upload gets 503 with Retry-After; radosgw back, it goes through;
#  5. the killed node back with an empty store bounded by
#     --max-store-size of half the 20 tables' bytes (at least three of
#     the biggest; format 9's tables of these fixtures are 0.19 MB, the
#     biggest 20 KB), asked for all 20 build IDs directly: every answer
#     right, from tables it downloads and evicts in turn, and its store
#     back within the bound at its next maintenance tick (every 5 s).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/ceph-lib.sh"
. "$(dirname "$0")/lib/proxy-lib.sh"
need curl python3 haproxy objdump awk ceph-mon ceph-osd radosgw \
	radosgw-admin ceph-authtool monmaptool

CHECK="python3 $SYM_ROOT/tests/e2e/lib/symd_check.py"
"$SYM_ROOT/fixtures/build.sh" >&2 || plan_skip "cannot build the fixtures"
N=20
ls "$SYM_ROOT/fixtures/build" | grep -E '^(gcc|clang)-O[0-3]-d[45]-(c|cxx)$' |
	head -n $((N + 1)) > "$T/names"
[ "$(wc -l < "$T/names")" = $((N + 1)) ] || plan_skip "fewer than $((N + 1)) fixtures"
mkdir "$T/files" "$T/want"
while read -r f; do
	cp "$SYM_ROOT/fixtures/build/$f" "$T/files/$f"
	echo "$("$SYM" buildid "$T/files/$f" | cut -d' ' -f1) $T/files/$f"
done < "$T/names" > "$T/all"
head -n $N "$T/all" > "$T/ids"
late=$(tail -1 "$T/all" | cut -d' ' -f2)	# uploaded while radosgw is down
[ "$(cut -d' ' -f1 "$T/all" | sort -u | wc -l)" = $((N + 1)) ] ||
	plan_skip "the fixtures' build IDs are not distinct"

plan 15

start_ceph_tap
ceph_s3 -o /dev/null -X PUT "$CEPH_RGW_URL/symd-cluster"
export AWS_ENDPOINT_URL="$CEPH_RGW_URL" AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID="$CEPH_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$CEPH_SECRET_KEY"

echo secret > "$T/token"
node_args="--upload-token-file $T/token --object-store s3://symd-cluster/t
	--debuginfod-urls= --quiet"
# shellcheck disable=SC2086
start_cluster $node_args ||
	{ echo "Bail out! the cluster did not start"; exit 1; }

conv() { node_conv "$1"; }
tget() { node_metric "$1" 'symd_objstore_requests_total{kind="table",op="get",result="ok"}'; }

# --- 1. uploads through the proxy, into the bucket ----------------------------
# shellcheck disable=SC2046
"$SYM" upload --server "$P" --token-file "$T/token" $(cut -d' ' -f2 "$T/ids") \
	> "$T/up" 2>&1
is "sym upload through the proxy: status 0" "$?" 0
inbucket=0
while read -r id _; do
	[ "$(ceph_s3 -o /dev/null -w '%{http_code}' -I \
		"$CEPH_RGW_URL/symd-cluster/t/debuginfo/$id")" = 200 ] &&
		inbucket=$((inbucket + 1))
done < "$T/ids"
is "every upload is in the bucket" "$inbucket" $N

# --- 2. symbolize through the proxy -------------------------------------------
proxy_all_right "first answers"
c0=$(( $(conv 1) + $(conv 2) + $(conv 3) ))
is "$N conversions in the cluster, one per build ID" "$c0" $N

# --- 3. kill -9 the busiest node ----------------------------------------------
victim=1 most=$(conv 1)
for n in 2 3; do
	[ "$(conv $n)" -gt "$most" ] && { victim=$n; most=$(conv $n); }
done
before=0 gets=0
for n in 1 2 3; do
	[ $n = "$victim" ] && continue
	before=$((before + $(conv $n)))
	gets=$((gets + $(tget $n)))
done
eval "kill -9 \$PID$victim; wait \$PID$victim 2>/dev/null"
proxy_all_right "node$victim ($most build IDs) killed"
after=0 gets2=0
for n in 1 2 3; do
	[ $n = "$victim" ] && continue
	after=$((after + $(conv $n)))
	gets2=$((gets2 + $(tget $n)))
done
is "no table converted a second time" "$((after - before))" 0
is "the survivors downloaded the dead node's $most tables from the bucket" \
	"$((gets2 - gets))" "$most"
python3 - "$P" "$T/ids" <<'EOF'
import json, sys, time, urllib.request
lat = []
for line in open(sys.argv[2]):
    for _ in range(5):
        t = time.monotonic()
        req = urllib.request.Request(sys.argv[1] + "/v1/symbolize/" +
            line.split()[0], data=json.dumps({"addresses": ["0x1000"]}).encode(),
            method="POST")
        urllib.request.urlopen(req, timeout=60).read()
        lat.append(time.monotonic() - t)
lat.sort()
print("# after the failover: %d requests, p50 %.2f ms, p99 %.2f ms" % (
    len(lat), 1e3 * lat[len(lat) // 2], 1e3 * lat[int(len(lat) * 0.99)]))
EOF

# --- 4. radosgw stopped, then back -------------------------------------------
stop_rgw
proxy_all_right "radosgw stopped"
late_id=$("$SYM" buildid "$late" | cut -d' ' -f1)
code=$(curl -s -o "$T/late.out" -D "$T/late.hdr" -w '%{http_code}' -m 60 \
	-H "Authorization: Bearer secret" -T "$late" "$P/v1/debuginfo/$late_id")
is "radosgw stopped: an upload gets 503" "$code" 503
ok "... with Retry-After" grep -qi '^Retry-After: [1-9]' "$T/late.hdr"
start_rgw || { echo "Bail out! radosgw did not come back"; exit 1; }
is "radosgw back: the upload goes through" \
	"$(curl -s -o /dev/null -w '%{http_code}' -m 60 \
	-H "Authorization: Bearer secret" -T "$late" "$P/v1/debuginfo/$late_id")" 201

# --- 5. a node whose store holds less than the cluster ----------------------
# The bound: half the bytes of the 20 tables (built the same way into a
# store of the test's own), so that the node has to evict, and at least
# three of the biggest, so that it can answer.
# shellcheck disable=SC2046
"$SYM" store --store="$T/sizes" add $(cut -d' ' -f2 "$T/ids") > /dev/null 2>&1
bound=$("$SYM" store --store="$T/sizes" ls |
	awk '{ s += $(NF - 3); if ($(NF - 3) > m) m = $(NF - 3) }
	     END { b = int(s / 2); if (b < 3 * m) b = 3 * m; print (NR ? b : 0) }')
echo "# the 20 tables: the bound is $bound bytes"
[ "${bound:-0}" -gt 0 ] || { echo "Bail out! no table sizes"; exit 1; }
# shellcheck disable=SC2086
start_symd_node small $node_args --max-store-size "$bound" || exit 1
SMALL=http://127.0.0.1:$NODE_PORT
$CHECK compare-many "$SMALL" "$T/ids" "$T/want" 100 > "$T/cmp" 2>&1
st=$?
sed 's/^/# /' "$T/cmp"
is "a node bounded to $bound bytes: all $N build IDs answered right" "$st" 0
# The bound is kept by symd's maintenance tick (every 5 s): wait for it
# (30 s is a bound, not a race).
i=0
while :; do
	curl -s --max-time 30 "$SMALL/metrics" > "$T/small.metrics"
	bytes=$(awk '$1 == "symd_store_bytes" { print $2 + 0 }' "$T/small.metrics")
	tables=$(awk '$1 == "symd_store_tables" { print $2 + 0 }' "$T/small.metrics")
	[ "${bytes:-999999999}" -le "$bound" ] || [ $i -ge 300 ] && break
	sleep 0.1
	i=$((i + 1))
done
echo "# the bounded node holds $tables tables, $bytes bytes"
ok "its store stays within the bound ($bytes bytes)" \
	test "${bytes:-999999999}" -le "$bound"
ok "it holds fewer tables than the cluster's $N ($tables)" \
	test "${tables:-$N}" -lt $N

done_testing
