#!/bin/sh
# t0140-go-pclntab.sh - Go binaries without DWARF, symbolized from Go's
# function table (.gopclntab, libsym/gopclntab.c).
#
# A Go program (fixtures/src/gofix: inlining two and three deep, methods,
# generics, 64 goroutines) built here with Debian's go (1.19) with DWARF,
# with -ldflags=-w and with -ldflags='-s -w', and the last once more with
# its section headers cut off (the table is then found by its magic):
#  - every instruction address of the DWARF build symbolizes the same in
#    every variant (function, file, line, inline frames), and
#    llvm-symbolizer on the DWARF build agrees (go_check.py variants names
#    the differences that are facts of Go's toolchain and counts them);
#  - `go tool addr2line` agrees on the outermost function;
#  - the runtime's own traceback (GOTRACEBACK=crash, SIGQUIT) of the
#    running -s -w build is what sym says at each frame's pc, inlined
#    frames included;
#  - the lazy table (--lazy=always: only the functions of the addresses
#    asked are read) answers every address as the whole table does, on
#    the -s -w build and on 5,000 random .text addresses of each npm
#    binary below.
# Real stripped Go binaries from the npm registry, one per table format,
# fetched once into fixtures/build/go/npm (skipped, saying so, when the
# registry cannot be reached): esbuild-linux-64@0.7.22 (go1.15,
# 0xfffffffb), esbuild-linux-64@0.8.57 (go1.16, 0xfffffffa) and
# @esbuild/linux-x64@0.19.12 (go1.20, 0xfffffff1): their runtime's
# traceback, and `go tool addr2line` where Go 1.19's reader knows the
# format (all but go1.20's).  The magic is read with od, never by the code
# under test.
# The table is kept in the store by build ID, and symd serves the -s -w
# build uploaded alone.  Bad input: a wrong magic and a table cut short
# give a warning naming the status, symbols only, and no crash.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need go curl objdump llvm-symbolizer python3 readelf od flock
plan 34

CHECK=$SYM_ROOT/tests/e2e/lib/go_check.py
OUT=$SYM_ROOT/fixtures/build/go
mkdir -p "$OUT"

