#!/bin/sh
# cluster-bench.sh - the proxy hop's part of `make bench` (issue 22): what
# HAProxy in front of symd (docs/cluster/haproxy.cfg, as t2200 runs it)
# adds to a warm 1,000-address request.
#
# One symd (--quiet) whose store holds libc's table (libc6-dbg's debug
# file, `sym store add`), warmed by one request; one HAProxy with the
# shipped configuration, its bind line made an inherited socket and one
# server line, this symd.  The same POST /v1/symbolize/<id> of 1,000
# unsorted instruction addresses of libc (objdump -d, seed BENCH_SEED) is
# sent CLUSTER_BENCH_PAIRS (400) times to each, in pairs whose order
# alternates, each side on its own keep-alive connection, after 50 pairs
# not counted.  Reported: each side's p50 and p99, and the median and
# p99 of the pairs' differences (proxy - direct).
#
# Goal (issue 22): the median added latency is at most 1 ms.  Not met is
# reported, not a failure; the exit status is 1 when something cannot be
# started or a request fails.
#
# Knobs: CLUSTER_BENCH_PAIRS BENCH_SEED BENCH_DIR SYM SYMD.  Everything
# stays in $BENCH_DIR/cluster/; the section is printed, written to
# $BENCH_DIR/cluster/report.md and appended to $BENCH_DIR/report.md.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM_ROOT=$ROOT
SYM=${SYM:-$ROOT/bin/sym}
SYMD=${SYMD:-$ROOT/bin/symd}
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/cluster
PAIRS=${CLUSTER_BENCH_PAIRS:-400}
SEED=${BENCH_SEED:-20240601}
HEADING="## The proxy hop (HAProxy in front of symd)"

note() { echo "cluster-bench: $*" >&2; }
. "$ROOT/tests/bench/lib.sh"

rm -rf "$W"
mkdir -p "$W"
T=$W
_hooks=
at_exit() { _hooks="$1; $_hooks"; }
trap 'eval "$_hooks"' EXIT
. "$ROOT/tests/e2e/lib/proxy-lib.sh"

command -v haproxy > /dev/null 2>&1 || { note "no haproxy: skipped"; exit 0; }
LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6
usable_input libc "$LIBC" || exit 0
id=$("$SYM" buildid "$LIBC" | cut -d' ' -f1)
"$SYM" store --store "$W/node1" add "${dbg:-$LIBC}" > /dev/null ||
	{ note "sym store add failed"; exit 1; }
start_symd_node node1 --quiet || exit 1
haproxy_cfg "check inter 1s" "$NODE_PORT" > "$W/haproxy.cfg"
start_haproxy "$W/haproxy.cfg" || exit 1
proxy_wait_up 1 || { note "haproxy never saw symd up"; exit 1; }

python3 - "$LIBC" "$id" "$NODE_PORT" "${PROXY_URL##*:}" "$PAIRS" "$SEED" \
	> "$W/pairs" <<'EOF' || { note "a request failed"; exit 1; }
import http.client, json, random, subprocess, sys, time
path, bid, dport, pport, pairs, seed = sys.argv[1:7]
out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path],
                     capture_output=True, text=True, check=True).stdout
addrs = [l.split(":", 1)[0].strip() for l in out.splitlines()
         if "\t" in l and l.strip().split(":", 1)[0].isalnum()]
addrs = [a for a in addrs if all(c in "0123456789abcdef" for c in a)]
random.Random(int(seed)).shuffle(addrs)
body = json.dumps({"addresses": ["0x" + a for a in addrs[:1000]]}).encode()
conns = {"direct": http.client.HTTPConnection("127.0.0.1", int(dport)),
         "proxy": http.client.HTTPConnection("127.0.0.1", int(pport))}
def ask(side):
    c = conns[side]
    t = time.perf_counter()
    c.request("POST", "/v1/symbolize/" + bid, body,
              {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    dt = time.perf_counter() - t
    if r.status != 200 or json.loads(data)["modules"][0]["status"] != "ok":
        sys.exit("HTTP %d" % r.status)
    return dt
for i in range(50 + int(pairs)):
    order = ("direct", "proxy") if i % 2 else ("proxy", "direct")
    t = {s: ask(s) for s in order}
    if i >= 50:
        print("%.6f %.6f" % (t["direct"], t["proxy"]))
EOF

# pct P FILE COLUMN: the P-th percentile (nearest rank) of a column, ms.
pct() {
	awk -v c="$3" '{ print $c * 1000 }' "$2" | sort -n |
		awk -v p="$1" '{ v[NR] = $1 } END {
			i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1
			printf "%.3f", v[i] }'
}
awk '{ print $1, $2, $2 - $1 }' "$W/pairs" > "$W/pairs3"
D50=$(pct 50 "$W/pairs3" 1) D99=$(pct 99 "$W/pairs3" 1)
P50=$(pct 50 "$W/pairs3" 2) P99=$(pct 99 "$W/pairs3" 2)
A50=$(pct 50 "$W/pairs3" 3) A99=$(pct 99 "$W/pairs3" 3)
GOAL=$(awk -v a="$A50" 'BEGIN { print (a <= 1) ? "met" : "not met" }')
{
	echo "$HEADING"
	echo
	echo "One symd with libc's table, warm; HAProxy 2.6 with" \
		"docs/cluster/haproxy.cfg in front of it. $PAIRS pairs of the" \
		"same POST /v1/symbolize/<id> of 1,000 unsorted libc addresses," \
		"direct and through the proxy, order alternating, each on its own" \
		"keep-alive connection. Host: $(nproc) cores, load average" \
		"$(cut -d' ' -f1-3 /proc/loadavg) at the end."
	echo
	echo "| | p50 ms | p99 ms |"
	echo "|---|---|---|"
	echo "| direct to symd | $D50 | $D99 |"
	echo "| through HAProxy | $P50 | $P99 |"
	echo "| added by the hop (per pair) | $A50 | $A99 |"
	echo
	echo "Goal (issue 22): median added latency <= 1 ms: $GOAL."
	echo
} > "$W/report.md"
publish "$HEADING" "$W/report.md" "$OUT/report.md"
exit 0
