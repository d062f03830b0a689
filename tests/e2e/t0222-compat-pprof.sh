#!/bin/bash
# t0222-compat-pprof.sh - Google's pprof (built offline from Debian's
# sources, tests/e2e/lib/pprof-lib.sh) symbolizes an unsymbolized profile
# with bin/compat/llvm-symbolizer (PPROF_TOOLS=bin/compat) as it does with
# the real llvm-symbolizer 14 on PATH: `pprof -top -lines` and `-traces`
# print the same bytes.
#
# pprof runs `llvm-symbolizer --inlining -demangle=false` per mapping
# and writes "CODE FILE 0xADDR" lines, reading each answer up to its
# blank line, so the drop-in's protocol, flushing and names are all on
# the path.  The profile is written here: a raw profile (docs/raw-
# format.md) of fixtures with inlined C and C++ code, 80 stacks over
# their instructions, converted by `sym convert --to pprof` (mappings
# with the file and build ID, locations without lines).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/pprof-lib.sh"
need readelf objdump llvm-symbolizer
[ -x "$SYM" ] || plan_skip "$SYM not built"
COMPAT_DIR=$SYM_ROOT/bin/compat
[ -x "$COMPAT_DIR/llvm-symbolizer" ] || plan_skip "bin/compat not built"
need_pprof
fixture gcc-O2-d5-cxx > /dev/null || {
	echo "Bail out! cannot build the fixtures"
	exit 1
}
plan 6

cd "$T" || exit 1
FX=$SYM_ROOT/fixtures/build

# raw_profile BIN...: one map per program (its executable segment at a
# PIE's usual base, a different one each), stacks of three frames: an
# exact PC and two return addresses, every one an instruction of the
# program.
raw_profile() {
	local i=0 b bid off vaddr size base
	echo "sym-raw 1"
	echo "period 1000000"
	echo "weight-unit ns"
	for b; do
		bid=$("$SYM" buildid "$b" | cut -d' ' -f1)
		# The R E LOAD segment: offset, vaddr, memory size.
		read -r off vaddr size < <(readelf -lW "$b" | awk '$1 == "LOAD" &&
			$7 == "R" && $8 == "E" { print $2, $3, $6 }')
		base=$((0x555555000000 + i * 0x1000000))
		printf 'map %d file 100 %x %x %x %x %s %s\n' "$i" \
			$((base + (vaddr & ~0xfff))) $((base + vaddr + size)) \
			$((off & ~0xfff)) $((vaddr & ~0xfff)) "$bid" "$b"
		i=$((i + 1))
	done
}

BINS="$FX/gcc-O2-d5-cxx $FX/clang-O2-d5-cxx $FX/gcc-O3-d4-c"
{
	raw_profile $BINS
	m=0
	for b in $BINS; do
		objdump -d --no-show-raw-insn "$b" |
			awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print $1 }' \
			> "addrs.$m"
		awk -v m="$m" '{ a[NR] = $1 }
			END { for (i = 0; i < 80; i++) {
				l = int(NR / 83 * i) + 1
				c1 = (i * 37 + 11) % NR + 1
				c2 = (i * 53 + 5) % NR + 1
				printf "stack %d %d 100 100 - p%d:%s r%d:%s r%d:%s\n",
					i % 7 + 1, (i % 7 + 1) * 1000000, m, a[l],
					m, a[c1], m, a[c2]
			} }' "addrs.$m"
		m=$((m + 1))
	done
	echo "end"
} > prof.raw
ok "sym convert writes the unsymbolized profile" \
	"$SYM" convert --to pprof -o prof.pb.gz prof.raw

# pprof_with TOOLS ARGS...: pprof symbolizing locally with the tools
# found through PPROF_TOOLS=TOOLS, or (TOOLS empty) on PATH.
pprof_with() {
	local tools=$1
	shift
	if [ -n "$tools" ]; then
		go_env PPROF_TOOLS="$tools" "$PPROF" -symbolize=local "$@"
	else
		go_env "$PPROF" -symbolize=local "$@"
	fi
}

for view in "-top -lines" "-traces"; do
	name=$(echo "$view" | tr -d ' -')
	pprof_with "" $view -nodecount=100000 prof.pb.gz > "$name.llvm" \
		2> "$name.llvm.err"
	pprof_with "$COMPAT_DIR" $view -nodecount=100000 prof.pb.gz \
		> "$name.sym" 2> "$name.sym.err"
	same_file "pprof $view: the same output as with llvm-symbolizer" \
		"$name.llvm" "$name.sym"
done
# Not vacuous: functions and lines are named, inlined C++ frames too.
ok "pprof -top -lines: source lines of the fixtures are named" \
	test "$(grep -c ' /.*/fixtures/src/[a-z_]*\.[ch][ch]*:[0-9]' \
		toplines.sym)" -ge 20
ok "pprof -traces: inlined C++ frames are named" \
	grep -q 'fix::geom::Vec::operator.* (inline)$' traces.sym
ok "pprof says nothing on stderr with the drop-in" test ! -s traces.sym.err
done_testing
