#!/bin/sh
# Broken stacks in the views (docs/views.md, "Broken stacks"; issue 16):
# stacks the recorder flagged as likely wrong are never shown silently.
#
# Symbolized raw profiles written here, each 1,000 samples of
# main -> work -> leaf (0x1000 in /bin/work, returns 0x2000 and 0x3000),
# some flagged, their broken part ending in nocfi() of /opt/libnocfi.so
# (0x10100):
#   - below and above the threshold: 20 of 1,000 flagged (exactly 2%) and
#     21: `sym tree`, `flamegraph`, `report`, `fold` and `pprof` print the
#     warning on stderr for 21 only, and all five the same one;
#   - the cure for each flag and recorder: fp (unwind, leaf, badreturn:
#     "record with -g dwarf"; truncated: the 127-frame limit and
#     --max-depth), dwarf (unwind: "the binary has no CFI", naming
#     libnocfi.so where the unwinds stop, --stack-size; truncated:
#     --max-depth), libsymprof, a profile without a mode, the kernel flag,
#     a flag this reader does not know;
#   - `[broken stack]`: a root-level frame in the folded output (above
#     the --pid root), in the SVG (a child of the root, grey, at the
#     first level, with the flagged samples' width) and in `sym tree`
#     (under [all], and a header line) and `sym report` (a note by flag,
#     an entry of the total table); --broken=plain leaves it out but
#     still warns; `sym fold` output drawn again gives the same SVG;
#   - per input, not over the sum: a clean input and a 3% one warn for
#     the 3% one only;
#   - no warning for folded stacks (even ones holding `[broken stack]`)
#     or `perf script` text;
#   - `sym diff` refuses profiles whose flagged shares differ beyond the
#     99.9% interval when one is over 2% (exit 1, nothing written), marks
#     every row with --allow-broken, accepts equal shares, and marks
#     without refusing when both are small.
. "$(dirname "$0")/lib/lib.sh"
need python3
plan 54

# gen FILE MODE TOOL N FLAGGED-SPEC...: a symbolized raw profile of N
# samples; each spec is COUNT:FLAGS[:END], a stack of COUNT samples with
# FLAGS ("-" for none), ending (outermost frame) in END: "lib" (nocfi(),
# the default for flagged stacks), "anon", "none" (no frame at all) or
# "main"; the rest of the N samples are main;work;leaf, unflagged.
gen() {
	python3 - "$@" <<'EOF'
import sys
path, mode, tool, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
out = ["sym-raw 1", "host h"]
if tool != "-":
    out.append("tool %s 0.1.0" % tool)
if mode != "-":
    out.append("mode %s" % mode)
out += ["period 1000000", "weight-unit ns", "symbolized 1",
        "map 0 file 1 1000 4000 0 1000 aa01 /bin/work",
        "map 1 file 1 10000 20000 0 10000 bb02 /opt/libnocfi.so",
        "map 2 anon 1 50000 60000 0 0 - -",
        "fn 1 leaf", "fn 2 work", "fn 3 main", "fn 4 nocfi",
        "loc p0:1000 ok 1:-:0:0", "loc r0:2000 ok 2:-:0:0",
        "loc r0:3000 ok 3:-:0:0", "loc r1:10100 ok 4:-:0:0",
        "loc p2:50010 unmapped"]
stacks, left = [], n
for spec in sys.argv[5:]:
    w = spec.split(":")
    c, flags = int(w[0]), w[1]
    end = w[2] if len(w) > 2 else "lib"
    frames = {"lib": "p0:1000 r0:2000 r1:10100", "anon": "p2:50010",
              "none": "", "main": "p0:1000 r0:2000 r0:3000"}[end]
    stacks.append(("stack %d %d 1 1 %s %s" % (c, c * 1000000, flags,
                                               frames)).rstrip())
    left -= c
stacks.insert(0, "stack %d %d 1 1 - p0:1000 r0:2000 r0:3000"
              % (left, left * 1000000))
with open(path, "w") as f:
    f.write("\n".join(out + stacks + ["end"]) + "\n")
EOF
}
cd "$T" || exit 1
gen lo.raw fp sym-record 1000 20:unwind
gen hi.raw fp sym-record 1000 21:unwind
gen fp.raw fp sym-record 1000 100:unwind
gen fpall.raw fp sym-record 1000 50:unwind 30:leaf 20:badreturn \
	10:truncated:main
