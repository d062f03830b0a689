#!/bin/sh
# sym flamegraph: folded stacks in, an interactive SVG out.
#
# From the SVG text (tests/e2e/flamegraph_check.py struct): every frame's
# count is its stack's count in the input, widths and positions are
# proportional to counts within rounding, titles hold the right samples,
# shares and 95% Wilson intervals, names like <&>"' and "</script>" are
# escaped, annotations are coloured, the frame cap keeps the widest frames;
# the same input gives the same bytes; malformed input fails with the line
# number.  Then in headless Chromium (flamegraph_check.py browser, over the
# DevTools protocol on a pipe): each SVG loads with no JS error, a real
# click zooms (the frame fills the width, siblings hidden), hover shows
# the details, Reset Zoom restores, Search highlights and reports the
# matched share; for flame, icicle, differential and a capped big graph.
. "$(dirname "$0")/lib.sh"
need python3
CHECK="python3 $SYM_ROOT/tests/e2e/flamegraph_check.py"

# check_points CMD...: one TAP point per PASS/FAIL line of the checker.
# Its temporary files (Chromium's profile) live in $T.
check_points() {
	TMPDIR=$T "$@" > "$T/.check" 2>&1
	_rc=$?
	while IFS= read -r _l; do
		case $_l in
		PASS\ *) _tap 0 "${_l#PASS }" ;;
		FAIL\ *) _tap 1 "${_l#FAIL }" ;;
		SKIP\ *) skip "${_l#SKIP }" ;;
		*) echo "# $_l" ;;
		esac
	done < "$T/.check"
	[ "$_rc" = 0 ] || [ "$_rc" = 3 ] || _tap 1 "checker ran (exit $_rc)"
}

# --- inputs -------------------------------------------------------------
# A known shape: XML's special characters, a would-be script, UTF-8, names
# with blanks and " (", kernel/JIT/inline annotations, a deep stack, a
# tab before the count, leading blanks, a CRLF line end.
{
	echo 'main;parse;lex 30'
	echo 'main;parse;malloc 10'
	echo 'main;compute;work 100'
	echo 'main;compute;work;inner_[i] 20'
	echo 'main;syscall;entry_SYSCALL_64_[k];do_syscall_64_[k];ksys_write_[k] 15'
	echo 'main;jit;Interpreter_[j];LFoo::bar_[j] 5'
	echo "main;<&>\"' 7"
	echo 'main;]]></script><script>alert(1)</script> 4'
	echo 'main;Straße::größe<int>;σ 9'
	echo 'main;operator new(unsigned long) (inlined);malloc 6'
	echo 'main;std::vector<std::pair<std::basic_string<char>, int> >::_M_realloc_insert<std::pair<std::basic_string<char>, int> >(long, int) 11'
	echo 'main 3'
	printf 'deep'; i=1; while [ $i -le 60 ]; do printf ';d%d' $i; i=$((i+1)); done
	echo ' 8'
	printf 'tab;sep\t5\n'
	echo '   indented;line 4'
	printf 'crlf;end 2\r\n'
	echo ''
} > "$T/known.folded"
# "before" of the differential: some frames shrink, some grow, some go.
sed -e 's/^main;compute;work 100$/main;compute;work 60/' \
    -e 's/^main;parse;malloc 10$/main;parse;malloc 45/' \
    -e '/^main;jit/d' "$T/known.folded" > "$T/before.folded"

# A big profile: 8,000 distinct stacks drawn from a random call graph.
python3 - "$T/big.folded" <<'EOF'
import random, sys
r = random.Random(5100)
n = 400
calls = {i: [r.randrange(n) for _ in range(r.randint(1, 5))] for i in range(n)}
seen = {}
while len(seen) < 8000:
    st, f = ["main"], 0
    for _ in range(r.randint(2, 25)):
        f = r.choice(calls[f])
        st.append("fn_%d" % f)
    k = ";".join(st)
    seen[k] = seen.get(k, 0) + r.randint(1, 30)
with open(sys.argv[1], "w") as o:
    for k in sorted(seen):
        o.write("%s %d\n" % (k, seen[k]))
EOF

# --- structure ----------------------------------------------------------
"$SYM" flamegraph --minwidth 0 -o "$T/known.svg" "$T/known.folded"
is "flamegraph of the known input: exit 0" "$?" 0
check_points $CHECK struct "$T/known.svg" "$T/known.folded" --all

