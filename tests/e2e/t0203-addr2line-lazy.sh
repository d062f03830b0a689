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
plan $(($(wc -l < "$T/rows") + 3))

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