gen dwarf.raw dwarf sym-record 1000 60:unwind 20:unwind:anon 30:truncated:main
gen symprof.raw thread-timer libsymprof 1000 40:unwind 40:leaf 30:truncated
gen nomode.raw - - 1000 40:unwind 30:truncated:main
gen kern.raw fp sym-record 1000 40:kernel:none 10:newflag:main
gen clean.raw dwarf sym-record 1000
gen three.raw dwarf sym-record 1000 30:unwind

# --- below and above 2%, in each of the five views ----------------------
# view CMD FILE: run `sym CMD FILE`, stderr to FILE.CMD.err.
view() {
	case $1 in
	pprof) "$SYM" pprof -q -o "$T/x.pb.gz" "$2" ;;
	flamegraph) "$SYM" flamegraph "$2" > /dev/null ;;
	*) "$SYM" "$1" "$2" > /dev/null ;;
	esac 2> "$2.$1.err"
}
WANT="warning: 'hi.raw': 21 of 1000 samples (2.10%) have broken stacks, recorded by sym-record in fp mode"
for v in tree flamegraph report fold pprof; do
	view $v lo.raw
	view $v hi.raw
	ok "$v: 20 of 1,000 flagged (2%): no warning" test ! -s lo.raw.$v.err
	ok "$v: 21 of 1,000 (2.1%): the warning, the flag and its cure" \
		sh -c "grep -qF \"sym $v: $WANT\" hi.raw.$v.err &&
		grep -qF 'sym $v:   unwind: 21 samples (2.10%): ' hi.raw.$v.err &&
		grep -q 'record with -g dwarf\$' hi.raw.$v.err"
done
ok "the views say where the broken stacks are shown" \
	sh -c "grep -q '; they are under \[broken stack\]:\$' hi.raw.tree.err &&
	grep -q '; they carry the label sym_flags' hi.raw.pprof.err"
is "the five views give the same warning" \
	"$(for v in tree flamegraph report fold pprof; do
		sed -e "s/^sym $v:/sym:/" -e 's/; they.*//' hi.raw.$v.err
	   done | sort | uniq -c | awk '{ print $1 }' | sort -u)" 5

# --- the cure per recorder and flag ---------------------------------------
# cure FILE: the warning of sym fold on FILE, in FILE.err
cure() { "$SYM" fold "$1" > /dev/null 2> "$1.err"; }
cure fpall.raw
ok "fp: unwind, leaf and badreturn: record with -g dwarf" sh -c "
	grep -q '^sym fold:   unwind: 50 samples (5.00%): the frame-pointer chain.*record with -g dwarf\$' fpall.raw.err &&
	grep -q '^sym fold:   leaf: 30 samples (3.00%): .*record with -g dwarf\$' fpall.raw.err &&
	grep -q '^sym fold:   badreturn: 20 samples (2.00%): .*record with -g dwarf\$' fpall.raw.err"
ok "fp: truncated: the kernel's 127 frames, -g dwarf --max-depth" \
	grep -q '^sym fold:   truncated: 10 samples (1.00%): .*127 frames.*-g dwarf --max-depth N' fpall.raw.err
is "fp: the flags most samples first" \
	"$(sed -n 's/^sym fold:   \([a-z]*\):.*/\1/p' fpall.raw.err | tr '\n' ' ')" \
	"unwind leaf badreturn truncated "
