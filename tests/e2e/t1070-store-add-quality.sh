#!/bin/sh
# t1070-store-add-quality.sh - the local store refuses what would make it
# worse, as symd does: `sym store add` of a stripped binary whose debug
# file is not found (a symbols-only table) does not replace the DWARF
# table of its build ID, says so with both qualities, and exits 0;
# --force stores it; a file as good is stored again (how a table is
# rebuilt), and a better one over a worse one.
. "$(dirname "$0")/lib/lib.sh"
[ -x "$SYM" ] || plan_skip "$SYM not built"
need objdump
exe=$(fixture gcc-O2-d5-cxx) || { echo "Bail out! fixtures"; exit 1; }
stripped=$(fixture stripped-buildid-gcc-O2-d5-cxx)
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
plan 7

S=$T/st
add() { "$SYM" store add --store "$S" "$@" > "$T/out" 2> "$T/err"; rc=$?; }
# line ADDR: the file:line of ADDR from the store (symbols-only
# tables name it too, so the line tells DWARF from symbols).
line() { "$SYM" lookup --store "$S" -f "$id" "$1" 2>/dev/null | sed -n 2p; }
A=0x$(objdump -d "$exe" | awk '/<main>:/{print $1; exit}')

add "$exe"
is "the unstripped binary: stored" "$rc:$(grep -c "^$id  $exe  [0-9]* bytes" "$T/out")" "0:1"
want=$(line "$A")
ok "with lines ($want)" sh -c "echo '$want' | grep -q ':[1-9]'"
add "$stripped"
is "a stripped binary over it: not stored, exit 0, both qualities" "$rc $(cat "$T/out")" \
	"0 $id  $stripped  not stored: the store has dwarf for build ID $id and this file has none (--force stores it anyway)"
is "the DWARF table is still there" "$(line "$A")" "$want"
add --force "$stripped"
is "--force stores it" "$rc:$(grep -c "^$id  $stripped  [0-9]* bytes" "$T/out")" "0:1"
ok "now without lines" sh -c "[ '$(line "$A")' != '$want' ]"
add "$exe"
is "the unstripped binary again: stored, lines back" "$rc:$(line "$A")" "0:$want"
done_testing
