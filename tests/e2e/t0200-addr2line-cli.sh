#!/bin/bash
# t0200-addr2line-cli.sh - `sym addr2line` against its peers, byte for byte:
# GNU style vs binutils addr2line, elfutils style vs eu-addr2line, LLVM and
# JSON styles vs llvm-addr2line (llvm-symbolizer with addr2line's
# defaults, which is what our flags mean in those styles).
#
# The programs are built here with gcc, g++ and clang.  The addresses are
# the instruction starts inside each sized function symbol (no padding, no
# .cold clones, no crt code).  Each peer is compared only on inputs where
# it is right (see docs/sym.1 BUGS OF THE PEERS): GNU addr2line 2.40 drops
# inline frames of clang's DWARF 5 and renames some inlined C++ frames, and
# eu-addr2line 0.188 reads no lines from clang 14's DWARF 5.
. "$(dirname "$0")/lib/lib.sh"
need gcc g++ clang addr2line eu-addr2line llvm-addr2line objdump nm perl \
	python3 timeout
[ -x "$SYM" ] || plan_skip "$SYM not built"
plan 69

cd "$T" || exit 1
cat > c.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
static int sq(int x) { return x * x; }
static inline int sum(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += sq(i) + (i & 1 ? 3 : 5);
	return s;
}
__attribute__((noinline)) int work(int n)
{
	if (n > 1000)
		abort();
	return sum(n) + sum(n / 2);
}
int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
int main(int argc, char **argv)
{
	printf("%d %d\n", work(argc * 10), fact(argc));
	return 0;
}
EOF
cat > a.cc <<'EOF'
#include <cstdio>
static inline __attribute__((always_inline)) int inner(int x)
{
	return x * 3 + printf("%d\n", x);
}
template <typename T> T twice(T v) { return inner(v) + inner(v + 1); }
namespace ns {
struct S {
	virtual int f(int a) { return twice(a) + 1; }
};
}
int main(int argc, char **argv)
{
	ns::S s;
	ns::S *p = &s;
	for (int i = 0; i < argc; i++)
		argc += p->f(i);
	return argc;
}
EOF
gcc -g -O2 -o c-gcc-O2 c.c &&
gcc -g -O0 -gdwarf-4 -o c-gcc-O0 c.c &&
gcc -g -O3 -gdwarf-4 -o c-gcc-O3-dw4 c.c &&
g++ -g -O0 -o a-gxx-O0 a.cc &&
g++ -g -O2 -o a-gxx-O2 a.cc &&
clang -g -O2 -o c-clang-O2 c.c &&
clang++ -g -O2 -gdwarf-4 -o a-clang-O2-dw4 a.cc || {
	echo "Bail out! cannot build the test programs"
	exit 1
}

# insn_addrs BIN: instruction starts inside sized, non-clone functions.
insn_addrs() {
	nm -S --defined-only "$1" > "$1.nm"
	objdump -d --no-show-raw-insn "$1" | perl -e '
		open(N, "<", $ARGV[0]) or die;
		while (<N>) {
			my @f = split;
			next unless @f == 4 && $f[2] =~ /^[tTW]$/;
			next if $f[3] =~ /[.@]/ || $f[3] =~ /^_(start|init|fini)$/;
			$s{hex $f[0]} = hex $f[1];
		}
		my ($lo, $hi) = (0, 0);
		while (<STDIN>) {
			if (/^([0-9a-f]+) <.*>:$/) {
				my $a = hex $1;
				($lo, $hi) = exists $s{$a} ? ($a, $a + $s{$a}) : (0, 0);
				next;
			}
			printf "0x%x\n", hex $1 if /^ +([0-9a-f]+):/ &&
				hex $1 >= $lo && hex $1 < $hi;
		}' "$1.nm"
}

for b in c-gcc-O2 c-gcc-O0 c-gcc-O3-dw4 a-gxx-O0 a-gxx-O2 c-clang-O2 \
	a-clang-O2-dw4; do
	insn_addrs "$b" > "$b.addrs"
done

# same DESC PEER-CMD -- SYM-CMD: one TAP point, the two outputs equal.
same() {
	_d=$1; shift
	_peer=()
	while [ "$1" != -- ]; do _peer+=("$1"); shift; done
	shift
	"${_peer[@]}" > "$T/.peer" 2>&1
	"$@" > "$T/.sym" 2>&1
	same_file "$_d" "$T/.peer" "$T/.sym"
}

