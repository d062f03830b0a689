#!/bin/bash
# t1000-store-cli.sh - the table store from the command line: `sym
# addr2line` caches by build ID and answers the second run from the store
# byte for byte; --no-cache; `sym lookup` hit and miss; `sym store add ls
# info rm gc verify`; a corrupt stored table (bytes flipped in data.mdb)
# is detected and never gives a wrong answer; a store that cannot be
# opened costs one warning, never an answer.
#
# Every store here lives under $T (--store or SYM_STORE): ~/.cache is
# never touched.
. "$(dirname "$0")/lib/lib.sh"
need python3 nm gcc objcopy
[ -x "$SYM" ] || plan_skip "$SYM not built"
plan 77

B=$(fixture gcc-O2-d5-cxx) || { echo "Bail out! fixtures"; exit 1; }
FB=$(dirname "$B")
F1=$FB/gcc-O2-d5-cxx
F2=$FB/clang-O2-d5-c
FS=$FB/stripped-buildid-gcc-O2-d4-cxx-zstd
DI=$FB/debugroot
cd "$T" || exit 1
ST=$T/st
bid() { "$SYM" buildid "$1" | cut -d' ' -f1; }
B1=$(bid "$F1")
B2=$(bid "$F2")
BS=$(bid "$FS")

# Every function and object symbol of a file, plus one address inside each
# function: symbol-only answers (_init, crt code) are part of the contract.
addrs_of() {
	nm --defined-only "$1" 2>/dev/null | python3 -c '
import sys
out = set()
for l in sys.stdin:
    f = l.split()
    if len(f) == 3 and f[1] in "TtWwDdRrBb":
        a = int(f[0], 16)
        if a:
            out.add(a)
            if f[1] in "TtWw":
                out.add(a + 3)
print(" ".join("0x%x" % a for a in sorted(out)))'
}
A1=$(addrs_of "$F1")
A2=$(addrs_of "$F2")
AS=$(addrs_of "$FS")
[ -z "$AS" ] && AS=$(addrs_of "$DI/.build-id/${BS:0:2}/${BS:2}.debug")
FLAGS="-a -f -i -C"

# 1. The first run parses and stores; the second answers from the store,
# byte for byte, for every output style.
for style in GNU LLVM JSON elfutils; do
	# shellcheck disable=SC2086
	"$SYM" addr2line --no-cache --output-style=$style -e "$F1" $FLAGS \
		$A1 > nc.$style 2> nc.err
	# shellcheck disable=SC2086
	"$SYM" addr2line --store "$ST" --stats --output-style=$style \
		-e "$F1" $FLAGS $A1 > r1.$style 2> r1.err
	# shellcheck disable=SC2086
	"$SYM" addr2line --store "$ST" --stats --output-style=$style \
		-e "$F1" $FLAGS $A1 > r2.$style 2> r2.err
	ok "$style: cached run identical to --no-cache" cmp nc.$style r2.$style
	ok "$style: first run identical to --no-cache" cmp nc.$style r1.$style
	if [ $style = GNU ]; then
		ok "first run parses and stores" \
			grep -q "stats: table from parsing (stored as build ID $B1" \
			r1.err
	fi
	ok "$style: second run says cache" \
		grep -q "stats: table from cache (build ID $B1" r2.err
done
ok "--stats times every step" grep -q \
	"stats: open [0-9.]* ms, store open [0-9.]* ms, cache read and lookups [0-9.]* ms for [0-9]* addresses" r2.err

# 2. stdin co-process mode from the store: same answers as argv.
echo "$A1" | tr ' ' '\n' |
	"$SYM" addr2line --store "$ST" --stats -e "$F1" $FLAGS > in.GNU 2> in.err
ok "stdin from the store: same answers" cmp nc.GNU in.GNU
ok "stdin from the store: says cache" grep -q "table from cache" in.err
# One answer per line, out before the next line is read.
# Hex inputs are answered in batches: the batch must go out before sym
# waits for the next line.
main=0x$(nm "$F1" | awk '$3 == "main" { print $1 }')
coproc SYMCO { exec "$SYM" addr2line --store "$ST" -f -e "$F1" 2>&1; }
got=
for a in $main 0x0; do
	echo "$a" >&"${SYMCO[1]}"
	read -r -t 10 l1 <&"${SYMCO[0]}" && read -r -t 10 l2 <&"${SYMCO[0]}" &&
		got="$got$l1|$l2;"
done
exec {SYMCO[1]}>&-
wait "$SYMCO_PID" 2>/dev/null
is "co-process answers each line at once from the store" "${got%%|*}" "main"

