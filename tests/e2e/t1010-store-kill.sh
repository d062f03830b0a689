#!/bin/bash
# t1010-store-kill.sh - SIGKILL at any point while a table is written
# leaves a store that opens, passes `sym store verify`, and answers every
# lookup it answered before.
#
# A small table is stored first (the "before" answers).  Then, 20 times,
# `sym store add BIG` starts (python3.11d, or libc with its debug file:
# about 0.3 s, in small chunks so that a put is many write transactions)
# and is killed with SIGKILL after a random delay.  After each kill the
# store must verify and the small table must answer as before.  At the
# end BIG is added fully, and its lookups must equal `sym addr2line
# --no-cache`.
. "$(dirname "$0")/lib/lib.sh"
need python3 nm shuf
[ -x "$SYM" ] || plan_skip "$SYM not built"

BIG=
for f in /usr/bin/python3.11d /lib/x86_64-linux-gnu/libc.so.6; do
	[ -f "$f" ] || continue
	bid=$("$SYM" buildid "$f" 2>/dev/null | cut -d' ' -f1)
	[ -n "$bid" ] || continue
	# libc needs its debug file (libc6-dbg) to be slow enough.
	if [ "$f" = /usr/bin/python3.11d ] ||
	   [ -f "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ]; then
		BIG=$f
		break
	fi
done
[ -n "$BIG" ] || plan_skip "neither python3.11d nor libc with libc6-dbg"
ROUNDS=${SYM_KILL_ROUNDS:-20}
plan $((2 * ROUNDS + 5))

SMALL=$(fixture gcc-O2-d5-c) || { echo "Bail out! fixtures"; exit 1; }
ST=$T/st
cd "$T" || exit 1

# Instruction-ish addresses: each function's start and a few bytes in.
addrs_of() {
	nm --defined-only "$1" 2>/dev/null | awk '$2 ~ /^[Tt]$/ { print $1 }' |
		sort -u | shuf -n "$2" --random-source="$1" |
		python3 -c '
import sys
print(" ".join("0x%x" % (int(l, 16) + d) for l in sys.stdin for d in (0, 5)))'
}
AS=$(addrs_of "$SMALL" 1000)
AB=$(addrs_of "$BIG" 1500)
BS=$("$SYM" buildid "$SMALL" | cut -d' ' -f1)
BB=$("$SYM" buildid "$BIG" | cut -d' ' -f1)

"$SYM" store add --store "$ST" "$SMALL" > /dev/null
# shellcheck disable=SC2086
"$SYM" lookup --store "$ST" -a -f -i "$BS" $AS > before.out 2>&1
ok "the small table answers before the kills" test -s before.out

# How long a full add of BIG takes, to spread the kills over it.
t0=$(date +%s%N)
"$SYM" store add --store "$T/timing" --chunk-size 256K "$BIG" > /dev/null 2>&1
dur_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$dur_ms" -lt 50 ] && dur_ms=50
echo "# a full add of $BIG takes $dur_ms ms"

killed=0
for i in $(seq "$ROUNDS"); do
	delay_ms=$((RANDOM % (dur_ms + dur_ms / 4 + 1)))
	"$SYM" store add --store "$ST" --chunk-size 256K "$BIG" \
		> /dev/null 2>&1 &
	pid=$!
	sleep "$(printf '0.%03d' "$delay_ms")"
	kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
	wait "$pid" 2>/dev/null
	"$SYM" store verify --store "$ST" > verify.out 2>&1
	v=$?
	_tap "$v" "round $i (kill after $delay_ms ms): store verifies"
	[ "$v" = 0 ] || sed 's/^/#   /' verify.out | head -10
	# shellcheck disable=SC2086
	"$SYM" lookup --store "$ST" -a -f -i "$BS" $AS > after.out 2>&1
	ok "round $i: the small table answers as before" \
		cmp before.out after.out
done
echo "# $killed of $ROUNDS adds were killed before they finished"

# A half-written BIG never answers: it is either absent or complete.
# shellcheck disable=SC2086
"$SYM" addr2line --no-cache -e "$BIG" -a -f -i $AB > big.nc 2>&1
# shellcheck disable=SC2086
"$SYM" lookup --store "$ST" -a -f -i "$BB" $AB > big.mid 2> big.mid.err
rc=$?
ok "after the kills BIG is absent (exit 1) or complete" \
	sh -c "[ $rc = 1 ] && [ ! -s big.mid ] || cmp -s big.nc big.mid"

"$SYM" store add --store "$ST" --chunk-size 256K "$BIG" > add.out 2>&1
ok "BIG is added fully" grep -q "^$BB  $BIG  " add.out
# shellcheck disable=SC2086
"$SYM" lookup --store "$ST" -a -f -i "$BB" $AB > big.lk 2>&1
ok "BIG's lookups equal addr2line --no-cache" cmp big.nc big.lk
"$SYM" store gc --store "$ST" > /dev/null 2>&1
"$SYM" store verify --store "$ST" > /dev/null 2>&1
is "after gc the store still verifies" "$?" 0

done_testing