# GNU style: gcc-built C, every flag combination (8 x 2 = 16 points).
for b in c-gcc-O2 c-gcc-O3-dw4; do
	for f in "" "-a" "-f" "-a -f -i" "-f -i -C -p" "-i -s" "-a -p -f -i" \
		"-a -f -s -C"; do
		# shellcheck disable=SC2086
		same "GNU $b [$f]" addr2line $f -e $b $(cat $b.addrs) -- \
			"$SYM" addr2line $f -e $b $(cat $b.addrs)
	done
done
# GNU style: C++ and -O0 builds without function names (6 points).
for b in c-gcc-O0 a-gxx-O0 a-gxx-O2; do
	for f in "-a" "-a -i -s -p"; do
		# shellcheck disable=SC2086
		same "GNU $b [$f]" addr2line $f -e $b $(cat $b.addrs) -- \
			"$SYM" addr2line $f -e $b $(cat $b.addrs)
	done
done
# GNU style, C++ names, demangled and not, on the functions where bfd
# names the innermost frame after DWARF (2 points): bfd names some inlined
# frames without a linkage name after the covering symbol instead, which
# we do not copy (docs/sym.1).
nm a-gxx-O0 | awk '$3 ~ /^(main|_ZN2ns1S1fEi)$/ { print $1 }' > names.syms
perl -e 'open(S, "<", $ARGV[0]); my @s = map { hex } <S>;
	while (<STDIN>) { my $a = hex $_; print if grep { $a >= $_ && $a < $_ + 0x30 } @s }' \
	names.syms < a-gxx-O0.addrs > names.addrs
for f in "-f -i" "-a -f -C -p"; do
	# shellcheck disable=SC2086
	same "GNU a-gxx-O0 names [$f]" addr2line $f -e a-gxx-O0 \
		$(cat names.addrs) -- "$SYM" addr2line $f -e a-gxx-O0 \
		$(cat names.addrs)
done

# elfutils style against eu-addr2line (gcc builds; 12 points).
for b in c-gcc-O2 c-gcc-O0 c-gcc-O3-dw4; do
	for f in "-f" "-a -f -i" "-C -f -i --pretty-print" "-S -a -s"; do
		# shellcheck disable=SC2086
		same "elfutils $b [$f]" eu-addr2line $f -e $b $(cat $b.addrs) \
			-- "$SYM" addr2line --output-style=elfutils $f -e $b \
			$(cat $b.addrs)
	done
done

# LLVM style against llvm-addr2line --output-style=LLVM (7 x 2 = 14).
for b in c-gcc-O2 c-gcc-O0 a-gxx-O0 a-gxx-O2 c-clang-O2 a-clang-O2-dw4 \
	c-gcc-O3-dw4; do
	for f in "-a -f -i" "-f -i -C -p -s"; do
		# shellcheck disable=SC2086
		same "LLVM $b [$f]" llvm-addr2line --output-style=LLVM $f \
			-e $b $(cat $b.addrs) -- "$SYM" addr2line \
			--output-style=LLVM $f -e $b $(cat $b.addrs)
	done
done

# JSON against llvm-addr2line --output-style=JSON.  StartAddress and
# StartFileName are left out: LLVM 14 prints "" for the start of inlined
# instances with DW_AT_ranges and misreads gcc's DWARF 5 decl_file.
json_same() {
	_d=$1 _b=$2; shift 2
	# shellcheck disable=SC2086
	llvm-addr2line --output-style=JSON "$@" -e $_b $(cat $_b.addrs) \
		> .peer.json 2>&1
	# shellcheck disable=SC2086
	"$SYM" addr2line --output-style=JSON "$@" -e $_b $(cat $_b.addrs) \
		> .sym.json 2>&1
	ok "$_d" python3 - .peer.json .sym.json <<'EOF'
import json, sys
def norm(path):
    out = []
    for o in json.load(open(path)):
        for s in o.get("Symbol", []):
            s.pop("StartAddress", None)
            s.pop("StartFileName", None)
        out.append(o)
    return out
a, b = norm(sys.argv[1]), norm(sys.argv[2])
bad = [(x, y) for x, y in zip(a, b) if x != y]
if len(a) != len(b) or bad:
    print(len(a), len(b), bad[:2])
    sys.exit(1)
EOF
}
for b in c-gcc-O2 a-gxx-O2 c-clang-O2 a-clang-O2-dw4; do
	json_same "JSON $b [-f -i -C]" $b -f -i -C
done
json_same "JSON c-gcc-O0 [no flags]" c-gcc-O0
# The exact bytes for one address (the schema: key order, types).
run_compare "JSON exact bytes, argv array" "$SYM" addr2line \
	--output-style=JSON -f -e c-gcc-O0 main 0x0 <<EOF