# 3. --no-cache neither reads nor writes the store.
"$SYM" addr2line --no-cache --stats --store "$T/never" -e "$F1" -f 0x1000 \
	> /dev/null 2> nc2.err
ok "--no-cache creates no store" test ! -e "$T/never"
ok "--no-cache says so in --stats" grep -q "not cached: --no-cache" nc2.err

# 4. sym lookup: the store alone, same answers and styles.
for style in GNU LLVM elfutils; do
	# shellcheck disable=SC2086
	"$SYM" lookup --store "$ST" --output-style=$style $FLAGS "$B1" $A1 \
		> lk.$style 2> lk.err
	ok "lookup $style: same as addr2line" cmp nc.$style lk.$style
done
# JSON names the module by its build ID, not by a file.
# shellcheck disable=SC2086
"$SYM" lookup --store "$ST" --output-style=JSON $FLAGS "$B1" $A1 |
	sed "s/\"ModuleName\":\"$B1\"/\"ModuleName\":\"$(echo "$F1" |
	sed 's/[\/&]/\\&/g')\"/g" > lk.JSON
ok "lookup JSON: same as addr2line but ModuleName" cmp nc.JSON lk.JSON
echo "$A1" | tr ' ' '\n' | "$SYM" lookup --store "$ST" $FLAGS \
	"$(echo "$B1" | tr a-f A-F)" > lkin.GNU 2> lkin.err
