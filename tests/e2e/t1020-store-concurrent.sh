#!/bin/sh
# Processes sharing a store do not convert the same build ID twice: the
# first takes the build ID's lock (sym_store_lock(), a flock), the others
# wait and then read its table.  A holder killed with SIGKILL releases the
# lock at once: no stale marker, no waiting out a timeout.
. "$(dirname "$0")/lib/lib.sh"

F=/usr/bin/python3.11d
[ -r "$F" ] || plan_skip "no $F (python3.11-dbg)"
plan 8

# --lazy=never: a few addresses of a file this large are otherwise
# answered without building (or storing) the table (docs/sym.1).
S=$T/store
printf '0x%x\n' 4845782 > "$T/addr"
"$SYM" addr2line --lazy=never --stats --store "$S" -f -e "$F" < "$T/addr" > "$T/o1" 2> "$T/e1" &
p1=$!
"$SYM" addr2line --lazy=never --stats --store "$S" -f -e "$F" < "$T/addr" > "$T/o2" 2> "$T/e2" &
p2=$!
wait "$p1"; r1=$?
wait "$p2"; r2=$?
is "both processes succeed" "$r1 $r2" "0 0"
is "the same answers" "$(cat "$T/o1")" "$(cat "$T/o2")"
is "exactly one built the table" \
	"$(cat "$T/e1" "$T/e2" | grep -c 'table from parsing')" 1
is "the other waited for it and read it from the store" \
	"$(cat "$T/e1" "$T/e2" | grep -c 'table from cache')" 1
ok "the wait is reported" grep -q 'waited .* ms for another process' "$T/e1" "$T/e2"
is "no lock file is left" "$(ls "$S/locks" 2>/dev/null)" ""

# A holder killed mid-conversion: the next process does not wait for it.
S2=$T/store2
"$SYM" store add --store "$S2" "$F" > /dev/null 2>&1 &
holder=$!
sleep 0.15
kill -9 "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
start=$(date +%s)
"$SYM" addr2line --lazy=never --stats --store "$S2" -f -e "$F" < "$T/addr" > "$T/o3" 2> "$T/e3"
is "after the holder was killed, the next one answers" "$(cat "$T/o3")" "$(cat "$T/o1")"
ok "and did not wait out a timeout" test $(( $(date +%s) - start )) -lt 30
done_testing
