#!/bin/bash
# t0221-compat-asan.sh - AddressSanitizer's reports, symbolized through
# bin/compat/llvm-symbolizer, are the reports llvm-symbolizer 14 gives,
# frame for frame.  The program (fixtures/src/heap_uaf.cc) reads freed
# memory through inlined C++ calls; the clients are nobody's here:
#
#  - clang 14's runtime starts the program named by ASAN_SYMBOLIZER_PATH
#    (its file name must start with "llvm-symbolizer") and talks to it
#    with CODE "FILE" 0xOFF lines: asan-clang (clang++'s code) and
#    asan-gcc-clangrt (g++'s code and DWARF, linked with clang's runtime);
#  - gcc 12's runtime (libasan.so.8) symbolizes with its own libbacktrace
#    and never starts one (checked below), so its report is written
#    unsymbolized (symbolize=0) and symbolized by LLVM's
#    asan_symbolize-14 through LLVM_SYMBOLIZER_PATH, with and without -d.
#
# Both runs of a program have ASLR off (setarch -R) and environments of
# the same size (a variable pads the shorter symbolizer path), so heap
# and stack addresses agree; only the pid is masked.  Nothing else is:
# until libsym joins include directories to DW_AT_comp_dir, the libc
# frames' paths differ (docs/conformance.md, "The compat programs").
. "$(dirname "$0")/lib/lib.sh"
need setarch g++ clang++ llvm-symbolizer python3
[ -x "$SYM" ] || plan_skip "$SYM not built"
COMPAT=$SYM_ROOT/bin/compat/llvm-symbolizer
REAL=/usr/bin/llvm-symbolizer
[ -x "$COMPAT" ] || plan_skip "$COMPAT not built"
[ -x "$REAL" ] || plan_skip "$REAL missing"
setarch -R true 2> /dev/null ||
	plan_skip "setarch -R (no ASLR) is not permitted here"
fixture asan-clang > /dev/null || {
	echo "Bail out! cannot build the fixtures"
	exit 1
}
FX=$SYM_ROOT/fixtures/build
SRC=$SYM_ROOT/fixtures/src/heap_uaf.cc
plan 9

cd "$T" || exit 1
# The real symbolizer's path is the shorter one.
pad=$(printf '%*s' $((${#COMPAT} - ${#REAL})) '' | tr ' ' x)

# report SYMBOLIZER PAD PROG: its report (stderr), the pid masked.
report() {
	env ASAN_SYMBOLIZER_PATH="$1" SYM_PAD="$2" \
		ASAN_OPTIONS=detect_leaks=0 setarch -R "$3" 2>&1 > /dev/null |
		sed 's/==[0-9]*==/==PID==/g'
}

# named DESC FILE: the report has the bad read at heap_uaf.cc in peek()
# and at least 8 frames in the program's source.
named() {
	if grep -q "#0 0x[0-9a-f]* in .*peek.* $SRC:[0-9]" "$2" &&
	   [ "$(grep -c " $SRC:[0-9]" "$2")" -ge 8 ]; then
		_tap 0 "$1"
	else
		_tap 1 "$1"
		sed 's/^/#   /' "$2" | head -30
	fi
}

for p in asan-clang asan-gcc-clangrt; do
	report "$COMPAT" "" "$FX/$p" > "$p.sym"
	report "$REAL" "$pad" "$FX/$p" > "$p.llvm"
	named "$p (clang's runtime): the report names the frames" "$p.sym"
	same_file "$p (clang's runtime): the same report as with llvm-symbolizer" \
		"$p.llvm" "$p.sym"
done

# gcc's runtime: its own symbolizer, whatever ASAN_SYMBOLIZER_PATH says.
ASAN_OPTIONS=verbosity=2:detect_leaks=0 ASAN_SYMBOLIZER_PATH="$COMPAT" \
	setarch -R "$FX/asan-gcc" > /dev/null 2> gcc.verbose
ok "asan-gcc: gcc 12's runtime symbolizes with libbacktrace" \
	grep -q "Using libbacktrace symbolizer" gcc.verbose
ASAN_OPTIONS=symbolize=0:detect_leaks=0 setarch -R "$FX/asan-gcc" \
	> /dev/null 2> gcc.raw
if command -v asan_symbolize-14 > /dev/null 2>&1; then
	for d in "" -d; do
		LLVM_SYMBOLIZER_PATH=$COMPAT asan_symbolize-14 $d < gcc.raw \
			> "gcc$d.sym" 2>&1
		LLVM_SYMBOLIZER_PATH=$REAL asan_symbolize-14 $d < gcc.raw \
			> "gcc$d.llvm" 2>&1
		named "asan-gcc, asan_symbolize-14 $d: the frames are named" \
			"gcc$d.sym"
		same_file "asan-gcc, asan_symbolize-14 $d: the same report" \
			"gcc$d.llvm" "gcc$d.sym"
	done
else
	for i in 1 2 3 4; do
		skip "asan_symbolize-14 not installed (llvm-14)"
	done
fi
done_testing
