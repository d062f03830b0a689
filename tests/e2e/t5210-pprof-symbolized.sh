#!/bin/sh
# sym pprof: a symbolized pprof profile that Google's pprof reads.  A raw
# profile of a program built here (tests/e2e/lib/symb-lib.sh: an inlined
# function, p and r frames), with a frame of a build ID nobody has and
# one outside any map, goes through `sym pprof --store` (symbolized on
# the fly); `pprof -top` and `pprof -traces` must give every function's
# flat and cum counts and every stack's count and function names (inline
# frames expanded) as the symbolized raw file says.  The same profile
# from `sym symbolize` output gives the same bytes; read back by sym, the
# pprof file gives the same locations (lines, columns, statuses), so
# writing it again gives the same bytes too.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/pprof-lib.sh"
. "$(dirname "$0")/lib/symb-lib.sh"
need gcc objcopy objdump python3
need_pprof

plan 14

symb_build
ok "build the program (gcc -O2 -g), strip it, keep its debug file" \
	test -s "$T/prog" -a -n "$r_main"
{
	echo "sym-raw 1"
	echo "period 1000000"
	echo "weight-unit ns"
	echo "map 0 file 100 555555554000 555555556000 0 0 $BID $T/prog"
	echo "map 1 file 100 7f1000000000 7f1000010000 0 0 deadbeef00112233445566778899aabbccddeeff /opt/gone/libgone.so"
	n=1
	for pc in $leaf_pcs; do
		echo "stack $n $((n * 1000000)) 100 $((100 + n % 3)) - p0:$pc r0:$r_middle r0:$r_main"
		n=$((n + 1))
	done
	echo "stack 9 9000000 100 100 - p0:$r_middle r0:$r_main"
	echo "stack 4 4000000 100 100 leaf p1:4321 r0:$r_main"
	echo "stack 3 3000000 100 100 - p?:7fff00001234 r0:$r_main"
	echo "end"
} > "$T/in.raw"

"$SYM" pprof --store "$T/store" -v -o "$T/out.pb.gz" "$T/in.raw" 2> "$T/err"
is "sym pprof: exit 0" "$?" 0
ok "sym pprof -v: the symbolization summary's table on stderr" \
	grep -q "libgone.so (deadbeef): missing 1" "$T/err"
"$SYM" symbolize --store "$T/store" -q -o "$T/sym.raw" "$T/in.raw"
"$SYM" pprof -o "$T/out2.pb.gz" "$T/sym.raw" 2> "$T/err2"
ok "from sym symbolize's output: the same bytes, nothing re-symbolized" \
	sh -c "cmp '$T/out.pb.gz' '$T/out2.pb.gz' && test ! -s '$T/err2'"

pprof_run -symbolize=none -top -nodecount=100000 -sample_index=samples \
	"$T/out.pb.gz" > "$T/top" 2>&1
pprof_run -symbolize=none -traces -sample_index=samples "$T/out.pb.gz" \
	> "$T/traces" 2>&1
sed 's/^/# /' "$T/top"
python3 "$SYM_ROOT/tests/e2e/lib/symbolize_check.py" pprof "$T/sym.raw" \
	"$T/top" "$T/traces" > "$T/check.out" 2>&1
while IFS= read -r l; do
	case $l in
	"ok - "*) _tap 0 "${l#ok - }" ;;
	"not ok - "*) _tap 1 "${l#not ok - }" ;;
	*) echo "# $l" ;;
	esac
done < "$T/check.out"
[ "$_tap_n" = 6 ] || { _tap 1 "the pprof checker ran"; cat "$T/check.out"; }
ok "pprof -top lists the inlined function as (inline)" \
	grep -q " scale (inline)$" "$T/top"
pprof_run -symbolize=none -raw "$T/out.pb.gz" > "$T/praw" 2>&1
ok "pprof -raw: the program's mapping has functions, files, lines, inlines" \
	grep -q "$BID \[FN\]\[FL\]\[LN\]\[IN\]$" "$T/praw"

# Read back: the same locations, so the same pprof bytes again.
"$SYM" convert -o "$T/back.raw" "$T/out.pb.gz"
is "sym convert reads the symbolized pprof" "$?" 0
grep '^stack' "$T/sym.raw" > "$T/a"
grep '^stack' "$T/back.raw" > "$T/b"
ok "read back: the same stacks" cmp "$T/a" "$T/b"
ok "read back: statuses of frames that did not resolve (#sym-loc)" \
	sh -c "grep -q '^loc p1:4321 missing\$' '$T/back.raw' &&
	       grep -q '^loc p?:7fff00001234 unmapped\$' '$T/back.raw'"
"$SYM" pprof -o "$T/out3.pb.gz" "$T/back.raw" 2> "$T/err3"
ok "read back and written again: the same pprof bytes (lines, columns)" \
	sh -c "cmp '$T/out.pb.gz' '$T/out3.pb.gz' && test ! -s '$T/err3'"

"$SYM" pprof --server http://127.0.0.1:1 -o "$T/x.pb.gz" "$T/in.raw" \
	> /dev/null 2> "$T/err"
is "an unreachable server: exit 1, no output" \
	"$? $(test -e "$T/x.pb.gz" && echo written)" "1 "
"$SYM" pprof -o "$T/x.pb.gz" "$T/nope" > /dev/null 2>&1
is "a missing input: exit 1" "$?" 1
done_testing
