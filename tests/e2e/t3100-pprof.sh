#!/bin/bash
# t3100-pprof.sh - `sym convert` between raw and pprof, checked with
# Google's own pprof (built offline, tests/e2e/lib/pprof-lib.sh):
#
#  - raw -> pprof: `pprof -raw` shows the samples, values, labels, runtime
#    addresses and mappings (ranges, offsets, files, build IDs) the raw
#    file says; `pprof -traces` one trace per stack with its labels;
#  - pprof -> raw gives the raw file back, byte for byte;
#  - a file rewritten by pprof's writer (pprof -proto) still converts
#    back with every vaddr, map kind and pid (frame kinds then follow
#    pprof's rule);
#  - a real Go CPU profile (runtime/pprof) converts, with guessed vaddrs
#    and the same totals;
#  - bad inputs fail with the reader's message and exit 1; -o is atomic.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/pprof-lib.sh"
need python3 gzip
[ -x "$SYM" ] || plan_skip "$SYM not built"
need_pprof
plan 26

CHECK="python3 $SYM_ROOT/tests/e2e/lib/pprof_check.py"
cd "$T" || exit 1

# Every map kind, a non-PIE executable (vaddr is not the offset), a
# guessed vaddr, frames without a map, exact PCs above the leaf, a return
# address as the leaf, every label, names with spaces.
cp "$SYM_ROOT/tests/e2e/data/full.raw" a.raw

# The canonical text our writer gives for it (the test input must be it,
# or the byte comparisons below would test the raw writer instead).
"$SYM" convert a.raw > a.canon
ok "a.raw is in canonical form" cmp a.raw a.canon

ok "convert --to pprof -o" "$SYM" convert --to pprof -o a.pb.gz a.raw
is "output is gzip" "$(head -c2 a.pb.gz | od -An -tx1 | tr -d ' ')" "1f8b"

# pprof -raw: parse and compare with what a.raw says.
pprof_run -raw -symbolize=none a.pb.gz > a.pprof-raw 2> a.pprof-err
ok "pprof -raw reads it" test -s a.pprof-raw
ok "pprof -raw: samples, values, labels, addresses, mappings agree" \
	$CHECK raw a.raw a.pprof-raw
sed 's/^/# /' "$T/.ok.out"
is "pprof -raw: sample types" \
	"$(grep -A1 '^Samples:' a.pprof-raw | tail -1)" \
	"samples/count cpu/nanoseconds"
is "pprof -raw: period type and period" \
	"$(grep -E '^(PeriodType|Period):' a.pprof-raw | tr '\n' ' ')" \
	"PeriodType: cpu nanoseconds Period: 1003009 "
is "pprof -raw: duration" "$(grep '^Duration:' a.pprof-raw)" "Duration: 2.5s"
is "pprof -raw: the build IDs end their mapping lines" \
	"$(sed -n '/^Mappings/,$p' a.pprof-raw |
	   grep -cE ' (0badc0de|11aa22bb|4f1c00e2aa|a43b00c1) *$')" 4

pprof_run -traces -symbolize=none a.pb.gz > a.traces 2> /dev/null
ok "pprof -traces: one trace per stack, labels and depth agree" \
	$CHECK traces a.raw a.traces
sed 's/^/# /' "$T/.ok.out"
is "pprof -top: sym's comments stay out of the legend" \
	"$(pprof_run -top -symbolize=none a.pb.gz 2> /dev/null | grep -c sym-)" 0
is "pprof -comments: they are there" \
	"$(pprof_run -comments a.pb.gz 2> /dev/null | grep -c '^#sym-map ')" 6

# Back to raw: the same bytes.
"$SYM" convert a.pb.gz > b.raw
ok "pprof -> raw gives the raw file back" cmp a.raw b.raw
gzip -dc a.pb.gz > a.pb
"$SYM" convert a.pb > c.raw
ok "plain (not gzipped) protobuf too" cmp a.raw c.raw
"$SYM" convert - < a.pb.gz > s.raw
ok "- reads stdin" cmp a.raw s.raw
"$SYM" convert --to pprof a.raw > d.pb.gz
"$SYM" convert --to pprof -o e.pb.gz a.pb.gz
ok "stdout and -o write the same, from raw or pprof" cmp d.pb.gz e.pb.gz

# Through pprof's own writer: it merges and renumbers locations and
# mappings, so the exact-PC list no longer applies, but maps are found by
# range.
pprof_run -proto -symbolize=none a.pb.gz > g.pb.gz 2> /dev/null
"$SYM" convert g.pb.gz > g.raw
ok "pprof -proto output converts back: same maps (vaddr, kind, pid), stacks, header; frame kinds by pprof's rule" \
	$CHECK same a.raw g.raw --pprof-rule
sed 's/^/# /' "$T/.ok.out"

# A foreign profile: a real Go CPU profile.
cat > burn.go <<'EOF'
package main

import (
	"os"
	"runtime/pprof"
)

//go:noinline
func burn(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	pprof.StartCPUProfile(f)
	x := 0
	for i := 0; i < 400; i++ {
		x += burn(1000000)
	}
	pprof.StopCPUProfile()
	f.Close()
	if x == 42 {
		println(x)
	}
}
EOF
if go_build burn burn.go > go-build.log 2>&1 && ./burn go.pb.gz; then
	"$SYM" convert go.pb.gz > go.raw
	ok "a Go CPU profile converts to raw" test -s go.raw
	pprof_run -raw -symbolize=none go.pb.gz > go.pprof-raw 2> /dev/null
	ok "Go profile: same sample total, vaddrs guessed" \
		$CHECK total go.raw go.pprof-raw
	sed 's/^/# /' "$T/.ok.out"
	is "Go profile: weight unit and event" \
		"$(grep -E '^(weight-unit|event) ' go.raw | tr '\n' ' ')" \
		"event cpu-clock weight-unit ns "
else
	sed 's/^/# /' go-build.log | head -20
	for i in 1 2 3; do _tap 1 "build and run a Go CPU profiler"; done
fi

# Bad inputs: the reader's message, exit 1; OUT untouched.
printf 'this is not a profile\n' > junk
echo old > out.raw
out=$("$SYM" convert -o out.raw junk 2>&1)
is "garbage: exit 1 with the reader's message" "$?:$out" \
	"1:sym convert: 'junk': malformed profile: not a pprof profile (protobuf decoding failed)"
head -c 300 a.pb.gz > cut.pb.gz
out=$("$SYM" convert cut.pb.gz 2>&1)
is "cut-short gzip: exit 1" "$?:$out" \
	"1:sym convert: 'cut.pb.gz': malformed profile: gzip: data cut short"
sed 's/^map 1 /map 7 /' a.raw > badref.raw
out=$("$SYM" convert --to pprof -o out.raw badref.raw 2>&1)
is "broken raw file: exit 1, names the line" "$?:${out%%line*}" \
	"1:sym convert: 'badref.raw': malformed profile: "
is "-o OUT is untouched by failed conversions, no temporary left" \
	"$(cat out.raw; ls | grep -c '\.tmp\.')" "old
0"
"$SYM" convert missing.raw > /dev/null 2>&1
is "missing input: exit 1" "$?" 1
"$SYM" convert --to json a.raw > /dev/null 2>&1
is "unknown --to: exit 2" "$?" 2

done_testing
