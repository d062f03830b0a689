#!/bin/sh
# t2130-progress-tty.sh - progress on a terminal, silence elsewhere: sym
# upload draws a bar while it makes the debug-only copy and while the
# file goes out, sym store add a line with the seconds a table has taken;
# with stderr not a terminal, neither writes a byte of it (no carriage
# return, no escape).  The terminal is script(1)'s pseudo-terminal.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl script

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
plan 8

echo secret-token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
# has_ctl FILE: a carriage return or an escape in FILE.
has_ctl() { [ "$(tr -d '\n' < "$1" | tr -dc '\r\033' | wc -c)" -gt 0 ]; }

# --- not a terminal ---------------------------------------------------------
"$SYM" upload --server "$SYMD_URL" --token-file "$T/token" "$exe" \
	> "$T/out" 2> "$T/err" < /dev/null
is "upload, stderr a file: exit 0" "$?" 0
ok "upload, stderr a file: only the bytes-saved line, no progress" \
	sh -c "[ \$(wc -l < '$T/err') = 1 ] && grep -q 'bytes saved' '$T/err' && ! { tr -dc '\r\033' < '$T/err' | grep -q .; }"
"$SYM" store add --store "$T/st" "$exe" > "$T/out" 2> "$T/err"
is "store add, stderr a file: exit 0, stderr empty" "$?:$(wc -c < "$T/err")" "0:0"

# --- a terminal ----------------------------------------------------------------
script -qec "'$SYM' upload --force --server '$SYMD_URL' --token-file '$T/token' '$exe'" \
	/dev/null > "$T/tty" 2>&1
ok "upload on a terminal: a bar while the copy is made" \
	grep -q 'gcc-O2-d5-cxx (copy) *\[=*\] 100%' "$T/tty"
ok "... and one while it goes out" grep -q 'gcc-O2-d5-cxx  *\[=*\] 100%' "$T/tty"
ok "... each cleared at the end (ESC [K)" grep -q "$(printf '\r\033\\[K')" "$T/tty"
script -qec "'$SYM' store add --store '$T/st2' '$exe'" /dev/null > "$T/tty" 2>&1
ok "store add on a terminal: the file, the phase and the seconds" \
	grep -Eq 'gcc-O2-d5-cxx: building its table  [0-9]+\.[0-9] s' "$T/tty"
ok "... then its line as without a terminal" \
	grep -Eq "[0-9a-f]{40}  $exe  [0-9]+ bytes, 1 chunks" "$T/tty"
done_testing
