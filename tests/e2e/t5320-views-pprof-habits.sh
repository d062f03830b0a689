#!/bin/sh
# t5320-views-pprof-habits.sh - pprof's habits in the views (issue 23):
# --focus, --ignore, --hide, --granularity and unresolved frames grouped
# per module, compared with Google's pprof (go tool pprof -top) on the
# same profile.
#
# A symbolized raw profile of 110 samples, written here: an inlined call
# (mix in hot), recursion (helper), return addresses on other lines than
# the calls' functions start, one frame of prog without a location and
# two addresses of libgone.so without debug information.  `sym pprof`
# writes it as pprof; for each set of options, `sym report --top 1000`'s
# self and total tables must be pprof -top's flat and cum columns, row by
# row, the whole list (names compared as pprof prints them: "X+?" is
# pprof's "[X]", and pprof's " (inline)" mark is dropped).  Then what
# each filter does to folded stacks, exactly, and the usage errors.
. "$(dirname "$0")/lib/lib.sh"
need go python3
[ -x "$SYM" ] || plan_skip "sym not built"
plan 21
cd "$T" || exit 1

cat > q.raw <<'PROF'
sym-raw 1
period 1
weight-unit samples
symbolized 1
map 0 file 1 1000 9000 0 0 aabbccdd /x/prog
map 1 file 1 10000 19000 0 0 eeff0011 /x/libgone.so
fn 1 main
fn 2 parse
fn 3 hot
fn 4 mix
fn 5 warm
fn 6 helper
src 1 /src/work.c
src 2 /src/mix.h
loc p0:100 ok 1:1:10:0
loc r0:100 missing
loc r0:200 ok 2:1:20:0
loc r0:300 ok 3:1:30:0
loc p0:300 ok 3:1:32:0
loc p0:400 ok i4:2:5:0 3:1:31:0
loc p0:500 ok 5:1:50:0
loc p0:600 ok 6:1:60:0
loc r0:600 ok 6:1:61:0
loc p1:1234 missing
loc p1:5678 missing
stack 40 40 1 1 - p0:400 r0:200 p0:100
stack 30 30 1 1 - p0:300 r0:100 p0:100
stack 20 20 1 1 - p0:500 r0:300 p0:100
stack 5 5 1 1 - p0:600 r0:600 r0:300 p0:100
stack 3 3 1 1 - p0:500 r0:600 r0:200 p0:100
stack 2 2 1 1 - p0:400 r0:200 p0:100
stack 4 4 1 1 - p1:1234 p0:100
stack 6 6 1 1 - p1:5678 r0:300 p0:100
end
PROF
"$SYM" pprof -q -o q.pb.gz q.raw
is "sym pprof writes the profile" "$?" 0

# rows KIND FILE: "name flat cum" lines, sorted, from sym report (KIND
# sym) or pprof -top (KIND pprof).
cat > rows.py <<'PY'
import re, sys
kind, path = sys.argv[1], sys.argv[2]
rows = {}
text = open(path).read().splitlines()
if kind == "pprof":
    on = False
    for l in text:
        if re.match(r"^\s*flat\s+flat%", l):
            on = True
            continue
        m = re.match(r"^\s*(\d+)\s+\S+\s+\S+\s+(\d+)\s+\S+\s+(.*)$", l)
        if on and m:
            name = re.sub(r" \(inline\)$", "", m.group(3))
            name = re.sub(r"^\[(.*)\]$", r"\1", name)
            rows[name] = [int(m.group(1)), int(m.group(2))]
else:
    col = None
    for l in text:
        m = re.match(r"^Top \d+ functions by (self|total)", l)
        if m:
            col = 0 if m.group(1) == "self" else 1
            continue
        m = re.match(r"^\s*\d+\s+(\d+)\s+[\d.]+%\s+\[\s*[\d.]+%,\s*[\d.]+%\] .  (.*)$", l)
        if m and col is not None:
            name = re.sub(r"\+\?$", "", m.group(2))
            rows.setdefault(name, [0, 0])[col] = int(m.group(1))
for name in sorted(rows):
    print(name, rows[name][0], rows[name][1])
