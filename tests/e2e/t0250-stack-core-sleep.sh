#!/bin/sh
# sym stack --core on a core of Debian's `sleep` killed with SIGSEGV (a
# core_pattern this test sets and restores): the crashing thread is
# flagged with its signal, the modules are named with build ID+offset,
# sleep (whose debug file is not installed) is listed as missing with the
# `sym upload` command, and every frame agrees with eu-stack -i -s and
# gdb's `thread apply all bt` (tests/e2e/lib/stack-compare.py).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/core-lib.sh"
need eu-stack gdb python3
[ -x "$SYM" ] || plan_skip "$SYM not built"
core_setup
plan 8

sleep_core
peer_points sleep "$core" "$exe"

head -2 "$T/sleep.sym" | tail -1 > "$T/tid"
ok "the crashing thread carries its signal" grep -q '(SIGSEGV)$' "$T/tid"
bid=$("$SYM" buildid "$exe" | cut -d' ' -f1)
ok "frames of sleep name its build ID" grep -q " - sleep $bid+0x" "$T/sleep.sym"
ok "sleep is named as missing, with the upload command" \
	grep -q "fix: sym upload .* $exe" "$T/sleep.sym.err"
"$SYM" stack --json --core "$core" > "$T/json"
ok "--json is JSON with the threads" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["threads"][0]["signal"] == "SEGV", d["threads"][0]
assert d["threads"][0]["frames"][0]["module"] == "libc.so.6"
assert d["missing"][0]["build_id"] == sys.argv[2]
' "$T/json" "$bid"
