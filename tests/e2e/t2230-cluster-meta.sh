#!/bin/sh
# Issue 22's upload metadata, table invalidation and a wiped store, on the
# real components: three symd nodes behind a real HAProxy
# (docs/cluster/haproxy.cfg) sharing a bucket on real Ceph (ceph-mon,
# ceph-osd on MemStore, radosgw), all on 127.0.0.1, no debuginfod
# upstream.  Nodes revalidate their tables every second
# (--object-store-revalidate 1).
#  1. 20 build IDs uploaded through the proxy, all answered right;
#  2. the bucket's metadata decides quality: a node with nothing of a
#     build ID answers HEAD from the bucket (quality, uploader, time) and
#     refuses with 409 a worse or equal upload of it; ?force=1 takes it;
#  3. invalidation: a symtab-only file, its table on every node; then the
#     DWARF file through the proxy: every node answers from the new table
#     within the revalidation bound, the non-owners by downloading it
#     (not one conversion);
#  4. a node's store wiped (rm -rf STORE/*) while it runs: every answer
#     still right, through the proxy and from that node; a new upload to
#     it is converted and answered; a wiped debug file is read back from
#     the bucket; restarted on the wiped directory, it answers right.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/ceph-lib.sh"
. "$(dirname "$0")/lib/proxy-lib.sh"
need curl python3 haproxy objdump objcopy awk ceph-mon ceph-osd radosgw \
	radosgw-admin ceph-authtool monmaptool

CHECK="python3 $SYM_ROOT/tests/e2e/lib/symd_check.py"
"$SYM_ROOT/fixtures/build.sh" >&2 || plan_skip "cannot build the fixtures"
N=20
ls "$SYM_ROOT/fixtures/build" | grep -E '^(gcc|clang)-O[0-3]-d[45]-(c|cxx)$' |
	head -n $((N + 3)) > "$T/names"
[ "$(wc -l < "$T/names")" = $((N + 3)) ] || plan_skip "fewer than $((N + 3)) fixtures"
mkdir "$T/files" "$T/want" "$T/want2"
while read -r f; do
	cp "$SYM_ROOT/fixtures/build/$f" "$T/files/$f"
	echo "$("$SYM" buildid "$T/files/$f" | cut -d' ' -f1) $T/files/$f"
done < "$T/names" > "$T/all"
[ "$(cut -d' ' -f1 "$T/all" | sort -u | wc -l)" = $((N + 3)) ] ||
	plan_skip "the fixtures' build IDs are not distinct"
head -n $N "$T/all" > "$T/ids"
# X: the quality checks; Z: the invalidation; W: uploaded after the wipe.
set -- $(sed -n "$((N + 1))p" "$T/all"); xid=$1 xexe=$2
set -- $(sed -n "$((N + 2))p" "$T/all"); zid=$1 zexe=$2
set -- $(sed -n "$((N + 3))p" "$T/all"); wid=$1 wexe=$2
objcopy --strip-debug "$xexe" "$T/x.symtab"	# same build ID, .symtab only
objcopy --strip-debug "$zexe" "$T/z.symtab"
echo "$zid $T/z.symtab" > "$T/z.old"
echo "$zid $zexe" > "$T/z.new"
echo "$wid $wexe" > "$T/w"

plan 32

start_ceph_tap
B=symd-meta
ceph_s3 -o /dev/null -X PUT "$CEPH_RGW_URL/$B"
export AWS_ENDPOINT_URL="$CEPH_RGW_URL" AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID="$CEPH_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$CEPH_SECRET_KEY"
O="$CEPH_RGW_URL/$B/t"

echo secret > "$T/token"
A="Authorization: Bearer secret"
node_args="--upload-token-file $T/token --object-store s3://$B/t
	--object-store-revalidate 1 --debuginfod-urls= --quiet"
# shellcheck disable=SC2086
start_cluster $node_args ||
	{ echo "Bail out! the cluster did not start"; exit 1; }

conv() { node_conv "$1"; }
url() { node_url "$1"; }
# each_node_right LABEL IDS WANT: one TAP point, every "BUILDID FILE" line
# of IDS right on each node asked directly.
each_node_right() {
	_st=0
	for _n in 1 2 3; do
		$CHECK compare-many "$(url $_n)" "$2" "$3" 100 > "$T/en$_n" 2>&1 || _st=1
		sed 's/^/# /' "$T/en$_n"
	done
	is "$1" "$_st" 0
}
# hdr FILE NAME: a header's value in a curl -D file.
hdr() { tr -d '\r' < "$1" | awk -v n="$2" 'tolower($1) == tolower(n) ":" { sub(/^[^:]*: */, ""); print }'; }
# ometa KEY NAME: the bucket object's x-amz-meta-NAME.
# like LABEL VALUE ERE: one TAP point, VALUE matches ERE.
like() { ok "$1" sh -c 'printf "%s\n" "$1" | grep -Eq "$2"' _ "$2" "$3"; }
ometa() {
	ceph_s3 -s -o /dev/null -D "$T/om.hdr" -I "$O/$1"
	hdr "$T/om.hdr" "x-amz-meta-$2"
}