cure dwarf.raw
ok "dwarf: unwind: the binary has no CFI, naming the module where most stop, --stack-size" \
	grep -q '^sym fold:   unwind: 80 samples (8.00%), 60 of them stopping in libnocfi.so: .*the binary has no CFI.*--stack-size' dwarf.raw.err
ok "dwarf: truncated: --max-depth, not -g dwarf" sh -c "
	grep -q '^sym fold:   truncated: 30 samples.*(--max-depth, 127 frames by default)' dwarf.raw.err &&
	! grep -q 'record with -g dwarf' dwarf.raw.err"
cure symprof.raw
ok "libsymprof: sym record -g dwarf; its fixed 256 frames" sh -c "
	grep -q \"recorded by libsymprof in thread-timer mode\" symprof.raw.err &&
	grep -q '^sym fold:   unwind: 40 .*libsymprof.*record with sym record -g dwarf\$' symprof.raw.err &&
	grep -q '^sym fold:   leaf: 40 .*record with sym record -g dwarf\$' symprof.raw.err &&
	grep -q '^sym fold:   truncated: 30 .*256 frames' symprof.raw.err"
cure nomode.raw
ok "no mode in the header: the generic cure" sh -c "
	grep -q \"(7.00%) have broken stacks; they are under\" nomode.raw.err &&
	grep -q '^sym fold:   unwind: 40 .*could not unwind the stack completely: record with sym record -g dwarf' nomode.raw.err &&
	grep -q \"^sym fold:   truncated: 30 .*the recorder's depth limit\" nomode.raw.err"
cure kern.raw
ok "kernel: only kernel frames; a flag this reader does not know" sh -c "
	grep -q '^sym fold: warning: .kern.raw.: 50 of 1000 samples (5.00%)' kern.raw.err &&
	grep -q '^sym fold:   kernel: 40 samples (4.00%): only kernel frames were captured' kern.raw.err &&
	grep -q '^sym fold:   unknown: 10 samples (1.00%): a flag this version of sym does not know' kern.raw.err"

# --- [broken stack] in folded stacks, the SVG, the tree, the report -------
"$SYM" fold fp.raw > fp.folded 2> /dev/null
run_compare "fold: flagged stacks under a root-level [broken stack] frame" \
	cat fp.folded <<'EOF'
[broken stack];nocfi;work;leaf 100
main;work;leaf 900
EOF
"$SYM" fold --pid fp.raw > fp.pid.folded 2> /dev/null
ok "fold --pid: [broken stack] above the process frame" \
	grep -qx '\[broken stack\];\[unknown\]-1;nocfi;work;leaf 100' fp.pid.folded
"$SYM" fold --broken=plain fp.raw > fp.plain.folded 2> fp.plain.err
ok "fold --broken=plain: as recorded, and still the warning" sh -c "
	! grep -q 'broken stack\]' fp.plain.folded &&
	grep -qx 'nocfi;work;leaf 100' fp.plain.folded &&
	grep -q \"have broken stacks, recorded by sym-record in fp mode:\$\" fp.plain.err"
"$SYM" fold --broken=bad fp.raw > /dev/null 2> bad.err
is "fold --broken=bad: usage error" "$?" 2
ok "  ... saying the values" grep -q "unknown value 'bad' for --broken (mark, plain)" bad.err

"$SYM" flamegraph fp.raw > fp.svg 2> /dev/null
python3 - fp.svg > svg.out <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
frames = {}
for g in root.iter("{http://www.w3.org/2000/svg}g"):
    t, r = g.find("s:title", ns), g.find("s:rect", ns)
    if t is None or r is None:
        continue
    name = t.text.split(" (")[0]
    frames[name] = (t.text, float(r.get("y")), r.get("fill"),
                    r.get("{http://github.com/jonhoo/inferno}w"))
