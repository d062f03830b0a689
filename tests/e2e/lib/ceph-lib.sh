# ceph-lib.sh - a one-OSD Ceph cluster with radosgw (S3) on 127.0.0.1 for
# the e2e tests (sourced after lib.sh).
#
#   start_ceph        ceph-mon, ceph-osd (MemStore) and radosgw under
#                     $T/ceph, an S3 user and its keys; sets CEPH_RGW_URL,
#                     CEPH_ACCESS_KEY, CEPH_SECRET_KEY, CEPH_START_S (the
#                     seconds it took); on failure prints why (the
#                     daemons' logs) and returns 1
#   stop_rgw          stop radosgw (kill -9, waited for)
#   start_rgw         start it again on the same port, wait until it answers
#   ceph_s3 ARGS...   curl with SigV4 against radosgw (ARGS: method and
#                     URL and curl options)
#   start_ceph_tap    start_ceph as a TAP point; on failure the logs as
#                     comments, and the test exits
#
# Every daemon is a child of the test, stopped by its PID at exit.  Ports
# are probed free (ceph-mon and radosgw take no port 0) and kept for
# restarts.  Recipe and figures: ../shared/PLATFORM.md, "A single-host
# Ceph object store".

CEPH_PIDS=
at_exit _ceph_stop_all

start_ceph_tap() {
	if ! start_ceph > "$T/ceph.start" 2>&1; then
		sed 's/^/# /' "$T/ceph.start"
		_tap 1 "Ceph (mon, osd on MemStore, radosgw) starts on 127.0.0.1"
		exit 1
	fi
	_tap 0 "Ceph (mon, osd on MemStore, radosgw) starts on 127.0.0.1"
	echo "# ceph started in ${CEPH_START_S} s"
}

_ceph_stop_all() {
	for _p in $CEPH_PIDS; do
		kill -9 "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	CEPH_PIDS=
}

# free_port: debuginfod-lib.sh's.
command -v free_port > /dev/null 2>&1 ||
	. "$SYM_ROOT/tests/e2e/lib/debuginfod-lib.sh"

