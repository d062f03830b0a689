#!/bin/sh
# t3070-record-pprof-symbolized.sh - `sym record --format pprof
# --symbolize` (issue 23): one step from a command to a pprof file that
# Google's pprof (go tool pprof -top) reads with function names, through
# the local store (--store) and through symd (--server, the debug
# information uploaded first); without --symbolize pprof sees addresses
# only; --server without --symbolize is a usage error.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need go curl
need_perf
plan 12

prof_cc burn prof_burn.c -O2 -g -fno-omit-frame-pointer
cd "$T" || exit 1
# top FILE: pprof's flat list, no symbolization of its own (it would look
# for the binaries), one row per function: "flat% name".
top() {
	PPROF_BINARY_PATH=/nonexistent go tool pprof -top -symbolize=none \
		-nodefraction=0 -nodecount=100000 "$1" 2> "$1.err" |
		awk 'f { print $2, $6 } /^ *flat  *flat%/ { f = 1 }'
}
# share FILE NAME: NAME's flat share in FILE, without the %.
share() { top "$1" | awk -v n="$2" '$2 == n { sub("%", "", $1); print $1 }'; }

"$SYM" record -F 999 --format pprof --symbolize --store "$T/st" \
	-o local.pb.gz -- ./burn 1 > local.out 2>&1
is "--symbolize --store: exit 0" "$?" 0
sed 's/^/# /' local.out
ok "one summary line of the symbolization on stderr" \
	grep -q '^sym record: [0-9]* frames in [0-9]* modules, [0-9]* resolved' local.out
top local.pb.gz > local.top
sed 's/^/# /' local.top
is "pprof -top reads it: its first row is burn70" \
	"$(head -1 local.top | awk '{ print $2 }')" burn70
ok "burn30 and main are named too" \
	sh -c "grep -q ' burn30\$' local.top && grep -q ' main\$' local.top"
ok "burn70 takes 60-80% of the samples (the program's 70%)" \
	awk -v s="$(share local.pb.gz burn70)" 'BEGIN { exit !(s >= 60 && s <= 80) }'

"$SYM" record -q -F 999 --format pprof -o plain.pb.gz -- ./burn 0.3
top plain.pb.gz > plain.top
ok "without --symbolize pprof sees no burn70 (addresses only)" \
	sh -c "! grep -q ' burn70\$' plain.top"

"$SYM" record -q --format pprof --server http://127.0.0.1:1 -o x.pb.gz \
	-- ./burn 0.1 > x.out 2>&1
is "--server without --symbolize: exit 2" "$?" 2
ok "... says to add --symbolize, writes nothing" \
	sh -c "grep -q 'add --symbolize' x.out && test ! -e x.pb.gz"

echo token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
"$SYM" upload --server "$SYMD_URL" --token-file "$T/token" burn > up.out 2>&1
is "symd: the program uploaded" "$?" 0
"$SYM" record -F 999 --format pprof --symbolize --server "$SYMD_URL" \
	-o server.pb.gz -- ./burn 1 > server.out 2>&1
is "--symbolize --server: exit 0" "$?" 0
sed 's/^/# /' server.out
top server.pb.gz > server.top
is "pprof -top reads it: its first row is burn70" \
	"$(head -1 server.top | awk '{ print $2 }')" burn70

"$SYM" record -q -F 99 --format pprof --symbolize --server http://127.0.0.1:1 \
	-o down.pb.gz -- ./burn 0.2 > down.out 2>&1
ok "a server that cannot be reached: exit 1, no file" \
	sh -c "[ $? = 1 ] && test ! -e down.pb.gz"
done_testing
