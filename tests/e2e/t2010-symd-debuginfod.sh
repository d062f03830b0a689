#!/bin/sh
# symd with upstream debuginfod servers: a real debuginfod (Debian's)
# indexing stripped fixtures' debug files, and a stub for the faults a
# real server cannot be made to commit (a wrong file, a slow answer).
# symd must fetch, convert and answer exactly what `sym addr2line` says on
# the unstripped binaries, fetch once however many ask, serve the files
# back over the debuginfod protocol, and survive kill -9 mid-conversion.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
need debuginfod curl python3 objdump c++filt

CHECK="python3 $SYM_ROOT/tests/e2e/lib/symd_check.py"
export SYM
dbgfile() {
	echo "$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$1" | cut -c1-2)/$(echo "$1" | cut -c3-).debug"
}
idof() { "$SYM" buildid "$1" | cut -d' ' -f1; }

a_exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
b_exe=$(fixture clang-O2-d4-c)
c_exe=$(fixture gcc-O3-d4-c)
a_str=$(fixture stripped-buildid-gcc-O2-d5-cxx)
A=$(idof "$a_exe"); B=$(idof "$b_exe"); C=$(idof "$c_exe")
mkdir -p "$T/up"
cp "$(dbgfile "$A")" "$T/up/a.debug"
cp "$(dbgfile "$B")" "$T/up/b.debug"
cp "$(dbgfile "$C")" "$T/up/c.debug"
cp "$a_str" "$T/up/a.stripped"

plan 25

start_debuginfod "$T/up" "$A" "$B" "$C" "$A/executable" ||
	plan_skip "debuginfod did not start"
start_symd --debuginfod-urls "$DEBUGINFOD_URL" || exit 1
U=$SYMD_URL

# --- fetch, convert, answer --------------------------------------------
ok "A: fetched, converted, frames equal sym addr2line's" \
	$CHECK compare "$U" "$A" "$a_exe" 300
ok "B: the same for a clang C binary" $CHECK compare "$U" "$B" "$b_exe" 300

# Ten requests at once for a cold build ID: one fetch, one conversion.
main_c=0x$(objdump -d "$c_exe" | awk '/<main>:/{print $1; exit}')
pids=
for i in 1 2 3 4 5 6 7 8 9 10; do
	$CHECK status "$U" "$C" "$main_c" 20000 > "$T/conc.$i" &
	pids="$pids $!"
done
# (a bare `wait` would wait for the servers too)
for p in $pids; do wait "$p"; done
is "ten concurrent requests for a cold build ID all answered ok" \
	"$(cat "$T"/conc.* | cut -d' ' -f1 | sort | uniq -c | tr -s ' ')" " 10 ok"
curl -sS "$U/metrics" > "$T/metrics"
is "three build IDs: three fetches" \
	"$(sed -n 's/^symd_fetches_total{result="ok"} //p' "$T/metrics")" 3
is "three build IDs: three conversions" \
	"$(sed -n 's/^symd_conversions_total{result="ok"} //p' "$T/metrics")" 3

# --- the debuginfod protocol, served by symd -----------------------------
rm -rf "$T/dc"
got=$(env DEBUGINFOD_URLS="$U" DEBUGINFOD_CACHE_PATH="$T/dc" debuginfod-find debuginfo "$A" 2>/dev/null)
ok "debuginfod-find debuginfo via symd: byte-identical" cmp "$got" "$T/up/a.debug"
got=$(env DEBUGINFOD_URLS="$U" DEBUGINFOD_CACHE_PATH="$T/dc" debuginfod-find executable "$A" 2>/dev/null)
ok "debuginfod-find executable via symd (fetched upstream on a miss): byte-identical" \
	cmp "$got" "$T/up/a.stripped"
is "a build ID nobody has: 404 on /buildid" \
	"$(http_status "$U/buildid/00112233445566778899aabbccddeeff00112233/debuginfo")" 404
is "a build ID nobody has: missing" \
	"$($CHECK status "$U" 00112233445566778899aabbccddeeff00112234 0x10 5000 | cut -d' ' -f1)" missing

