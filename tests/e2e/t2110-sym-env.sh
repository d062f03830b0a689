#!/bin/sh
# t2110-sym-env.sh - SYM_SERVER, SYM_TOKEN_FILE and SYM_TOKEN, as a CI
# pipeline sets them: sym upload and sym lookup use them when their
# flags are not given, and the flags win over them.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
stripped=$(fixture stripped-buildid-gcc-O2-d5-cxx)
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
dbg="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
plan 13

echo secret-token > "$T/token"
echo wrong-token > "$T/wrong"
start_symd --upload-token-file "$T/token" || exit 1
dead=http://127.0.0.1:1
unset SYM_SERVER SYM_TOKEN_FILE SYM_TOKEN

# run ENV... -- ARGS: sym with only the given variables of ours set;
# output in $T/out, status in $rc.
run() {
	env -u SYM_SERVER -u SYM_TOKEN_FILE -u SYM_TOKEN "$@" > "$T/out" 2>&1
	rc=$?
}

run SYM_SERVER="$SYMD_URL" SYM_TOKEN_FILE="$T/token" "$SYM" upload "$dbg"
is "SYM_SERVER + SYM_TOKEN_FILE: uploaded" "$rc $(sed "s/.*debuginfo  //" "$T/out")" \
	"0 uploaded $(stat -c %s "$dbg") bytes"
run SYM_SERVER="$SYMD_URL" SYM_TOKEN=secret-token "$SYM" upload --force "$dbg"
is "SYM_TOKEN: uploaded" "$rc" 0
run SYM_SERVER="$dead" SYM_TOKEN_FILE="$T/wrong" SYM_TOKEN=wrong \
	"$SYM" upload --server "$SYMD_URL" --token-file "$T/token" --force "$dbg"
is "--server and --token-file win over the environment" "$rc" 0
run SYM_SERVER="$SYMD_URL" SYM_TOKEN_FILE="$T/token" SYM_TOKEN=wrong \
	"$SYM" upload --force "$dbg"
is "SYM_TOKEN_FILE wins over SYM_TOKEN" "$rc" 0
run SYM_SERVER="$SYMD_URL" SYM_TOKEN=wrong "$SYM" upload --force "$dbg"
ok "a wrong SYM_TOKEN: the server's answer" \
	sh -c "[ $rc = 1 ] && grep -q 'wrong token (HTTP 403)' '$T/out'"
run SYM_SERVER="$SYMD_URL" SYM_TOKEN_FILE="$T/nope" "$SYM" upload "$dbg"
is "a missing SYM_TOKEN_FILE: exit 1, named" "$rc $(cat "$T/out")" \
	"1 sym upload: cannot read the token file '$T/nope' (\$SYM_TOKEN_FILE): No such file or directory"
run SYM_SERVER="$SYMD_URL" "$SYM" upload "$dbg"
ok "no token at all: usage error naming the three" \
	sh -c "[ $rc = 2 ] && grep -q 'give --token-file, or set SYM_TOKEN_FILE or SYM_TOKEN' '$T/out'"
run SYM_TOKEN=x "$SYM" upload "$dbg"
ok "no server at all: usage error" \
	sh -c "[ $rc = 2 ] && grep -q 'give --server or set SYM_SERVER' '$T/out'"
run SYM_SERVER=ftp://x SYM_TOKEN=x "$SYM" upload "$dbg"
is "a bad SYM_SERVER is named as such" "$rc $(head -1 "$T/out")" \
	"2 sym upload: SYM_SERVER: 'ftp://x' is not an http:// or https:// URL"

# sym lookup: SYM_SERVER instead of the store; --server and --store win.
run SYM_SERVER="$SYMD_URL" "$SYM" upload --token-file "$T/token" "$stripped"
"$SYM" addr2line --no-cache -e "$exe" -f 0x1000 > "$T/want"
run SYM_SERVER="$SYMD_URL" "$SYM" lookup --wait-ms 20000 -f "$id" 0x1000
ok "lookup with SYM_SERVER asks symd" sh -c "[ $rc = 0 ] && cmp -s '$T/want' '$T/out'"
run SYM_SERVER="$dead" "$SYM" lookup --server "$SYMD_URL" -f "$id" 0x1000
ok "lookup: --server wins over SYM_SERVER" sh -c "[ $rc = 0 ] && cmp -s '$T/want' '$T/out'"
run SYM_SERVER="$dead" "$SYM" lookup --store "$T/empty-store" -f "$id" 0x1000
ok "lookup: --store wins over SYM_SERVER (the store has no table: missing)" \
	sh -c "[ $rc = 1 ] && ! grep -q 'cannot reach' '$T/out'"
run SYM_SERVER="$dead" "$SYM" addr2line -e "$exe" -f 0x1000
ok "addr2line reads files, never SYM_SERVER" sh -c "[ $rc = 0 ] && cmp -s '$T/want' '$T/out'"
done_testing