# _ceph_fail WHAT: say what failed, with the tails of the logs.
_ceph_fail() {
	echo "# ceph: $1"
	for _f in "$CEPH_DIR"/log/*.log "$CEPH_DIR"/*.out; do
		[ -s "$_f" ] || continue
		echo "# --- $_f"
		tail -5 "$_f" | sed 's/^/#   /'
	done
	return 1
}

_ceph() {
	timeout 30 ceph -c "$CEPH_DIR/ceph.conf" "$@"
}

start_ceph() {
	CEPH_DIR=$T/ceph
	_t0=$(date +%s.%N)
	mkdir -p "$CEPH_DIR/mon" "$CEPH_DIR/osd" "$CEPH_DIR/run" \
		"$CEPH_DIR/log" "$CEPH_DIR/rgw"
	CEPH_MON_PORT=$(free_port)
	CEPH_RGW_PORT=$(free_port)
	_fsid=$(python3 -c 'import uuid; print(uuid.uuid4())')
	cat > "$CEPH_DIR/ceph.conf" <<CONF
[global]
fsid = $_fsid
mon host = 127.0.0.1:$CEPH_MON_PORT
mon initial members = a
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 1073741824
ms bind ipv6 = false
run dir = $CEPH_DIR/run
log file = $CEPH_DIR/log/\$name.log
admin socket = $CEPH_DIR/run/\$name.asok
mon data = $CEPH_DIR/mon/\$name
osd data = $CEPH_DIR/osd/\$name
keyring = $CEPH_DIR/\$name.keyring
mon warn on pool no redundancy = false
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
[mon]
keyring = $CEPH_DIR/mon/\$name/keyring
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$CEPH_RGW_PORT
rgw data = $CEPH_DIR/rgw
rgw dns name = 127.0.0.1
CONF
	_c="-c $CEPH_DIR/ceph.conf"
	ceph-authtool --create-keyring "$CEPH_DIR/mon.keyring" --gen-key \
		-n mon. --cap mon 'allow *' > /dev/null &&
	ceph-authtool --create-keyring "$CEPH_DIR/client.admin.keyring" \
		--gen-key -n client.admin --cap mon 'allow *' \
		--cap osd 'allow *' --cap mds 'allow *' \
		--cap mgr 'allow *' > /dev/null &&
	ceph-authtool "$CEPH_DIR/mon.keyring" --import-keyring \
		"$CEPH_DIR/client.admin.keyring" > /dev/null &&
	monmaptool --create --add a "127.0.0.1:$CEPH_MON_PORT" --fsid "$_fsid" \
		"$CEPH_DIR/monmap" > /dev/null &&
	ceph-mon $_c --mkfs -i a --monmap "$CEPH_DIR/monmap" \
		--keyring "$CEPH_DIR/mon.keyring" \
		> "$CEPH_DIR/mkfs.out" 2>&1 ||
		{ _ceph_fail "mon mkfs failed"; return 1; }
	ceph-mon $_c -f -i a > "$CEPH_DIR/mon.out" 2>&1 &
	CEPH_PIDS="$CEPH_PIDS $!"
	_osd=$(_ceph osd create 2>"$CEPH_DIR/osdcreate.out") ||
		{ _ceph_fail "ceph osd create failed"; return 1; }
	mkdir -p "$CEPH_DIR/osd/osd.$_osd"
	ceph-osd $_c -i "$_osd" --mkfs --mkkey --no-mon-config \
		> "$CEPH_DIR/osdmkfs.out" 2>&1 ||
		{ _ceph_fail "osd mkfs failed"; return 1; }
	_ceph auth add "osd.$_osd" osd 'allow *' mon 'allow profile osd' \
		-i "$CEPH_DIR/osd.$_osd.keyring" > /dev/null 2>&1 &&
	_ceph osd crush add-bucket host0 host > /dev/null 2>&1 &&
	_ceph osd crush move host0 root=default > /dev/null 2>&1 &&
	_ceph osd crush add "osd.$_osd" 1.0 host=host0 > /dev/null 2>&1 ||
		{ _ceph_fail "registering the osd failed"; return 1; }
	ceph-osd $_c -f -i "$_osd" > "$CEPH_DIR/osd.out" 2>&1 &
	CEPH_PIDS="$CEPH_PIDS $!"
	_ceph auth get-or-create client.rgw mon 'allow rw' osd 'allow rwx' \
		> "$CEPH_DIR/client.rgw.keyring" 2>/dev/null ||
		{ _ceph_fail "rgw key failed"; return 1; }
	start_rgw || return 1
	CEPH_ACCESS_KEY=SYMDTESTACCESSKEY0001
	CEPH_SECRET_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(20))')
	timeout 60 radosgw-admin $_c user create --uid=symd \
		--display-name=symd --access-key="$CEPH_ACCESS_KEY" \
		--secret="$CEPH_SECRET_KEY" > "$CEPH_DIR/user.out" 2>&1 ||
		{ _ceph_fail "radosgw-admin user create failed"; return 1; }
	CEPH_START_S=$(echo "$(date +%s.%N) - $_t0" | bc)
}

start_rgw() {
	radosgw -c "$CEPH_DIR/ceph.conf" -f -n client.rgw \
		> "$CEPH_DIR/rgw.out" 2>&1 &
	CEPH_RGW_PID=$!
	CEPH_PIDS="$CEPH_PIDS $CEPH_RGW_PID"
	CEPH_RGW_URL=http://127.0.0.1:$CEPH_RGW_PORT
	_i=0
	# The first start creates radosgw's pools: up to a minute here.
	while [ $_i -lt 1200 ]; do
		_s=$(curl -s -o /dev/null -m 2 -w '%{http_code}' \
			"$CEPH_RGW_URL/" 2>/dev/null)
		[ "$_s" != 000 ] && return 0
		kill -0 "$CEPH_RGW_PID" 2>/dev/null ||
			{ _ceph_fail "radosgw exited"; return 1; }
		sleep 0.1
		_i=$((_i + 1))
	done
	_ceph_fail "radosgw did not answer within 120 s"
}

stop_rgw() {
	kill -9 "$CEPH_RGW_PID" 2>/dev/null
	wait "$CEPH_RGW_PID" 2>/dev/null
	CEPH_PIDS=$(echo " $CEPH_PIDS " | sed "s/ $CEPH_RGW_PID / /")
	CEPH_RGW_PID=
}

ceph_s3() {
	curl -sS -m 30 --aws-sigv4 "aws:amz:us-east-1:s3" \
		--user "$CEPH_ACCESS_KEY:$CEPH_SECRET_KEY" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}
