#!/bin/sh
# t2140-sym-upload-quality.sh - symd refuses an upload that would not
# improve what it has, and says why: quality is DWARF > gopclntab >
# symtab > none (sym_file_quality()); HEAD /v1/debuginfo/<id> gives the
# stored quality in X-Sym-Quality; a PUT no better than the stored files
# gets 409 with the reason in JSON, unless ?force=1; sym upload sends a
# better file over a worse one, shows the server's reason for a 409 (and
# exits 0: the server has as good), and --force overrides.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl objcopy

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
other=$(fixture clang-O2-d5-c)
objcopy --strip-debug "$exe" "$T/symtab"	# same build ID, .symtab only
plan 21

echo secret-token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
U=$SYMD_URL
A="Authorization: Bearer secret-token"
up() {
	"$SYM" upload --server "$U" --token-file "$T/token" "$@" > "$T/out" 2> "$T/err"
	rc=$?
}
# quality URL: the X-Sym-Quality of a HEAD ("" without one).
quality() {
	curl -sSI "$1" | tr -d '\r' | sed -n 's/^[Xx]-[Ss]ym-[Qq]uality: //p'
}
# put KIND FILE [QUERY]: PUT with curl; the status, then the body in $T/body.
put() {
	curl -sS -o "$T/body" -D "$T/hdr" -w '%{http_code}' -H "$A" \
		-T "$2" "$U/v1/$1/$id$3"
}

is "nothing stored: no X-Sym-Quality" "$(quality "$U/v1/debuginfo/$id")" ""
up "$T/symtab"
is ".symtab only: uploaded (its debug-only copy)" "$rc $(sed 's/uploaded [0-9]*/uploaded N/' "$T/out")" \
	"0 $id  $T/symtab  debuginfo  uploaded N bytes"
is "HEAD /v1/debuginfo: X-Sym-Quality: symtab" "$(quality "$U/v1/debuginfo/$id")" symtab
up "$T/symtab"
is "the same again: already there, skipped" "$rc $(cat "$T/out")" \
	"0 $id  $T/symtab  debuginfo  already there, skipped"
up "$exe"
is "DWARF over symtab: uploaded, though the server has a debuginfo" \
	"$rc $(sed 's/uploaded [0-9]*/uploaded N/' "$T/out")" \
	"0 $id  $exe  debuginfo  uploaded N bytes"
is "now X-Sym-Quality: dwarf" "$(quality "$U/v1/debuginfo/$id")" dwarf
is "... on HEAD /v1/executable too (a 404, the build ID's best file)" \
	"$(http_status -I "$U/v1/executable/$id") $(quality "$U/v1/executable/$id")" "404 dwarf"

# --- the route: 409 with the reason, ?force=1 ------------------------------
is "PUT of a symtab-only file over DWARF: 409" "$(put debuginfo "$T/symtab")" 409
is "... with the reason in JSON" "$(cat "$T/body")" \
	"{\"error\":\"the server has dwarf for build ID $id and this debug file has symtab: it would not improve it (?force=1, or sym upload --force, stores it anyway)\"}"
ok "... and X-Sym-Quality: dwarf" grep -qi '^x-sym-quality: dwarf' "$T/hdr"
is "PUT of an equal file (the unstripped binary's DWARF): 409" \
	"$(put debuginfo "$exe")" 409
is "PUT ?force=1: 201" "$(put debuginfo "$T/symtab" '?force=1')" 201
is "forced: the symtab-only file replaced the DWARF one" \
	"$(quality "$U/v1/debuginfo/$id")" symtab
is "a file of another build ID is still 422, not 409" \
	"$(put debuginfo "$other")" 422
is "an executable where none is stored: 201 whatever its quality" \
	"$(put executable "$exe")" 201
is "an executable over one as good: 409" "$(put executable "$exe")" 409

# --- sym upload shows the server's reason ---------------------------------
# The server holds a .symtab-only binary as the executable of the build
# ID, and no debug file: HEAD /v1/debuginfo is a 404, so sym upload sends
# the .symtab-only copy, and the server says why it is no better.
curl -sS -o /dev/null -X DELETE -H "$A" "$U/v1/debuginfo/$id"
is "after DELETE, a symtab-only executable: 201" "$(put executable "$T/symtab")" 201
is "HEAD /v1/debuginfo: 404, X-Sym-Quality: symtab" \
	"$(http_status -I "$U/v1/debuginfo/$id") $(quality "$U/v1/debuginfo/$id")" "404 symtab"
up "$T/symtab"
is "sym upload of a file no better: exit 0, the server's reason" "$rc $(cat "$T/out")" \
	"0 $id  $T/symtab  debuginfo  not uploaded: the server has symtab for build ID $id and this debug file has symtab: it would not improve it (?force=1, or sym upload --force, stores it anyway) (HTTP 409)"
up --force "$T/symtab"
is "--force stores it anyway" "$rc $(sed 's/uploaded [0-9]*/uploaded N/' "$T/out")" \
	"0 $id  $T/symtab  debuginfo  uploaded N bytes"
is "the server has the debug file now" "$(http_status -I "$U/v1/debuginfo/$id")" 200
done_testing
