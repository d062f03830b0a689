#!/bin/sh
# The object store as symd's durable tier, against real Ceph (ceph-mon,
# ceph-osd on MemStore, radosgw) on 127.0.0.1, started and stopped here:
# two symd nodes share a bucket; an upload through node A lands in the
# bucket with the table A converts; node B, with an empty store, answers
# by downloading that table (it converts nothing: its /metrics say so);
# A killed, B still answers; a corrupt table in the bucket fails its
# checks on B, is discarded and rebuilt from the debug file; radosgw
# stopped, B still answers warm lookups and refuses uploads with 503,
# Retry-After and a JSON error; radosgw back, the upload goes through.
# The keys appear in no log and no /metrics.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/ceph-lib.sh"
need curl python3 bc ceph-mon ceph-osd radosgw radosgw-admin ceph-authtool \
	monmaptool llvm-symbolizer

exe1=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
exe2=$(fixture gcc-O2-d5-c)
id1=$("$SYM" buildid "$exe1" | cut -d' ' -f1)
id2=$("$SYM" buildid "$exe2" | cut -d' ' -f1)
dbgof() {
	echo "$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$1" | cut -c1-2)/$(echo "$1" | cut -c3-).debug"
}
dbg1=$(dbgof "$id1")
# An unstripped binary is its own debug file.
dbg2=$exe2
[ -r "$dbg1" ] || plan_skip "no debug file for $exe1"

plan 40

start_ceph_tap
is "the bucket is created" \
	"$(ceph_s3 -o /dev/null -w '%{http_code}' -X PUT "$CEPH_RGW_URL/symd-test")" 200

export AWS_ENDPOINT_URL="$CEPH_RGW_URL" AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID="$CEPH_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$CEPH_SECRET_KEY"
echo secret-token > "$T/token"

# start_node NAME: a symd with its own empty store on the shared bucket;
# sets NAME_URL and NAME_PID.
start_node() {
	"$SYMD" --listen 127.0.0.1:0 --store "$T/store-$1" \
		--upload-token-file "$T/token" \
		--object-store s3://symd-test/cluster --debuginfod-urls '' \
		> "$T/$1.out" 2>> "$T/$1.err" &
	_pid=$!
	eval "$1_PID=$_pid"
	_p=$(symd_port "$T/$1.out" "$_pid")
	[ -n "$_p" ] || { sed 's/^/#   /' "$T/$1.err"; return 1; }
	eval "$1_URL=http://127.0.0.1:$_p"
}
at_exit 'for p in $A_PID $B_PID; do kill -9 $p 2>/dev/null; done'

ok "node A starts with --object-store" start_node A
ok "node B starts with --object-store and an empty store" start_node B

# Addresses: every function symbol of the fixture.
nm --defined-only "$exe1" | awk '$2 ~ /^[tT]$/ { print "0x" $1 }' | head -20 > "$T/addrs"
addrs=$(paste -sd, "$T/addrs" | sed 's/\(0x[0-9a-f]*\)/"\1"/g')

# sym_q URL ID: symbolize the addresses; the answer's JSON.
sym_q() {
	curl -sS -m 60 -X POST -d "{\"addresses\":[$addrs],\"wait_ms\":30000}" \
		"$1/v1/symbolize/$2"
}
# functions: the outermost function of each address, one per line, its
# parameter list and a .cold/.part suffix cut (norm does it to
# llvm-symbolizer's, which names it after the symbol table).
functions() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
m = d["modules"][0]
assert m["status"] == "ok", m
for f in m["frames"]:
    print(f[-1].get("function", "??") if f else "??")' | norm
}
norm() {
	sed -e 's/(.*$//' -e 's/\.\(cold\|part\.[0-9]*\|isra\.[0-9]*\|constprop\.[0-9]*\)$//'
}
# peer FILE ADDRS: llvm-symbolizer's outermost names, normalized.
peer() {
	llvm-symbolizer --obj="$1" --no-inlines -C < "$2" | awk 'NR % 3 == 1' | norm
}
metric() {
	curl -sS -m 10 "$1/metrics" | awk -v k="$2" '$1 == k { print $2 }'
}
up() {
	curl -s -o "$T/up.out" -D "$T/up.hdr" -w '%{http_code}' -m 60 \
		-H "Authorization: Bearer secret-token" -T "$2" \
		"$1/v1/debuginfo/$3"
}

is "upload of a debug file through A: 201" "$(up "$A_URL" "$dbg1" "$id1")" 201
is "the debug file is in the bucket" \
	"$(ceph_s3 -o /dev/null -w '%{http_code}' -I "$CEPH_RGW_URL/symd-test/cluster/debuginfo/$id1")" 200