# --- 1. 20 uploads through the proxy ------------------------------------------
# shellcheck disable=SC2046
"$SYM" upload --server "$P" --token-file "$T/token" $(cut -d' ' -f2 "$T/ids") \
	> "$T/up" 2>&1
is "sym upload of $N files through the proxy: status 0" "$?" 0
proxy_all_right "first answers"

# --- 2. quality decided on the bucket's metadata -------------------------------
is "DWARF file of X through the proxy: 201" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "$A" -T "$xexe" "$P/v1/debuginfo/$xid")" 201
is "the bucket's object says sym-quality dwarf" "$(ometa "debuginfo/$xid" sym-quality)" dwarf
# A node that holds nothing of X answers HEAD from the bucket.
cold= cold2=
for n in 1 2 3; do
	curl -s -o /dev/null -D "$T/h$n" -I "$(url $n)/v1/debuginfo/$xid"
	[ "$(hdr "$T/h$n" X-Sym-Source)" = object-store ] &&
		{ [ -n "$cold" ] && cold2=$n; cold=${cold:-$n}; }
done
ok "a node without X's file answers its HEAD from the bucket (node ${cold:-none})" \
	test -n "$cold"
cold=${cold:-1}
C=$(url "$cold")
curl -s -o /dev/null -D "$T/hc" -w '%{http_code}\n' -I "$C/v1/debuginfo/$xid" > "$T/hc.code"
is "... 200, X-Sym-Quality: dwarf, its size" \
	"$(cat "$T/hc.code") $(hdr "$T/hc" X-Sym-Quality) $(hdr "$T/hc" X-DEBUGINFOD-SIZE)" \
	"200 dwarf $(wc -c < "$xexe" | tr -d ' ')"
upby=$(hdr "$T/hc" X-Sym-Uploader) upat=$(hdr "$T/hc" X-Sym-Uploaded)
like "... who uploaded it: the proxy's address as the owner saw it ($upby)" \
	"$upby" '^127\.0\.0\.1:[0-9]+$'
is "... and the client's address HAProxy forwarded (option forwardfor)" \
	"$(hdr "$T/hc" X-Sym-Uploader-Forwarded-For)" 127.0.0.1
like "... and when ($upat)" "$upat" \
	'^20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z$'
code=$(curl -s -o "$T/b409" -D "$T/h409" -w '%{http_code}' -H "$A" \
	-T "$T/x.symtab" "$C/v1/debuginfo/$xid")
is "a symtab-only X to that node (empty of X): 409 from the bucket's metadata" "$code" 409
is "... with the reason in JSON" "$(cat "$T/b409")" \
	"{\"error\":\"the object store has dwarf for build ID $xid and this debug file has symtab: it would not improve it (?force=1, or sym upload --force, stores it anyway)\"}"
is "... and X-Sym-Quality: dwarf" "$(hdr "$T/h409" X-Sym-Quality)" dwarf
is "an equal file (the same DWARF) to it: 409" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "$A" -T "$xexe" "$C/v1/debuginfo/$xid")" 409
is "the bucket still holds the DWARF file" "$(ometa "debuginfo/$xid" sym-quality)" dwarf
is "?force=1 takes the symtab-only file: 201" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "$A" -T "$T/x.symtab" "$C/v1/debuginfo/$xid?force=1")" 201
is "... and the bucket's metadata says symtab" "$(ometa "debuginfo/$xid" sym-quality)" symtab
# The other node without X: GET /v1/debuginfo reads the bucket's through.
curl -s -o "$T/xget" "$(url "${cold2:-$cold}")/v1/debuginfo/$xid"
ok "GET /v1/debuginfo/X on the other node without it (node ${cold2:-none}): the bucket's file" \
	sh -c 'test -n "$1" && cmp -s "$2" "$3"' _ "$cold2" "$T/xget" "$T/x.symtab"

