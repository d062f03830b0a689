#!/bin/bash
# t0203-addr2line-lazy.sh - the lazy path (sym_module_table_for(), `sym
# addr2line --lazy=always`) answers exactly what the full table answers
# (--lazy=never): random address sets, the whole output compared, in the
# GNU style (-afiC) and in JSON (which adds each frame's declaration,
# column and discriminator), on every fixture of fixtures/build/MANIFEST
# and, when installed, on the Debian debug files of libc, python3.11d and
# libjvm.  Each set is answered lazily twice: all of it by one process
# (one table of the units it needs), and in sets of 20 by one process
# each (small tables, where a unit wrongly left out shows).  Addresses
# are uniform over the executable sections, plus symbol starts and a few
# outside any section, so symbol-table and unknown answers count too.
# One TAP point per file; libjvm with 40 addresses and the JSON style
# only, to keep its one full build (7 to 10 s) the one slow step.
#
# GNU addr2line names a frame after the lookups before it in the same
# run (see "Whose name" in tools/addr2line.c), so the GNU style's sets of
# 10 are compared with the full table's answers in the same sets
# (on the fixtures only: each is a full build); the JSON style has no
# such state and its sets are compared with the one full run.
. "$(dirname "$0")/lib/lib.sh"
need python3 readelf nm
[ -x "$SYM" ] || plan_skip "$SYM not built"

B=$(fixture MANIFEST) || { echo "Bail out! fixtures/build.sh failed"; exit 1; }
B=$(dirname "$B")
M=$B/MANIFEST
grep -v '^#' "$M" > "$T/rows"
export SYM_STORE=$T/store
# Sets of 20: 3 per fixture (a set is a process, and a full build for the
# GNU style), which keeps the test near a minute of CPU in make check.
SET=20

LIBC_DBG=
if [ -r /lib/x86_64-linux-gnu/libc.so.6 ]; then
	id=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 |
		awk '/Build ID/ { print $3 }')
	f=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$id" ] && [ -r "$f" ] && LIBC_DBG=$f
fi
PY=/usr/bin/python3.11d
JVM=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
JVM_DBG=
if [ -r "$JVM" ]; then
	id=$(readelf -n "$JVM" | awk '/Build ID/ { print $3 }')
	f=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -n "$id" ] && [ -r "$f" ] && JVM_DBG=$f
fi
plan $(($(wc -l < "$T/rows") + 8))