"$SYM" flamegraph --icicle --minwidth 0 --title 'T <&> "x"' \
	--subtitle "sub'title" "$T/known.folded" > "$T/icicle.svg"
is "icicle from stdout: exit 0" "$?" 0
check_points $CHECK struct "$T/icicle.svg" "$T/known.folded" --all
ok "title and subtitle are escaped" grep -qF \
	'<text id="title" x="600.0" y="24">T &lt;&amp;&gt; &quot;x&quot;</text>' \
	"$T/icicle.svg"
ok "subtitle" grep -qF '>sub&#39;title</text>' "$T/icicle.svg"

"$SYM" flamegraph --diff --minwidth 0 "$T/before.folded" "$T/known.folded" \
	-o "$T/diff.svg"
is "--diff BEFORE AFTER: exit 0" "$?" 0
check_points $CHECK struct "$T/diff.svg" "$T/known.folded" \
	--base "$T/before.folded" --all
# The same comparison from one two-count file (FlameGraph's difffolded.pl).
python3 - "$T/before.folded" "$T/known.folded" > "$T/two.folded" <<'EOF'
import sys
def load(p):
    d = {}
    for line in open(p, encoding="utf-8"):
        line = line.rstrip()
        if line:
            s, c = line.rsplit(None, 1)
            d[s.strip()] = d.get(s.strip(), 0) + int(c)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
for s in sorted(set(a) | set(b)):
    print("%s %d %d" % (s, a.get(s, 0), b.get(s, 0)))
EOF
"$SYM" flamegraph --diff --minwidth 0 -o "$T/diff2.svg" < "$T/two.folded"
ok "--diff of one two-count file gives the same bytes" \
	cmp "$T/diff.svg" "$T/diff2.svg"

# Deterministic: the same stacks in another order, split over two files,
# or through stdin, give the same bytes.
"$SYM" flamegraph --minwidth 0 "$T/known.folded" > "$T/again.svg"
ok "same input, same bytes" cmp "$T/known.svg" "$T/again.svg"
sort -r "$T/known.folded" > "$T/shuffled.folded"
head -n 7 "$T/shuffled.folded" > "$T/part1"
tail -n +8 "$T/shuffled.folded" > "$T/part2"
"$SYM" flamegraph --minwidth 0 "$T/part1" - < "$T/part2" > "$T/parts.svg"
ok "reordered, split over a file and stdin: same bytes" \
	cmp "$T/known.svg" "$T/parts.svg"

# Bytes that are not UTF-8 and characters XML forbids become U+FFFD; the
# file stays well-formed.
printf 'main;bad\377\376byte;ctl\001x 3\nmain;ok 1\n' > "$T/bad-utf8.folded"
"$SYM" flamegraph "$T/bad-utf8.folded" > "$T/bad-utf8.svg"
is "invalid UTF-8 and control characters: exit 0" "$?" 0
got=$(python3 - "$T/bad-utf8.svg" <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
t = [g.find(ns + "title").text for g in ET.parse(sys.argv[1]).iter(ns + "g")
     if g.find(ns + "title") is not None]
print("|".join(x[:x.rindex(" (")] for x in t))
EOF
)
is "... and come back as U+FFFD" "$got" \
	"all|main|bad$(printf '\357\277\275\357\277\275')byte|ctl$(printf '\357\277\275')x|ok"

# Minimum width: by default frames under 0.1 px are left out.
"$SYM" flamegraph -o "$T/big.svg" "$T/big.folded"
is "big profile, default minimum width: exit 0" "$?" 0
check_points $CHECK struct "$T/big.svg" "$T/big.folded" --minwidth 0.1
"$SYM" flamegraph --minwidth 0.5% -o "$T/big-pct.svg" "$T/big.folded"
check_points $CHECK struct "$T/big-pct.svg" "$T/big.folded" --minwidth 5.9
# The frame cap: at most N frames, the widest, and a note.
"$SYM" flamegraph --minwidth 0 --max-frames 1500 -o "$T/capped.svg" \
	"$T/big.folded" 2> "$T/capped.err"
