#!/bin/sh
# sym upload and sym lookup --server against a real symd on 127.0.0.1:
# uploads of a debug file and an executable, skips and --force, a wrong
# token, a missing token file, files that cannot be uploaded, a server
# that is down or stopped, the progress bar on a terminal; then sym lookup
# --server answering like sym addr2line on the unstripped file, and its
# errors.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl objdump

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
stripped=$(fixture stripped-buildid-gcc-O2-d5-cxx)
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
dbg="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
dsize=$(stat -c %s "$dbg")
ssize=$(stat -c %s "$stripped")

plan 37

echo secret-token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
U=$SYMD_URL

# up ARGS...: sym upload to the test's symd; stdout+stderr in $T/out,
# the exit status in $rc.
up() {
	"$SYM" upload --server "$U" --token-file "$T/token" "$@" > "$T/out" 2>&1
	rc=$?
}
has() { grep -qF -- "$1" "$T/out"; }

# --- uploads ------------------------------------------------------------
up "$dbg" "$stripped"
is "upload of a debug file and an executable: exit 0" "$rc" 0
is "one line per file: build ID, file, kind, bytes" "$(cat "$T/out")" \
"$id  $dbg  debuginfo  uploaded $dsize bytes
$id  $stripped  executable  uploaded $ssize bytes"
is "the server has the debug file" "$(http_status -I "$U/v1/debuginfo/$id")" 200
is "the server has the executable" "$(http_status -I "$U/v1/executable/$id")" 200
curl -sS -o "$T/got.debug" "$U/buildid/$id/debuginfo"
ok "the stored debug file is byte-identical" cmp "$T/got.debug" "$dbg"

up "$dbg" "$stripped"
is "second upload: exit 0" "$rc" 0
is "second upload: both skipped" "$(cat "$T/out")" \
"$id  $dbg  debuginfo  already there, skipped
$id  $stripped  executable  already there, skipped"

up --force "$dbg"
is "--force uploads again" "$rc $(cat "$T/out")" \
"0 $id  $dbg  debuginfo  uploaded $dsize bytes"

up "$exe"
is "an unstripped binary goes as its debuginfo (already there)" "$rc $(cat "$T/out")" \
"0 $id  $exe  debuginfo  already there, skipped"
up --executable "$exe"
is "... and with --executable as the executable too" "$rc $(cat "$T/out")" \
"0 $id  $exe  debuginfo  already there, skipped
$id  $exe  executable  already there, skipped"

# --- what cannot be uploaded -------------------------------------------
echo wrong-token > "$T/bad"
"$SYM" upload --server "$U" --token-file "$T/bad" --force "$dbg" "$stripped" \
	> "$T/out" 2>&1
rc=$?
is "wrong token: exit 1" "$rc" 1
ok "wrong token: the server's message" has "the server refused the debuginfo of build ID $id: wrong token (HTTP 403)"
ok "wrong token: the other files are not tried" has "'$stripped': not tried: the server refused the token"

"$SYM" upload --server "$U" --token-file "$T/nope" "$dbg" > "$T/out" 2>&1
rc=$?
is "missing token file: exit 1 with a message" "$rc $(cat "$T/out")" \
"1 sym upload: cannot read the token file '$T/nope': No such file or directory"
: > "$T/empty"
"$SYM" upload --server "$U" --token-file "$T/empty" "$dbg" > "$T/out" 2>&1
is "empty token file: exit 1" "$? $(cat "$T/out")" \
"1 sym upload: the token file '$T/empty' is empty"

printf 'int main(void) { return 0; }\n' > "$T/nobid.c"
if ${CC:-cc} -Wl,--build-id=none -o "$T/nobid" "$T/nobid.c" 2>/dev/null; then
	# Stored under its module ID (docs/store.md): the OTel-style file ID.
	nid=$("$SYM" buildid -k "$T/nobid" | cut -d' ' -f1)
	up "$T/nobid" "$dbg"
	is "a file without a GNU build ID: exit 0" "$rc" 0
	ok "a file without a GNU build ID: uploaded under its module ID" \
		has "$nid  $T/nobid  executable  uploaded"
	ok "a file without a GNU build ID: the others still go" has "$id  $dbg  debuginfo  already there, skipped"
else
	skip "no C compiler"
	skip "no C compiler"
	skip "no C compiler"
fi
printf 'not an ELF file\n' > "$T/junk"
up "$T/junk"
is "a non-ELF file: exit 1 with a message" "$rc $(cat "$T/out")" \
"1 sym upload: '$T/junk': not an ELF file; not uploaded"

"$SYM" upload --token-file "$T/token" "$dbg" > "$T/out" 2>&1
is "no --server: usage error (2)" "$?" 2
"$SYM" upload --server ftp://x --token-file "$T/token" "$dbg" > "$T/out" 2>&1
is "a bad URL: usage error (2)" "$? $(head -1 "$T/out")" \
"2 sym upload: --server: 'ftp://x' is not an http:// or https:// URL"

