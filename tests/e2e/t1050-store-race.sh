#!/bin/sh
# Writes are linearizable per build ID (issue 24, item 1): PUT, DELETE and
# the conversion a PUT queues are ordered.  400 rounds of PUT, 0-4 ms,
# DELETE, symbolize: each DELETE after a 201 answers 204, and the entry
# stays gone (no conversion lands after it, no "ok" with empty frames).
# Then PUT and DELETE at once: the entry ends present or gone, never a
# third state, and no PUT fails with "500 storing: ...".  The store
# verifies clean after all of it.  T1050_ROUNDS sets the sequential
# rounds (default 400; a quarter as many at once); `make chaos` runs
# 4,000.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl python3 objdump

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
dbg="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
[ -r "$dbg" ] || plan_skip "no debug file for $id"
addr=0x$(objdump -d "$exe" | awk '/<main>:/{print $1; exit}')
RACE="python3 $SYM_ROOT/tests/e2e/lib/store_race.py"
ROUNDS=${T1050_ROUNDS:-400}

plan 6

echo race-token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1

$RACE seq 127.0.0.1 "$SYMD_PORT" race-token "$id" "$dbg" "$addr" \
	"$ROUNDS" > "$T/seq.out" 2>&1
r=$?
sed -n '/^# /p' "$T/seq.out"
ok "$ROUNDS rounds PUT/DELETE/symbolize: every outcome allowed" test "$r" = 0
[ "$r" = 0 ] ||
	sed -n '/^# /!s/^/# /p' "$T/seq.out"

$RACE par 127.0.0.1 "$SYMD_PORT" race-token "$id" "$dbg" "$addr" \
	$((ROUNDS / 4)) > "$T/par.out" 2>&1
r=$?
sed -n '/^# /p' "$T/par.out"
ok "$((ROUNDS / 4)) rounds of PUT and DELETE at once: present or gone, never a third state" \
	test "$r" = 0
[ "$r" = 0 ] || sed -n '/^# /!s/^/# /p' "$T/par.out"

# Once more, and keep it: the last PUT converts and answers (forced: the
# races may have left the same file there, and an unforced PUT of it is
# a 409).
is "a last upload" "$(http_status -X PUT -H 'Authorization: Bearer race-token' \
	--data-binary @"$dbg" "$SYMD_URL/v1/debuginfo/$id?force=1")" 201
ok "it answers with frames" sh -c "python3 $SYM_ROOT/tests/e2e/lib/symd_check.py status $SYMD_URL $id $addr 5000 | grep -q '^ok .'"
stop_symd
is "symd stopped cleanly" "$SYMD_STATUS" 0
"$SYM" store verify --store "$T/symd-store" > "$T/verify" 2>&1
r=$?
ok "sym store verify is clean" test "$r" = 0
[ "$r" = 0 ] || sed "s/^/# /" "$T/verify"
done_testing
