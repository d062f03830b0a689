#!/bin/sh
# symd's progressive answers for a cold build ID (issue 19): while its
# full table is built, POST /v1/symbolize answers "partial" from the
# symbols alone, then "ok" from a lazy table of the addresses asked, and
# later requests get the full table's frames; the table is converted
# once.  The conversion's steps are held by the SYM_TEST_CONVERT_HOLD
# hook (work.c: $HOLD/<id>.lazy before the lazy table, $HOLD/<id>.full
# before the full one), so nothing here depends on the CPU's speed.
#
# Oracles, whole "frames" compared:
#  - partial = the full table of the same debug file with its DWARF
#    sections removed (symbols alone), from another symd;
#  - lazy (ok while the full table is still held) = the full table's
#    answers, from the same symd once it is stored;
#  - a debug file without .symtab: partial frames are all empty (nothing
#    can be said, nothing wrong), and lazy = full again.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl python3 objcopy nm

exeA=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
exeB=$(fixture gcc-O3-d4-c) || plan_skip "cannot build the fixtures"
debug_of() {
	_id=$("$SYM" buildid "$1" | cut -d' ' -f1)
	echo "$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$_id" | cut -c1-2)/$(echo "$_id" | cut -c3-).debug"
}
idA=$("$SYM" buildid "$exeA" | cut -d' ' -f1)
idB=$("$SYM" buildid "$exeB" | cut -d' ' -f1)
dbgA=$(debug_of "$exeA")
dbgB=$(debug_of "$exeB")
[ -r "$dbgA" ] && [ -r "$dbgB" ] || plan_skip "no debug files of the fixtures"
# (objcopy --strip-debug would drop the STT_FILE symbols too.)
objcopy -R '.debug_*' "$dbgA" "$T/A.symtab" 2> /dev/null ||
	plan_skip "objcopy failed"
objcopy --strip-all --keep-section='.debug_*' "$dbgB" "$T/B.nosym" \
	2> /dev/null || plan_skip "objcopy failed"