# --- kill -9 during a conversion, then restart ---------------------------
# python3.11d is big enough that its conversion takes a moment.
P=$(idof /usr/bin/python3.11d)
mkdir -p "$T/up2"
cp /usr/bin/python3.11d "$T/up2/"
stop_server "$DEBUGINFOD_PID"
start_debuginfod "$T/up2" "$P/executable" || exit 1
stop_symd
start_symd --debuginfod-urls "$DEBUGINFOD_URL" || exit 1
$CHECK status "$SYMD_URL" "$P" 0x1000 0 > /dev/null	# starts the work
sleep 0.6
stop_symd KILL
ok "the store verifies after kill -9 during fetch/conversion" \
	"$SYM" store verify --store "$T/symd-store"
start_symd --debuginfod-urls "$DEBUGINFOD_URL" || exit 1
ok "after restart A still answers the same" $CHECK compare "$SYMD_URL" "$A" "$a_exe" 100
ok "after restart python3.11d is converted and answers" \
	$CHECK compare "$SYMD_URL" "$P" /usr/bin/python3.11d 200
stop_symd

# --- faults -------------------------------------------------------------
# The upstream is down: an error with a retry time, not a hang.
start_symd --store "$T/s-down" --debuginfod-urls "http://127.0.0.1:$(free_port)" || exit 1
out=$($CHECK status "$SYMD_URL" "$A" 0x1000 5000)
is "upstream down: status error" "$(echo "$out" | cut -d' ' -f1)" error
ok "upstream down: the reply has retry_after_ms" sh -c \
	"curl -s -X POST -d '{\"addresses\":[1],\"wait_ms\":0}' '$SYMD_URL/v1/symbolize/$A' | grep -q retry_after_ms"
is "upstream down: /healthz still answers" "$(http_status "$SYMD_URL/healthz")" 200
stop_symd

start_stub_debuginfod --file "$T/up/a.debug" || exit 1
# A slow upstream: pending first, ok later.
start_symd --store "$T/s-slow" --debuginfod-urls "$STUB_URL/delay=2" || exit 1
is "slow upstream: pending within a short wait" \
	"$($CHECK status "$SYMD_URL" "$A" 0x1000 300 | cut -d' ' -f1)" pending
is "slow upstream: ok once it arrives" \
	"$($CHECK status "$SYMD_URL" "$A" 0x1000 20000 | cut -d' ' -f1)" ok
stop_symd
# An upstream that serves A's file for every build ID: rejected for B.
start_symd --store "$T/s-bad" --debuginfod-urls "$STUB_URL" || exit 1
is "wrong build ID from upstream: status error" \
	"$($CHECK status "$SYMD_URL" "$B" 0x1000 10000 | cut -d' ' -f1)" error
is "wrong build ID from upstream: nothing stored for it" \
	"$(http_status -I "$SYMD_URL/v1/debuginfo/$B")" 404
is "after that, a good build ID from the same upstream: ok" \
	"$($CHECK status "$SYMD_URL" "$A" 0x1000 10000 | cut -d' ' -f1)" ok
stop_symd
# Overload: full queues give 503 with Retry-After, not an endless queue.
start_symd --store "$T/s-busy" --queue-max 2 --fetch-workers 1 \
	--debuginfod-urls "$STUB_URL/delay=3" || exit 1
mods=$(python3 -c 'print(",".join("{\"build_id\":\"%040x\",\"addresses\":[1]}" % (0xabc0 + i) for i in range(8)))')
curl -s -D "$T/busy.h" -o "$T/busy.b" -X POST -d "{\"modules\":[$mods],\"wait_ms\":0}" \
	"$SYMD_URL/v1/symbolize"
is "eight cold build IDs at once with --queue-max 2: 503" \
	"$(sed -n 's/^HTTP\/1.1 \([0-9]*\).*/\1/p' "$T/busy.h")" 503
ok "with Retry-After and a JSON error" sh -c \
	"grep -qi '^retry-after: [0-9]' '$T/busy.h' && grep -q '\"error\"' '$T/busy.b'"
is "overloaded, /healthz still answers" "$(http_status "$SYMD_URL/healthz")" 200
stop_symd
# 404 everywhere: missing (remembered as absent).
start_symd --store "$T/s-404" --debuginfod-urls "$STUB_URL/mode=404" || exit 1
is "upstream 404: missing" \
	"$($CHECK status "$SYMD_URL" "$A" 0x1000 5000 | cut -d' ' -f1)" missing
is "absent is remembered in the store" \
	"$("$SYM" store ls --store "$T/s-404" 2>/dev/null | grep -c "$A")" 1
stop_symd
done_testing
