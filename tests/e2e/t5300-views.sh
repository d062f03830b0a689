#!/bin/sh
# The views of a profile: sym fold (profiles), sym tree, sym report and
# sym flamegraph through the shared input layer (tools/view/views.c).
#
# A program built here (fixtures/src/views_prog.c, gcc -O2 -g: main ->
# parse -> {hot, warm}, main -> compute -> hot, main -> warm, mix()
# inlined into hot()), and a raw profile written by hand with known
# counts at its addresses (found with nm, objdump and addr2line), plus a
# kernel map, an anonymous (JIT) map, a library nobody has and an empty
# stack, over two threads.  It is symbolized on the fly through a local
# store (--store $T/store, converted from the program).  Checked:
#   - fold: the folded stacks of the known shape, exactly (inline frames
#     marked _[i]; kernel _[k] and JIT _[j] with --kernel/--jit; process
#     and thread root frames; --inline=plain|none; --value weight), the
#     totals equal the sample counts, and the same output from the
#     symbolized form, from pprof, from stdin and from the folded output
#     itself;
#   - tree: total = self + children's totals at every node, the root
#     holds every sample, each node is what the stacks give, pruning with
#     --min says what it left out; top-down and --inverted
#     (tests/e2e/lib/views_check.py);
#   - report: the ranking, each share and its Wilson interval, the '='
#     marks and the pairs the multinomial difference test cannot tell
#     apart, and the samples a resolution needs, recomputed in Python
#     from the folded counts; --value weight gives the same shares;
#   - flamegraph: a raw profile gives the same SVG bytes as its folded
#     stacks (plain, annotated, differential);
#   - bad input: clear messages, exit 1; usage errors exit 2; -o is
#     atomic.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/views-lib.sh"
need gcc objdump nm addr2line python3
plan 103

CHECK="$SYM_ROOT/tests/e2e/lib/views_check.py"

# --- the program and the profile: 1045 samples, known stacks ---------------
ok "build the program (gcc -O2 -g); an inlined PC in hot, hot's and warm's entries, six return addresses" \
	views_build
views_profile
# Unresolved frames one per address: the names below check the addresses.
S="--store $T/store --granularity=addresses"

# --- fold -------------------------------------------------------------------
"$SYM" fold $S -v "$T/in.raw" > "$T/f.folded" 2> "$T/f.err"
is "fold: exit 0" "$?" 0
sed 's/^/# /' "$T/f.err"
run_compare "fold: the stacks of the known shape, sorted, inlined mix() marked _[i]" \
	cat "$T/f.folded" <<'EOF'
[no stack] 3
main;[anon:jit]+0x100 5
main;compute;hot 300
main;compute;hot;mix_[i] 30
main;libgone.so+0x4321 7
main;parse;hot;mix_[i] 400
main;parse;warm 170
main;warm 110
main;warm;[kernel.kallsyms]+0xffffffff81000200;[kernel.kallsyms]+0xffffffff81000100 20
EOF
is "fold: the counts add up to the samples" \
	"$(awk '{ n += $NF } END { print n }' "$T/f.folded")" 1045
ok "fold -v: the symbolization summary on stderr names the missing library" \
	grep -q "libgone.so (deadbeef): missing 1" "$T/f.err"
"$SYM" fold $S "$T/in.raw" 2>&1 > /dev/null |
	sed -e 's/[0-9.]* s of CPU in [0-9.]* s$/C s of CPU in T s/' > "$T/f.quiet"
run_compare "fold without -v: one summary line on stderr, the resolved share" \
	cat "$T/f.quiet" <<'EOF'
sym fold: 13 frames in 4 modules, 9 resolved (69.2%), 98.3% of frame samples, C s of CPU in T s
EOF
run_compare "fold --tid --all: thread roots, _[k] kernel and _[j] JIT frames" \
	"$SYM" fold $S -q --tid --all "$T/in.raw" <<'EOF'
views_prog-100/100 3
views_prog-100/100;main;[anon:jit]+0x100_[j] 5
views_prog-100/100;main;compute;hot;mix_[i] 30
views_prog-100/100;main;libgone.so+0x4321 7
views_prog-100/100;main;parse;hot;mix_[i] 400
views_prog-100/100;main;parse;warm 170
views_prog-100/100;main;warm;[kernel.kallsyms]+0xffffffff81000200_[k];[kernel.kallsyms]+0xffffffff81000100_[k] 20
worker-100/101;main;compute;hot 300
worker-100/101;main;warm 110
EOF
run_compare "fold --pid --inline=none: process roots, inlined functions left out" \
	"$SYM" fold $S -q --pid --inline=none "$T/in.raw" <<'EOF'