sym_q "$A_URL" "$id1" | functions > "$T/a.fn"
peer "$exe1" "$T/addrs" > "$T/llvm.fn"
same_file "A's answers name the functions llvm-symbolizer names" "$T/llvm.fn" "$T/a.fn"
conv=$(metric "$A_URL" 'symd_conversions_total{result="ok"}')
is "A converted the table once" "$conv" 1
tkey=$(ceph_s3 "$CEPH_RGW_URL/symd-test?list-type=2&prefix=cluster%2Ftables%2F$id1" |
	sed -n 's/.*<Key>\([^<]*\)<\/Key>.*/\1/p')
ok "A wrote the table to the bucket ($tkey)" test -n "$tkey"

# --- node B: an empty store reads the table through -----------------------
t0=$(date +%s.%N)
sym_q "$B_URL" "$id1" > "$T/b.json"
t1=$(date +%s.%N)
functions < "$T/b.json" > "$T/b.fn"
same_file "B answers as A does" "$T/a.fn" "$T/b.fn"
echo "# B's first answer (download of the table, cold): $(echo "$t1 - $t0" | bc) s"
is "B converted nothing" "$(metric "$B_URL" 'symd_conversions_total{result="ok"}')" 0
is "B downloaded one table" \
	"$(metric "$B_URL" 'symd_objstore_requests_total{kind="table",op="get",result="ok"}')" 1
is "B downloaded no debug file" \
	"$(metric "$B_URL" 'symd_objstore_requests_total{kind="debuginfo",op="get",result="ok"}')" 0

