#!/bin/sh
# sym stack --core on the C++ fixture fixtures/src/stack_crash.cc
# (compiled here, -O2 -g), dead of a null pointer four inline levels deep
# while a second thread waits in read(): -i shows the inlined frames,
# without -i each PC is one frame named after the function that holds it,
# and every frame agrees with eu-stack -i -s and gdb.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/core-lib.sh"
need eu-stack gdb python3 g++
[ -x "$SYM" ] || plan_skip "$SYM not built"
core_setup
plan 8

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