b, m = frames.get("[broken stack]"), frames.get("main")
print("title", b[0].split(";")[0] if b else None)
print("level", b is not None and m is not None and b[1] == m[1])
print("fill", b[2] if b else None)
print("width", b[3] if b else None)
EOF
ok "flamegraph: [broken stack] at the first level, beside main, with the 100 flagged samples" \
	sh -c "grep -qx 'title \[broken stack\] (100 samples, 10.00%' svg.out &&
	grep -qx 'level True' svg.out && grep -qx 'width 100' svg.out"
ok "flamegraph: [broken stack] is grey" grep -qx 'fill rgb(140,140,140)' svg.out
"$SYM" flamegraph fp.folded > fp2.svg 2> fp2.err
ok "flamegraph of sym fold's output: the same SVG, and no warning (no flags)" \
	sh -c "cmp fp.svg fp2.svg && test ! -s fp2.err"

"$SYM" tree fp.raw > fp.tree 2> /dev/null
run_compare "tree: a header line, [broken stack] under [all]" cat fp.tree <<'EOF'
# sym tree: top-down (callees below their callers), 1000 samples; total = self + children's totals; nodes under 0.50% left out
# 100 samples (10.00%) have broken stacks (unwind 100): they are under [broken stack]
total        %   self        %  caller -> callee
 1000  100.00%      0    0.00%  [all]
  900   90.00%      0    0.00%    main
  900   90.00%      0    0.00%      work
  900   90.00%    900   90.00%        leaf
  100   10.00%      0    0.00%    [broken stack]
  100   10.00%      0    0.00%      nocfi
  100   10.00%      0    0.00%        work
  100   10.00%    100   10.00%          leaf
EOF
"$SYM" tree --inverted fp.raw 2> /dev/null | grep -v '^#' > fp.itree
ok "tree --inverted: [broken stack] is the outermost caller of the broken path" \
	grep -qx '  100   10.00%    100   10.00%          \[broken stack\]' fp.itree
"$SYM" tree --broken=plain fp.raw 2> /dev/null | sed -n 2p > fp.ptree
ok "tree --broken=plain: the header line says so" \
	grep -qx '# 100 samples (10.00%) have broken stacks (unwind 100): shown as recorded (--broken=plain)' fp.ptree
"$SYM" tree clean.raw > clean.tree 2> clean.err
ok "tree: no line and no warning without flagged stacks" \
	sh -c "! grep -q broken clean.tree && test ! -s clean.err"

"$SYM" report fpall.raw > fpall.report 2> /dev/null
ok "report: a note naming each flag, and where the totals are" \
	grep -q '^Note: 110 samples (11.00%) have stacks flagged as likely wrong (unwind 50, leaf 30, badreturn 20, truncated 10):$' fpall.report
ok "  ... its next line" \
	grep -qx 'they bias the shares, which the intervals do not cover; the totals show them under \[broken stack\].' fpall.report
ok "report: [broken stack] is an entry of the total table, with its share" \
	grep -q '^ *[0-9]* *110 *11.00% *\[.*\] *\[broken stack\]$' fpall.report
ok "report: and not of the self table" \
	sh -c "! sed -n '/by self/,/by total/p' fpall.report | grep -q 'broken stack\]'"

# --- per input, not over the sum ------------------------------------------
"$SYM" fold clean.raw three.raw > /dev/null 2> two.err
ok "two inputs, 0% and 3% (1.5% together): the 3% one is warned about" \
	sh -c "grep -q \"warning: 'three.raw': 30 of 1000 samples (3.00%)\" two.err &&
	! grep -q \"'clean.raw'\" two.err"
"$SYM" report clean.raw three.raw > two.report 2> /dev/null
ok "  ... and the report's note counts both: 30 of 2,000" \
	grep -q '^Note: 30 samples (1.50%) have stacks flagged as likely wrong (unwind 30):' two.report