views_prog-100 3
views_prog-100;main;[anon:jit]+0x100 5
views_prog-100;main;compute;hot 330
views_prog-100;main;libgone.so+0x4321 7
views_prog-100;main;parse;hot 400
views_prog-100;main;parse;warm 170
views_prog-100;main;warm 110
views_prog-100;main;warm;[kernel.kallsyms]+0xffffffff81000200;[kernel.kallsyms]+0xffffffff81000100 20
EOF
"$SYM" fold $S -q --comm --inline=plain "$T/in.raw" > "$T/plain.folded"
is "fold --comm --inline=plain: one root, mix unmarked" \
	"$(grep -c '^views_prog[; ]' "$T/plain.folded") $(grep -c 'mix_\[i\]' "$T/plain.folded") $(grep -c ';mix ' "$T/plain.folded")" "9 0 2"
"$SYM" fold $S -q --value weight "$T/in.raw" > "$T/w.folded"
is "fold --value weight: the weights (ns)" \
	"$(awk '{ print $NF / 1000000 }' "$T/w.folded" | tr '\n' ' ')" \
	"$(awk '{ print $NF }' "$T/f.folded" | tr '\n' ' ')"

# The same profile in every other form folds the same.
"$SYM" symbolize --store "$T/store" -q -o "$T/sym.raw" "$T/in.raw"
"$SYM" fold --granularity=addresses --store "$T/nostore" "$T/sym.raw" > "$T/sym.folded" 2> "$T/sym.err"
ok "fold of the symbolized form: the same, symbolized once already (no summary, no store)" \
	sh -c "cmp '$T/f.folded' '$T/sym.folded' && ! test -s '$T/sym.err' && ! test -e '$T/nostore'"
"$SYM" convert --to pprof -o "$T/in.pb.gz" "$T/in.raw"
"$SYM" fold $S -q "$T/in.pb.gz" > "$T/pprof.folded"
ok "fold of the pprof form: the same" cmp "$T/f.folded" "$T/pprof.folded"
"$SYM" convert --to pprof -o "$T/sym.pb.gz" "$T/sym.raw"
"$SYM" fold --granularity=addresses --store "$T/nostore" -q "$T/sym.pb.gz" > "$T/sympprof.folded"
ok "fold of a symbolized pprof: the same" cmp "$T/f.folded" "$T/sympprof.folded"
cat "$T/in.raw" | "$SYM" fold $S -q > "$T/stdin.folded"
ok "fold of stdin (a pipe): the same" cmp "$T/f.folded" "$T/stdin.folded"
"$SYM" fold < "$T/f.folded" > "$T/again.folded"
ok "fold of the folded output: the same" cmp "$T/f.folded" "$T/again.folded"
"$SYM" fold $S -q "$T/in.raw" "$T/sym.raw" > "$T/two.folded"
is "fold of two inputs adds them up" \
	"$(awk '{ n += $NF } END { print n, NR }' "$T/two.folded")" "2090 9"

# Names the folded format could not carry, and a line without a function,
# in a symbolized file written by hand (no store needed).
printf 'sym-raw 1\nperiod 1\nweight-unit samples\nsymbolized 1\nmap 0 file 1 1000 2000 0 0 aabbccdd /x/liba.so\nfn 1 a;b\nfn 2 line%%0Aend\nfn 3 outer\nsrc 1 a.c\nloc p0:10 ok i1:1:1:1 3:1:2:0\nloc p0:20 ok 2:-:0:0\nloc p0:30 ok i-:1:3:0 3:1:4:0\nstack 2 2 1 1 - p0:10\nstack 3 3 1 1 - p0:20\nstack 4 4 1 1 - p0:30 p0:20\nend\n' > "$T/odd.raw"
run_compare "fold: ';' becomes ':', a line end a space, a nameless inlined line is module+0xADDR (--granularity=addresses)" \
	"$SYM" fold --granularity=addresses --store "$T/nostore" "$T/odd.raw" <<'EOF'
line end 3
line end;outer;liba.so+0x30_[i] 4
outer;a:b_[i] 2
EOF
run_compare "fold --inline=none: the real functions only" \
	"$SYM" fold --store "$T/nostore" --inline=none "$T/odd.raw" <<'EOF'
line end 3
line end;outer 4
outer 2
EOF

# --- tree -------------------------------------------------------------------
"$SYM" tree $S -q --min 0 "$T/in.raw" > "$T/tree.txt"
is "tree --min 0: exit 0" "$?" 0
tap_points "tree" python3 "$CHECK" tree "$T/f.folded" "$T/tree.txt" --min 0
"$SYM" tree $S -q --inverted --min 0 "$T/in.raw" > "$T/inv.txt"
tap_points "tree --inverted" python3 "$CHECK" tree "$T/f.folded" "$T/inv.txt" --inverted --min 0
"$SYM" tree $S -q --min 5 --tid --all "$T/in.raw" > "$T/tree5.txt"
"$SYM" fold $S -q --tid --all "$T/in.raw" > "$T/tid.folded"
tap_points "tree --min 5 --tid --all" python3 "$CHECK" tree "$T/tid.folded" "$T/tree5.txt" --min 5
ok "tree: the inlined function sits under hot, the leaf of the hot path" \
	grep -q '^  *400  *38.28%  *400  *38.28%  *mix_\[i\]$' "$T/tree.txt"