# fetch_npm: the three esbuild packages, once; 1 when the registry cannot
# be reached.
NPM=$OUT/npm
fetch_npm() {
	mkdir -p "$NPM"
	for p in esbuild-linux-64/-/esbuild-linux-64-0.7.22.tgz \
		 esbuild-linux-64/-/esbuild-linux-64-0.8.57.tgz \
		 @esbuild/linux-x64/-/linux-x64-0.19.12.tgz; do
		f=$NPM/${p##*/}
		d=${f%.tgz}
		[ -x "$d/package/bin/esbuild" ] && continue
		curl -sSf --max-time 120 -o "$f.tmp" \
			"https://registry.npmjs.org/$p" || return 1
		mkdir -p "$d" && tar xzf "$f.tmp" -C "$d" && mv "$f.tmp" "$f" ||
			return 1
	done
}

# traceback BIN ARGS...: the runtime's stack dump of BIN, SIGQUIT after a
# second, GOTRACEBACK=crash (every thread's goroutine, with pc=); stdin
# stays open meanwhile (esbuild waits on it).  The pid is our own child's.
traceback() {
	_b=$1; shift
	(ulimit -c 0
	 sleep 4 | GOTRACEBACK=crash "$_b" "$@" > /dev/null 2> "$T/tb" &
	 echo $! > "$T/tb.pid"
	 wait) &
	_w=$!
	sleep 1
	kill -QUIT "$(cat "$T/tb.pid")" 2>/dev/null
	wait "$_w" 2>/dev/null
}

"$SYM_ROOT/fixtures/build-go.sh" > "$T/build.log" 2>&1
ok "the Go fixture builds (go $(go version | cut -d' ' -f3))" \
	sh -c "[ -x '$OUT/gofix-sw' ] || { cat '$T/build.log'; exit 1; }"
DW=$OUT/gofix-dwarf W=$OUT/gofix-w SW=$OUT/gofix-sw

"$SYM" addr2line --no-cache --stats -e "$SW" 0x401000 > /dev/null \
	2> "$T/stats"
is "the -s -w build's table comes from .gopclntab" \
	"$(sed -n 's/.*stats: table source: //p' "$T/stats")" gopclntab

# 1 + 3 points per variant.
tap_points variants python3 "$CHECK" variants "$DW" "$W" "$SW"

# Found by its magic: the same answers, byte for byte (the module name
# aside).
objdump -d --no-show-raw-insn "$DW" |
	sed -n 's/^ *\([0-9a-f]*\):\t.*/0x\1/p' > "$T/addrs"
for v in sw nosh; do
	"$SYM" addr2line --no-cache --output-style=JSON -f -i \
		-e "$OUT/gofix-$v" < "$T/addrs" |
		sed 's/"ModuleName":"[^"]*",//' > "$T/$v.json"
done
same_file "without section headers the table is found by its magic, with \
the same answers" "$T/sw.json" "$T/nosh.json"

# lazy_same FILE ADDRS: the lazy table (only the functions asked read)
# answers every address as the whole table does.
lazy_same() {
	for l in always never; do
		"$SYM" addr2line --no-cache --lazy=$l --output-style=JSON -f -i \
			-e "$1" < "$2" > "$T/lazy-$l.json"
	done
	cmp -s "$T/lazy-always.json" "$T/lazy-never.json" &&
		[ "$(grep -c '"FunctionName":"[^?"]' "$T/lazy-always.json")" -gt 0 ]
}
ok "the lazy path (only the functions of the addresses read) answers all \
$(wc -l < "$T/addrs") addresses of the -s -w build as the whole table" \
	lazy_same "$SW" "$T/addrs"

tap_points "go tool addr2line" python3 "$CHECK" goaddr2line "$SW" 11

traceback "$SW" 300000000
tap_points "runtime traceback" python3 "$CHECK" traceback "$SW" "$T/tb"

# Kept in the store by build ID like a DWARF table, and read back the
# same (go 1.19 writes a GNU build ID only when asked: -B).
printf '0x%x\n' $(grep -o 'pc=0x[0-9a-f]*' "$T/tb" | cut -d= -f2 | head -50) \
	> "$T/pcs"
B=$OUT/gofix-sw-bid
"$SYM" addr2line --no-cache -f -i -e "$B" < "$T/pcs" > "$T/store0"
# (--lazy=never: 50 addresses would be answered lazily, storing nothing)
"$SYM" addr2line --lazy=never --stats -f -i -e "$B" < "$T/pcs" > "$T/store1" \
	2> "$T/st1"
"$SYM" addr2line --stats -f -i -e "$B" < "$T/pcs" > "$T/store2" 2> "$T/st2"
ok "the table is stored by build ID and read back with the same answers" \
	sh -c "grep -q 'table from parsing (stored as build ID' '$T/st1' &&
	       grep -q 'table from cache' '$T/st2' &&
	       cmp '$T/store0' '$T/store1' && cmp '$T/store1' '$T/store2'"

# sym store add says the table is Go's, not "symbols only".
"$SYM" store add --store "$T/st" "$B" > "$T/sa.out" 2> "$T/sa.err"
ok "sym store add of the -s -w build: stored, no 'symbols only' warning" \
	sh -c "grep -q ' chunks\$' '$T/sa.out' &&
	       ! grep -q 'symbols only' '$T/sa.err' ||
	       { cat '$T/sa.out' '$T/sa.err'; exit 1; }"

# symd serves it: the executable uploaded (no debug file exists), its
# table built by the daemon from .gopclntab, lookups answered as here.
echo token > "$T/token"
if start_symd --upload-token-file "$T/token"; then
	bid=$("$SYM" buildid "$B" | cut -d' ' -f1)
	"$SYM" upload --server "$SYMD_URL" --token-file "$T/token" "$B" \
		> "$T/up" 2>&1
	"$SYM" lookup --server "$SYMD_URL" --wait-ms 20000 -f -i "$bid" \
		< "$T/pcs" > "$T/symd.out" 2> "$T/symd.lerr"
	ok "symd serves the uploaded -s -w build the same answers" \
		sh -c "cmp '$T/store0' '$T/symd.out' || { cat '$T/up' '$T/symd.lerr'; exit 1; }"
	is "symd says the module's source is gopclntab" \
		"$(curl -sS -X POST -d "{\"addresses\":[\"$(head -1 "$T/pcs")\"]}" \
		     "$SYMD_URL/v1/symbolize/$bid" | python3 -c \
		     'import json,sys; m=json.load(sys.stdin)["modules"][0]; print(m["status"], m.get("source"))')" \
		"ok gopclntab"
	stop_symd
else
	_tap 1 "symd serves the uploaded -s -w build the same answers"
	_tap 1 "symd says the module's source is gopclntab"
fi

# Bad tables: a clear status in the log, symbols only, no crash.
for v in badmagic cut; do
	"$SYM" addr2line --no-cache --stats -f -e "$OUT/gofix-$v" \
		< "$T/pcs" > "$T/$v.out" 2> "$T/$v.err"
	echo "rc $?" >> "$T/$v.out"
	ok "$v: exit 0, a warning with the status, symbols only" \
		sh -c "grep -q 'rc 0' '$T/$v.out' &&
		       grep -q 'gopclntab: .*truncated or unknown Go function table' \
			'$T/$v.err' &&
		       grep -q 'table source: none' '$T/$v.err'"
done

# The npm binaries.
if ! fetch_npm > "$T/npm.log" 2>&1; then
	sed 's/^/# /' "$T/npm.log"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
		skip "registry.npmjs.org unreachable: esbuild binaries not fetched"
	done
	done_testing
	exit
fi
for spec in esbuild-linux-64-0.7.22:fffffffb esbuild-linux-64-0.8.57:fffffffa \
	    linux-x64-0.19.12:fffffff1; do
	name=${spec%:*}
	magic=${spec#*:}
	b=$NPM/$name/package/bin/esbuild
	off=$(readelf -SW "$b" | awk '{ for (i = 1; i < NF; i++)
		if ($i == ".gopclntab") print $(i + 3) }')
	got=$(od -A n -t x4 -j "$((0x$off))" -N 4 "$b" | tr -d ' ')
	is "$name: stripped, .gopclntab magic $magic" \
		"$(readelf -SW "$b" | grep -c '\.symtab\|\.debug_info') $got" \
		"0 $magic"
	traceback "$b"
	tap_points "$name traceback" python3 "$CHECK" traceback "$b" "$T/tb"
	readelf -SW "$b" | python3 -c "
import random, sys
for l in sys.stdin:
    f = l.split()
    if '.text' in f:
        i = f.index('.text')
        a, n = int(f[i + 2], 16), int(f[i + 4], 16)
random.seed(18)
for _ in range(5000): print(hex(a + random.randrange(n)))" > "$T/npm-addrs"
	ok "$name: 5,000 random .text addresses, lazy as whole" \
		lazy_same "$b" "$T/npm-addrs"
	case $name in
	*0.19.12) ;;	# Go 1.19's debug/gosym predates the 1.20 format
	*) tap_points "$name" python3 "$CHECK" goaddr2line "$b" 29 ;;
	esac
done
done_testing