# --- inputs without flags: no warning --------------------------------------
printf '[broken stack];main;f 50\nmain;f 50\n' > in.folded
for v in fold tree flamegraph; do
	"$SYM" $v in.folded > /dev/null 2> folded.$v.err
	ok "$v of folded stacks: no warning" test ! -s folded.$v.err
done
printf 'prog 123 [000] 1.000000:   1000 cpu-clock:\n\t  401000 f (/bin/prog)\n\t  401100 main (/bin/prog)\n\n' > in.perf
"$SYM" fold --from perf-script in.perf > perf.folded 2> perf.err
ok "fold --from perf-script: no warning" \
	sh -c "test ! -s perf.err && grep -qx 'prog;main;f 1000' perf.folded"

# --- sym diff ---------------------------------------------------------------
gen eq.raw fp sym-record 1000 105:unwind
gen small-a.raw dwarf sym-record 10000 1:unwind
gen small-b.raw dwarf sym-record 10000 150:unwind
"$SYM" diff -o diff.out fp.raw clean.raw > diff.stdout 2> diff.err
is "diff: 10% against 0% broken: refused, exit 1" "$?" 1
ok "  ... with the shares and their 99.9% interval, and the way out" sh -c "
	grep -q \"^sym diff: cannot compare 'fp.raw' and 'clean.raw': their shares of broken stacks differ beyond sampling noise (A 10.00%, B 0.00%; B - A -10.00 points, 99.9% interval \[-13.[0-9]*, -7.[0-9]*\])\" diff.err &&
	grep -q 'pass --allow-broken to compare anyway' diff.err"
ok "  ... after the warning on A (the cure)" \
	grep -q "^sym diff: warning: 'fp.raw': 100 of 1000 samples" diff.err
ok "  ... and nothing written" sh -c "test ! -e diff.out && test ! -s diff.stdout"
"$SYM" diff --allow-broken fp.raw clean.raw > diff.forced 2> /dev/null
is "diff --allow-broken: exit 0" "$?" 0
ok "  ... the shares in the header, UNRELIABLE" sh -c "
	grep -qx 'A: fp.raw, 1000 samples; 100 with broken stacks (10.00%)' diff.forced &&
	grep -qx 'B: clean.raw, 1000 samples' diff.forced &&
	grep -q '^UNRELIABLE: the shares of broken stacks differ' diff.forced &&
	grep -q '(compared because of --allow-broken)' diff.forced"
ok "  ... every row marked !, [broken stack] among them" sh -c "
	rows=\$(grep -cE '^. (self|total) ' diff.forced)
	test \"\$rows\" -gt 0 &&
	test \"\$(grep -cE '^! (self|total) ' diff.forced)\" = \"\$rows\" &&
	grep -qE '^! total +10.00% +0.00% +-10.00 .*\[broken stack\]\$' diff.forced"
"$SYM" diff --all fp.raw eq.raw > diff.eq 2> diff.eq.err
is "diff: 10.0% against 10.5% broken: compared, exit 0" "$?" 0
ok "  ... not marked, the shares in the header" sh -c "
	! grep -q UNRELIABLE diff.eq && ! grep -q '^!' diff.eq &&
	grep -qx 'B: eq.raw, 1000 samples; 105 with broken stacks (10.50%)' diff.eq"
"$SYM" diff small-a.raw small-b.raw > diff.small 2> diff.small.err
is "diff: 0.01% against 1.5% broken: compared, exit 0" "$?" 0
ok "  ... but every row marked unreliable, not refused" sh -c "
	grep -q 'not refused: neither profile is over 2% broken' diff.small &&
	test ! -s diff.small.err &&
	test \"\$(grep -cE '^! (self|total) ' diff.small)\" -gt 0"
"$SYM" diff --broken=plain --allow-broken fp.raw clean.raw > diff.plain 2> /dev/null
ok "diff --broken=plain: no [broken stack] entry, still marked" sh -c "
	! grep -q 'broken stack\]' diff.plain && grep -q '^! ' diff.plain"

done_testing
