#!/bin/sh
# A full disk while a table is stored is -ENOSPC, as docs/store.md says,
# not EIO (issue 24, item 9): LMDB reports the short write that fills
# the disk as EIO, and the store checks the file system.  The store is
# on a small tmpfs (root only), which the test unmounts.  The store
# still verifies after the failure.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl python3 objdump

[ "$(id -u)" = 0 ] || plan_skip "needs root to mount a tmpfs"
exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
dbg="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
[ -r "$dbg" ] || plan_skip "no debug file for $id"
addr=0x$(objdump -d "$exe" | awk '/<main>:/{print $1; exit}')
M=$T/mnt
mkdir "$M"
mount -t tmpfs -o size=64k tmpfs "$M" 2>/dev/null ||
	plan_skip "cannot mount a tmpfs"
at_exit "umount '$M' 2>/dev/null"

plan 7

"$SYM" store add --store "$M/s" "$exe" > "$T/out" 2> "$T/err"
r=$?
ok "sym store add on a full disk fails" test "$r" != 0
ok "with 'No space left on device'" grep -q 'No space left on device' "$T/err" ||
	sed 's/^/# /' "$T/err"
ok "not an I/O error" sh -c "! grep -q 'Input/output error' '$T/err'"
"$SYM" store verify --store "$M/s" > "$T/verify" 2>&1
ok "the store still verifies" test $? = 0
umount "$M"

# symd: the upload fits, its conversion's table does not.
mount -t tmpfs -o size=256k tmpfs "$M" || exit 1
echo t > "$T/token"
start_symd --upload-token-file "$T/token" --store "$M/symd" || exit 1
is "upload: 201" "$(http_status -X PUT -H 'Authorization: Bearer t' \
	--data-binary @"$dbg" "$SYMD_URL/v1/debuginfo/$id")" 201
curl -sS -X POST -d "{\"addresses\":[\"$addr\"],\"wait_ms\":10000}" \
	"$SYMD_URL/v1/symbolize/$id" > "$T/sym"
ok "the conversion fails with 'No space left on device'" \
	grep -q '"error":"conversion failed: No space left on device"' "$T/sym" ||
	sed 's/^/# /' "$T/sym"
stop_symd
"$SYM" store verify --store "$M/symd" > "$T/verify" 2>&1
ok "symd's store still verifies" test $? = 0
done_testing
