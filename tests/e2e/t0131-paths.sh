#!/bin/bash
# t0131-paths.sh - source paths as the peers spell them (docs/oracle.md,
# "Paths"): a relative directory joined to DW_AT_comp_dir, nothing
# normalized.
#  - The issue's examples on Debian's own binaries: python3.11d 0x42169f,
#    libc.so.6 0x26b6a (libc6-dbg), python3.11 0x502345: every location
#    line (file:line[:column]) is what GNU addr2line prints in GNU style
#    and what llvm-symbolizer prints in LLVM style.
#  - --basenames and --relativenames give llvm-symbolizer's file names
#    (and lines) for every frame, on the fixtures built with relative
#    paths and on sampled addresses of python3.11d and libc.
#  - libdw's line reader (SYM_LINES=libdw) spells every path of every
#    fixture as lines.c does, whole and relative.
. "$(dirname "$0")/lib/lib.sh"
need python3 llvm-symbolizer addr2line objdump
[ -x "$SYM" ] || plan_skip "$SYM not built"
B=$(fixture MANIFEST) || { echo "Bail out! fixtures/build.sh failed"; exit 1; }
B=$(dirname "$B")
plan 11

# locs: the location lines of an answer (GNU: FILE:LINE, LLVM:
# FILE:LINE:COL), in order.
locs() { grep -E ':([0-9]+|\?)( \(discriminator [0-9]+\))?$'; }

# example FILE ADDR: one TAP point per style.
example() {
	if [ ! -f "$1" ]; then
		skip "no $1"
		skip "no $1"
		return
	fi
	is "$(basename "$1") $2, GNU style: GNU addr2line's locations" \
		"$("$SYM" addr2line -f -i -e "$1" "$2" | locs)" \
		"$(addr2line -f -i -e "$1" "$2" | locs)"
	is "$(basename "$1") $2, LLVM style: llvm-symbolizer's locations" \
		"$("$SYM" addr2line --output-style=LLVM -f -i -e "$1" "$2" | locs)" \
		"$(echo "$2" | llvm-symbolizer --obj="$1" | locs)"
}
example /usr/bin/python3.11d 0x42169f
example /lib/x86_64-linux-gnu/libc.so.6 0x26b6a
example /usr/bin/python3.11 0x502345

# --basenames, --relativenames: llvm-symbolizer's JSON FileName and Line
# of every frame, for every address.
cat > "$T/names.py" <<'EOF'
import json, subprocess, sys
mode, out = sys.argv[1], []
for f in sys.argv[2:]:
    p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f],
                       capture_output=True, text=True)
    addrs = [l.split(":")[0].strip() for l in p.stdout.splitlines()
             if l.startswith(" ") and ":\t" in l]
    addrs = addrs[::max(1, len(addrs) // 300)]
    data = "".join("0x%s\n" % a for a in addrs)
    def run(cmd):
        r = subprocess.run(cmd, input=data, capture_output=True, text=True)
        return [[(s["FileName"], s["Line"]) for s in json.loads(l)["Symbol"]]
                for l in r.stdout.splitlines() if l.strip()]
    want = run(["llvm-symbolizer", "--obj=" + f, mode, "--output-style=JSON"])
    got = run([sys.argv[0].replace("names.py", "sym"), "addr2line", mode,
               "--output-style=JSON", "-f", "-i", "-e", f])
    bad = [(a, g, w) for a, g, w in zip(addrs, got, want) if g != w]
    print("%s %s: %d addresses, %d differ" % (f, mode, len(addrs), len(bad)))
    for a, g, w in bad[:3]:
        print("  0x%s: sym %s, llvm %s" % (a, g, w))
    out.append(len(bad) == 0 and len(got) == len(want) == len(addrs))
sys.exit(0 if all(out) else 1)
EOF
ln -s "$SYM" "$T/sym"
set -- "$B/gcc-O2-d5-c-relpath" "$B/gcc-O2-d4-cxx-relpath" \
	"$B/clang-O2-d5-cxx-relpath" "$B/clang-O2-d4-c-relpath" \
	"$B/gcc-O2-d4-c-dotdir" "$B/gcc-O2-d4-cxx-slashdir"
ok "--basenames: llvm-symbolizer's file names, on the relative-path fixtures" \
	python3 "$T/names.py" --basenames "$@"
ok "--relativenames: the same" python3 "$T/names.py" --relativenames "$@"
set --
[ -f /usr/bin/python3.11d ] && set -- /usr/bin/python3.11d
[ -f /lib/x86_64-linux-gnu/libc.so.6 ] && set -- "$@" /lib/x86_64-linux-gnu/libc.so.6
if [ $# = 2 ]; then
	ok "--basenames: the same on python3.11d and libc" \
		python3 "$T/names.py" --basenames "$@"
	ok "--relativenames: the same on python3.11d and libc" \
		python3 "$T/names.py" --relativenames "$@"
else
	skip "no python3.11d or libc.so.6"
	skip "no python3.11d or libc.so.6"
fi

# libdw's reader against lines.c, on every fixture, every instruction.
: > "$T/readers"
grep -v '^#' "$B/MANIFEST" | while IFS="$(printf '\t')" read -r n _ opts _ _ _ src; do
	[ "$opts" = - ] && opts=
	objdump -d --no-show-raw-insn "$B/$src" |
		awk -F: '/^ *[0-9a-f]+:\t/ { gsub(/ /, "", $1); print "0x" $1 }' \
		> "$T/addrs"
	for m in --output-style=JSON --relativenames; do
		# shellcheck disable=SC2086
		"$SYM" addr2line --no-cache $m $opts --output-style=JSON -f -i \
			-e "$B/$n" < "$T/addrs" > "$T/fast" 2>&1
		# shellcheck disable=SC2086
		SYM_LINES=libdw "$SYM" addr2line --no-cache $m $opts \
			--output-style=JSON -f -i -e "$B/$n" < "$T/addrs" \
			> "$T/libdw" 2>&1
		cmp -s "$T/fast" "$T/libdw" || echo "$n $m" >> "$T/readers"
	done
done
ok "libdw's reader spells every path of every fixture as lines.c does" \
	test ! -s "$T/readers"
sed 's/^/#   differs: /' "$T/readers"
done_testing
