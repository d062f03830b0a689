#!/bin/sh
# t0132-peers-quick.sh - the quick form of the byte-identical measurement
# (issue 15; tests/peers.py, docs/oracle.md "Byte-identical"): `sym
# addr2line` in each style against llvm-symbolizer 14, GNU addr2line 2.40
# and eu-addr2line 0.188, byte for byte, on 300 sampled instruction
# addresses of the -O2 C and C++ fixtures (gcc and clang, DWARF 4 and 5),
# the -relpath ones (relative comp_dir) and Debian's libc.so.6 (libc6-dbg)
# and python3.11d.  One TAP point per input and peer: >= 99.5% identical
# (against GNU and eu, of the addresses no peer bug listed in
# docs/oracle.md covers); and one that no difference is in a file name.
# The full measurement (2,000 addresses, libjvm too) is
#   tests/peers.py libc python3.11d libjvm fixtures
. "$(dirname "$0")/lib/lib.sh"
need python3 llvm-symbolizer addr2line eu-addr2line objdump nm readelf \
	llvm-dwarfdump
[ -x "$SYM" ] || plan_skip "$SYM not built"
fixture MANIFEST > /dev/null || { echo "Bail out! fixtures/build.sh failed"; exit 1; }
set -- gcc-O2-d4-c gcc-O2-d5-c gcc-O2-d4-cxx gcc-O2-d5-cxx \
	clang-O2-d4-c clang-O2-d5-c clang-O2-d4-cxx clang-O2-d5-cxx \
	gcc-O2-d5-c-relpath gcc-O2-d4-cxx-relpath clang-O2-d5-cxx-relpath \
	clang-O2-d4-c-relpath
[ -f /lib/x86_64-linux-gnu/libc.so.6 ] &&
	[ -d /usr/lib/debug/.build-id ] && set -- "$@" libc
[ -f /usr/bin/python3.11d ] && set -- "$@" python3.11d
SYM="$SYM" python3 "$SYM_ROOT/tests/peers.py" --tap --sample 300 --show 5 "$@"