# --- report -----------------------------------------------------------------
"$SYM" report $S -q "$T/in.raw" > "$T/report.txt"
is "report: exit 0" "$?" 0
sed 's/^/# /' "$T/report.txt"
tap_points "report" python3 "$CHECK" report "$T/f.folded" "$T/report.txt"
"$SYM" report $S -q --top 4 --resolution 0.2 --conf 99 "$T/in.raw" > "$T/report99.txt"
tap_points "report --top 4 --resolution 0.2 --conf 99" python3 "$CHECK" report "$T/f.folded" "$T/report99.txt" \
	--top 4 --resolution 0.2 --conf 99
ok "report: says plainly that hot and warm cannot be told apart" \
	grep -q "^  #2 hot and #3 warm: .*; about [0-9]* samples would tell them apart" "$T/report.txt"
"$SYM" report $S -q --explain "$T/in.raw" > "$T/report-x.txt"
ok "report: the prose on intervals and marks only with --explain" sh -c "
	! grep -q -e '^A share is an estimate' -e 'running when sampled' -e \"'=' cannot tell\" '$T/report.txt' &&
	grep -q '^A share is an estimate from a sample: the interval is the range of true shares' '$T/report-x.txt' &&
	grep -q '^Top 7 functions by self samples (running when sampled)' '$T/report-x.txt' &&
	grep -q \"^Cannot tell apart with these 1045 samples (95%; '=' cannot tell, '?' too few to compare):\" '$T/report-x.txt'"
is "report --explain: the same numbers, words added" \
	"$(grep -v -e '^A share is' -e '^these samples support' "$T/report-x.txt" |
	   sed -e 's/ (running when sampled)//' -e 's/ (on the stack: running or calling)//' \
	       -e "s/; '=' cannot tell, '?' too few to compare//")" \
	"$(cat "$T/report.txt")"
printf 'sym-raw 1\nperiod 1\nweight-unit samples\nlost 5\ndropped 2\nsymbolized 1\nmap 0 file 1 1000 2000 0 0 aabbccdd /x/liba.so\nfn 1 f\nfn 2 g\nloc p0:10 ok 1:-:0:0\nloc p0:20 ok 2:-:0:0\nstack 30 30 1 1 truncated p0:10\nstack 70 70 1 1 - p0:20\nend\n' > "$T/flag.raw"
"$SYM" report "$T/flag.raw" > "$T/flag.txt"
ok "report: notes on flagged stacks (bias) and lost samples" sh -c "
	grep -q '^Note: 30 samples (30.00%) have stacks flagged as likely wrong' '$T/flag.txt' &&
	grep -q '^Note: 5 samples lost by the kernel and 2 dropped by the recorder' '$T/flag.txt'"
"$SYM" report $S -q --value weight "$T/in.raw" > "$T/reportw.txt"
strip_counts() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+%/ { $2 = ""; print }' "$1"; }
is "report --value weight: equal weights give the same shares and intervals" \
	"$(strip_counts "$T/reportw.txt" | md5sum)" "$(strip_counts "$T/report.txt" | md5sum)"

# --- flamegraph ---------------------------------------------------------------
"$SYM" flamegraph $S -q -o "$T/raw.svg" "$T/in.raw"
"$SYM" flamegraph -o "$T/folded.svg" "$T/f.folded"
ok "flamegraph: a raw profile gives the same SVG as its folded stacks" \
	cmp "$T/raw.svg" "$T/folded.svg"
"$SYM" flamegraph $S -q --tid --all --icicle -o "$T/raw2.svg" "$T/in.raw"
"$SYM" flamegraph --icicle -o "$T/folded2.svg" "$T/tid.folded"
ok "flamegraph --tid --all --icicle: the same as from the folded stacks" \
	cmp "$T/raw2.svg" "$T/folded2.svg"
ok "flamegraph: inlined, kernel and JIT frames are drawn with their marks" \
	sh -c "grep -q '>mix_\[i\] (' '$T/raw2.svg' && grep -q '0xffffffff81000100_\[k\] (' '$T/raw2.svg' && grep -q '+0x100_\[j\] (' '$T/raw2.svg'"
"$SYM" flamegraph $S -q --diff -o "$T/diffraw.svg" "$T/in.pb.gz" "$T/sym.raw"
"$SYM" flamegraph --diff -o "$T/difffolded.svg" "$T/f.folded" "$T/f.folded"
ok "flamegraph --diff of a pprof and a symbolized profile: as from folded" \
	cmp "$T/diffraw.svg" "$T/difffolded.svg"

