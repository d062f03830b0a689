#!/bin/sh
# cluster-multi-bench.sh - what a multi-module POST /v1/symbolize costs on
# a node that does not own its build IDs (issue 22, docs/cluster.md,
# "Multi-module requests"): that node answers every module itself, from
# the bucket's tables, rather than forwarding each to its owner.
#
# On a one-OSD Ceph (tests/e2e/lib/ceph-lib.sh), three symd nodes behind
# HAProxy (docs/cluster/haproxy.cfg) get 20 fixture build IDs through the
# proxy and convert them (each on its owner; the tables go to the
# bucket).  One request of 20 modules, 50 addresses each (1,000 in all),
# is then timed MULTI_BENCH_RUNS (5) times, in rounds:
#  - cold: a fresh node (empty store, not behind the proxy): its first
#    full answer downloads 20 tables from the bucket (nothing converted:
#    checked on its /metrics);
#  - warm: the same request to that node again (median of 10);
#  - owners: the 20 modules as 20 single-module requests through the
#    proxy, all at once (20 threads), to their owners, warm: the cost of
#    the forwarding design without the forwarding node's own hop.
# Every answer's frames are checked equal to the owners'.
#
# Knobs: MULTI_BENCH_RUNS BENCH_DIR SYMD.  The section is printed, written
# to $BENCH_DIR/cluster-multi/report.md and appended to
# $BENCH_DIR/report.md.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/cluster-multi
RUNS=${MULTI_BENCH_RUNS:-5}
HEADING="## Cluster: a multi-module request on a non-owner node"
note() { echo "cluster-multi-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"
for c in ceph-mon ceph-osd radosgw radosgw-admin haproxy curl python3; do
	command -v $c > /dev/null 2>&1 || { note "skipping: no $c"; exit 0; }
done
mkdir -p "$W" || exit 1
SYM_ROOT=$ROOT
export SYM_ROOT
. "$ROOT/tests/e2e/lib/lib.sh"
. "$ROOT/tests/e2e/lib/symd-lib.sh"
. "$ROOT/tests/e2e/lib/ceph-lib.sh"
. "$ROOT/tests/e2e/lib/proxy-lib.sh"
SYMD=${SYMD:-$ROOT/bin/symd}

"$ROOT/fixtures/build.sh" >&2 || { note "cannot build the fixtures"; exit 1; }
ls "$ROOT/fixtures/build" | grep -E '^(gcc|clang)-O[0-3]-d[45]-(c|cxx)$' |
	head -n 20 > "$T/names"
while read -r f; do
	echo "$("$ROOT/bin/sym" buildid "$ROOT/fixtures/build/$f" | cut -d' ' -f1) $ROOT/fixtures/build/$f"
done < "$T/names" > "$T/ids"

start_ceph > "$W/ceph.log" 2>&1 || { cat "$W/ceph.log" >&2; exit 1; }
ceph_s3 -o /dev/null -X PUT "$CEPH_RGW_URL/bench" || exit 1
export AWS_ENDPOINT_URL="$CEPH_RGW_URL" AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID="$CEPH_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$CEPH_SECRET_KEY"
echo bench > "$T/token"
node_args="--upload-token-file $T/token --object-store s3://bench/m
	--debuginfod-urls= --quiet"
# shellcheck disable=SC2086
start_cluster $node_args || { note "the cluster did not start"; exit 1; }
# shellcheck disable=SC2046
"$ROOT/bin/sym" upload --server "$P" --token-file "$T/token" \
	$(cut -d' ' -f2 "$T/ids") > "$W/upload.log" 2>&1 ||
	{ note "upload failed"; exit 1; }

: > "$W/times"
i=0
while [ $i -lt "$RUNS" ]; do
	rm -rf "$T/cold"
	# shellcheck disable=SC2086
	start_symd_node cold $node_args || exit 1
	python3 - "$T/ids" "$P" "http://127.0.0.1:$NODE_PORT" >> "$W/times" <<'EOF' ||
import json, subprocess, sys, threading, time, urllib.request

ids = [l.split() for l in open(sys.argv[1])]
proxy, cold = sys.argv[2], sys.argv[3]

def addrs(path):
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True,
                         text=True).stdout
    a = sorted({int(l.split()[0], 16) for l in out.splitlines()
                if len(l.split()) == 3 and l.split()[1] in "tT"})
    return ["0x%x" % x for x in a[:50]]

