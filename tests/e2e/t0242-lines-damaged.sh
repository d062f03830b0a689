#!/bin/bash
# t0242-lines-damaged.sh - one damaged byte in a .debug_line program
# (issue 24, item 7).  lines.c reads line programs itself; when it
# cannot follow one to its end it must fall back to libdw for that CU,
# so sym addr2line's answers are compared whole (function, inlines,
# file, line) with SYM_LINES=libdw's on every instruction of the file.
# Where libdw cannot read the program either, the damage must be
# reported on stderr and the rows before it kept: never ??:? in silence.
# Fixtures: gcc -O2 -g with DWARF 5 (C) and DWARF 4 (C++); the damage is
# in the second unit's program (tests/e2e/lib/mutate-lines.py).
. "$(dirname "$0")/lib/lib.sh"
need objdump python3
[ -x "$SYM" ] || plan_skip "$SYM not built"
MUT="python3 $SYM_ROOT/tests/e2e/lib/mutate-lines.py"
plan 16

cd "$T" || exit 1
n=0
# answers FILE OUT [ENV...]: sym addr2line -f -i on every address of
# addrs, with a store of its own (the damaged file has the build ID of
# the good one); stderr into OUT.err.
answers() {
	n=$((n + 1))
	env "${@:3}" SYM_STORE="$T/st.$n" "$SYM" addr2line -f -i -e "$1" \
		$(cat addrs) > "$2" 2> "$2.err"
	echo $? > "$2.rc"
}
unknown() { grep -c '^??:' "$1"; }

for fx in gcc-O2-d5-c gcc-O2-d4-cxx; do
	f=$(fixture "$fx") || { echo "Bail out! cannot build the fixtures"; exit 1; }
	objdump -d --no-show-raw-insn "$f" |
		awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }' > addrs
	answers "$f" good
	for what in first-len-0 first-len-ff first-op-undef; do
		echo "# $fx: $($MUT "$f" bad 1 "$what")"
		answers bad fast
		answers bad libdw SYM_LINES=libdw
		echo "# $fx $what: ??:? for $(unknown fast) of $(wc -l < addrs) addresses, $(unknown libdw) with libdw, $(unknown good) undamaged"
		if [ "$(cat fast.rc)" = 0 ] && cmp -s fast libdw; then
			_tap 0 "$fx, $what: the answers of SYM_LINES=libdw"
		else
			_tap 1 "$fx, $what: the answers of SYM_LINES=libdw"
			echo "#   status $(cat fast.rc); first differences (ours, libdw's):"
			diff fast libdw | head -10 | sed 's/^/#   /'
		fi
	done
	# The final DW_LNE_end_sequence runs past the end: libdw refuses the
	# whole program, lines.c keeps what came before.
	echo "# $fx: $($MUT "$f" bad 1 last-len-7f)"
	answers bad fast
	answers bad libdw SYM_LINES=libdw
	echo "# $fx last-len-7f: ??:? for $(unknown fast) of $(wc -l < addrs) addresses, $(unknown libdw) with libdw, $(unknown good) undamaged"
	ok "$fx, last-len-7f: the damage is reported" \
		grep -q "kept the line rows before the damage in CU" fast.err
	is "$fx, last-len-7f: fewer ??:? than libdw, which loses the unit" \
		"$([ "$(unknown fast)" -lt "$(unknown libdw)" ] && echo yes)" yes
	# Only the last row of the program may be lost: every other answer
	# is the undamaged file's.
	is "$fx, last-len-7f: all but the last row's addresses answer as undamaged" \
		"$(diff good fast | grep -c '^>')" \
		"$(diff good fast | grep -c '^>' | awk '$1 <= 8 { print $1 }')"
	is "$fx, last-len-7f: status 0" "$(cat fast.rc)" 0
	# Undamaged: the two readers agree.
	answers "$f" libdw-good SYM_LINES=libdw
	ok "$fx, undamaged: the answers of SYM_LINES=libdw" cmp good libdw-good
done

done_testing
