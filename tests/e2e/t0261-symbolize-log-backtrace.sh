#!/bin/bash
# t0261-symbolize-log-backtrace.sh - `sym symbolize-log --server URL` on a
# glibc backtrace_symbols() dump of a stripped program whose debug file
# only a real symd has (uploaded with `sym upload`).
#
# fixtures/src/bt_dump.c, built with cc -O1 -g, its debug file split off
# (objcopy --only-keep-debug) and the program stripped (strip -s), prints
# its stack as `./bt_dump(+0xOFF)[0xPC]` lines.  Each of its lines must
# come back as the line followed by " at FUNC FILE:LINE:COL" and one
# " (inlined by) FUNC FILE:LINE:COL" line per inlining caller, what
# llvm-symbolizer says of OFF - 1 (a return address: the call's line) in
# the unstripped build; the libc lines, whose debug file symd has not
# got, are left as they were and counted on stderr.  Without --server
# the local store has only the stripped file: nothing of the program is
# placed.
#
# The same program, asked for its return addresses alone (`0xPC` lines)
# and its /proc/self/maps, gives `sym symbolize-log --maps MAPS` what it
# needs to place them from the unstripped build in the local store: each
# program line gets llvm-symbolizer's answer for the PC's ELF address
# (taken as an exact address, as eu-addr2line -p takes it).
#
# A sym-raw stack block (docs/raw-format.md) amid log lines, over the
# same return addresses and the unstripped build, is replaced by the
# symbolized form `sym symbolize` writes of it, the lines around it
# untouched; a block that does not read is left as it is.
#
# Built with -rdynamic (and its functions exported), the program's lines
# read `./bt_rd(NAME+0xOFF) [0xPC]`: NAME is looked up in the file's own
# symbols (it is here), and each line gets llvm-symbolizer's answer for
# NAME's address (nm -D) + OFF - 1.  A NAME the file has not got is left
# as it was.
#
# With DEBUGINFOD_URLS naming a server that has the debug file (the
# stub of lib/debuginfod-lib.sh serving bt.debug) and an empty store,
# the local lookups fetch it: the dump comes out as with --server.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
need cc objcopy strip llvm-symbolizer curl python3
[ -x "$SYM" ] || plan_skip "$SYM not built"
plan 16

cd "$T" || exit 1
cc -O1 -g -o bt.full "$SYM_ROOT/fixtures/src/bt_dump.c" &&
	objcopy --only-keep-debug bt.full bt.debug &&
	strip -s -o bt_dump bt.full || {
	echo "Bail out! cannot build bt_dump"
	exit 1
}
./bt_dump > bt.txt
ok "the dump has the program's frames as ./bt_dump(+0xOFF)[0xPC]" \
	test "$(grep -c '^\./bt_dump(+0x[0-9a-f]*) *\[0x[0-9a-f]*\]$' bt.txt)" \
	-ge 5

# expect: bt.txt with each program line followed by llvm-symbolizer's
# answer for OFF - 1, in the documented style.
grep -o '^\./bt_dump(+0x[0-9a-f]*)' bt.txt | sed 's/.*(+\(0x[0-9a-f]*\))/\1/' |
	while read -r off; do printf '0x%x\n' $((off - 1)); done |
	llvm-symbolizer -e bt.full > llvm.out
# with_answers LLVM_OUT ERE: stdin, each line that matches ERE followed by
# the next answer of llvm-symbolizer's output LLVM_OUT in the documented
# style (" at FUNC FILE:LINE:COL", a " (inlined by) ..." line per caller).
with_answers() {
	RE=$2 awk -v LLVM="$1" '
	function answer(   fn, loc, s, n) {
		s = ""; n = 0
		while ((getline fn < LLVM) > 0 && fn != "") {
			getline loc < LLVM
			if (loc == "??:0:0") loc = ""; else loc = " " loc
			s = s (n++ ? "\n (inlined by) " : " at ") fn loc
		}
		return s
	}
	$0 ~ ENVIRON["RE"] { print $0 answer(); next }
	{ print }'
}
with_answers llvm.out '^\./bt_dump\(\+0x[0-9a-f]*\) *\[0x[0-9a-f]*\]$' \
	< bt.txt > want.txt