# addrs EXE N0 N1: a request body's address list: each function's entry
# and an address inside it, of functions N0 to N1 (nm's order).
addrs() {
	nm -S --defined-only "$1" | python3 -c '
import sys
a, b, out, n = int(sys.argv[1]), int(sys.argv[2]), [], 0
for l in sys.stdin:
    f = l.split()
    if len(f) != 4 or f[2] not in "tTwW":
        continue
    n += 1
    if a <= n <= b:
        s, z = int(f[0], 16), int(f[1], 16)
        out += ["\"%#x\"" % s, "\"%#x\"" % (s + z // 2)]
print(",".join(out))' "$2" "$3"
}
X=$(addrs "$exeA" 1 20)
Y=$(addrs "$exeA" 21 40)
XB=$(addrs "$exeB" 1 20)
[ -n "$X" ] && [ -n "$Y" ] && [ -n "$XB" ] || plan_skip "no function symbols"

# ask ID ADDRS WAIT_MS OUT: POST one module; the body in OUT.
ask() {
	curl -sS --max-time 60 -X POST \
		-d "{\"addresses\":[$2],\"wait_ms\":$3}" \
		"$U/v1/symbolize/$1" > "$4"
}
# field OUT KEY: the module's status or source.
field() {
	python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["modules"][0]; print(m.get(sys.argv[2], ""))' "$1" "$2"
}
# frames OUT: the module's frames, one address a line, keys sorted.
frames() {
	python3 -c 'import json,sys
for f in json.load(open(sys.argv[1]))["modules"][0]["frames"]:
    print(json.dumps(f, sort_keys=True))' "$1"
}
# metric NAME{LABELS}: its value in /metrics.
metric() {
	curl -s --max-time 10 "$U/metrics" | awk -v k="$1" '$1 == k { print $2 }'
}
# poll_status ID ADDRS WANT OUT: ask with wait_ms 0 until the status is
# WANT, 20 s at most.
poll_status() {
	_i=0
	while [ $_i -lt 400 ]; do
		ask "$1" "$2" 0 "$4"
		[ "$(field "$4" status)" = "$3" ] && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}
echo t-token > "$T/token"
auth="Authorization: Bearer t-token"
put() {
	http_status -X PUT -H "$auth" --data-binary @"$2" "$U/v1/debuginfo/$1"
}

plan 27

# --- the oracle: the symbols alone, as a full table -------------------
start_symd --store "$T/oracle-store" --upload-token-file "$T/token" || exit 1
U=$SYMD_URL
is "oracle: upload of A without DWARF" "$(put "$idA" "$T/A.symtab")" 201
poll_status "$idA" "$X" ok "$T/oX" || true
is "oracle: its table is the symbols alone" "$(field "$T/oX" source)" symtab
frames "$T/oX" > "$T/oX.frames"
ask "$idA" "$Y" 0 "$T/oY"
frames "$T/oY" > "$T/oY.frames"
Xl=$(echo "$X" | tr -d '"' | tr ',' ' ')
# shellcheck disable=SC2086
"$SYM" lookup --server "$U" -afiC "$idA" $Xl > "$T/oX.lookup" 2>&1
stop_symd

# --- the progressive answers -----------------------------------------
mkdir "$T/hold"
: > "$T/hold/$idA.lazy"
: > "$T/hold/$idA.full"
: > "$T/hold/$idB.lazy"
: > "$T/hold/$idB.full"
export SYM_TEST_CONVERT_HOLD="$T/hold"
start_symd --workers 1 --upload-token-file "$T/token" || exit 1
unset SYM_TEST_CONVERT_HOLD
U=$SYMD_URL

is "upload of A" "$(put "$idA" "$dbgA")" 201
ok "A answers partial once its symbols are read" \
	poll_status "$idA" "$X" partial "$T/p1"
is "partial: the source is the symbols" "$(field "$T/p1" source)" symtab
frames "$T/p1" > "$T/p1.frames"
same_file "partial frames = the symbols-alone table's, whole" \
	"$T/oX.frames" "$T/p1.frames"
ok "the partial answer names functions (the comparison is not empty)" \
	grep -q '"function"' "$T/p1.frames"
# shellcheck disable=SC2086
"$SYM" lookup --server "$U" --partial -afiC "$idA" $Xl > "$T/p1.lookup" 2>&1
same_file "sym lookup --server --partial prints the symbols-alone answers" \
	"$T/oX.lookup" "$T/p1.lookup"
# shellcheck disable=SC2086
"$SYM" lookup --server "$U" --wait-ms 0 -afiC "$idA" $Xl > "$T/p0.lookup" 2>&1
st=$?
is "sym lookup --server without --partial refuses the partial answer" \
	"$st $(grep -c 'partial after 0 ms' "$T/p0.lookup")" "1 1"
# sym symbolize: a profile with one stack at main's entry (a raw
# profile's frames are the file's addresses).
mainA=$(nm "$exeA" | awk '$3 == "main" { print $1; exit }')
pc=$(printf '%x' "0x$mainA")
printf 'sym-raw 1\nperiod 1000000\nweight-unit ns\nmap 0 file 100 555555554000 555555600000 0 0 %s %s\nstack 1 1000000 100 100 - p0:%s\nend\n' \
	"$idA" "$exeA" "$pc" > "$T/in.raw"
"$SYM" symbolize --server "$U" --partial --wait-ms 0 -o "$T/part.raw" \
	"$T/in.raw" 2> "$T/part.err"
is "sym symbolize --partial: exit 0, main named from the symbols" \
	"$? $(grep -c '^fn [0-9]* main$' "$T/part.raw")" "0 1"
"$SYM" symbolize --server "$U" --wait-ms 300 -o "$T/nopart.raw" \
	"$T/in.raw" 2> "$T/nopart.err"
is "sym symbolize without --partial: the frame is not taken (error)" \
	"$(grep -c "^loc p0:$pc error" "$T/nopart.raw") $(grep -c '^fn' "$T/nopart.raw")" "1 0"

# A request that waits: the lazy table (of its addresses, wanted before
# the lazy step) wakes it while the full table is still held.
ask "$idA" "$X" 20000 "$T/l1" &
lpid=$!
sleep 0.3
rm -f "$T/hold/$idA.lazy"
wait $lpid
is "a waiting request gets ok from the lazy table" \
	"$(field "$T/l1" status)" ok
is "... with the DWARF's source" "$(field "$T/l1" source)" dwarf
is "... while the full table is still held (0 conversions)" \
	"$(metric 'symd_conversions_total{result="ok"}')" 0
ask "$idA" "$Y" 0 "$T/p2"
is "addresses the lazy table does not cover: partial" \
	"$(field "$T/p2" status)" partial
frames "$T/p2" > "$T/p2.frames"
same_file "... with the symbols-alone frames" "$T/oY.frames" "$T/p2.frames"

rm -f "$T/hold/$idA.full"
ok "A answers ok once its full table is stored" \
	poll_status "$idA" "$Y" ok "$T/f2"
ask "$idA" "$X" 0 "$T/f1"
frames "$T/l1" > "$T/l1.frames"
frames "$T/f1" > "$T/f1.frames"
same_file "lazy frames = the full table's, whole" "$T/f1.frames" \
	"$T/l1.frames"
ok "the lazy answer has lines (the comparison is not the symbols')" \
	grep -q '"line": [1-9]' "$T/l1.frames"
is "A was converted once" "$(metric 'symd_conversions_total{result="ok"}')" 1
is "one symbols-alone table and one lazy table were built" \
	"$(metric 'symd_quick_tables_total{kind="symtab"}') $(metric 'symd_quick_tables_total{kind="lazy"}')" "1 1"

# --- bad input: a debug file without .symtab ----------------------------
is "upload of B without .symtab" "$(put "$idB" "$T/B.nosym")" 201
ok "B answers partial" poll_status "$idB" "$XB" partial "$T/pb"
is "B's partial frames are all empty: nothing said, nothing wrong" \
	"$(frames "$T/pb" | sort -u)" "[]"
rm -f "$T/hold/$idB.lazy"
ask "$idB" "$XB" 20000 "$T/lb" &
lpid=$!
# Whether the lazy step saw its addresses or not (the hold is gone), its
# answer is the full table's.
sleep 0.3
rm -f "$T/hold/$idB.full"
wait $lpid
poll_status "$idB" "$XB" ok "$T/fb" || true
frames "$T/lb" > "$T/lb.frames"
frames "$T/fb" > "$T/fb.frames"
same_file "B: the waiting request's frames are the full table's" \
	"$T/fb.frames" "$T/lb.frames"
is "2 conversions in all" "$(metric 'symd_conversions_total{result="ok"}')" 2
stop_symd
is "symd exits 0" "$SYMD_STATUS" 0
