#!/bin/sh
# objstore-bench.sh - the object store's part of `make bench` (issue 22):
# a node that takes over a build ID whose table another node converted
# and wrote to the shared bucket, against converting it.
#
# On a one-OSD Ceph (ceph-mon, ceph-osd on MemStore, radosgw) on
# 127.0.0.1 (tests/e2e/lib/ceph-lib.sh), node A gets libjvm.so's debug
# file (openjdk-17-dbg, 156 MB) by PUT /v1/debuginfo/<id> and converts it
# (its first answer to 1,000 addresses, wait_ms 300000, marks the end;
# the conversion time is A's symd_conversion_duration_seconds_sum).  Then
# OBJSTORE_BENCH_RUNS (3) times a fresh node B with an empty store asks
# for the same 1,000 addresses: its first full answer downloads the table
# from the bucket and converts nothing (its /metrics are checked).  The
# ratio is A's conversion time over the median of B's first answers.
#
# Goal (issue 22): the takeover is at least 10x faster than converting.
# A goal not met is reported, not a failure; the exit status is 1 when
# Ceph or symd cannot start or an answer is not A's.
#
# Knobs: OBJSTORE_BENCH_RUNS BENCH_DIR SYMD.  The section is printed,
# written to $BENCH_DIR/objstore/report.md and appended to
# $BENCH_DIR/report.md (replacing an earlier one of this script).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/objstore
RUNS=${OBJSTORE_BENCH_RUNS:-3}
HEADING="## Object store: taking over a converted build ID"
note() { echo "objstore-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"
for c in ceph-mon ceph-osd radosgw radosgw-admin curl bc; do
	command -v $c > /dev/null 2>&1 || { note "skipping: no $c"; exit 0; }
done
SO=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
usable_input libjvm "$SO" || exit 0
[ -n "$dbg" ] || { note "skipping: no separate debug file of $SO"; exit 0; }
mkdir -p "$W" || exit 1
# The e2e helpers: a private $T, at_exit, Ceph's start and stop.
. "$ROOT/tests/e2e/lib/lib.sh"
. "$ROOT/tests/e2e/lib/ceph-lib.sh"
SYMD=${SYMD:-$ROOT/bin/symd}
id=$(readelf -n "$SO" | sed -n 's/.*Build ID: *//p' | head -1)

start_ceph > "$W/ceph.log" 2>&1 || { cat "$W/ceph.log" >&2; exit 1; }
ceph_s3 -o /dev/null -X PUT "$CEPH_RGW_URL/bench" || exit 1
export AWS_ENDPOINT_URL="$CEPH_RGW_URL" AWS_ACCESS_KEY_ID="$CEPH_ACCESS_KEY"
export AWS_SECRET_ACCESS_KEY="$CEPH_SECRET_KEY"
echo bench > "$T/token"
PIDS=
at_exit 'for p in $PIDS; do kill -9 $p 2>/dev/null; done'

# node NAME: a symd on the bucket with an empty store; its URL in $URL.
node() {
	rm -rf "$T/store-$1"
	"$SYMD" --listen 127.0.0.1:0 --store "$T/store-$1" --quiet \
		--upload-token-file "$T/token" --object-store s3://bench/nodes \
		--debuginfod-urls '' > "$T/$1.out" 2> "$T/$1.err" &
	PID=$!
	PIDS="$PIDS $PID"
	_i=0
	while [ $_i -lt 200 ] && ! grep -qs listening "$T/$1.out"; do
		sleep 0.05
		_i=$((_i + 1))
	done
	URL=http://127.0.0.1:$(sed -n 's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$T/$1.out")
	grep -q listening "$T/$1.out" || { cat "$T/$1.err" >&2; exit 1; }
}
metric() { curl -sS "$1/metrics" | awk -v k="$2" '$1 == k { print $2 }'; }
now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.3f\n", $2 - $1 }'; }

nm -D --defined-only "$SO" | awk '$2 ~ /^[tT]$/ { print "\"0x" $1 "\"" }' |
	head -1000 | paste -sd, > "$T/addrs"
echo "{\"addresses\":[$(cat "$T/addrs")],\"wait_ms\":300000}" > "$T/body"
ask() { curl -sS -m 400 -X POST --data-binary @"$T/body" "$1/v1/symbolize/$id"; }

node A
A=$URL
t0=$(now)
st=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer bench' \
	-T "$dbg" "$A/v1/debuginfo/$id")
t1=$(now)
[ "$st" = 201 ] || { note "upload to A: HTTP $st"; exit 1; }
ask "$A" > "$W/a.json"
t2=$(now)
grep -q '"status":"ok"' "$W/a.json" || { note "A did not answer ok"; exit 1; }
UP=$(secs "$t0" "$t1")
A1=$(secs "$t1" "$t2")
CONV=$(metric "$A" symd_conversion_duration_seconds_sum)

: > "$W/b.t"
i=0
while [ $i -lt "$RUNS" ]; do
	node B
	t0=$(now)
	ask "$URL" > "$W/b.json"
	secs "$t0" "$(now)" >> "$W/b.t"
	cmp -s "$W/a.json" "$W/b.json" || { note "B's answer is not A's"; exit 1; }
	[ "$(metric "$URL" 'symd_conversions_total{result="ok"}')" = 0 ] ||
		{ note "B converted"; exit 1; }
	GOT=$(metric "$URL" 'symd_objstore_bytes_total{op="get"}')
	kill -9 "$PID"
	i=$((i + 1))
done
B1=$(median $(cat "$W/b.t"))
RATIO=$(echo "$CONV $B1" | awk '{ printf "%.1f", $1 / $2 }')
GOAL=$(echo "$RATIO" | awk '{ print ($1 >= 10) ? "met" : "NOT met" }')

{
	echo "$HEADING"
	echo
	echo "Input: libjvm.so's debug file (openjdk-17-dbg, $(stat -c %s "$dbg") bytes)," \
		"1,000 addresses of its exported functions in one request." \
		"Ceph 16.2.15 (one OSD on MemStore, radosgw) on 127.0.0.1," \
		"up in $(printf '%.1f' "$CEPH_START_S") s."
	echo "Host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" \
		"at the end; B: median of $RUNS fresh nodes."
	echo
	echo "| what | seconds |"
	echo "|---|---|"
	echo "| upload to node A (201: in the bucket, multipart) | $UP |"
	echo "| A's conversion (symd_conversion_duration_seconds) | $CONV |"
	echo "| A's first answer after the upload (conversion, write-back of the $GOT-byte table) | $A1 |"
	echo "| node B, empty store: first full answer (download, import, lookups) | $B1 |"
	echo
	echo "Conversion / takeover: ${RATIO}x.  Goal (issue 22): at least 10x: $GOAL."
	echo "B downloaded $GOT bytes and converted nothing; its answers are A's."
	echo
} > "$W/report.md"
publish "$HEADING" "$W/report.md" "$OUT/report.md"
exit 0