# addrs FILE N SEED: N addresses of FILE, one per line.
addrs() {
	python3 - "$@" <<'EOF'
import random, subprocess, sys
path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
secs = []
for l in subprocess.run(["readelf", "-SW", path], capture_output=True,
                        text=True).stdout.splitlines():
    f = l.replace("[ ", "[").split()
    if len(f) > 7 and f[0].startswith("[") and "X" in f[7]:
        a, sz = int(f[3], 16), int(f[5], 16)
        if sz:
            secs.append((a, sz))
syms = []
for l in subprocess.run(["nm", "--defined-only", path], capture_output=True,
                        text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 3 and f[1] in "tTwW":
        syms.append(int(f[0], 16))
out = []
tot = sum(s for _, s in secs)
for i in range(n):
    r = rng.random()
    if syms and r < 0.2:
        out.append(rng.choice(syms) + rng.choice((0, 0, 1, 4)))
    elif secs and r < 0.97:
        x = rng.randrange(tot)
        for a, s in secs:
            if x < s:
                out.append(a + x)
                break
            x -= s
    else:
        out.append(rng.choice((0, 1, 0x10, 0xffffffff, 1 << 40)))
print("\n".join("%#x" % a for a in out))
EOF
}

# check NAME FILE N OPTS...: one TAP point; $sets_gnu: see above.
check() {
	name=$1 file=$2 n=$3
	shift 3
	d=$T/$(echo "$name" | tr / _)
	mkdir -p "$d"
	addrs "$file" "$n" "$(cksum <<< "$name" | cut -d' ' -f1)" > "$d/a" ||
		{ _tap 1 "$name: addresses"; return; }
	bad=
	for style in "-afiC" "-fiC --output-style=JSON"; do
		[ "$style" = "-afiC" ] && [ "${json_only:-0}" = 1 ] && continue
		# shellcheck disable=SC2086
		"$SYM" addr2line --no-cache --lazy=never $style "$@" -e "$file" \
			< "$d/a" > "$d/full" 2> "$d/err" || bad="full build failed"
		# shellcheck disable=SC2086
		"$SYM" addr2line --no-cache --lazy=always $style "$@" \
			-e "$file" < "$d/a" > "$d/lazy" 2>> "$d/err" ||
			bad="lazy run failed"
		: > "$d/lazy7"
		: > "$d/full7"
		split -l "$SET" "$d/a" "$d/part."
		for p in "$d"/part.*; do
			# shellcheck disable=SC2046,SC2086
			"$SYM" addr2line --no-cache --lazy=always $style "$@" \
				-e "$file" $(cat "$p") >> "$d/lazy7" \
				2>> "$d/err" || bad="lazy run failed"
			[ "$style" = "-afiC" ] && [ "$sets_gnu" = 1 ] || continue
			# shellcheck disable=SC2046,SC2086
			"$SYM" addr2line --no-cache --lazy=never $style "$@" \
				-e "$file" $(cat "$p") >> "$d/full7" \
				2>> "$d/err" || bad="full build failed"
		done
		rm -f "$d"/part.*
		if [ "$style" != "-afiC" ]; then
			# JSON: one array per process; compare the frames.
			for f in full lazy lazy7; do
				python3 -c 'import json,sys
r=[]
d=json.JSONDecoder(); s=open(sys.argv[1]).read().strip(); i=0
while i<len(s):
    o,i=d.raw_decode(s,i); r+=o if isinstance(o,list) else [o]
    while i<len(s) and s[i].isspace(): i+=1
print("\n".join(json.dumps(x,sort_keys=True) for x in r))' \
					"$d/$f" > "$d/$f.n" || bad="bad JSON"
			done
			cmp -s "$d/full.n" "$d/lazy.n" || bad="JSON: lazy differs"
			cmp -s "$d/full.n" "$d/lazy7.n" ||
				bad="JSON: lazy in sets of $SET differs"
		else
			cmp -s "$d/full" "$d/lazy" || bad="GNU: lazy differs"
			[ "$sets_gnu" = 0 ] || cmp -s "$d/full7" "$d/lazy7" ||
				bad="GNU: lazy in sets of $SET differs"
		fi
		[ -n "$bad" ] && break
	done
	if [ -z "$bad" ] && [ "$(wc -l < "$d/full")" -lt "$n" ]; then
		bad="too few answers"
	fi
	if [ -n "$bad" ]; then
		_tap 1 "$name: lazy answers = full answers ($bad)"
		diff "$d/full" "$d/lazy" | head -20 | sed 's/^/#   /'
		head -5 "$d/err" | sed 's/^/#   /'
	else
		_tap 0 "$name: lazy answers = full answers ($n addresses)"
	fi
}

while IFS=$'\t' read -r name _ opts _; do
	# shellcheck disable=SC2086
	[ "$opts" = - ] && opts=
	# shellcheck disable=SC2086
	sets_gnu=1 check "$name" "$B/$name" 60 $opts
done < "$T/rows"
sets_gnu=0

# A lazy table skips the functions whose code holds no address asked, but
# not what is nested in them with code of its own: GNU C's nested
# functions (a subprogram DIE below its parent's, code elsewhere), which
# C++ has not (a lambda's and a local class's member functions are
# defined at namespace level).  Asked only the nested ones' addresses,
# the lazy table must still name them, as the full table does.
cat > "$T/nest.c" <<'EOF'
#include <stdio.h>
int outer(int a)
{
	__attribute__((noinline)) int inner(int b)
	{
		return a * b + printf("inner %d\n", b);
	}
	return inner(a) + inner(a + 1);
}
int main(int argc, char **argv) { (void)argv; return outer(argc) & 1; }
EOF
cat > "$T/nest.cc" <<'EOF'
#include <cstdio>
#include <functional>
int outer(int x)
{
	struct Local {
		__attribute__((noinline)) int f(int y) { return y * 3 + std::printf("f\n"); }
	};
	auto lam = [x](int y) __attribute__((noinline)) { return x + y + std::printf("l\n"); };
	std::function<int(int)> fn = [&](int z) { return lam(z) + Local().f(z); };
	return fn(x);
}
int main(int argc, char **) { return outer(argc) & 1; }
EOF
# nested NAME SRC COMPILER PATTERN EXPECT: the addresses of the local
# functions whose symbols match PATTERN, every 2nd byte, lazily and in
# full; the lazy answers must also hold EXPECT.
nested() {
	_n=$1 _src=$2 _cc=$3 _pat=$4 _want=$5
	if ! $_cc -O2 -g -o "$T/$_n" "$T/$_src" 2> "$T/$_n.cc.err"; then
		skip "$_n: cannot build ($(head -1 "$T/$_n.cc.err"))"
		return
	fi
	nm -S --defined-only "$T/$_n" | python3 -c 'import re, sys
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in "tT" and re.search(sys.argv[1], f[3]):
        a, n = int(f[0], 16), int(f[1], 16)
        print("\n".join("%#x" % x for x in range(a, a + n, 2)))' "$_pat" \
		> "$T/$_n.a"
	"$SYM" addr2line --no-cache --lazy=never -afiC -e "$T/$_n" \
		< "$T/$_n.a" > "$T/$_n.full" 2>&1
	"$SYM" addr2line --no-cache --lazy=always -afiC -e "$T/$_n" \
		< "$T/$_n.a" > "$T/$_n.lazy" 2>&1
	if [ -s "$T/$_n.a" ] && cmp -s "$T/$_n.full" "$T/$_n.lazy" &&
	   grep -q "$_want" "$T/$_n.lazy"; then
		_tap 0 "$_n: the nested functions alone, lazily = full ($(wc -l < "$T/$_n.a") addresses)"
	else
		_tap 1 "$_n: the nested functions alone, lazily = full"
		diff "$T/$_n.full" "$T/$_n.lazy" | head -10 | sed 's/^/#   /'
	fi
}
nested nest-c nest.c cc '^inner' '^inner$'
nested nest-cxx nest.cc c++ 'Local|lambda|UliE' 'Local::f'

# A lazy table sweeps only the symbols that can name an address asked
# (lazy_syms() in build.c): those that hold one, the ones at the highest
# start below one and the one reaching furthest there.  So ask symbol
# edges (a start, the byte before it, its last byte, its end, of every
# symbol type, data too) in sets of 4, in the three peers' naming styles
# (each sweeps its own table's symbols by its own rule), the stripped
# file with its debug file (.dynsym and two .symtabs) and the debug file
# alone.  Each set is a lazy process and a full one (the GNU style keeps
# state between lookups, see above); the full table is built once, into
# a store of its own (a file and its debug file share a build ID), and
# read from there.  edges NAME FILE N: one TAP point.
edges() {
	_n=$1 _f=$2 _k=$3
	_d=$T/edges.$_n
	mkdir -p "$_d"
	readelf -sW "$_f" | python3 -c 'import random, sys
rng = random.Random(int(sys.argv[1]))
pts = set()
for l in sys.stdin:
    f = l.split()
    if len(f) < 8 or not f[0].endswith(":"):
        continue
    try:
        a, z = int(f[1], 16), int(f[2], 0)
    except ValueError:
        continue
    if a:
        pts.update(x for x in (a - 1, a, a + z - 1, a + z) if x > 0)
pts = sorted(pts)
print("\n".join("%#x" % x for x in rng.sample(pts, min(int(sys.argv[2]), len(pts)))))' \
		"$(cksum <<< "$_n" | cut -d' ' -f1)" "$_k" > "$_d/a"
	_bad=
	local -x SYM_STORE=$_d/store
	"$SYM" addr2line --lazy=never -e "$_f" 0 > /dev/null 2> "$_d/err" ||
		_bad="full build failed"
	split -l 4 "$_d/a" "$_d/part."
	for _st in "-afiCS --output-style=elfutils" "-afiC --output-style=LLVM" \
		   "-afiC --output-style=GNU"; do
		: > "$_d/lazy"
		: > "$_d/full"
		for _p in "$_d"/part.*; do
			# shellcheck disable=SC2046,SC2086
			"$SYM" addr2line --no-cache --lazy=always $_st \
				-e "$_f" $(cat "$_p") >> "$_d/lazy" 2>> "$_d/err" ||
				_bad="lazy run failed"
			# shellcheck disable=SC2046,SC2086
			"$SYM" addr2line --lazy=never $_st -e "$_f" \
				$(cat "$_p") >> "$_d/full" 2>> "$_d/err" ||
				_bad="full run failed"
		done
		[ -z "$_bad" ] && ! cmp -s "$_d/full" "$_d/lazy" &&
			_bad="$_st: lazy differs"
		[ -n "$_bad" ] && break
	done
	rm -f "$_d"/part.*
	if [ -s "$_d/a" ] && [ -z "$_bad" ]; then
		_tap 0 "$_n: symbol edges, lazily in sets of 4 = full ($(wc -l < "$_d/a") addresses, 3 styles)"
	else
		_tap 1 "$_n: symbol edges, lazily in sets of 4 = full (${_bad:-no addresses})"
		diff "$_d/full" "$_d/lazy" | head -10 | sed 's/^/#   /'
		head -3 "$_d/err" | sed 's/^/#   /'
	fi
}

if [ -n "$LIBC_DBG" ]; then
	edges libc.so.6 /lib/x86_64-linux-gnu/libc.so.6 48
	edges libc-debug-file "$LIBC_DBG" 48
else
	skip "libc.so.6: libc6-dbg not installed"
	skip "libc-debug-file: libc6-dbg not installed"
fi
if [ -x "$PY" ] && readelf -S "$PY" | grep -q debug_info; then
	edges python3.11d "$PY" 48
else
	skip "python3.11d: python3.11-dbg not installed"
fi

if [ -n "$LIBC_DBG" ]; then
	check libc "$LIBC_DBG" 150
else
	skip "libc: libc6-dbg not installed"
fi
if [ -x "$PY" ] && readelf -S "$PY" | grep -q debug_info; then
	check python3.11d "$PY" 150
else
	skip "python3.11d: python3.11-dbg not installed"
fi
if [ -n "$JVM_DBG" ]; then
	json_only=1 check libjvm "$JVM_DBG" 40
else
	skip "libjvm: openjdk-17-dbg not installed"
fi
done_testing
