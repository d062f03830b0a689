#!/bin/sh
# demo.sh - `make demo`: a stripped program crashes in inlined code, and
# sym turns its raw addresses back into the inline chain.
#
# 1. Build the fixture fixtures/src/demo_crash.cc (C++, -O2 -g) in a
#    temporary directory.
# 2. Split its DWARF into a separate debug file stored by build ID
#    (DIR/.build-id/xx/rest.debug, as Debian's -dbg packages do) and strip
#    the program, as it would ship.
# 3. Run it so that it crashes: its SIGSEGV handler prints the raw stack
#    as ELF virtual addresses, which is all a production host can give.
# 4. Symbolize them with `sym addr2line` on the stripped file, finding
#    the debug file through --debuginfo-path by build ID.  Caller frames
#    are return addresses, so they are looked up at address - 1.
#
# Fails (non-zero exit) when a step fails or when the answer does not
# name the inlined functions the crash went through.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SYM=${SYM:-$ROOT/bin/sym}
SRC=$ROOT/fixtures/src/demo_crash.cc
T=$(mktemp -d "${TMPDIR:-/tmp}/sym-demo.XXXXXX")
trap 'rm -rf "$T"' EXIT
export LC_ALL=C

if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi
run() { printf '$ %s\n' "$*"; "$@"; }
fail() { echo "demo: FAILED: $*" >&2; exit 1; }

[ -x "$SYM" ] || fail "no $SYM; run make first"
CXX=${CXX:-}
if [ -z "$CXX" ]; then
	for c in g++ clang++; do
		if command -v $c >/dev/null 2>&1; then CXX=$c; break; fi
	done
fi
[ -n "$CXX" ] || fail "no C++ compiler (g++ or clang++)"

say "1. Build a C++ program whose crash happens four inlined calls deep"
echo "   main -> lambda -> checkout() -> total() -> line_price<Item>()"
echo "        -> Price::cents() -> *null"
( cd "$T" && run "$CXX" -O2 -g -Wl,--build-id -o crash "$SRC" ) ||
	fail "cannot build $SRC"

say "2. Ship it stripped; keep its DWARF in a debug file named by build ID"
id=$("$SYM" buildid "$T/crash" | awk '{ print $1 }')
[ -n "$id" ] || fail "sym buildid printed nothing"
run "$SYM" buildid "$T/crash"
dbgdir=$T/debug
dbg=$dbgdir/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
mkdir -p "$(dirname "$dbg")"
run objcopy --only-keep-debug "$T/crash" "$dbg"
run strip --strip-all -o "$T/crash.stripped" "$T/crash"
mv "$T/crash.stripped" "$T/crash"
echo "   $(wc -c < "$T/crash") bytes shipped; debug file ${dbg#"$T"/}"
[ "$("$SYM" buildid "$dbg" | awk '{ print $1 }')" = "$id" ] ||
	fail "the debug file has another build ID"

say "3. Run it: the SIGSEGV handler prints raw ELF addresses, no symbols"
printf '$ %s\n' "./crash crash"
rc=0
(cd "$T" && ./crash crash) > "$T/out" 2> "$T/stack" || rc=$?
cat "$T/stack"
[ "$rc" -ne 0 ] || fail "the program did not crash"
grep -q '^#0 pc 0x' "$T/stack" || fail "no raw stack printed"

# The faulting PC is looked up as is; return addresses at address - 1, so
# that the line of the call comes out, not the line after it.
addrs=
while read -r _n kind a; do
	case $kind in
	pc) addrs="$addrs $a" ;;
	ret) addrs="$addrs $(printf '0x%x' $((a - 1)))" ;;
	esac
done < "$T/stack"
echo "   to look up (return addresses minus 1):$addrs"

say "4. Symbolize on the stripped file; the debug file is found by build ID"
# shellcheck disable=SC2086
run "$SYM" addr2line -f -i -C -p -a -e "$T/crash" --debuginfo-path "$dbgdir" \
	$addrs | tee "$T/sym.out"

# The chain must be there, innermost first, with the inlined frames.
for f in 'shop::Price::cents' 'shop::line_price<shop::Item>' 'shop::total' \
	 'shop::checkout' 'main'; do
	grep -qF "$f" "$T/sym.out" || fail "'$f' missing from the answer"
done
grep -q '(inlined by) shop::checkout' "$T/sym.out" ||
	fail "the inline chain of the crash is missing"
grep -q 'demo_crash.cc:[0-9]' "$T/sym.out" || fail "no source lines"
echo "   The faulting load is inlined four levels deep into checkout(); the"
echo "   lambda is inlined into main.  _start comes from crt1.o, which has no"
echo "   DWARF: its name comes from the symbol table, and ??:? is what the"
echo "   peers print for an unknown line too."

say "5. The same crash address, in GNU addr2line's default layout and as JSON"
pc=$(echo "$addrs" | awk '{ print $1 }')
run "$SYM" addr2line -f -i -C -e "$T/crash" --debuginfo-path "$dbgdir" "$pc"
run "$SYM" addr2line -f -i -C --output-style=JSON -e "$T/crash" \
	--debuginfo-path "$dbgdir" "$pc" || fail "JSON output failed"

say "Done: a stripped binary, a debug file found by build ID, and the full inline chain."