# --- 3. a better upload replaces the table on every node ----------------------
is "symtab-only Z through the proxy: 201" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "$A" -T "$T/z.symtab" "$P/v1/debuginfo/$zid")" 201
each_node_right "every node answers Z from its symtab-only table" "$T/z.old" "$T/want"
c1=$(( $(conv 1) + $(conv 2) + $(conv 3) ))
is "the DWARF Z through the proxy: 201 (better)" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "$A" -T "$zexe" "$P/v1/debuginfo/$zid")" 201
# The owner converts and writes the table back: wait for the bucket's
# table to carry the new files' generation (60 s is a bound, not a race).
tkey=$(ceph_s3 "$CEPH_RGW_URL/$B?list-type=2&prefix=t%2Ftables%2F$zid" |
	sed -n 's/.*<Key>t\/\([^<]*\)<\/Key>.*/\1/p' | head -1)
i=0
while [ -n "$tkey" ] && [ $i -lt 600 ]; do
	g=$(ometa "debuginfo/$zid" sym-gen)
	[ -n "$g" ] && [ "$(ometa "$tkey" sym-gen)" = "d$g.e" ] && break
	sleep 0.1
	i=$((i + 1))
done
is "the owner's new table is in the bucket, marked with the new file's generation" \
	"$(ometa "$tkey" sym-gen)" "d$g.e"
# Every node: the first request after the change may still get the old
# table (it starts the check); within the bound all answer from the new.
python3 - "$T/z.new" "$(url 1)" "$(url 2)" "$(url 3)" <<'EOF' > "$T/conv.time"
import json, sys, time, urllib.request
bid = open(sys.argv[1]).read().split()[0]
t0 = time.monotonic()
left = set(sys.argv[2:])
while left and time.monotonic() - t0 < 60:
    for u in sorted(left):
        req = urllib.request.Request(u + "/v1/symbolize/" + bid,
            data=json.dumps({"addresses": ["0x1000"], "wait_ms": 20000}).encode(),
            method="POST")
        m = json.load(urllib.request.urlopen(req, timeout=60))["modules"][0]
        if m.get("source") == "dwarf":
            left.discard(u)
    time.sleep(0.05)
print("%.2f %d" % (time.monotonic() - t0, len(left)))
EOF
set -- $(cat "$T/conv.time")
echo "# every node answered Z from the DWARF table $1 s after the owner's table was in the bucket"
is "every node moved to the DWARF table (revalidation every 1 s)" "$2" 0
each_node_right "... every frame of Z right on every node" "$T/z.new" "$T/want2"
c2=$(( $(conv 1) + $(conv 2) + $(conv 3) ))
is "one conversion in the cluster for the new file (the owner's)" "$((c2 - c1))" 1

# --- 4. a node's store wiped while it runs -------------------------------------
W=$(url 1)
rm -rf "$T/node1"/*
proxy_all_right "node1's store wiped"
$CHECK compare-many "$W" "$T/ids" "$T/want" 100 > "$T/wiped" 2>&1
st=$?
sed 's/^/# /' "$T/wiped"
is "node1, asked directly for all $N after the wipe: all right" "$st" 0
is "a new upload to the wiped node: 201" "$(curl -s -o /dev/null -w '%{http_code}' \
	-H "$A" -T "$wexe" "$W/v1/debuginfo/$wid")" 201
$CHECK compare-many "$W" "$T/w" "$T/want" 100 > "$T/wc" 2>&1
st=$?
sed 's/^/# /' "$T/wc"
is "... converted and answered right there" "$st" 0
set -- $(head -1 "$T/ids")
curl -s -o "$T/dbg" "$W/buildid/$1/debuginfo"
ok "a wiped debug file is read back from the bucket (/buildid/ID/debuginfo)" \
	cmp -s "$T/dbg" "$(ceph_s3 -s -o "$T/dbg.want" "$O/debuginfo/$1"; echo "$T/dbg.want")"
kill "$PID1"; wait "$PID1" 2>/dev/null
# shellcheck disable=SC2086
start_symd_node node1 $node_args || exit 1
$CHECK compare-many "http://127.0.0.1:$NODE_PORT" "$T/ids" "$T/want" 100 > "$T/rs" 2>&1
st=$?
sed 's/^/# /' "$T/rs"
is "restarted on the wiped directory: all $N right" "$st" 0
for n in 2 3; do curl -s "$(url $n)/metrics" > "$T/metrics$n"; done
curl -s "http://127.0.0.1:$NODE_PORT/metrics" > "$T/metrics1"
! grep -l "$CEPH_SECRET_KEY\|$CEPH_ACCESS_KEY" "$T"/node*.err "$T"/node*.out \
	"$T"/metrics? "$T"/h? "$T"/hc "$T"/b409 "$T"/h409
is "no key in any node's log, /metrics, or the headers and bodies above" "$?" 0

done_testing
