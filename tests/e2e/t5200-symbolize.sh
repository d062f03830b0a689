#!/bin/sh
# sym symbolize: a raw profile written by hand for a program built here
# (gcc -O2 -g, an inlined function, stripped, its debug file beside it),
# with frames at known ELF vaddrs (nm, objdump: every instruction of
# leaf(), the return addresses after each call), p and r kinds and both at
# one address, two maps of one build ID, a map without a build ID, a build
# ID nobody has, an anonymous map, a frame outside any map, and kernel
# frames at /proc/kallsyms symbols.  Symbolized through the local store
# (converted from the file) and through a real symd (the debug file
# uploaded with sym upload): every location agrees with llvm-symbolizer
# on the unstripped program, the statuses are right, the stderr summary
# agrees with the file, and symd got one request per build ID with each
# lookup address once.  Then bad input and an unreachable server.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/symb-lib.sh"
need gcc objcopy objdump llvm-symbolizer python3 curl

# check WHAT OUT.raw STDERR: tests/e2e/lib/symbolize_check.py's four checks
# of one output (llvm-symbolizer on maps 0 and 1, kallsyms, the summary)
# as four TAP points.
check() {
	_kmap=-
	[ -n "$KID" ] && _kmap=5
	python3 "$SYM_ROOT/tests/e2e/lib/symbolize_check.py" all "$2" "$3" \
		"$T/prog.full" "$_kmap" > "$T/check.out" 2>&1
	_n=$_tap_n
	while IFS= read -r _l; do
		case $_l in
		"ok - "*) _tap 0 "$1: ${_l#ok - }" ;;
		"not ok - "*) _tap 1 "$1: ${_l#not ok - }" ;;
		"skip "*) skip "${_l#skip }" ;;
		*) echo "$_l" ;;
		esac
	done < "$T/check.out"
	[ $((_tap_n - _n)) = 4 ] || { _tap 1 "$1: the checker ran"; cat "$T/check.out"; }
}
plan 44

# --- the program, stripped, its debug file beside it ---------------------
# Frames: every instruction of leaf() as exact PCs, the return addresses
# after the calls of middle() and main(), and an exact PC at a return
# address (a different lookup: the next line, not the call's).
symb_build
ok "build the program (gcc -O2 -g), strip it, keep its debug file" \
	test -s "$T/prog" -a -s "$T/prog.debug" -a -n "$r_main"
