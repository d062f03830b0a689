#!/bin/bash
# t0220-compat-cli.sh - bin/compat/llvm-symbolizer and bin/compat/addr2line
# (sym started under those names, tools/compat.c) against the real
# llvm-symbolizer 14 and GNU addr2line 2.40, whole outputs and exit
# statuses compared:
#
#  - llvm-symbolizer's command line: each spelling LLVM 14 accepts or
#    refuses (single and double dashes, grouped short options, =false,
#    --functions=, --adjust-vma, -e forms, @FILE, LLVM_SYMBOLIZER_OPTS);
#  - its stdin protocol in the LLVM, GNU and JSON styles, with -a and
#    -p: FILE ADDR, "FILE" ADDR, CODE and DATA lines, and the malformed
#    ones (garbage, empty lines, bad numbers, a missing address, a file
#    that does not exist, twice, a directory, a 1023-byte piece of a
#    long line, \r), after which it goes on;
#  - every instruction of a C and a C++ fixture (PLT and crt code
#    included), in each style and with --no-inlines, --functions=short
#    and none, --adjust-vma;
#  - addr2line's command line and input: hex as strtoul() reads it,
#    SYMBOL+OFF, blank and long lines, -j, -b, file errors.
#
# The options sym refuses (--verbose, --dwp, ...) exit 1 with a message,
# and FRAME inputs get the no-locals answer with one warning.
. "$(dirname "$0")/lib/lib.sh"
need llvm-symbolizer addr2line objdump
[ -x "$SYM" ] || plan_skip "$SYM not built"
LS=$SYM_ROOT/bin/compat/llvm-symbolizer
A2L=$SYM_ROOT/bin/compat/addr2line
[ -x "$LS" ] && [ -x "$A2L" ] || plan_skip "bin/compat not built"
fixture gcc-O2-d5-cxx > /dev/null || {
	echo "Bail out! cannot build the fixtures"
	exit 1
}
FX=$SYM_ROOT/fixtures/build
plan 14

cd "$T" || exit 1
C=$FX/clang-O2-d4-c
CXX=$FX/gcc-O2-d5-cxx

# both DESC PEER SYM ARGS...: run the peer and ours with ARGS (stdin
# from $T/in); stdout and the status must agree.  Appends a line to
# $T/both.log when they do not.
both() {
	"$2" "${@:4}" < in > peer.out 2> peer.err
	_pr=$?
	"$3" "${@:4}" < in > sym.out 2> sym.err
	_sr=$?
	if [ "$_pr" = "$_sr" ] && cmp -s peer.out sym.out; then
		return 0
	fi
	{
		echo "$1 ${*:4}: status $_pr/$_sr"
		diff peer.out sym.out | head -6
	} >> both.log
	return 1
}

# point DESC [TODO]: one TAP point from the both() calls since the last;
# with TODO, a point whose failure is that open work of issue 15.
point() {
	if [ -s both.log ]; then
		if [ -n "$2" ]; then
			_tap_todo 1 "$1" "$2"
		else
			_tap 1 "$1"
		fi
		sed 's/^/#   /' both.log | head -40
	elif [ -n "$2" ]; then
		_tap_todo 0 "$1" "$2"
	else
		_tap 0 "$1"
	fi
	rm -f both.log
}

# ---------------------------------------------- llvm-symbolizer's options
: > in
for args in "-demangle=false" "--demangle=false" "-no-demangle" \
	"--no-demangle -C" "--demangle --no-demangle" "--functions=short" \
	"-f=none" "-f --functions=none" "--functions=none -f" \
	"--functions=bogus" "--functions" "-inlining" "--inlining" \
	"--inlining=false" "--inlining=true" "--inlines=false" "-i" \
	"--no-inlines" "-fi" "-Cfi" "-Cfpa" "-a" "-p" "-s" "--print-address" \
	"-print-address" "-pretty-print" "--use-symbol-table=true" \
	"--default-arch=x86_64" "--default-arch x86_64" \
	"-default-arch=x86_64" "--relative-address" "--adjust-vma=0x10" \
	"--adjust-vma 16" "--adjust-vma=zz" "--adjust-vma=010" \
	"--adjust-vma=0b1" "--output-style=gnu" "--output-style=GNU" \
	"--output-style JSON" "--output-style=JSON -p" "--untag-addresses" \
	"--no-untag-addresses" "--debuginfod" "-x" "--" "-" "--obj" \
	"--relativenames" "--relativenames -s" "-s --relativenames"; do
	# shellcheck disable=SC2086
	both "llvm-symbolizer" llvm-symbolizer "$LS" --obj="$C" $args 0x1160 \
		"main" 0x1170