mods = [{"build_id": b, "addresses": addrs(p)} for b, p in ids]

def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 method="POST")
    return json.load(urllib.request.urlopen(req, timeout=120))

def owners():
    got = [None] * len(mods)
    def one(i):
        got[i] = post(proxy + "/v1/symbolize/" + mods[i]["build_id"],
                      {"addresses": mods[i]["addresses"], "wait_ms": 60000}
                      )["modules"][0]
    th = [threading.Thread(target=one, args=(i,)) for i in range(len(mods))]
    t = time.monotonic()
    for x in th: x.start()
    for x in th: x.join()
    return time.monotonic() - t, got

def frames(ms):
    return [(m["build_id"], m["status"], m["frames"]) for m in ms]

owners()                         # the owners warm
t_own, want = owners()
t = time.monotonic()
got = post(cold + "/v1/symbolize", {"modules": mods, "wait_ms": 60000})
t_cold = time.monotonic() - t
if frames(got["modules"]) != frames(want):
    sys.exit("the cold node's answer is not the owners'")
warm = []
for _ in range(10):
    t = time.monotonic()
    got = post(cold + "/v1/symbolize", {"modules": mods, "wait_ms": 60000})
    warm.append(time.monotonic() - t)
    if frames(got["modules"]) != frames(want):
        sys.exit("the warm answer is not the owners'")
warm.sort()
print("%.4f %.4f %.4f" % (t_cold, warm[len(warm) // 2], t_own))
EOF
		{ note "a run failed"; exit 1; }
	conv=$(curl -s "http://127.0.0.1:$NODE_PORT/metrics" |
		awk '$1 == "symd_conversions_total{result=\"ok\"}" { print $2 + 0 }')
	[ "${conv:-0}" = 0 ] || { note "the cold node converted $conv"; exit 1; }
	kill "$NODE_PID"; wait "$NODE_PID" 2>/dev/null
	i=$((i + 1))
done

COLD=$(median $(cut -d' ' -f1 "$W/times"))
WARM=$(median $(cut -d' ' -f2 "$W/times"))
OWN=$(median $(cut -d' ' -f3 "$W/times"))
ms() { echo "$1" | awk '{ printf "%.1f", $1 * 1000 }'; }
{
	echo "$HEADING"
	echo
	echo "Input: 20 fixture build IDs (tables 10-100 KB), one request of 20" \
		"modules x 50 addresses. Three nodes behind HAProxy on Ceph" \
		"16.2.15 (one OSD on MemStore) on 127.0.0.1; the cold node is" \
		"fresh each run (empty store) and converts nothing."
	echo "Host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" \
		"at the end; medians of $RUNS runs."
	echo
	echo "| the 20-module request | ms |"
	echo "|---|---|"
	echo "| to a node cold for all 20 (downloads 20 tables from the bucket) | $(ms "$COLD") |"
	echo "| to that node again, warm (median of 10) | $(ms "$WARM") |"
	echo "| as 20 single-module requests to the owners through HAProxy, at once, warm | $(ms "$OWN") |"
	echo
	echo "Cold / warm: $(echo "$COLD $WARM" | awk '{ printf "%.1f", $1 / $2 }')x;" \
		"warm local / owners: $(echo "$WARM $OWN" | awk '{ printf "%.2f", $1 / $2 }')x." \
		"Every answer equals the owners', frame for frame."
	echo
} > "$W/report.md"
publish "$HEADING" "$W/report.md" "$OUT/report.md"
exit 0