is "--max-frames 1500: exit 0" "$?" 0
check_points $CHECK struct "$T/capped.svg" "$T/big.folded" --cap 1500
ok "a note says frames were left out" \
	grep -q 'note: drew the widest [0-9]* frames, [0-9]* left out' \
	"$T/capped.err"
size=$(stat -c %s "$T/capped.svg")
ok "the capped file stays small ($size bytes < 600 kB)" test "$size" -lt 600000

# --- errors -------------------------------------------------------------
fg_err() {
	printf "$1" > "$T/in.folded"
	"$SYM" flamegraph "$T/in.folded" > /dev/null 2> "$T/err"
	echo "$? $(cat "$T/err")"
}
P="sym flamegraph: '$T/in.folded'"
is "no count" "$(fg_err 'a;b 1\na;b\n')" "1 $P:2: no count at the end of the line"
is "empty frame" "$(fg_err 'a;b 1\n\na;;b 2\n')" "1 $P:3: empty frame name in the stack"
is "trailing ;" "$(fg_err 'a;b; 2\n')" "1 $P:1: empty frame name in the stack"
is "fraction" "$(fg_err 'a;b 1.5\n')" "1 $P:1: the count is not a whole number"
is "negative" "$(fg_err 'a;b -3\n')" "1 $P:1: the count must be a plain number"
is "too large" "$(fg_err 'a 18446744073709551616\n')" "1 $P:1: the count is too large"
is "sum overflows" "$(fg_err 'a 18446744073709551615\nb 1\n')" \
	"1 $P:2: the sum of the counts overflows 64 bits"
is "glued count" "$(fg_err 'a;b5\n')" "1 $P:1: no blank between the stack and its count"
is "count alone" "$(fg_err '5\n')" "1 $P:1: no stack before the count"
is "NUL byte" "$(fg_err 'a 1\nb\000c 2\n')" "1 $P:2: NUL byte in the line"
is "no samples" "$(fg_err '\n\na 0\n')" "1 sym flamegraph: no samples in the input"
python3 -c "print('x' * 65536 + ' 1'); print('a 1')" > "$T/long.folded"
"$SYM" flamegraph "$T/long.folded" > /dev/null 2> "$T/err"
is "a line over 64 KiB" "$? $(cat "$T/err")" \
	"1 sym flamegraph: '$T/long.folded':1: line longer than 65536 bytes"
"$SYM" flamegraph --diff "$T/known.folded" > /dev/null 2> "$T/err"
is "--diff of a one-count file" "$? $(cat "$T/err")" \
	"1 sym flamegraph: '$T/known.folded':1: two counts expected (before and after), found one"
"$SYM" flamegraph "$T/nonexistent" > /dev/null 2> "$T/err"
is "missing file" "$? $(cat "$T/err")" \
	"1 sym flamegraph: '$T/nonexistent': No such file or directory"
# A failed run leaves an existing -o file alone, and no temporary file.
echo old > "$T/out.svg"
printf 'a;b\n' | "$SYM" flamegraph -o "$T/out.svg" 2> /dev/null
is "failure: exit 1, old -o file untouched" "$? $(cat "$T/out.svg")" "1 old"
is "no temporary file left" "$(ls "$T" | grep -c '^out\.svg\.')" 0
for bad in "--width 50" "--width 12x" "--minwidth abc" "--minwidth 200%" \
	   "--max-frames 0" "--bogus"; do
	# shellcheck disable=SC2086
	"$SYM" flamegraph $bad "$T/known.folded" > /dev/null 2>&1
	is "usage error: $bad exits 2" "$?" 2
done
"$SYM" flamegraph --diff a b c > /dev/null 2>&1
is "usage error: --diff with three files exits 2" "$?" 2
"$SYM" flamegraph --help | grep -q -- '--icicle'
is "--help mentions --icicle" "$?" 0

# --- in a real browser --------------------------------------------------
if command -v chromium > /dev/null 2>&1; then
	check_points $CHECK browser --search '^(lex|malloc|σ|fn_1.)$' \
		--zoom 'main;compute' --slow 30 \
		"$T/known.svg@$T/known.folded" \
		"$T/icicle.svg@$T/known.folded" \
		"$T/diff.svg@$T/known.folded" \
		"$T/capped.svg@$T/big.folded"
else
	skip "chromium not installed (tools/scripts/install-deps.sh installs it)"
fi

plan "$_tap_n"
done_testing