PY
# same DESC SYM-OPTIONS -- PPROF-OPTIONS: one point, the two row lists equal.
same() {
	_d=$1; shift
	_s=
	while [ "$1" != -- ]; do _s="$_s $1"; shift; done
	shift
	# shellcheck disable=SC2086  # options, one word each
	"$SYM" report -q --top 1000 --inline=plain $_s q.raw > s.out 2> s.err &&
	PPROF_BINARY_PATH=/nonexistent go tool pprof -top -symbolize=none \
		-nodefraction=0 -nodecount=100000 "$@" q.pb.gz > p.out 2> p.err
	python3 rows.py sym s.out > s.rows
	python3 rows.py pprof p.out > p.rows
	if [ -s p.rows ] && cmp -s s.rows p.rows; then
		_tap 0 "$_d"
	else
		_tap 1 "$_d"
		diff -u p.rows s.rows | sed 's/^/#   /'
		sed 's/^/#   /' s.err p.err
	fi
}
same "no options: every row's flat and cum as pprof's, unresolved one row per module" -- --
same "--focus=hot" --focus=hot -- -focus=hot
same "--focus=^parse\$" '--focus=^parse$' -- '-focus=^parse$'
same "--ignore=mix" --ignore=mix -- -ignore=mix
same "--ignore=helper|libgone" '--ignore=helper|libgone' -- '-ignore=helper|libgone'
same "--hide=^hot\$ (mix stays, inlined in hot)" '--hide=^hot$' -- '-hide=^hot$'
same "--hide=main|parse" '--hide=main|parse' -- '-hide=main|parse'
same "--focus=hot --ignore=warm --hide=^main\$" \
	--focus=hot --ignore=warm '--hide=^main$' -- \
	-focus=hot -ignore=warm '-hide=^main$'
same "--granularity=lines" --granularity=lines -- -lines
same "--granularity=files" --granularity=files -- -files
same "--granularity=lines --focus=hot" --granularity=lines --focus=hot -- \
	-lines -focus=hot

"$SYM" report -q --focus=warm q.raw > focus.report
is "report --focus: the header says how many samples were left out" \
	"$(head -1 focus.report)" \
	"sym report: 23 samples from 1 profile; 87 more left out by --focus, --ignore or --hide."

# What each does to the stacks, exactly.
run_compare "fold --granularity=addresses: unresolved frames one per address" \
	"$SYM" fold -q --granularity=addresses q.raw <<'OUT'
main;hot;helper;helper 5
main;hot;libgone.so+0x5678 6
main;hot;warm 20
main;libgone.so+0x1234 4
main;parse;helper;warm 3
main;parse;hot;mix_[i] 42
main;prog+0x100;hot 30
OUT
run_compare "fold (functions): one frame per module for them" \
	"$SYM" fold -q q.raw <<'OUT'
main;hot;helper;helper 5
main;hot;libgone.so+? 6
main;hot;warm 20
main;libgone.so+? 4
main;parse;helper;warm 3
main;parse;hot;mix_[i] 42
main;prog+?;hot 30
OUT
run_compare "fold --granularity=modules" \
	"$SYM" fold -q --granularity=modules q.raw <<'OUT'
prog;libgone.so 4
prog;prog;libgone.so 6
prog;prog;prog 92
prog;prog;prog;prog 8
OUT
run_compare "fold --focus=warm --hide=^main\$: only stacks through warm, main removed" \
	"$SYM" fold -q --focus=warm '--hide=^main$' q.raw <<'OUT'
hot;warm 20
parse;helper;warm 3
OUT
run_compare "tree --ignore=hot: the stacks without hot" \
	"$SYM" tree -q --ignore=hot q.raw <<'OUT'
# sym tree: top-down (callees below their callers), 7 samples; total = self + children's totals; nodes under 0.50% left out
total        %   self        %  caller -> callee
    7  100.00%      0    0.00%  [all]
    7  100.00%      0    0.00%    main
    4   57.14%      4   57.14%      libgone.so+?
    3   42.86%      0    0.00%      parse
    3   42.86%      0    0.00%        helper
    3   42.86%      3   42.86%          warm
OUT
"$SYM" fold -q --focus='(' q.raw > bad.out 2>&1
is "a bad expression: exit 2 (usage)" "$?" 2
ok "... names the option and the expression" \
	grep -q "^sym fold: --focus: '(': " bad.out
"$SYM" fold -q --granularity=bytes q.raw > bad.out 2>&1
is "--granularity=bytes: exit 2" "$?:$(head -1 bad.out)" \
	"2:sym fold: unknown value 'bytes' for --granularity (functions, addresses, lines, files, modules)"
done_testing
