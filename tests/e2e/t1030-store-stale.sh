#!/bin/sh
# A table built by another converter version is never misread: `sym
# lookup` refuses it with a clear message, `sym addr2line` and symd
# rebuild it from the file on first use, and the answers are the same as
# a fresh build's.  SYM_TEST_CONVERTER_VERSION (a test hook of libsym's
# builder) makes the old table.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl python3

F=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
id=$("$SYM" buildid "$F" | cut -d' ' -f1)
plan 8

# This converter's version, as a fresh table records it (a number, no
# "stale" mark): SYMI_CONVERTER_VERSION changes with every fix.
"$SYM" store add --store "$T/fresh" "$F" > /dev/null
cur=$("$SYM" store info --store "$T/fresh" "$id" | sed -n 's/^converter: *//p')
case $cur in
''|0|*[!0-9]*) echo "Bail out! a fresh table's converter is '$cur'"; exit 1 ;;
esac

S=$T/store
SYM_TEST_CONVERTER_VERSION=0 "$SYM" store add --store "$S" "$F" > /dev/null
is "the old table is stored with converter 0, marked stale" \
	"$("$SYM" store info --store "$S" "$id" | sed -n 's/^converter: *//p')" "0 (stale: rebuilt on next use)"
"$SYM" lookup --store "$S" -f "$id" 0x1139 > "$T/out" 2> "$T/err"
is "sym lookup refuses a stale table: exit 1" "$?" 1
ok "and says why" grep -q 'built by another version' "$T/err"
"$SYM" addr2line --no-cache -f -i -e "$F" 0x1139 0x1140 > "$T/want"
"$SYM" addr2line --stats --store "$S" -f -i -e "$F" 0x1139 0x1140 > "$T/got" 2> "$T/err"
ok "sym addr2line rebuilds it (table from parsing)" grep -q 'table from parsing' "$T/err"
is "with the answers of a fresh build" "$(cat "$T/got")" "$(cat "$T/want")"
is "the store now holds this converter's table" \
	"$("$SYM" store info --store "$S" "$id" | sed -n 's/^converter: *//p')" "$cur"

# symd: a stale table whose files are in the store is converted again.
S2=$T/symd-store
SYM_TEST_CONVERTER_VERSION=0 "$SYM" store add --store "$S2" "$F" > /dev/null
start_symd || exit 1
ok "symd rebuilds a stale table from its files and answers like sym addr2line" \
	python3 "$SYM_ROOT/tests/e2e/lib/symd_check.py" compare "$SYMD_URL" "$id" "$F" 200
is "symd's store now holds this converter's table" \
	"$("$SYM" store info --store "$S2" "$id" | sed -n 's/^converter: *//p')" "$cur"
stop_symd
done_testing
