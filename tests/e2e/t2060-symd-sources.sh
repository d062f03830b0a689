#!/bin/sh
# Sources over debuginfod (docs/http-api.md, "Sources"): sym upload
# --sources from a directory and from a tarball, fetched back with the
# real debuginfod-find (byte-identical); paths the line tables do not name
# refused; '..' refused with a JSON error; the size bounds (413); an
# upstream real debuginfod serving a source, proxied and then kept; and
# what symd uses it serves: the host's debug file of an uploaded
# executable (libc6-dbg's) on /buildid/<id>/debuginfo.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
need debuginfod debuginfod-find curl tar python3

idof() { "$SYM" buildid "$1" | cut -d' ' -f1; }
a_exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
b_exe=$(fixture clang-O2-d4-c)
c_exe=$(fixture gcc-O3-d4-c)
A=$(idof "$a_exe"); B=$(idof "$b_exe"); C=$(idof "$c_exe")
SRC=$SYM_ROOT/fixtures/src
# The fixtures name their sources by absolute path (fixtures/build.sh).
[ -f "$SRC/cxx_main.cc" ] || plan_skip "no fixture sources"

plan 28

mkdir -p "$T/up"
cp "$b_exe" "$T/up/b"
start_debuginfod "$T/up" "$B" || plan_skip "debuginfod did not start"
echo secret-token > "$T/token"
start_symd --upload-token-file "$T/token" --max-source-size 64K \
	--max-sources 1M --debuginfod-urls "$DEBUGINFOD_URL" || exit 1
U=$SYMD_URL
find_source() {
	DEBUGINFOD_URLS=$U DEBUGINFOD_CACHE_PATH="$T/client-cache" \
		debuginfod-find source "$1" "$2" 2> "$T/find.err"
}
up() {
	"$SYM" upload --server "$U" --token-file "$T/token" "$@" > "$T/out" \
		2> "$T/err"
	rc=$?
}
# status ARGS...: the HTTP status of a curl request, its body in $T/body.
status() {
	curl -s -o "$T/body" -w '%{http_code}' --max-time 30 "$@"
}
put() {	# put ID PATH FILE: the HTTP status of a source PUT
	status -X PUT -H "Authorization: Bearer secret-token" \
		--data-binary @"$3" "$U/v1/source/$1$2"
}

# --- uploaded from a directory, fetched with debuginfod-find ------------
up --sources "$SRC" "$a_exe"
is "sym upload --sources DIR: exit 0" "$rc" 0
ok "a summary line: the named sources found and uploaded" \
	grep -q "^$A  $a_exe  sources  uploaded 4 of [0-9]* named ([0-9]* not found)$" "$T/out"
ok "... and the named ones not found, one a line (system headers)" \
	grep -q "^$A  $a_exe  source not found: /usr/include/stdio.h$" "$T/out"
for f in cxx_main.cc cxx_algo.cc cxx_shapes.cc geom.hh; do
	got=$(find_source "$A" "$SRC/$f")
	same_file "debuginfod-find source $f: byte-identical" "$SRC/$f" "$got"
done

# --- refusals -----------------------------------------------------------
is "a path the line tables do not name: PUT refused (422)" \
	"$(put "$A" "$SRC/c_main.c" "$SRC/c_main.c")" 422
ok "... with a JSON error" grep -q '"error":"the line tables of build ID' "$T/body"
ok "... and never served" sh -c "! DEBUGINFOD_URLS=$U DEBUGINFOD_CACHE_PATH=$T/cc2 debuginfod-find source $A $SRC/c_main.c"
is "GET of a path nobody has: 404" \
	"$(status "$U/buildid/$A/source/etc/passwd")" 404
ok "... with a JSON error" grep -q '"error":' "$T/body"
is "a '..' component (escaped, so no client folds it): 400" \
	"$(status --path-as-is "$U/buildid/$A/source$SRC/%2e%2e/src/cxx_main.cc")" 400
ok "... with a JSON error naming it" grep -q "a '\.\.' component" "$T/body"
is "... and symd answers the next request" \
	"$(http_status "$U/buildid/$A/source$SRC/geom.hh")" 200
head -c 70000 /dev/zero > "$T/big"
is "a source over --max-source-size: 413" \
	"$(put "$A" "$SRC/cxx_main.cc" "$T/big")" 413
ok "... with a JSON error" grep -q '"error":"the source file is larger' "$T/body"
is "a source of a build ID the store has no debug file of: 404" \
	"$(put "$C" "$SRC/c_main.c" "$SRC/c_main.c")" 404
is "without the token: refused" \
	"$(http_status -X PUT --data-binary @"$SRC/geom.hh" "$U/v1/source/$A$SRC/geom.hh")" 401

# --- from a tarball, and the bound per build ID --------------------------
(cd "$SYM_ROOT/fixtures" && tar czf "$T/src.tgz" src)
up --sources "$T/src.tgz" "$c_exe"
is "sym upload --sources TARBALL: exit 0" "$rc" 0
ok "... the named sources found in it" \
	grep -q "^$C  $c_exe  sources  uploaded [1-9][0-9]* of" "$T/out"
got=$(find_source "$C" "$SRC/c_main.c")
same_file "... fetched back byte-identical" "$SRC/c_main.c" "$got"
ok "... and the tarball's temporary tree is gone" \
	sh -c "! ls '${TMPDIR:-/tmp}' | grep -q '^sym-sources\.'"

# --- what symd uses, it serves: the host's debug file ---------------------
libc=/lib/x86_64-linux-gnu/libc.so.6
L=$(idof "$libc")
ldbg=/usr/lib/debug/.build-id/$(echo "$L" | cut -c1-2)/$(echo "$L" | cut -c3-).debug
if [ -f "$ldbg" ]; then
	is "before: no debug file of libc's build ID" \
		"$(http_status "$U/buildid/$L/debuginfo")" 404
	up "$libc"
	is "libc uploaded (an executable, no DWARF of its own)" "$rc" 0
	got=$(DEBUGINFOD_URLS=$U DEBUGINFOD_CACHE_PATH="$T/cc3" \
		debuginfod-find debuginfo "$L" 2> "$T/find.err")
	same_file "debuginfod-find debuginfo: libc6-dbg's file, the one symd symbolizes from" "$ldbg" "$got"
else
	skip "libc6-dbg not installed"
	skip "libc6-dbg not installed"
	skip "libc6-dbg not installed"
fi
# --- an upstream real debuginfod ------------------------------------------
got=$(find_source "$B" "$SRC/c_main.c")
same_file "an upstream debuginfod's source, proxied by symd" "$SRC/c_main.c" "$got"
# With the debug file in the store, a fetched source is kept too.
http_status -o /dev/null "$U/buildid/$B/debuginfo" > /dev/null
http_status -o /dev/null "$U/buildid/$B/source$SRC/c_hash.c" > /dev/null
stop_server "$DEBUGINFOD_PID"
curl -sS -o "$T/kept" "$U/buildid/$B/source$SRC/c_hash.c"
same_file "... kept in the store: served with the upstream gone" "$SRC/c_hash.c" "$T/kept"

done_testing