# --- a corrupt table in the bucket: discarded and rebuilt ------------------
is "upload of a second debug file through A: 201" "$(up "$A_URL" "$dbg2" "$id2")" 201
sym_q "$A_URL" "$id2" > /dev/null
tkey2=$(echo "$tkey" | sed "s/$id1/$id2/")
ceph_s3 -o "$T/t2" "$CEPH_RGW_URL/symd-test/$tkey2"
python3 - "$T/t2" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
for i in range(len(b) // 2, len(b) // 2 + 64):
    b[i] ^= 0x5a
open(p, 'wb').write(b)
EOF
# The damaged copy keeps the table's x-amz-meta-sym-gen (the generation
# of the files it was built from): without it, B would not take it at all.
gen2=$(ceph_s3 -s -o /dev/null -D - -I "$CEPH_RGW_URL/symd-test/$tkey2" |
	tr -d '\r' | sed -n 's/^[Xx]-[Aa]mz-[Mm]eta-[Ss]ym-[Gg]en: //p')
is "the table in the bucket is overwritten with a damaged copy" \
	"$(ceph_s3 -o /dev/null -w '%{http_code}' -H "x-amz-meta-sym-gen: $gen2" \
	-T "$T/t2" "$CEPH_RGW_URL/symd-test/$tkey2")" 200
nm --defined-only "$exe2" | awk '$2 ~ /^[tT]$/ { print "0x" $1 }' | head -20 > "$T/addrs2"
addrs=$(paste -sd, "$T/addrs2" | sed 's/\(0x[0-9a-f]*\)/"\1"/g')
sym_q "$B_URL" "$id2" | functions > "$T/b2.fn"
peer "$exe2" "$T/addrs2" > "$T/llvm2.fn"
same_file "B answers right despite the damaged table" "$T/llvm2.fn" "$T/b2.fn"
is "B counted the table as corrupt" \
	"$(metric "$B_URL" symd_objstore_corrupt_tables_total)" 1
is "B rebuilt it from the debug file (one conversion)" \
	"$(metric "$B_URL" 'symd_conversions_total{result="ok"}')" 1
ceph_s3 -o "$T/t2.new" "$CEPH_RGW_URL/symd-test/$tkey2"
ok "B wrote the rebuilt table back over the damaged one" \
	sh -c "! cmp -s '$T/t2' '$T/t2.new'"

# --- A dies: B still answers -----------------------------------------------
kill -9 "$A_PID"; wait "$A_PID" 2>/dev/null; A_PID=
addrs=$(paste -sd, "$T/addrs" | sed 's/\(0x[0-9a-f]*\)/"\1"/g')
sym_q "$B_URL" "$id1" | functions > "$T/b.fn2"
same_file "A killed: B still answers" "$T/a.fn" "$T/b.fn2"

# --- radosgw down ------------------------------------------------------------
stop_rgw
sym_q "$B_URL" "$id1" | functions > "$T/b.fn3"
same_file "radosgw stopped: B answers warm lookups from its store" "$T/a.fn" "$T/b.fn3"
exe3=$(fixture clang-O2-d3-c)
id3=$("$SYM" buildid "$exe3" | cut -d' ' -f1)
is "radosgw stopped: an upload gets 503" "$(up "$B_URL" "$exe3" "$id3")" 503
ok "... with Retry-After" grep -qi '^Retry-After: [1-9]' "$T/up.hdr"
ok "... and a JSON error with retry_after_ms" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "object store" in d["error"] and d["retry_after_ms"] > 0, d' "$T/up.out"
# A HEAD of a file B lacks asks the bucket (t2230); down, it is 503, so
# sym upload sends the file and gets the upload's 503.
is "... and B does not claim to have it (503: the bucket cannot say)" \
	"$(http_status -I "$B_URL/v1/debuginfo/$id3")" 503
del() {
	curl -s -o "$T/del.out" -D "$T/del.hdr" -w '%{http_code}' -m 60 -X DELETE \
		-H "Authorization: Bearer secret-token" "$1/v1/debuginfo/$2"
}
is "radosgw stopped: a DELETE gets 503" "$(del "$B_URL" "$id2")" 503
ok "... with Retry-After" grep -qi '^Retry-After: [1-9]' "$T/del.hdr"

# --- radosgw back: the upload goes through -----------------------------------
ok "radosgw starts again" start_rgw
is "radosgw back: the upload is stored (201)" "$(up "$B_URL" "$exe3" "$id3")" 201
is "... in the bucket" \
	"$(ceph_s3 -o /dev/null -w '%{http_code}' -I "$CEPH_RGW_URL/symd-test/cluster/debuginfo/$id3")" 200

is "radosgw back: the DELETE goes through (204)" "$(del "$B_URL" "$id2")" 204
is "... the build ID's objects have left the bucket" \
	"$(ceph_s3 -o /dev/null -w '%{http_code}' -I "$CEPH_RGW_URL/symd-test/$tkey2") $(ceph_s3 -o /dev/null -w '%{http_code}' -I "$CEPH_RGW_URL/symd-test/cluster/debuginfo/$id2")" "404 404"
is "a DELETE of a build ID neither B nor the bucket has: 404" \
	"$(del "$B_URL" 00112233445566778899aabbccddeeff00112233)" 404

# --- node C, an empty store: the debuginfod routes read through ---------------
# 5 MiB parts from 8 MiB on, set in its config file.
printf 'part_size = 5M\nmultipart_min = 8M\n' > "$T/s3.conf"
"$SYMD" --listen 127.0.0.1:0 --store "$T/store-C" --workers 1 \
	--upload-token-file "$T/token" --object-store s3://symd-test/cluster \
	--object-store-config "$T/s3.conf" > "$T/C.out" 2>> "$T/C.err" &
C_PID=$!
at_exit 'kill -9 $C_PID 2>/dev/null'
_p=$(symd_port "$T/C.out" "$C_PID")
C_URL=http://127.0.0.1:$_p
curl -sS -m 60 -o "$T/c.debug" "$C_URL/buildid/$id1/debuginfo"
ok "C serves /buildid/<id>/debuginfo from the bucket, byte for byte" cmp "$dbg1" "$T/c.debug"
is "... and a build ID the bucket lacks is 404" \
	"$(http_status "$C_URL/buildid/00112233445566778899aabbccddeeff00112233/executable")" 404

# --- a large upload goes as a multipart upload ------------------------------
big=/usr/bin/python3.11d
if [ -r "$big" ]; then
	bid=$("$SYM" buildid "$big" | cut -d' ' -f1)
	is "a $(stat -c %s "$big")-byte upload through 5 MiB parts: 201" "$(up "$C_URL" "$big" "$bid")" 201
	ceph_s3 -o "$T/big.got" "$CEPH_RGW_URL/symd-test/cluster/debuginfo/$bid"
	ok "... the object is the file, byte for byte" cmp "$big" "$T/big.got"
	ok "... and went in parts (its ETag is a multipart one)" sh -c \
		"curl -sS -I -m 30 --aws-sigv4 aws:amz:us-east-1:s3 --user '$CEPH_ACCESS_KEY:$CEPH_SECRET_KEY' -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' '$CEPH_RGW_URL/symd-test/cluster/debuginfo/$bid' | grep -qi '^etag: \"[0-9a-f]*-5\"'"
	kill -9 $C_PID 2>/dev/null; wait $C_PID 2>/dev/null
else
	skip "python3.11-dbg not installed: no file large enough for parts"
	skip "python3.11-dbg not installed"
	skip "python3.11-dbg not installed"
fi

# --- secrets -------------------------------------------------------------------
curl -sS "$B_URL/metrics" > "$T/metrics.txt"
ok "the secret key is in no log, no output and no /metrics" \
	sh -c "! grep -rqF '$CEPH_SECRET_KEY' '$T/A.err' '$T/B.err' '$T/A.out' '$T/B.out' '$T/C.err' '$T/metrics.txt' '$T/up.out'"
ok "the start line names the bucket and the endpoint" \
	grep -q "object_store=s3://symd-test/cluster object_store_endpoint=$CEPH_RGW_URL" "$T/B.err"
grep -h objstore "$T/B.err" | head -5 | sed 's/^/# B: /'
