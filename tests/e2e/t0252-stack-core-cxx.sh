#!/bin/sh
# sym stack --core on the C++ fixture fixtures/src/stack_crash.cc
# (compiled here, -O2 -g), dead of a null pointer four inline levels deep
# while a second thread waits in read(): -i shows the inlined frames,
# without -i each PC is one frame named after the function that holds it,
# and every frame agrees with eu-stack -i -s and gdb.  `sym addr2line
# --core` answers the runtime PCs of the stack as eu-addr2line --core does.
# A stripped --executable gets its debug information from --debuginfo-path,
# from the store's table (which the first sym stack left there), or from
# symd (--server) once its debug file is uploaded there; before,
# it is listed as missing with the upload command.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/core-lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need eu-stack gdb python3 g++
[ -x "$SYM" ] || plan_skip "$SYM not built"
core_setup
plan 23

g++ -O2 -g -pthread -o "$T/stack_crash" \
	"$SYM_ROOT/fixtures/src/stack_crash.cc" || exit 1
core=$(make_core "$T/stack_crash")
[ -n "$core" ] || { echo "# no core written"; cat "$T/.core.out"; exit 1; }
peer_points cxx "$core" "$T/stack_crash"

ok "the crashing thread carries SIGSEGV" \
	grep -q '^TID [0-9]*: stack_crash (SIGSEGV)$' "$T/cxx.sym"
ok "two threads" test "$(grep -c '^TID' "$T/cxx.sym")" = 2
# The leaf: the inlined line() at the null dereference, inside
# crash::total().
sed -n '3,4p' "$T/cxx.sym" | sed "s|$SYM_ROOT/fixtures/src/stack_crash.cc|/FIXTURE|" | sed 's/^#[0-9]* *0x[0-9a-f]* //; s/:[0-9]* (inl/ (inl/; s/ - .*//' > "$T/leaf"
run_compare "-i: the inlined frame, then its caller" cat "$T/leaf" <<'EOT'
line /FIXTURE:21 (inlined)
crash::total(crash::Item const*, int) /FIXTURE:29:14
EOT
"$SYM" stack --core "$core" > "$T/noinl"
ok "without -i, one frame per PC named after its function" \
	grep -q '^#0  0x[0-9a-f]* crash::total(crash::Item const\*, int) .*stack_crash.cc:21' "$T/noinl"

pcs=$(sed -n 's/^#[0-9]* *\(0x[0-9a-f]*\) .*/\1/p' "$T/cxx.sym" | sort -u)
"$SYM" addr2line --output-style=elfutils -f -i -C --core "$core" $pcs \
	> "$T/a2l.sym" 2>&1
eu-addr2line -f -i -C --core "$core" $pcs > "$T/a2l.eu" 2>&1
same_file "addr2line --core: as eu-addr2line --core" "$T/a2l.eu" "$T/a2l.sym"
"$SYM" addr2line --core "$core" 0x10 > /dev/null 2> "$T/a2l.err"
rc=$?
is "addr2line --core: an unmapped address is an error" \
	"$rc $(cat "$T/a2l.err")" \
	"1 sym addr2line: 0x10 is in no mapped ELF file"

# A stripped copy given as --executable, its debug file found only by
# --debuginfo-path: the same frames.
bid=$("$SYM" buildid "$T/stack_crash" | cut -d' ' -f1)
d=$T/dbg/.build-id/$(echo "$bid" | cut -c1-2)
mkdir -p "$d" "$T/bin"
objcopy --only-keep-debug "$T/stack_crash" "$d/$(echo "$bid" | cut -c3-).debug"
objcopy --strip-all "$T/stack_crash" "$T/bin/stack_crash"
"$SYM" stack -i --core "$core" --executable "$T/bin/stack_crash" \
	--store "$T/store-dpath" --debuginfo-path "$T/dbg" 2>&1 | sed "s|$T/bin/||" > "$T/dpath.sym"
sed "s|$T/||" "$T/cxx.sym" > "$T/cxx.sym.rel"
same_file "--executable (stripped) with --debuginfo-path: same frames" \
	"$T/cxx.sym.rel" "$T/dpath.sym"