done
# Help and version are in sym's words: the status must agree.
for args in -h --help --version -v; do
	llvm-symbolizer $args > /dev/null 2>&1
	_pr=$?
	"$LS" $args > /dev/null 2>&1
	[ "$_pr" = $? ] || echo "llvm-symbolizer $args: status differs" >> both.log
done
point "llvm-symbolizer: the command-line spellings LLVM 14 accepts and refuses"

for e in "-e$C" "-e $C" "-e=$C" "--exe=$C" "--exe $C" "-exe=$C" "-ie $C" \
	"--obj $C" "--obj=$C --obj=/nonexistent" "--obj=/nonexistent --obj=$C"; do
	# shellcheck disable=SC2086
	both "llvm-symbolizer" llvm-symbolizer "$LS" $e 0x1160
done
echo "--obj=$C -a --output-style=JSON" > opts.rsp
both "llvm-symbolizer" llvm-symbolizer "$LS" @opts.rsp 0x1160
LLVM_SYMBOLIZER_OPTS="-a --output-style=GNU" both "llvm-symbolizer" \
	llvm-symbolizer "$LS" --obj="$C" 0x1160
point "llvm-symbolizer: -e, --exe, --obj, @FILE and LLVM_SYMBOLIZER_OPTS"

bad=0
for args in --verbose --print-source-context-lines=3 --dwp=x \
	"--dsym-hint x" --dia; do
	# shellcheck disable=SC2086
	"$LS" --obj="$C" $args 0x1160 > out 2> err
	rc=$?
	if [ "$rc" != 1 ] || [ -s out ] || ! grep -q 'not supported' err; then
		echo "# $args: status $rc, $(cat err)"
		bad=1
	fi
done
_tap "$bad" "llvm-symbolizer: the options sym cannot honour are refused"