GONE=deadbeef00112233445566778899aabbccddeeff
# The running kernel's build ID: the GNU note of /sys/kernel/notes.
KID=$(od -An -v -tx1 /sys/kernel/notes 2>/dev/null | awk '
	function x(s) { return index("0123456789abcdef", substr(s, 1, 1)) * 16 - 17 + index("0123456789abcdef", substr(s, 2, 1)) }
	function u32(o) { return x(b[o]) + 256 * x(b[o + 1]) + 65536 * x(b[o + 2]) }
	{ for (i = 1; i <= NF; i++) b[n++] = $i }
	END {
		o = 0
		while (o + 12 <= n) {
			nsz = u32(o); dsz = u32(o + 4); d = o + 12 + int((nsz + 3) / 4) * 4
			if (u32(o + 8) == 3 && nsz == 4 && b[o + 12] b[o + 13] b[o + 14] == "474e55") {
				for (i = 0; i < dsz; i++) s = s b[d + i]
				print s; exit
			}
			o = d + int((dsz + 3) / 4) * 4
		}
	}')
# Kernel frames: schedule() exactly, and the return address that is the
# start of the symbol after vfs_read() (its lookup, address - 1, is the
# end of vfs_read() or of whatever kallsyms lists between).
ksched=$(awk '$2 ~ /^[tT]$/ && $3 == "schedule" && $1 !~ /^0+$/ { print $1; exit }' /proc/kallsyms 2>/dev/null)
kafter=$(awk 'on { print $1; exit } $2 ~ /^[tT]$/ && $3 == "vfs_read" && $1 !~ /^0+$/ { on = 1 }' /proc/kallsyms 2>/dev/null)
[ -n "$KID" ] && [ -n "$ksched" ] && [ -n "$kafter" ] || KID=

{
	echo "sym-raw 1"
	echo "period 1000000"
	echo "weight-unit ns"
	echo "map 0 file 100 555555554000 555555556000 0 0 $BID $T/prog"
	echo "map 1 file 200 565555554000 565555556000 0 0 $BID $T/prog"
	echo "map 2 file 100 7f0000000000 7f0000010000 0 0 - /opt/nobid/libnobid.so"
	echo "map 3 file 100 7f1000000000 7f1000010000 0 0 $GONE /opt/gone/libgone.so"
	echo "map 4 anon 100 7f2000000000 7f2000010000 0 0 - [anon:jit]"
	if [ -n "$KID" ]; then
		echo "map 5 kernel -1 ffff800000000000 ffffffffffffffff 0 ffff800000000000 $KID [kernel.kallsyms]"
	fi
	n=1
	for pc in $leaf_pcs; do
		echo "stack $n $((n * 1000000)) 100 100 - p0:$pc r0:$r_middle r0:$r_main"
		n=$((n + 1))
	done
	echo "stack 5 5000000 200 201 - p1:$(echo "$leaf_pcs" | sed -n 3p) r1:$r_middle r1:$r_main"
	echo "stack 4 4000000 100 100 - p0:$r_middle r0:$r_main"
	echo "stack 3 3000000 100 100 - p2:1234 r2:5678 r0:$r_main"
	echo "stack 2 2000000 100 100 - p3:4321 r0:$r_main"
	echo "stack 6 6000000 100 100 badreturn p4:100 r?:7fff00001234 r0:$r_main"
	if [ -n "$KID" ]; then
		echo "stack 7 7000000 100 100 - p5:$ksched r5:$kafter p0:$r_main"
	fi
	echo "end"
} > "$T/in.raw"

# --- the local store ------------------------------------------------------
"$SYM" symbolize --store "$T/store" -v -o "$T/local.raw" "$T/in.raw" 2> "$T/local.err"
is "--store: exit 0" "$?" 0
sed 's/^/# /' "$T/local.err"
ok "--store: the output is the symbolized form" grep -qx "symbolized 1" "$T/local.raw"
check --store "$T/local.raw" "$T/local.err"
is "--store: frames of the map without a build ID are nobuildid" \
	"$(grep -c '^loc [pr]2:[0-9a-f]* nobuildid$' "$T/local.raw")" 2
is "--store: the build ID nobody has is missing" \
	"$(grep -c '^loc p3:4321 missing$' "$T/local.raw")" 1
is "--store: the anonymous map's and the unmapped frame are unmapped" \
	"$(grep -c -e '^loc p4:100 unmapped$' -e '^loc r?:7fff00001234 unmapped$' "$T/local.raw")" 2
ok "--store: the missing module's reason is in the summary" \
	grep -q "/opt/gone/libgone.so (deadbeef): missing 1 (100.0%) - no debug info" "$T/local.err"
ok "--store: the summary's source column: dwarf for the program, none for the missing one" \
	sh -c "grep -Eq '^ +[0-9]+ +100\\.0% .* dwarf +$T/prog ' '$T/local.err' &&
	       grep -Eq ' none +/opt/gone/libgone.so ' '$T/local.err'"
is "--store: the program's two maps record their source (mapflags ID dwarf)" \
	"$(grep -c '^mapflags [01] dwarf$' "$T/local.raw")" 2
"$SYM" convert --to pprof -o "$T/local.pb.gz" "$T/local.raw" &&
	"$SYM" convert -o "$T/back.raw" "$T/local.pb.gz"
is "--store: pprof keeps the source (source= in #sym-map)" \
	"$(grep -c '^mapflags [01] dwarf$' "$T/back.raw")" 2
"$SYM" report "$T/local.raw" > "$T/report.out" 2>&1
grep '^Modules' "$T/report.out" | sed 's/^/# /'
ok "sym report's header counts the modules by source" \
	grep -Eqx "Modules by source: dwarf 1(, kallsyms 1)?, none [34]\\." "$T/report.out"
"$SYM" report --store "$T/store" "$T/in.raw" > "$T/report-in.out" 2>&1
is "... and the same line when it symbolizes the input itself" \
	"$(grep '^Modules' "$T/report-in.out")" "$(grep '^Modules' "$T/report.out")"
ok "--store: the stacks are unchanged" \
	sh -c "grep '^stack' '$T/in.raw' | cmp - /dev/stdin" < /dev/null
"$SYM" store --store "$T/store" ls > "$T/ls" 2>&1
ok "--store: the table was converted into the store" grep -q "^$BID" "$T/ls"
mv "$T/prog.debug" "$T/prog.debug.away"
"$SYM" symbolize --store "$T/store" -q "$T/in.raw" > "$T/again.raw" 2> "$T/again.err"
is "--store, again without the debug file: exit 0, nothing on stderr" \
	"$? $(cat "$T/again.err")" "0 "
ok "--store, again: the same output, from the stored table" \
	cmp "$T/local.raw" "$T/again.raw"
mv "$T/prog.debug.away" "$T/prog.debug"
grep '^stack' "$T/in.raw" > "$T/in.stacks"
grep '^stack' "$T/local.raw" > "$T/out.stacks"
ok "the stacks are written unchanged" cmp "$T/in.stacks" "$T/out.stacks"

# A pprof input gives the same locations.
"$SYM" convert --to pprof -o "$T/in.pb.gz" "$T/in.raw"
"$SYM" symbolize --store "$T/store" -q -o "$T/pprof.raw" "$T/in.pb.gz"
grep -E '^(fn|src|loc) ' "$T/local.raw" > "$T/local.locs"
grep -E '^(fn|src|loc) ' "$T/pprof.raw" > "$T/pprof.locs"
ok "a pprof input (sym convert --to pprof) gives the same locations" \
	cmp "$T/local.locs" "$T/pprof.locs"

# --- symd -----------------------------------------------------------------
echo token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
"$SYM" upload --server "$SYMD_URL" --token-file "$T/token" "$T/prog.debug" \
	> "$T/up.out" 2>&1
is "symd: the debug file uploaded with sym upload" "$?" 0
"$SYM" symbolize --server "$SYMD_URL" --wait-ms 20000 -v -o "$T/server.raw" \
	"$T/in.raw" 2> "$T/server.err"
is "--server: exit 0" "$?" 0
sed 's/^/# /' "$T/server.err"
check --server "$T/server.raw" "$T/server.err"
grep -E '^(fn|src|loc) ' "$T/server.raw" > "$T/server.locs"
ok "--server: the same locations as through the local store" \
	cmp "$T/local.locs" "$T/server.locs"
ok "--server: the missing module's reason is the server's" \
	grep -q "libgone.so (deadbeef): missing 1 (100.0%) - the server has no debug information" "$T/server.err"
ok "--server: the source column is symd's: dwarf for the program" \
	grep -Eq "^ +[0-9]+ +100\\.0% .* dwarf +$T/prog " "$T/server.err"

# One request per build ID (the program's two maps are one batch, and the
# kernel resolves here), each lookup address once (address - 1 for return
# addresses, so a p and an r frame at one address are two).
symd_curl "$SYMD_URL/metrics" > "$T/metrics"
reqs=$(awk -F' ' '/^symd_requests_total\{route="symbolize"/ { n += $2 } END { print n + 0 }' "$T/metrics")
is "--server: one request per build ID (the program, the one nobody has)" "$reqs" 2
naddr=$(awk '/^stack/ { for (i = 7; i <= NF; i++) print $i }' "$T/in.raw" |
	awk -F: '
	function hex(s,  v, i) { for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	$1 ~ /^[pr][013]$/ { print ($1 ~ /3$/ ? "gone" : "prog"), hex($2) - ($1 ~ /^r/) }' |
	sort -u | wc -l)
is "--server: each lookup address sent once ($naddr)" \
	"$(awk '/^symd_addresses_total / { print $2 }' "$T/metrics")" "$naddr"

# --- bad input --------------------------------------------------------------
"$SYM" symbolize --store "$T/store" "$T/nope.raw" > /dev/null 2> "$T/err"
is "a missing input: exit 1" "$?" 1
ok "a missing input: the message names it" grep -q "nope.raw" "$T/err"
printf 'sym-raw 1\nperiod 1\nweight-unit ns\nstack 1 1 1 1 - p7:10\nend\n' > "$T/bad.raw"
"$SYM" symbolize --store "$T/store" "$T/bad.raw" > /dev/null 2> "$T/err"
is "a malformed input: exit 1" "$?" 1
ok "a malformed input: the reader's message" \
	grep -q "line 4: frame names map 7" "$T/err"
printf 'not a profile at all' > "$T/junk"
"$SYM" symbolize --store "$T/store" "$T/junk" > /dev/null 2> "$T/err"
is "junk: exit 1 with a message" "$? $(test -s "$T/err" && echo msg)" "1 msg"
stop_symd
"$SYM" symbolize --server "$SYMD_URL" "$T/in.raw" > "$T/out" 2> "$T/err"
is "an unreachable server: exit 1" "$?" 1
ok "an unreachable server: says so" grep -q "cannot reach the server" "$T/err"
is "an unreachable server: nothing written" "$(wc -c < "$T/out")" 0
"$SYM" symbolize > /dev/null 2>&1
is "no input: usage, exit 2" "$?" 2
"$SYM" symbolize --server "$SYMD_URL" --store "$T/store" "$T/in.raw" > /dev/null 2>&1
is "--server with --store: exit 2" "$?" 2
"$SYM" symbolize --wait-ms soon "$T/in.raw" > /dev/null 2>&1
is "a bad --wait-ms: exit 2" "$?" 2
done_testing