ok "lookup from stdin, upper-case build ID" cmp nc.GNU lkin.GNU
# A bare hex line is queued straight from the read buffer; every other
# line takes the slow path.  Both answer as argv, in every spelling, in
# input order, and so does a last line without its newline.
MIX=$(for a in $A1; do
	v=${a#0x}
	echo "$a 0X$(echo "$v" | tr a-f A-F) $v 0x000$v 0x0x$v"
done | tr ' ' '\n' | awk 'NR % 7 == 3 { print "junk" } NR % 11 == 5 {
	print "0x" } NR % 13 == 8 { print "1" substr("0000000000000000", 1,
	NR % 17) "f" } { print }')
# shellcheck disable=SC2086
"$SYM" lookup --store "$ST" $FLAGS "$B1" $MIX > mix.argv 2> mix.argv.err
# shellcheck disable=SC2086
printf '%s' "$MIX" | "$SYM" lookup --store "$ST" $FLAGS "$B1" > mix.in \
	2> mix.in.err
ok "lookup from stdin: bare hex lines and the rest, as from argv" \
	cmp mix.argv mix.in
ok "... with the same messages" cmp mix.argv.err mix.in.err
run_compare "lookup miss: one clear line, exit 1" \
	sh -c "\"$SYM\" lookup --store \"$ST\" 00112233 0x10; echo rc=\$?" <<EOF
sym lookup: no table for build ID 00112233 in store '$ST'
rc=1
EOF
"$SYM" lookup --store "$ST" xyz 0x10 > /dev/null 2>&1
is "lookup of a non-hex build ID is a usage error" "$?" 2
"$SYM" lookup --store "$ST" -e "$F1" "$B1" 0x10 > /dev/null 2>&1
is "lookup takes no file" "$?" 2
out=$("$SYM" lookup --store "$ST" -f "$B1" main 0x0 2> sym.err)
is "lookup: a symbol name answers ?? and exit 1" "$out:$?" \
	"$(printf '??\n??:0\n??\n??:0'):1"

# 5. A stripped file whose debug file is not found gets a symbols-only
# table, which is not stored: it would hide the debug file later.
"$SYM" addr2line --store "$ST" --stats -e "$FS" -f 0x0 > /dev/null 2> nodw.err
ok "a table without DWARF is not stored" \
	grep -q "not cached: no DWARF found, symbols only" nodw.err

# sym store add, with a debug file found by build ID.
"$SYM" store --store "$ST" add "$F2" > add.out 2>&1
ok "store add prints build ID, file, size, chunks" grep -Eq \
	"^$B2  $F2  [0-9]+ bytes, [0-9]+ chunks\$" add.out
"$SYM" store add --store "$ST" --debuginfo-path="$DI" "$FS" > adds.out 2>&1
ok "store add --debuginfo-path" grep -q "^$BS  $FS  " adds.out
# shellcheck disable=SC2086
"$SYM" addr2line --no-cache --debuginfo-path="$DI" -e "$FS" $FLAGS $AS \
	> s.nc 2>&1
# shellcheck disable=SC2086
"$SYM" lookup --store "$ST" $FLAGS "$BS" $AS > s.lk 2>&1
ok "lookup of a stripped file's table = addr2line --debuginfo-path" \
	cmp s.nc s.lk
# shellcheck disable=SC2086
"$SYM" store info --store "$ST" "$BS" > infos.out
ok "the source of a stripped file's table is its debug file" \
	grep -q "^source: .*\.debug\$" infos.out

# A file without a GNU build ID is stored under its module ID (sym
# buildid -k, docs/store.md), in a store of its own so that the counts
# below stay; addr2line, which names tables by GNU build ID, does not
# cache it.
printf 'int main(void) { return 0; }\n' > nb.c
gcc -g -O1 -Wl,--build-id=none -o nobid nb.c
nbid=$("$SYM" buildid -k nobid | cut -d' ' -f1)
"$SYM" store --store "$T/nb-store" add nobid > nb.out 2>&1
ok "store add stores a file without a build ID under its module ID" \
	grep -q "^$nbid  nobid  " nb.out
"$SYM" addr2line --store "$ST" --stats -e nobid -f main > /dev/null 2> nb.err
ok "addr2line does not cache a file without a build ID" \
	grep -q "not cached: the file has no build ID" nb.err
"$SYM" store add --store "$ST" /nonexistent > /dev/null 2>&1
is "store add of a missing file fails" "$?" 1

# 6. ls, info, rm.
"$SYM" store ls --store "$ST" > ls.out
is "store ls: one line per entry" "$(wc -l < ls.out)" 3
ok "store ls: build ID, table, size, chunks, time, source" grep -Eq \
	"^$B1  table +[0-9]+ +[0-9]+  [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z  $F1\$" \
	ls.out
"$SYM" store list --store "$ST" > list.out
ok "store list = store ls" cmp ls.out list.out
"$SYM" store info --store "$ST" "$B1" > info.out
ok "store info: kind" grep -q "^kind: *table\$" info.out
ok "store info: size" grep -Eq "^size: *[0-9]+ bytes\$" info.out
ok "store info: source" grep -q "^source: *$F1\$" info.out
"$SYM" store info --store "$ST" 00112233 > /dev/null 2> info.err
is "store info of a missing build ID: exit 1" "$?:$(cat info.err)" \
	"1:sym store info: no entry for build ID 00112233 in store '$ST'"
"$SYM" store stats --store "$ST" > stats.out
ok "store stats counts the tables" grep -q "^tables: *3, " stats.out
"$SYM" store rm --store "$ST" "$B2" > rm.out 2>&1
is "store rm" "$?:$(cat rm.out)" "0:removed $B2"
ok "rm: gone from ls" sh -c "! \"$SYM\" store ls --store \"$ST\" | grep -q $B2"
"$SYM" lookup --store "$ST" "$B2" 0x1000 > /dev/null 2>&1
is "rm: lookup misses" "$?" 1
"$SYM" store rm --store "$ST" "$B2" > /dev/null 2>&1
is "rm of a missing entry: exit 1" "$?" 1
# shellcheck disable=SC2086
"$SYM" lookup --store "$ST" $FLAGS "$B1" $A1 > lk2.GNU 2>&1
ok "rm left the other tables alone" cmp nc.GNU lk2.GNU

# 7. gc.
"$SYM" store gc --store "$ST" > gc.out 2>&1
ok "store gc" grep -q "^kept [0-9]* bytes of tables; evicted 0 tables" gc.out
"$SYM" store --store "$ST" gc --compact > gcc.out 2>&1
ok "store gc --compact" grep -Eq \
	"^data.mdb: [0-9]+ bytes -> [0-9]+ bytes \(compacted\)\$" gcc.out
# shellcheck disable=SC2086
"$SYM" lookup --store "$ST" $FLAGS "$B1" $A1 > lk3.GNU 2>&1
ok "lookups after compaction" cmp nc.GNU lk3.GNU
"$SYM" store gc --store "$ST" --max-size 1K > gcm.out 2>&1
ok "store gc --max-size evicts" grep -q "evicted 2 tables" gcm.out
is "gc --max-size 1K leaves nothing" "$("$SYM" store ls --store "$ST" | wc -l)" 0
"$SYM" store gc --store "$ST" --max-size 12Q > /dev/null 2>&1
is "gc --max-size with a bad size: exit 2" "$?" 2
"$SYM" store verify --store "$ST" > ver.out 2>&1
is "verify of a good store" "$?:$(cat ver.out)" "0:store '$ST': no problems"

# 8. A corrupt table: flip a byte in the middle of the stored table in
# data.mdb (every copy LMDB still holds).  verify reports it; addr2line
# notices, rebuilds and answers right; lookup says so, never wrong.
SC=$T/corrupt
"$SYM" store add --store "$SC" "$F1" > /dev/null 2>&1
nflip=$(store_flip "$SC")
ok "flipped a byte of the stored table ($nflip copies)" test "$nflip" -ge 1
"$SYM" store verify --store "$SC" > cv.out 2>&1
cv=$?
is "verify finds the corrupt table: exit 1" "$cv" 1
ok "verify names the build ID" grep -q "^$B1: " cv.out
# shellcheck disable=SC2086
"$SYM" lookup --store "$SC" $FLAGS "$B1" $A1 > clk.out 2> clk.err
clk=$?
is "lookup of a corrupt table: exit 1, no answers" "$clk:$(wc -c < clk.out)" \
	"1:0"
ok "lookup says the table is corrupt" grep -q corrupt clk.err
store_flip "$SC" > /dev/null
"$SYM" store add --store "$SC" "$F1" > /dev/null 2>&1
store_flip "$SC" > /dev/null
# shellcheck disable=SC2086
"$SYM" addr2line --store "$SC" --stats -e "$F1" $FLAGS $A1 > ca.out 2> ca.err
ok "addr2line on a corrupt table: right answers (rebuilt)" cmp nc.GNU ca.out
ok "addr2line warns that the stored table was corrupt" \
	grep -q "warning: the stored table of build ID $B1 is corrupt" ca.err
"$SYM" store verify --store "$SC" > /dev/null 2>&1
is "after the rebuild verify passes" "$?" 0
# shellcheck disable=SC2086
"$SYM" lookup --store "$SC" $FLAGS "$B1" $A1 > clk2.out 2>&1
ok "after the rebuild lookup answers right" cmp nc.GNU clk2.out

# A file with the build ID of a stored table is answered from the table,
# even if its own DWARF is damaged: the build ID is the identity.
cp "$F1" dmg
off=$(readelf -S -W dmg | awk '$2 == ".debug_info" { print $5 }')
printf '\377\377\377\377\377\377\377\377\377\377\377\377' |
	dd of=dmg bs=1 seek=$((0x$off)) conv=notrunc status=none
"$SYM" addr2line --store "$SC" -e dmg $FLAGS $A1 > dmg.out 2>&1
ok "damaged DWARF, stored build ID: the stored answers" cmp nc.GNU dmg.out
"$SYM" addr2line --no-cache -e dmg -f 0x10 > /dev/null 2>&1
is "damaged DWARF with --no-cache: exit 1" "$?" 1

# 9. A store that cannot be opened (a file where the directory should
# be; chmod does not stop root): answers as usual, one warning.
: > notadir
# shellcheck disable=SC2086
"$SYM" addr2line --store "$T/notadir" -e "$F1" $FLAGS $A1 > ro.out 2> ro.err
ro=$?
ok "unusable store: same answers" cmp nc.GNU ro.out
is "unusable store: exit 0 and one warning line" "$ro:$(wc -l < ro.err)" "0:1"
ok "the warning names the store" grep -q \
	"^sym addr2line: warning: cannot open the store '$T/notadir'" ro.err
echo "$A1" | tr ' ' '\n' | SYM_STORE=$T/notadir/sub \
	"$SYM" addr2line -e "$F1" $FLAGS > ro2.out 2> ro2.err
is "unusable \$SYM_STORE, stdin: same answers, one warning" \
	"$(cmp -s nc.GNU ro2.out && echo same):$(wc -l < ro2.err)" "same:1"
"$SYM" lookup --store "$T/notadir" "$B1" 0x10 > /dev/null 2> ro3.err
is "lookup with an unusable store: exit 1" "$?:$(wc -l < ro3.err)" "1:1"

# 10. Where the store is: --store, $SYM_STORE, $XDG_CACHE_HOME/sym.
SYM_STORE=$T/env "$SYM" addr2line -e "$F1" 0x0 > /dev/null 2>&1
ok "\$SYM_STORE names the store" test -f "$T/env/data.mdb"
(unset SYM_STORE; XDG_CACHE_HOME=$T/xdg "$SYM" addr2line -e "$F1" 0x0) \
	> /dev/null 2>&1
ok "else \$XDG_CACHE_HOME/sym" test -f "$T/xdg/sym/data.mdb"
(unset SYM_STORE XDG_CACHE_HOME; HOME=$T/home "$SYM" addr2line -e "$F1" 0x0) \
	> /dev/null 2>&1
ok "else ~/.cache/sym" test -f "$T/home/.cache/sym/data.mdb"

done_testing