echo token > token
start_symd --upload-token-file "$T/token" || exit 1
"$SYM" upload --server "$SYMD_URL" --token-file token bt.debug \
	> upload.out 2>&1
is "the debug file is uploaded to symd" "$?" 0

"$SYM" symbolize-log --server "$SYMD_URL" bt.txt > got.txt 2> got.err
same_file "with --server: the program's frames as llvm-symbolizer names them" \
	want.txt got.txt
"$SYM" symbolize-log --server "http://127.0.0.1:$(free_port)" bt.txt \
	> down.txt 2> down.err
st=$?
ok "symd not reachable: the log as it was, exit status 1 ($st)" \
	sh -c "[ $st = 1 ] && cmp bt.txt down.txt && grep -q 'cannot reach' down.err"
nlibc=$(grep -c '^/.*libc\.so' bt.txt)
nall=$(grep -c '\[0x[0-9a-f]*\]$' bt.txt)
is "the libc lines are counted on stderr" "$(cat got.err)" \
	"sym symbolize-log: $((nall - nlibc)) of $nall frame lines placed, $nlibc left as they were"
"$SYM" symbolize-log bt.txt 2> /dev/null | grep '^\./bt_dump' > local.txt
grep '^\./bt_dump' bt.txt > prog.txt
same_file "the program's stripped file alone places none of its lines" \
	prog.txt local.txt
"$SYM" symbolize-log --server "$SYMD_URL" < bt.txt > stdin.txt 2> /dev/null
same_file "from stdin: the same" want.txt stdin.txt

# --maps: the unstripped build prints its PCs and maps.  Only the
# program's own PCs are compared (libc's answers depend on its debug
# file): they are told by the maps, not by their look (a library mapped
# at 0x7e... is as likely as at 0x7f...: ASLR's mmap base moves over 1 TiB).
./bt.full maps.txt > pcs.txt
exe=$(readlink -f bt.full)
: > pcwant.txt
: > exepcs.txt
while read -r pc; do
	line=$(awk -v exe="$exe" -v pc=$((pc)) '$6 == exe {
		split($1, r, "-")
		print "0x" r[1], "0x" r[2], "0x" $3 }' maps.txt |
	while read -r lo hi off; do
		if [ $((pc)) -ge $((lo)) ] && [ $((pc)) -lt $((hi)) ]; then
			printf '0x%x\n' $((pc - lo + off))
		fi
	done)
	if [ -n "$line" ]; then
		echo "$pc" >> exepcs.txt
		llvm-symbolizer -e bt.full "$line" > a.out
		awk -v pc="$pc" 'NF == 0 { exit }
			NR % 2 { fn = $0; next }
			{ loc = ($0 == "??:0:0") ? "" : " " $0
			  printf "%s%s%s%s", (NR > 2 ? "\n (inlined by) " : pc " at "),
				fn, loc, "" }
			END { print "" }' a.out >> pcwant.txt
	fi
done < pcs.txt
ok "the program's maps have its executable mapping" \
	grep -q " r-xp .* $exe\$" maps.txt
"$SYM" symbolize-log --maps maps.txt pcs.txt 2> /dev/null |
	awk 'NR == FNR { own[$1] = 1; next }
	     /^ \(inlined by\) / { if (keep) print; next }
	     { keep = ($1 in own); if (keep) print }' exepcs.txt - > pcgot.txt
cp pcwant.txt pcwant.prog
echo "# $(wc -l < exepcs.txt) of the $(wc -l < pcs.txt) PCs are the program's"
same_file "--maps: the program's PCs placed as llvm-symbolizer places them" \
	pcwant.prog pcgot.txt

# backtrace_symbols() naming the dynamic symbols (-rdynamic).
cc -O1 -g -rdynamic -DBT_EXPORT -o bt_rd "$SYM_ROOT/fixtures/src/bt_dump.c" ||
	exit 1
