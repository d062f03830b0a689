#!/bin/sh
# sym addr2line honours DEBUGINFOD_URLS as eu-addr2line does: a stripped
# binary whose debug file is found nowhere locally gets it from a real
# debuginfod (Debian's, on 127.0.0.1) through libdebuginfod, answers
# exactly as on the unstripped binary, and keeps the file in the store's
# file area and the table built from it in the store: the next run reads
# no DWARF and asks no server.  A server that does not have it, one that
# is not there, one that fails, stalls or sends another build ID's file:
# ?? as from the symbols, one line on stderr saying why, the exit status
# eu-addr2line has (0), and no wait past DEBUGINFOD_TIMEOUT.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
need debuginfod curl python3 objdump eu-addr2line
[ -x "$SYM" ] || plan_skip "$SYM not built"

full=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
other=$(fixture clang-O2-d4-c)
A=$("$SYM" buildid "$full" | cut -d' ' -f1)
dbg=$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$A" | cut -c1-2)/$(echo "$A" | cut -c3-).debug
mkdir -p "$T/up" "$T/bin"
cp "$dbg" "$T/up/a.debug"
# Stripped copies away from their fixtures' debug directories.
cp "$SYM_ROOT/fixtures/build/stripped-buildid-gcc-O2-d5-cxx" "$T/bin/a"
objcopy --strip-all "$other" "$T/bin/b"
objdump -d --no-show-raw-insn "$full" |
	awk -F: '/^ *[0-9a-f]+:\t/ { gsub(/ /, "", $1); print "0x" $1 }' |
	awk 'NR % 7 == 1' > "$T/addrs"
main=0x$(objdump -d "$full" | awk '/<main>:/ { print $1; exit }')
export DEBUGINFOD_CACHE_PATH="$T/dcache"

plan 16

start_debuginfod "$T/up" "$A" || plan_skip "debuginfod did not start"

# a2l ENV... -- ARGS: sym addr2line with DEBUGINFOD_URLS and the rest of
# ENV, its stdout in $T/out, its stderr in $T/err, its status in $rc.
a2l() {
	_env=
	while [ "$1" != -- ]; do _env="$_env $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env $_env "$SYM" addr2line "$@" > "$T/out" 2> "$T/err"
	rc=$?
}

# --- fetched, stored, built once -------------------------------------------
"$SYM" addr2line --no-cache -a -f -i -C -e "$full" < "$T/addrs" > "$T/want"
a2l DEBUGINFOD_URLS="$DEBUGINFOD_URL" -- --stats -a -f -i -C -e "$T/bin/a" \
	< "$T/addrs"
ok "fetched from debuginfod: every answer as on the unstripped binary" \
	cmp "$T/want" "$T/out"
ok "the fetch and the stored table are in --stats" sh -c \
	"grep -q 'debug file fetched from DEBUGINFOD_URLS' '$T/err' &&
	 grep -q 'table from parsing (stored as build ID $A' '$T/err'"
ok "the debug file is in the store's file area" \
	cmp "$T/up/a.debug" "$SYM_STORE/files/$A/debuginfo"
stop_server "$DEBUGINFOD_PID"
a2l DEBUGINFOD_URLS="$DEBUGINFOD_URL" -- --stats -a -f -i -C -e "$T/bin/a" \
	< "$T/addrs"
ok "the next run, server gone: the same answers" cmp "$T/want" "$T/out"
ok "from the stored table, without asking a server" sh -c \
	"grep -q 'table from cache' '$T/err' && ! grep -q DEBUGINFOD '$T/err'"
# A table of another converter is rebuilt from the file area, not fetched.
a2l DEBUGINFOD_URLS="$DEBUGINFOD_URL" SYM_TEST_CONVERTER_VERSION=9999 -- \
	--stats -a -f -i -C -e "$T/bin/a" < "$T/addrs"
ok "without a usable table: rebuilt from the file area, no fetch" sh -c \
	"cmp -s '$T/want' '$T/out' && ! grep -q 'DEBUGINFOD_URLS in' '$T/err'"

# --- what eu-addr2line does when no server has it ---------------------------
# eu_status URLS: eu-addr2line's exit status on b's main with URLS.
eu_status() {
	DEBUGINFOD_URLS=$1 DEBUGINFOD_CACHE_PATH="$T/eucache" \
		eu-addr2line -f -e "$T/bin/b" "$main" > /dev/null 2>&1
	echo $?
	rm -rf "$T/eucache"
}
# fails DESC URLS [ENV...]: ?? from the symbols, one line on stderr, the
# status eu-addr2line has, in less than 15 s (DEBUGINFOD_TIMEOUT=2).
fails() {
	_d=$1 _u=$2
	shift 2
	rm -rf "$DEBUGINFOD_CACHE_PATH"
	_t0=$(date +%s)
	a2l DEBUGINFOD_URLS="$_u" DEBUGINFOD_TIMEOUT=2 "$@" -- -f -e "$T/bin/b" \
		"$main"
	_dt=$(($(date +%s) - _t0))
	_eu=$(eu_status "$_u")
	if [ "$(cat "$T/out")" = "$(printf '??\n??:0')" ] &&
	   [ "$(wc -l < "$T/err")" = 1 ] && [ "$rc" = "$_eu" ] &&
	   [ "$_dt" -lt 15 ]; then
		_tap 0 "$_d: ??, one line on stderr, status $rc as eu's"
	else
		_tap 1 "$_d: ??, one line on stderr, status $rc as eu's ($_eu)"
		echo "#   $_dt s; stdout: $(tr '\n' ' ' < "$T/out")"
		sed 's/^/#   stderr: /' "$T/err"
	fi
	sed 's/^/#   /' "$T/err"
}
start_debuginfod "$T/up" "$A" || exit 1
fails "a server without the build ID (404)" "$DEBUGINFOD_URL"
ok "the reason names the build ID" grep -q "no server gave the debug file of build ID" "$T/err"
stop_server "$DEBUGINFOD_PID"
fails "no server listening" "http://127.0.0.1:$(free_port)"
start_stub_debuginfod --file "$T/up/a.debug" || exit 1
fails "a server answering 500" "$STUB_URL/mode=500"
fails "a server closing the connection" "$STUB_URL/mode=close"
fails "a server that stalls 30 s" "$STUB_URL/delay=30"
fails "a server sending another build ID's file" "$STUB_URL"
ok "the reason says so" grep -q "has another build ID" "$T/err"
ok "and nothing was stored for it" test ! -e "$SYM_STORE/files/$("$SYM" buildid "$T/bin/b" | cut -d' ' -f1)"
# Without DEBUGINFOD_URLS nothing is asked and nothing is said.
a2l DEBUGINFOD_URLS= -- -f -e "$T/bin/b" "$main"
ok "DEBUGINFOD_URLS empty: ??, nothing on stderr, status 0" sh -c \
	"[ '$rc' = 0 ] && [ ! -s '$T/err' ] && grep -q '??' '$T/out'"
done_testing