# --- bad input, usage, output -------------------------------------------------
printf 'sym-raw 1\nperiod 1\nweight-unit ns\nstack 1 1 1 1 - p7:10\nend\n' > "$T/bad.raw"
for cmd in fold tree report flamegraph; do
	"$SYM" $cmd $S "$T/bad.raw" > "$T/out" 2> "$T/err"
	is "$cmd: a malformed profile: exit 1, the reader's message with the line, no output" \
		"$? $(grep -c "^sym $cmd: '$T/bad.raw': malformed profile: line 4: frame names map 7" "$T/err") $(wc -c < "$T/out")" \
		"1 1 0"
done
"$SYM" report "$T/f.folded" > /dev/null 2> "$T/err"
is "report refuses folded stacks" "$? $(cat "$T/err")" \
	"1 sym report: '$T/f.folded': folded stacks are not read here: their counts may be periods rather than samples; give the raw or pprof profile"
"$SYM" tree "$T/nope.raw" > /dev/null 2> "$T/err"
is "a missing input" "$? $(cat "$T/err")" "1 sym tree: '$T/nope.raw': No such file or directory"
printf '\0\1\2 not a profile' > "$T/junk"
"$SYM" fold "$T/junk" > /dev/null 2> "$T/err"
is "binary junk: exit 1 with the pprof reader's message" \
	"$? $(grep -c "'$T/junk'" "$T/err")" "1 1"
printf 'sym-raw 1\nperiod 1\nweight-unit ns\nend\n' > "$T/empty.raw"
"$SYM" tree -q "$T/empty.raw" > /dev/null 2> "$T/err"
is "a profile without samples: tree says so" "$? $(cat "$T/err")" "1 sym tree: no samples in the input"
"$SYM" fold "$T/empty.raw" > "$T/out" 2> /dev/null
is "a profile without samples folds to nothing" "$? $(wc -c < "$T/out")" "0 0"
printf 'prog 1/1 1.0: 1 cycles:\n\t1 f (/x)\n\n' > "$T/ps.txt"
"$SYM" fold "$T/ps.txt" > /dev/null 2> "$T/err"
ok "perf script text without --from: a hint" grep -q "looks like perf script text" "$T/err"
for bad in "fold --inline=sometimes" "fold --value by%tes" "fold --addrs" \
	   "fold --from perf-script --value weight" "tree --min 101" \
	   "report --top 0" "report --resolution 0" "report --conf 100" \
	   "fold --from yaml"; do
	# shellcheck disable=SC2086
	"$SYM" $bad "$T/in.raw" > /dev/null 2>&1
	is "usage error: $bad exits 2" "$?" 2
done
# --value TYPE names a value type of the profile (docs/raw-format.md,
# "Value types"); a CPU profile has none.
"$SYM" fold $S -q --value bytes "$T/in.raw" > /dev/null 2> "$T/err"
is "--value bytes on a profile without that type: an error naming what it has" \
	"$? $(cat "$T/err")" "1 sym fold: '$T/in.raw' has no value type 'bytes' (--value samples, weight)"
echo old > "$T/out.txt"
"$SYM" tree $S -q -o "$T/out.txt" "$T/bad.raw" 2> /dev/null
is "a failed run leaves -o alone, and no temporary file" \
	"$(cat "$T/out.txt") $(ls "$T" | grep -c '^out\.txt\.')" "old 0"
"$SYM" report $S -q -o "$T/out.txt" "$T/in.raw"
ok "-o writes the file" cmp "$T/out.txt" "$T/report.txt"
# -o onto a file that is not a regular one (a FIFO, like /dev/null or
# /dev/stdout) writes into it, never renames over it.
mkfifo "$T/fifo"
cat "$T/fifo" > "$T/fromfifo" &
"$SYM" fold $S -q -o "$T/fifo" "$T/in.raw"
wait
ok "-o onto a FIFO: written through it, and it stays a FIFO" \
	sh -c "cmp '$T/f.folded' '$T/fromfifo' && test -p '$T/fifo'"
cat "$T/fifo" > "$T/fromfifo2" &
"$SYM" convert -o "$T/fifo" "$T/sym.raw"
wait
ok "sym convert -o onto a FIFO: the same" \
	sh -c "cmp '$T/sym.raw' '$T/fromfifo2' && test -p '$T/fifo'"
ok "--help of each view names its options" sh -c "
	$SYM fold --help | grep -q -- --inline= &&
	$SYM tree --help | grep -q -- --inverted &&
	$SYM report --help | grep -q -- --resolution &&
	$SYM flamegraph --help | grep -q -- --store"
done_testing