./bt_rd > rd.txt
sed -n 's/^\.\/bt_rd(\([A-Za-z_][A-Za-z0-9_]*\)+0x\([0-9a-f]*\)) *\[0x[0-9a-f]*\]$/\1 \2/p' \
	rd.txt > rd.names
while read -r name off; do
	v=$(nm -D bt_rd | awk -v n="$name" '$3 == n { print $1 }')
	printf '0x%x\n' $((0x$v + 0x$off - 1))
done < rd.names | llvm-symbolizer -e bt_rd > rdllvm.out
grep '^\./bt_rd' rd.txt | with_answers rdllvm.out \
	'^\./bt_rd\([A-Za-z_][A-Za-z0-9_]*\+0x[0-9a-f]*\) *\[0x[0-9a-f]*\]$' \
	> rdwant.txt
"$SYM" symbolize-log rd.txt 2> rd.err | grep -v '^/\|^ (inlined by) __libc' \
	> rdgot.txt
ok "-rdynamic: the dump names leaf, middle, outer and main" \
	test "$(cut -d' ' -f1 rd.names | sort | tr '\n' ' ')" = \
	"_start leaf main middle outer "
same_file "NAME+0xOFF: placed as llvm-symbolizer places NAME's address + OFF - 1" \
	rdwant.txt rdgot.txt
sed 's/(leaf+/(no_such_symbol+/' rd.txt > rdbad.txt
"$SYM" symbolize-log rdbad.txt 2> /dev/null | grep 'no_such_symbol' > rdbad.got
grep 'no_such_symbol' rdbad.txt > rdbad.want
same_file "a NAME the file has not got: the line as it was" rdbad.want rdbad.got

# debuginfod: the stripped program's debug file from DEBUGINFOD_URLS.
start_stub_debuginfod --file "$T/bt.debug" || exit 1
# prog_lines: the program's lines and the inlined-by lines after them.
prog_lines() {
	awk '/^\.\/bt_dump/ { p = 1; print; next }
		p && /^ \(inlined by\) / { print; next } { p = 0 }'
}
DEBUGINFOD_URLS=$STUB_URL DEBUGINFOD_CACHE_PATH=$T/dcache \
	SYM_STORE=$T/dstore "$SYM" symbolize-log bt.txt 2> /dev/null |
	prog_lines > dgot.txt
prog_lines < want.txt > dwant.txt
same_file "DEBUGINFOD_URLS: the stripped program placed from its debug file" \
	dwant.txt dgot.txt

# A sym-raw block in a log.
bid=$("$SYM" buildid bt.full | awk '{ print $1 }')
offs=$(sed -n 's/^\.\/bt_dump(+0x\([0-9a-f]*\)).*/\1/p' bt.txt)
{
	echo "sym-raw 1"
	echo "period 1"
	echo "weight-unit samples"
	echo "map 0 file 1 555555555000 555555556000 1000 1000 $bid $exe"
	printf 'stack 1 1 1 1 -'
	printf ' r0:%s' $offs
	echo
	echo "end"
} > block.raw
"$SYM" symbolize -q block.raw -o block.sym
ok "sym symbolize places the block's frames in bt_dump.c" \
	sh -c "grep -q '^loc r0:[0-9a-f]* ok ' block.sym &&
		grep -q '^src [0-9]* .*/bt_dump\.c\$' block.sym"
{ echo "log line before"; cat block.raw; echo "log line after"; } > rawlog.txt
{ echo "log line before"; cat block.sym; echo "log line after"; } > rawwant.txt
"$SYM" symbolize-log rawlog.txt > rawgot.txt 2> rawgot.err
same_file "a sym-raw block in a log: replaced by its symbolized form" \
	rawwant.txt rawgot.txt
grep -v '^period' rawlog.txt > badlog.txt
"$SYM" symbolize-log badlog.txt > badgot.txt 2> bad.err
ok "a sym-raw block that does not read: as it was, and said why" \
	sh -c "cmp badlog.txt badgot.txt && grep -q 'sym-raw block 1: ' bad.err"
done_testing
