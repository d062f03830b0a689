#!/bin/sh
# t2160-readme-daemon.sh - README.md's daemon session ("A session to copy
# as it is") runs as written: the ```sh block after that sentence, in a
# directory whose bin/ is this build's, with an empty store.  It starts
# symd on its fixed port 127.0.0.1:8630, so it runs in a network
# namespace of its own (unshare -n, root only), where that port is free
# whatever the machine runs.  Issue 23's newcomer path.
. "$(dirname "$0")/lib/lib.sh"
need curl python3 nm debuginfod-find unshare ip
[ "$(id -u)" = 0 ] || plan_skip "unshare -n needs root"
unshare -n true 2>/dev/null || plan_skip "unshare -n refused"
plan 6

python3 - "$SYM_ROOT/README.md" > "$T/session.sh" <<'PY'
import sys
t = open(sys.argv[1]).read()
t = t[t.index("A session to copy as it is"):]
t = t[t.index("```sh\n") + 6:]
print(t[:t.index("```\n")], end="")
PY
mkdir -p "$T/w"
ln -s "$SYM_ROOT/bin" "$T/w/bin"
(cd "$T/w" && unset SYM_STORE SYM_SERVER SYM_TOKEN SYM_TOKEN_FILE &&
	XDG_CACHE_HOME="$T/cache" HOME="$T" \
	setsid timeout 120 unshare -n sh -c 'ip link set lo up && exec bash -e "$1"' sh \
	"$T/session.sh" > "$T/out" 2> "$T/err" & echo $! > "$T/pid"; wait $!)
rc=$?
# A session that failed before its 'kill %1' leaves symd behind, one
# whose symd never listens waits for it (120 s): its process group goes.
kill -- -"$(cat "$T/pid")" 2>/dev/null
is "the session exits 0" "$rc" 0 || sed 's/^/# /' "$T/err" "$T/out"

id=$("$SYM" buildid "$SYM_ROOT/bin/sym" | cut -d' ' -f1)
ok "sym upload sends a debug-only copy" \
	grep -q "^$id  bin/sym  debuginfo  uploaded [0-9]* bytes" "$T/out"
ok "the POST answers main, status ok" \
	grep -q "\"build_id\":\"$id\",\"status\":\"ok\",\"source\":\"dwarf\",\"frames\":\[\[{\"function\":\"main\",\"file\":\"$SYM_ROOT/tools/sym.c\"" "$T/out"
grep -v '^{\|^symd: \|/debuginfo$' "$T/out" | grep -v "^$id" > "$T/lookup"
"$SYM" addr2line -f -i -C -e "$SYM_ROOT/bin/sym" \
	0x$(nm "$SYM_ROOT/bin/sym" | awk '$3 == "main" {print $1}') > "$T/want"
same_file "sym lookup --server answers as sym addr2line on the file" \
	"$T/want" "$T/lookup"
dbg=$(grep "^/.*/debuginfo$" "$T/out")
ok "debuginfod-find gets the uploaded copy into the cache" \
	sh -c "[ -s '$dbg' ] && [ \$('$SYM' buildid '$dbg' | cut -d' ' -f1) = $id ]"
ok "symd used the default store, logged the requests and stopped" \
	sh -c "grep -q 'store $T/cache/sym' '$T/out' &&
	       grep -q 'info access .*path=/v1/symbolize/$id status=200' '$T/err' &&
	       grep -q 'info stopping' '$T/err'"
