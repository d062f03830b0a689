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
# 6. The service: start symd on a free 127.0.0.1 port with an empty
#    store, upload the debug file with `sym upload` (as CI would), and
#    symbolize the same raw stack through the HTTP API (curl) and with
#    `sym lookup --server`: the daemon converts the file once and answers
#    from its table.
#
# 7-14. The profile: tools/scripts/demo-profile.sh records a stripped workload
#    with `sym record` (or libsymprof's `sym run`), symbolizes it through
#    symd with a real debuginfod server upstream and a CI upload, and
#    writes a flame graph, a report with error bars, folded stacks and a
#    pprof file to OUTDIR (see that script).
#
#   tools/scripts/demo.sh [OUTDIR]     (default build/demo; SYM_DEMO_OUT too)
#
# Fails (non-zero exit) when a step fails, when the answer does not name
# the inlined functions the crash went through, or when the profile's
# views do not show the workload's hot functions with their shares.
# Every process it starts is stopped on any exit, Ctrl-C included.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYM=${SYM:-$ROOT/bin/sym}
SYMD=${SYMD:-$ROOT/bin/symd}
SRC=$ROOT/fixtures/src/demo_crash.cc
T=$(mktemp -d "${TMPDIR:-/tmp}/sym-demo.XXXXXX")
SYMD_PID=
# On any exit, Ctrl-C included (a script's background jobs ignore SIGINT,
# so symd would outlive it): stop symd, remove $T.
trap 'rc=$?; trap - EXIT; [ -z "$SYMD_PID" ] || { kill "$SYMD_PID" 2>/dev/null;
      wait "$SYMD_PID" 2>/dev/null; }; rm -rf "$T"; exit $rc' EXIT
trap 'echo "demo: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
export LC_ALL=C
# The tables `sym addr2line` caches go to a store in $T, removed with it:
# the default one (~/.cache/sym) would keep entries naming the debug
# files of $T after they are deleted.
export SYM_STORE="$T/store-sym"

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

say "6. The service: symd, a CI upload, and the same stack over HTTP"
[ -x "$SYMD" ] || fail "no $SYMD; run make first"
echo demo-token > "$T/token"
printf '$ %s\n' "symd --listen 127.0.0.1:0 --store STORE --upload-token-file token &"
# The file exists before the loop below reads it: the background
# job's redirection is done in the child, maybe after the first sed,
# whose failure (status 2) set -e would make the demo's.
: > "$T/symd.out"
"$SYMD" --listen 127.0.0.1:0 --store "$T/store" --upload-token-file "$T/token" \
	> "$T/symd.out" 2> "$T/symd.log" &
SYMD_PID=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$T/symd.out")
	[ -n "$port" ] && break
	sleep 0.05
done
[ -n "$port" ] || fail "symd did not start: $(cat "$T/symd.log")"
url=http://127.0.0.1:$port
cat "$T/symd.out"
run "$SYM" upload --server "$url" --token-file "$T/token" "$dbg" ||
	fail "sym upload failed"
# shellcheck disable=SC2086
list=$(printf '"%s",' $addrs)
body="{\"modules\":[{\"build_id\":\"$id\",\"addresses\":[${list%,}]}],\"wait_ms\":10000}"
printf "\$ curl -s -X POST -d '%s' %s/v1/symbolize\n" "$body" "$url"
curl -s -X POST -d "$body" "$url/v1/symbolize" > "$T/answer.json" ||
	fail "POST /v1/symbolize failed"
python3 -m json.tool "$T/answer.json" 2>/dev/null | head -60 ||
	cat "$T/answer.json"
grep -q '"status":"ok"' "$T/answer.json" || fail "symd did not answer ok"
grep -q 'shop::line_price<shop::Item>' "$T/answer.json" ||
	fail "symd's answer lacks the inline chain"
# shellcheck disable=SC2086
printf '$ %s\n' "$SYM lookup --server $url -f -i -C -p -a $id$addrs"
# shellcheck disable=SC2086
"$SYM" lookup --server "$url" -f -i -C -p -a "$id" $addrs | tee "$T/server.out"
# shellcheck disable=SC2086
"$SYM" addr2line -f -i -C -p -a -e "$T/crash" --debuginfo-path "$dbgdir" \
	$addrs > "$T/local.out"
cmp -s "$T/local.out" "$T/server.out" ||
	fail "sym lookup --server differs from sym addr2line"
echo "   The same answer as in step 4, now from the daemon's table."
echo "   symd's log, one line per request:"
sed 's/^/   /' "$T/symd.log"
kill "$SYMD_PID"
st=0
wait "$SYMD_PID" 2>/dev/null || st=$?
SYMD_PID=
[ "$st" = 0 ] ||
	fail "symd exited with status $st on SIGTERM: $(tail -5 "$T/symd.log")"

say "Crash done: a stripped binary, its debug file found by build ID, the full inline chain, and the same answer from symd."

# The profile, in its own script (its own processes, its own cleanup).
"$ROOT/tools/scripts/demo-profile.sh" "$@"