# ---------------------------------------------- llvm-symbolizer's input
long=$(printf '%*s' $((1023 - ${#C} - 3)) '')
printf '%s\n' "$C 0x1160" "\"$C\" 0x1170" "'$C' 0x1160" "CODE $C 0x1160" \
	"DATA $C 0x4010" "DATA $C 0x1160" "DATA $C 0x10" "  $C   0x1170  x" \
	"garbage" "" "0xzz" "$C" "$C 0xzz" "$C 1160" "$C 4464" "$C 010" \
	"$C 0b1" "$C -1" "$C 0x" "code $C 0x1160" "CODE" "DATA" "CODE  $C 0x1160" \
	"\"$C 0x1160" "/nonexistent 0x10" "/nonexistent 0x20" \
	"DATA /nonexistent 0x30" "/ 0x10" "/etc/passwd 0x10" "$C:x86_64 0x1160" \
	"$C:i386 0x1160" "$C:nosuch 0x1160" "$C${long}0x1160" \
	"$(printf '%s\r' "$C 0x1160")" "$C 0x1160" > in
for style in LLVM GNU JSON; do
	for o in "" "-a" "-p" "-a -p" "--no-inlines -a"; do
		# shellcheck disable=SC2086
		both "llvm-symbolizer" llvm-symbolizer "$LS" \
			--output-style=$style $o
		# The file errors, once per file, on stderr.
		cmp -s peer.err sym.err ||
			echo "stderr of --output-style=$style $o differs" >> both.log
	done
	point "llvm-symbolizer $style: stdin lines, malformed ones included"
done
printf '%s\n' "$C 0x1160" "$C 0x1170" > in
both "llvm-symbolizer" llvm-symbolizer "$LS" --obj="$C" "$C 0x1160" \
	"garbage" "DATA 0x4010" "/nonexistent 0x1" 0x1170
both "llvm-symbolizer" llvm-symbolizer "$LS" --output-style=JSON \
	"$C 0x1160" "garbage" "DATA $C 0x4010" "/nonexistent 0x1" \
	"/nonexistent 0x2"
both "llvm-symbolizer" llvm-symbolizer "$LS" --output-style=JSON -p \
	"$C 0x1160" "garbage" "DATA $C 0x4010" "/nonexistent 0x1"
point "llvm-symbolizer: addresses on the command line (JSON: one list)"

printf '%s\n' "FRAME $C 0x1160" "$C 0x1160" > in
"$LS" < in > frame.out 2> frame.err
printf '??\n\n' > frame.want
echo "$C 0x1160" | llvm-symbolizer >> frame.want
is "FRAME: the no-locals answer, one warning, and the next line answered" \
	"$(cat frame.out; grep -c FRAME frame.err)" "$(cat frame.want; echo 1)"

# ------------------------------------- every instruction of two fixtures
insns() {
	objdump -d --no-show-raw-insn "$1" |
		awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }'
}
for b in "$C" "$CXX"; do
	insns "$b" > in
	for o in "" "--output-style=GNU" "--no-inlines" \
		"--output-style=GNU --no-inlines" "--functions=short -a" \
		"--functions=none -p" "--no-demangle" "--adjust-vma=0x10"; do
		# shellcheck disable=SC2086
		both "llvm-symbolizer" llvm-symbolizer "$LS" --obj="$b" $o
	done
	point "llvm-symbolizer: every instruction of ${b##*/}, in 8 ways"
	for o in "--output-style=JSON" "--output-style=JSON --no-inlines"; do
		# shellcheck disable=SC2086
		both "llvm-symbolizer" llvm-symbolizer "$LS" --obj="$b" $o
	done
	point "llvm-symbolizer: every instruction of ${b##*/}, JSON"
done

# ------------------------------------------------------- GNU addr2line
G=$FX/gcc-O2-d4-c
python3 - > in <<'EOF'
for l in ["", "garbage", "1199zz", " 0x1199", "-1", "+1199", "0X1199",
          "main", "main+0x10", "main + 16", "tree_insert", "A", "Afoo+1",
          "ffffffffffffffffffffff", "0" * 120 + "1199", "x" * 99, "\t0x1199",
          "1199"]:
    print(l)
EOF
for o in "" "-a -f" "-f -i -p -a" "-fiC" "-s -f"; do
	# shellcheck disable=SC2086
	both "addr2line" addr2line "$A2L" -e "$G" $o
done
both "addr2line" addr2line "$A2L" -e "$G" -a main garbage 1199 "" +16
point "addr2line: addresses as binutils 2.40 reads them (hex, SYMBOL+OFF)"

: > in
for args in "-e /nonexistent 1" "-e / 1" "-e /etc/passwd 1" "1" \
	"-b foo -e $G 1199" "-b elf64-little -e $G 1199" \
	"-b elf32-i386 -e $G 1199" "-j .text -e $G 0x10 0x99999" \
	"-j .nosuch -e $G 1" "--demangle=bogus -e $G 1" \
	"--demangle=none -e $G -f 1199" "--demangle=auto -e $G -f 1199" \
	"-r -e $G 1199" "-R -e $G 1199" "--foo" "-Z" \
	"--exe=$G --addr 1199" "--basenames -e $G 1199"; do
	# shellcheck disable=SC2086
	both "addr2line" addr2line "$A2L" $args
done
: > empty
both "addr2line" addr2line "$A2L" -e empty 1
point "addr2line: options, -j, -b, --demangle=, and file errors"
done_testing
