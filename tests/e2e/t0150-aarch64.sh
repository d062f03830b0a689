#!/bin/sh
# t0150-aarch64.sh - aarch64 binaries symbolized on this x86-64 host:
# the fixtures' C and C++ programs cross-built with Debian's
# aarch64-linux-gnu-gcc/g++ (-O2 -g, inlining) and the aarch64 libc of
# libc6-arm64-cross, against llvm-symbolizer: every instruction of the
# programs (tests/oracle.py: whole paths, full names, every frame,
# >= 99.5%), byte for byte through bin/compat/llvm-symbolizer (every
# instruction of the programs, every 100th of the libc), and through symd
# after sym upload.  Mapping symbols ($x, $d: AAELF64 5.5.4) never name a
# function: before libsym skipped them, 75 of the C program's 1,345
# instructions were named "$x" by sym addr2line, and the drop-in differed
# from llvm-symbolizer on 56 of them (_init's tail, the crt code).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need python3 llvm-symbolizer aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ \
	aarch64-linux-gnu-objdump curl
[ -x "$SYM" ] || plan_skip "$SYM not built"
LIBC=/usr/aarch64-linux-gnu/lib/libc.so.6
[ -f "$LIBC" ] || plan_skip "no $LIBC (libc6-arm64-cross)"

S=$SYM_ROOT/fixtures/src
aarch64-linux-gnu-gcc -O2 -g -I"$S" -o "$T/c" "$S/c_main.c" "$S/c_hash.c" \
	"$S/c_tree.c" || plan_skip "the C fixture does not cross-build"
aarch64-linux-gnu-g++ -O2 -g -I"$S" -o "$T/cxx" "$S/cxx_main.cc" \
	"$S/cxx_algo.cc" "$S/cxx_shapes.cc" ||
	plan_skip "the C++ fixture does not cross-build"

plan 10

export SYM_STORE="$T/store"
oracle_point "C -O2: every instruction agrees with llvm-symbolizer" \
	--sample 0 "$T/c"
oracle_point "C++ -O2: every instruction agrees with llvm-symbolizer" \
	--sample 0 "$T/cxx"
# The libc has symbols only (oracle.py wants line info): the drop-in's
# bytes against llvm-symbolizer's, on every 100th instruction.
aarch64-linux-gnu-objdump -d --no-show-raw-insn "$LIBC" |
	sed -n 's/^ *\([0-9a-f][0-9a-f]*\):\t.*/0x\1/p' | awk 'NR % 100 == 1' \
	> "$T/libc.addrs"
llvm-symbolizer --obj="$LIBC" < "$T/libc.addrs" > "$T/want"
"$SYM_ROOT/bin/compat/llvm-symbolizer" --obj="$LIBC" < "$T/libc.addrs" \
	> "$T/got"
same_file "aarch64 libc (symbols only): llvm-symbolizer's bytes on $(wc -l < "$T/libc.addrs") instructions" \
	"$T/want" "$T/got"

# No answer is named after a mapping symbol.
for f in c cxx; do
	aarch64-linux-gnu-objdump -d --no-show-raw-insn "$T/$f" |
		sed -n 's/^ *\([0-9a-f][0-9a-f]*\):\t.*/0x\1/p' > "$T/$f.addrs"
done
"$SYM" addr2line -e "$T/c" -f -i < "$T/c.addrs" > "$T/c.a2l"
is "no function is named after a mapping symbol" \
	"$(grep -c '^\$[adtx]' "$T/c.a2l")" 0
_init=$(aarch64-linux-gnu-nm "$T/c" | awk '$3 == "_init" { print $1 }')
is "the end of _init (crtn.o's code, where \$x starts again) is _init" \
	"$("$SYM" addr2line -e "$T/c" -f "0x$(printf %x $((0x$_init + 16)))" | head -1)" \
	_init

# The drop-in gives llvm-symbolizer's bytes.
for f in c cxx; do
	llvm-symbolizer --obj="$T/$f" < "$T/$f.addrs" > "$T/want"
	"$SYM_ROOT/bin/compat/llvm-symbolizer" --obj="$T/$f" < "$T/$f.addrs" \
		> "$T/got"
	same_file "bin/compat/llvm-symbolizer: llvm-symbolizer's bytes on every instruction of $f" \
		"$T/want" "$T/got"
done

# symd serves them after sym upload (the debug file, then the lookups).
echo token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
"$SYM" upload --server "$SYMD_URL" --token-file "$T/token" "$T/cxx" \
	> "$T/up" 2>&1
is "sym upload of the aarch64 C++ program: exit 0" "$?" 0
id=$("$SYM" buildid "$T/cxx" | cut -d' ' -f1)
"$SYM" addr2line --no-cache -e "$T/cxx" --output-style=LLVM -f -i -C \
	< "$T/cxx.addrs" > "$T/want"
"$SYM" lookup --server "$SYMD_URL" --wait-ms 30000 --output-style=LLVM \
	-f -i -C "$id" < "$T/cxx.addrs" > "$T/got" 2> "$T/err"
is "sym lookup --server: exit 0" "$? $(cat "$T/err")" "0 "
same_file "symd's answers are sym addr2line's, on every instruction" \
	"$T/want" "$T/got"
done_testing
