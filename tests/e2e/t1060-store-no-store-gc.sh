#!/bin/sh
# t1060-store-no-store-gc.sh - `sym store` commands other than add never
# make a store where there is none (a mistyped --store used to leave an
# empty one behind); `sym store gc --max-size` does not grow data.mdb:
# the pages its evictions free are reused, so rounds of filling and
# evicting grow the file by far less than the tables they add, and it
# settles (about 1.55 times round one, from round 7, in 20-round runs
# here); `--compact` shrinks the file.
. "$(dirname "$0")/lib/lib.sh"
[ -x "$SYM" ] || plan_skip "$SYM not built"
B=$(fixture gcc-O2-d5-cxx) || { echo "Bail out! fixtures"; exit 1; }
FB=$(dirname "$B")
plan 16

# --- no store ------------------------------------------------------------
for cmd in ls stats verify gc; do
	"$SYM" store $cmd --store "$T/none" > "$T/out" 2>&1
	is "store $cmd --store DIR without a store: exit 1, one line" \
		"$?:$(cat "$T/out")" \
		"1:sym store $cmd: there is no store at '$T/none' (sym store add makes one)"
done
"$SYM" store info --store "$T/none" 0123456789abcdef > /dev/null 2>&1
is "store info: exit 1" "$?" 1
ok "none of them made the directory" test ! -e "$T/none"
mkdir "$T/empty"
"$SYM" store ls --store "$T/empty" > /dev/null 2>&1
is "an empty directory is no store either: exit 1" \
	"$?:$(ls -A "$T/empty" | wc -l)" "1:0"
"$SYM" store add --store "$T/empty" "$FB/gcc-O2-d5-c" > /dev/null 2>&1
"$SYM" store ls --store "$T/empty" > "$T/out" 2>&1
is "after store add, ls lists it" "$?:$(wc -l < "$T/out")" "0:1"

# --- gc --max-size reuses pages --------------------------------------------
# Rounds of: add six tables, evict them all.  The first round grows the
# file (its tables need room, and the free list is empty: gc's own commit
# may take a new page or two).  From then on gc writes into freed pages
# only, and the pages evictions freed take the next round's tables: the
# file settles (at about 1.5 times round one here, as a table's pages must
# be contiguous), where without reuse it would grow by round one's size
# every round.
files="$FB/gcc-O2-d5-cxx $FB/clang-O2-d5-cxx $FB/gcc-O0-d4-c \
$FB/clang-O3-d5-cxx $FB/gcc-O3-d5-cxx $FB/clang-O2-d4-cxx"
sz() { stat -c %s "$T/st/data.mdb"; }
sizes= grew=
for round in 1 2 3 4 5 6 7 8; do
	# shellcheck disable=SC2086
	"$SYM" store add --store "$T/st" $files > /dev/null 2>&1
	a=$(sz)
	"$SYM" store gc --store "$T/st" --max-size 1K > "$T/gc" 2>&1
	g=$(sz)
	[ "$round" = 1 ] && first=$a
	[ "$round" = 4 ] && fourth=$g
	[ "$round" -gt 1 ] && [ "$g" != "$a" ] && grew="$grew $round"
	sizes="$sizes $a/$g"
done
echo "# data.mdb after add/after gc, by round:$sizes"
ok "gc --max-size 1K evicts every table" grep -q "evicted 6 tables" "$T/gc"
is "rounds 2-8: gc does not grow data.mdb" "$grew" ""
# Where the file settles depends on how the freed runs of pages fit the
# next tables (a table's pages must be contiguous): a round may still take
# a few new pages (516,096 -> 585,728 bytes at round 7 in one run, none in
# another, as sym store add converts in parallel and the tables land in
# another order).  Without reuse, rounds 5-8 would add four rounds'
# tables.
ok "rounds 5-8 grow data.mdb by less than one round's tables in all \
(freed pages take the next tables)" \
	test "$(($(sz) - fourth))" -lt "$first"
ok "after 8 rounds, less than twice round one's size" \
	test "$(sz)" -lt "$((2 * first))"

# --- --compact shrinks ----------------------------------------------------
"$SYM" store add --store "$T/st" "$FB/gcc-O2-d5-c" > /dev/null 2>&1
before=$(sz)
"$SYM" store gc --store "$T/st" --compact > "$T/out" 2>&1
after=$(sz)
echo "# --compact: $before -> $after bytes"
ok "--compact shrinks data.mdb to less than a quarter" \
	test "$((after * 4))" -lt "$before"
ok "--compact reports both sizes" grep -Eq \
	"^data.mdb: $before bytes -> $after bytes \(compacted\)\$" "$T/out"
"$SYM" store ls --store "$T/st" > "$T/out" 2>&1
is "the table kept is still there after --compact" "$(wc -l < "$T/out")" 1
"$SYM" lookup --store "$T/st" "$("$SYM" buildid "$FB/gcc-O2-d5-c" | cut -d' ' -f1)" \
	0x0 > /dev/null 2>&1
is "and answers lookups" "$?" 0
done_testing