# symd: nothing there yet, so the module is missing and named; once its
# debug file is uploaded, the same frames as from the file itself.
echo secret-token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
"$SYM" stack -i --core "$core" --executable "$T/bin/stack_crash" \
	--store "$T/store-srv" --server "$SYMD_URL" > /dev/null 2> "$T/srv0.err"
ok "--server without the debug file: named as missing" \
	grep -q "^  $T/bin/stack_crash $bid" "$T/srv0.err"
"$SYM" upload --server "$SYMD_URL" --token-file "$T/token" \
	"$d/$(echo "$bid" | cut -c3-).debug" > "$T/up.out" 2>&1
is "the debug file uploaded" "$?" 0
"$SYM" stack -i --core "$core" --executable "$T/bin/stack_crash" \
	--store "$T/store-srv" --server "$SYMD_URL" 2> "$T/srv.err" | sed "s|$T/bin/||" > "$T/srv.sym"
same_file "--server: the frames symd gives are the file's" \
	"$T/cxx.sym.rel" "$T/srv.sym"

# The store: the first sym stack above kept the table of the fixture in
# the test's store; the stripped copy alone gets the same frames.
"$SYM" stack -i --core "$core" --executable "$T/bin/stack_crash" 2>&1 |
	sed "s|$T/bin/||" > "$T/store.sym"
same_file "the store's table: the same frames" "$T/cxx.sym.rel" \
	"$T/store.sym"

# eu_core NAME: a core of $T/NAME; sym stack -i and eu-stack -i -s of it
# in $T/NAME.sym and $T/NAME.eu, their comparison in $T/NAME.cmp.
eu_core() {
	core=$(make_core "$T/$1")
	"$SYM" stack -i --core "$core" > "$T/$1.sym" 2>&1
	eu-stack -i -s --core "$core" -e "$T/$1" > "$T/$1.eu" 2>&1
	python3 "$SYM_ROOT/tests/e2e/lib/stack-compare.py" "$T/$1.sym" \
		"$T/$1.eu" eu "$T/$1" > "$T/$1.cmp"
}

# No CFI at all in the program (fixtures/src/stack_nocfi.c): the CFI walk
# stops at the leaf, frame pointers take over, and the frames say so; they
# are the ones eu-stack finds (it falls back to frame pointers too).
gcc -O1 -g -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-fno-omit-frame-pointer -o "$T/nocfi.g" \
	"$SYM_ROOT/fixtures/src/stack_nocfi.c" &&
	objcopy -R .debug_frame "$T/nocfi.g" "$T/nocfi" || exit 1
eu_core nocfi
ok "no CFI: frame-pointer frames, flagged [fp]" \
	grep -q '^#0  0x[0-9a-f]* leaf .* \[fp\]$' "$T/nocfi.sym"
agree_point "no CFI: agrees with eu-stack" "$T/nocfi.cmp"

# CFI in the leaf, none in its caller (fixtures/src/stack_midnocfi.c, as
# a JIT's code calling a runtime): the CFI walk stops at mid()'s return
# address; mid()'s rbp is in the leaf's register (-O1: the leaf keeps
# rbp) or under the return address the leaf's frame-pointer frame saved
# (-O0); frame pointers bridge mid() and CFI takes over at main(), so
# sym shows eu-stack's frames.
for o in O1 O0; do
	gcc -O1 -g -fno-omit-frame-pointer -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -DPART_MID -c -o "$T/mid.o" \
		"$SYM_ROOT/fixtures/src/stack_midnocfi.c" &&
		gcc -$o -g -c -o "$T/rest.o" \
			"$SYM_ROOT/fixtures/src/stack_midnocfi.c" &&
		gcc -o "$T/mid.g" "$T/mid.o" "$T/rest.o" &&
		objcopy -R .debug_frame "$T/mid.g" "$T/mid-$o" || exit 1
	eu_core "mid-$o"
	ok "caller without CFI ($o): main() found by frame pointers" \
		grep -q '^#2  0x[0-9a-f]* main .* \[fp\]$' "$T/mid-$o.sym"
	ok "caller without CFI ($o): eu-stack's frames, none missing" \
		grep -q 'compared=6 only_sym=0 only_peer=0' "$T/mid-$o.cmp"
	agree_point "caller without CFI ($o): agrees with eu-stack" \
		"$T/mid-$o.cmp"
done
