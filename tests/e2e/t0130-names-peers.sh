#!/bin/bash
# t0130-names-peers.sh - names of `sym addr2line` against the real peers,
# whole answers byte for byte (tests/peers.py), on every instruction of
# the held-out C++ program fixtures/src/names.cc (g++ -O2 -g and clang++
# -O2 -g) and on 700 sampled addresses of libc (libc6-dbg) and
# python3.11d: the GNU style against addr2line 2.40, the LLVM style
# against llvm-symbolizer 14 (its own demangler: sym's LLVM styles
# demangle as LLVM 14 does), the elfutils style against eu-addr2line 0.188.
# One point per input and peer: every address identical (against GNU and
# eu: every address no peer bug listed in docs/oracle.md covers, each bug
# a rule of tests/peers.py: GNU 2.40 drops clang 14's DW_FORM_rnglistx
# inlines, eu 0.188 finds no lines without .debug_aranges, ...), and one
# that no difference is in a file name.  The peers' names of PLT stubs
# are compared (sym's --no-plt-names); sym's own (NAME@plt) are checked
# on a lazy and an IBT (.plt.sec) layout, and the elfutils style's name
# of one of gas's alias subprograms (libc's dup) is eu's.
. "$(dirname "$0")/lib/lib.sh"
need g++ clang++ gcc addr2line eu-addr2line llvm-symbolizer objdump \
	python3 readelf nm llvm-dwarfdump
[ -x "$SYM" ] || plan_skip "$SYM not built"
export SYM
cd "$T" || exit 1
g++ -O2 -g -o names-gcc "$SYM_ROOT/fixtures/src/names.cc" &&
clang++ -O2 -g -o names-clang "$SYM_ROOT/fixtures/src/names.cc" &&
gcc -O2 -g -o clock "$SYM_ROOT/fixtures/src/prof_clock.c" &&
gcc -O2 -g -fcf-protection -Wl,-z,ibtplt -o clock-ibt \
	"$SYM_ROOT/fixtures/src/prof_clock.c" || {
	echo "Bail out! cannot build the test programs"
	exit 1
}
libc=/lib/x86_64-linux-gnu/libc.so.6
py=/usr/bin/python3.11d
# peers LABEL SAMPLE INPUT...: tests/peers.py's points (3 per input, 1 on
# the paths).
peers() {
	tap_points "$1" python3 "$SYM_ROOT/tests/peers.py" --points --min 100 \
		--sample "$2" --show 10 "${@:3}"
}
plan 20
peers "names.cc" 0 "$T/names-gcc" "$T/names-clang"
for f in "$libc" "$py"; do
	if [ ! -f "$f" ]; then
		for _ in 1 2 3 4; do skip "$f is not installed"; done
		continue
	fi
	case $f in
	"$libc") in=libc ;;
	*) in=python3.11d ;;
	esac
	peers "$in" 700 "$in"
done
# sym's own names of PLT stubs, as objdump labels them.
for b in clock clock-ibt; do
	want=$(objdump -d "$b" | sed -n 's/^\([0-9a-f]*\) <clock_gettime@plt>:$/0x\1/p')
	got=$("$SYM" addr2line -f -e "$b" "$want" | head -1)
	is "$b: the stub at $want is clock_gettime@plt" "$got" "clock_gettime@plt"
done
# libc's .plt and .plt.got, every stub: as objdump labels it, but an
# IRELATIVE one (objdump's *ABS*+0xADDEND@plt: libc calling its own
# IFUNC) by the IFUNC symbol at ADDEND, and PLT0 .plt, as perf names them
# (perf's choice among the symbols at ADDEND: not weak, global, fewer
# leading underscores, longer).
plt_want() {
	objdump -d -j .plt -j .plt.got "$1" |
		sed -n 's/^0*\([0-9a-f]*\) <\(.*\)>:$/0x\1 \2/p' |
		python3 -c '
import re, subprocess, sys
best = {}
for l in subprocess.run(["readelf", "-W", "--dyn-syms", sys.argv[1]],
                        capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) < 8 or f[3] != "IFUNC":
        continue
    n = f[7].split("@")[0]
    r = (2 if f[4] == "WEAK" else 0 if f[4] == "GLOBAL" else 1,
         len(n) - len(n.lstrip("_")), -len(n))
    v = int(f[1], 16)
    if v not in best or r < best[v][0]:
        best[v] = (r, n)
first = True
for l in sys.stdin:
    a, o = l.split()
    m = re.match(r"\*ABS\*\+0x([0-9a-f]+)@plt$", o)
    if first:
        o = ".plt"
    elif m and int(m.group(1), 16) in best:
        o = best[int(m.group(1), 16)][1] + "@plt"
    first = False
    print(a, o)
' "$1"
}
if [ -f "$libc" ]; then
	plt_want "$libc" > plt.want
	awk '{ print $1 }' plt.want | "$SYM" addr2line -a -f -e "$libc" |
		paste - - - | awk '{ print $1, $2 }' | sed 's/^0x0*/0x/' > plt.got
	run_compare "libc: its $(wc -l < plt.want) PLT stubs named (IFUNC@plt, .plt)" \
		cat plt.got < plt.want
else
	skip "$libc is not installed"
fi
# The IBT layout's lazy .plt (its jumps are in .plt.sec): .plt.
a=$(readelf -SW clock-ibt | awk '$2 == ".plt" { print "0x" $4 }')
is "clock-ibt: its lazy .plt at $a is .plt" \
	"$("$SYM" addr2line -f -e clock-ibt "$a" | head -1)" ".plt"
# gas's four subprograms of libc's dup (one range): eu names the first.
if [ -f "$libc" ]; then
	a=0x$(nm -D "$libc" | awk '$3 ~ /^dup@/ { print $1 }')
	is "libc $a (dup), elfutils style: eu-addr2line's name" \
		"$("$SYM" addr2line --output-style=elfutils -f -e "$libc" "$a" | head -1)" \
		"$(eu-addr2line -f -e "$libc" "$a" | head -1)"
else
	skip "$libc is not installed"
fi
done_testing
