#!/bin/sh
# sym stack --core on a core of Debian's python3.11 killed with SIGABRT
# while running a 4-thread script (one thread in time.sleep(), two in
# Event.wait(), the main one in a loop): the debug file comes from
# python3.11-dbg, and every thread's frames agree with eu-stack -i -s and
# gdb, whole names and paths.  eu-stack 0.188 finds no DWARF scope in
# python3.11 (one frame named after the ELF symbol with the innermost
# line: eu-no-scopes in stack-compare.py); gdb shows tail-call frames no
# CFI unwinder can see and prefers an is_stmt row where several share an
# address (gdb-is-stmt, counted apart; docs/crash.md).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/core-lib.sh"
need eu-stack gdb python3
[ -x "$SYM" ] || plan_skip "$SYM not built"
py=/usr/bin/python3.11
[ -x "$py" ] || plan_skip "no $py"
bid=$("$SYM" buildid "$py" | cut -d' ' -f1)
[ -f "/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug" ] ||
	plan_skip "python3.11-dbg not installed (tools/scripts/install-deps.sh)"
core_setup
plan 6

cat > "$T/four.py" <<'EOT'
import os, sys, threading, time
ev = threading.Event()
def worker(i):
    if i == 0:
        time.sleep(1000)
    else:
        ev.wait()
ts = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
for t in ts:
    t.start()
open(sys.argv[1], "w").close()
while True:
    time.sleep(0.01)
EOT
core=$(make_core sh -c "$py $T/four.py $T/ready & p=\$!
	while [ ! -e $T/ready ]; do sleep 0.1; done; sleep 0.3
	kill -ABRT \$p; wait \$p")
[ -n "$core" ] || { echo "# no core written"; cat "$T/.core.out"; exit 1; }
peer_points python "$core" "$py"

ok "four threads" test "$(grep -c '^TID' "$T/python.sym")" = 4
ok "the crashing thread carries SIGABRT" \
	grep -q '^TID [0-9]*: python3.11 (SIGABRT)$' "$T/python.sym"