[{"Address":"$(printf '0x%x' "$(nm c-gcc-O0 | awk '$3=="main"{print "0x"$1}')")","ModuleName":"c-gcc-O0","Symbol":[{"Column":1,"Discriminator":0,"FileName":"$T/c.c","FunctionName":"main","Line":19,"StartAddress":"$(printf '0x%x' "$(nm c-gcc-O0 | awk '$3=="main"{print "0x"$1}')")","StartFileName":"$T/c.c","StartLine":18}]},{"Address":"0x0","ModuleName":"c-gcc-O0","Symbol":[{"Column":0,"Discriminator":0,"FileName":"","FunctionName":"","Line":0,"StartAddress":"","StartFileName":"","StartLine":0}]}]
EOF

# Symbol names as input, like eu-addr2line (2 points).
same "symbol, sym+off, sym-off input (elfutils)" \
	eu-addr2line -a -f -e c-gcc-O0 main fact work+0x4 fact-0x0 -- \
	"$SYM" addr2line --output-style=elfutils -a -f -e c-gcc-O0 \
	main fact work+0x4 fact-0x0
m=$(nm c-gcc-O0 | awk '$3=="main"{print $1}')
is "symbol input equals its address (GNU)" \
	"$("$SYM" addr2line -f -e c-gcc-O0 main+2)" \
	"$("$SYM" addr2line -f -e c-gcc-O0 "$(printf '%x' $((0x$m + 2)))")"

# Bad input: one line on stderr naming the file, non-zero exit, no hang.
printf 'not an elf file\n' > text
: > empty
head -c 100 c-gcc-O0 > trunc
cp c-gcc-O0 corrupt
off=$(readelf -S -W c-gcc-O0 | awk '$2 == ".debug_info" { print $5 }')
printf '\377\377\377\377\377\377\377\377\377\377\377\377' |
	dd of=corrupt bs=1 seek=$((0x$off)) conv=notrunc status=none
# --no-cache: "corrupt" keeps the build ID of c-gcc-O0, whose table the
# store already has, and the build ID is the identity: with the cache it
# is answered from that table (tested in t1000-store-cli.sh).
bad_file() {
	_f=$1 _what=$2
	timeout 20 "$SYM" addr2line --no-cache -f -e "$_f" 0x10 > .out 2> .err
	_rc=$?
	if [ $_rc -ge 1 ] && [ $_rc -lt 124 ] && [ ! -s .out ] &&
	   [ "$(wc -l < .err)" = 1 ] &&
	   grep -q "^sym addr2line: '$_f': $_what" .err; then
		_tap 0 "bad input: $_f"
	else
		_tap 1 "bad input: $_f (rc $_rc)"
		sed 's/^/#   /' .err .out
	fi
}
bad_file text "not an ELF file"
bad_file empty "not an ELF file"
bad_file trunc "truncated"
bad_file nonexistent "No such file"
bad_file corrupt "corrupt or unreadable DWARF"

# Unparseable addresses answer "??" (so a co-process stays in step) and
# make the exit status 1.
out=$(printf 'zzz\n0x0\n' | "$SYM" addr2line -f -e c-gcc-O0 2> .err)
rc=$?
is "unparseable input answers ??" "$out:$rc" "$(printf '??\n??:0\n??\n??:0'):1"

# Co-process: one address in, its answer out before the next goes in.
coproc_test() {
	coproc SYMCO { exec "$SYM" addr2line -f -e c-gcc-O0 2>&1; }
	local l1 l2 got="" a
	for a in main fact; do
		echo "$a" >&"${SYMCO[1]}"
		read -r -t 10 l1 <&"${SYMCO[0]}" || break
		read -r -t 10 l2 <&"${SYMCO[0]}" || break
		got="$got$l1 ${l2##*/};"
	done
	exec {SYMCO[1]}>&-
	wait "$SYMCO_PID" 2>/dev/null
	echo "$got"
}
is "stdin co-process answers each line at once" "$(coproc_test)" \
	"main c.c:19;fact c.c:17;"

# The dispatcher.
ok "sym --version" "$SYM" --version
ok "sym help lists addr2line" sh -c '"$1" help | grep -q addr2line' _ "$SYM"
ok "sym addr2line --help" "$SYM" addr2line --help
"$SYM" nosuchcommand > /dev/null 2>&1
is "unknown command exits 2" "$?" 2

done_testing