# --- progress bar on a terminal -----------------------------------------
if command -v script >/dev/null 2>&1; then
	script -qec "'$SYM' upload --server '$U' --token-file '$T/token' --force '$dbg'" \
		/dev/null > "$T/tty" 2>&1
	ok "a terminal gets a progress bar" grep -q '\[=*\] 100%' "$T/tty"
else
	skip "no script(1) for a terminal"
fi

# --- sym lookup --server -------------------------------------------------
objdump -d --no-show-raw-insn "$exe" |
	sed -n 's/^ *\([0-9a-f][0-9a-f]*\):\t.*/0x\1/p' > "$T/addrs"
"$SYM" addr2line --no-cache -e "$exe" -f -i -C -a < "$T/addrs" > "$T/want"
"$SYM" lookup --server "$U" --wait-ms 20000 -f -i -C -a "$id" \
	< "$T/addrs" > "$T/got" 2> "$T/err"
is "lookup --server of $(wc -l < "$T/addrs") addresses: exit 0" "$? $(cat "$T/err")" "0 "
ok "GNU -f -i -C -a: byte-identical to sym addr2line, discriminators included" \
	cmp "$T/want" "$T/got"
grep '^0x' "$T/addrs" | head -200 > "$T/plain"
# symd holds the stripped file and the debug file: llvm-symbolizer names
# the outermost frame after the stripped file's .dynsym then (no _init),
# so the same two files are the reference.
"$SYM" addr2line --no-cache -e "$stripped" --debug-file "$dbg" \
	--output-style=LLVM -f -i -C < "$T/addrs" > "$T/want"
"$SYM" lookup --server "$U" --output-style=LLVM -f -i -C "$id" < "$T/addrs" > "$T/got"
ok "LLVM style -f -i -C: byte-identical on every address" cmp "$T/want" "$T/got"
set -- $(head -3 "$T/plain")
"$SYM" addr2line -e "$exe" -p -f -i -C -s -a "$@" > "$T/want"
"$SYM" lookup --server "$U" -p -f -i -C -s -a "$id" "$@" > "$T/got"
ok "addresses in argv, -p -s" cmp "$T/want" "$T/got"
"$SYM" lookup --server "$U/" -f "$(echo "$id" | tr a-f A-F)" "$1" > "$T/got" 2>&1
is "an upper-case build ID and a URL with a slash" "$?" 0

# Without waiting, a build ID never asked for is pending: the server has
# only started looking (unless its worker was faster than the reply).
none=00112233445566778899aabbccddeeff00112233
"$SYM" lookup --server "$U" --wait-ms 0 -f "$none" 0x10 > "$T/out" 2>&1
rc=$?
ok "an unknown build ID, --wait-ms 0: exit 1, pending (suggests --wait-ms) or missing" \
	sh -c "[ $rc = 1 ] && grep -Eq 'is still being fetched or converted by the server \(pending after 0 ms\).*--wait-ms|\(missing' '$T/out'"
"$SYM" lookup --server "$U" --wait-ms 5000 -f "$none" 0x10 > "$T/out" 2>&1
rc=$?
is "a build ID the server does not have: exit 1" "$rc" 1
ok "... says it is missing, with the server's reason" has "has no debug information for build ID $none (missing: "
"$SYM" lookup --server "$U" -f zz 0x10 > "$T/out" 2>&1
is "a bad build ID: usage error (2)" "$?" 2
"$SYM" addr2line --server "$U" -e "$exe" 0x10 > "$T/out" 2>&1
is "addr2line takes no --server (2)" "$?" 2

# --- a server that stops answering, then one that is down --------------
kill -STOP "$SYMD_PID"
t0=$(date +%s)
up --timeout 1 "$dbg"
t1=$(date +%s)
kill -CONT "$SYMD_PID"
is "a stopped server: exit 1" "$rc" 1
ok "a stopped server: given up after --timeout" sh -c "has() { grep -qF -- \"\$1\" '$T/out'; }; has 'stopped answering' && [ $((t1 - t0)) -le 5 ]"

stop_symd TERM
t0=$(date +%s)
up "$dbg" "$stripped"
t1=$(date +%s)
is "server down: exit 1" "$rc" 1
ok "server down: fast, one line for the first file, 'not tried' for the rest" \
	sh -c "[ $((t1 - t0)) -le 3 ] && grep -q \"cannot reach the server '$U'\" '$T/out' && grep -q 'not tried: the server cannot be reached' '$T/out'"
"$SYM" lookup --server "$U" -f "$id" 0x10 > "$T/out" 2>&1
rc=$?
is "lookup, server down: exit 1 with a message" "$rc $(grep -c "cannot reach the server '$U'" "$T/out")" "1 1"
done_testing
