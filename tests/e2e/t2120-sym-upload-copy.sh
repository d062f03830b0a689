#!/bin/sh
# t2120-sym-upload-copy.sh - sym upload sends the debug-only copy of an
# unstripped binary: ELF and program headers, notes, .symtab, the DWARF
# (zlib SHF_COMPRESSED by default, zstd or none on request) and the
# allocated sections symbolization and unwinding need (.eh_frame,
# .eh_frame_hdr, .dynsym, .dynstr, the PLT; a Go binary's function table
# and data), the code left out.  The copy
# symbolizes exactly as the original does (whole outputs of
# llvm-symbolizer, sym addr2line and eu-addr2line), libdw 0.188 reads it
# from symd over debuginfod (debuginfod-find, eu-addr2line on the
# stripped binary), and the bytes saved are reported and measured on
# real binaries: python3.11d (python3.11-dbg) and Debian's libc.so.6
# joined with its libc6-dbg debug file.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl objdump readelf llvm-symbolizer eu-addr2line eu-unstrip \
	debuginfod-find python3

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
stripped=$(fixture stripped-buildid-gcc-O2-d5-cxx)
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
size=$(stat -c %s "$exe")
plan 30

echo secret-token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
U=$SYMD_URL
up() {
	"$SYM" upload --server "$U" --token-file "$T/token" "$@" \
		> "$T/out" 2> "$T/err"
	rc=$?
}
# fetch KIND FILE: the server's file of $id.
fetch() { curl -sS -o "$2" "$U/buildid/$id/$1"; }
# same NAME CMD...: CMD's whole output on $exe and on $T/copy agree
# (CMD gets the file as its last argument, the addresses on stdin).
same() {
	_n=$1; shift
	"$@" "$exe" < "$T/addrs" > "$T/want" 2>&1
	"$@" "$T/copy" < "$T/addrs" > "$T/got" 2>&1
	ok "$_n: the same $(wc -l < "$T/want") lines on the copy" \
		sh -c "[ -s '$T/want' ] && cmp '$T/want' '$T/got'"
}

# --- the default: a zlib-compressed debug-only copy -----------------------
up "$exe"
csize=$(sed -n 's/.*  debuginfo  uploaded \([0-9]*\) bytes$/\1/p' "$T/out")
is "an unstripped binary: exit 0, uploaded as debuginfo" \
	"$rc $(sed "s/uploaded [0-9]*/uploaded N/" "$T/out")" \
	"0 $id  $exe  debuginfo  uploaded N bytes"
sed 's/^/# /' "$T/err"
ok "the copy is smaller than the binary" test "${csize:-0}" -lt "$size"
ok "the bytes saved, on stderr" grep -Eqx \
	"sym upload: '$exe': a debug-only copy of $csize bytes \([0-9.]+ KiB\) instead of $size \([0-9.]+ KiB\): $((size - csize)) bytes saved \([0-9.]+ KiB, $(((size - csize) * 100 / size))%\)" "$T/err"
is "the executable is not uploaded" \
	"$(http_status -I "$U/v1/executable/$id")" 404
fetch debuginfo "$T/copy"
is "the server holds the copy" "$(stat -c %s "$T/copy")" "$csize"
readelf -SW "$T/copy" > "$T/sections"
# ctype SECTION: how the copy's SECTION is compressed (readelf -t: ZLIB,
# ZSTD), "-" when it is not.
ctype() {
	readelf -t "$T/copy" 2>/dev/null | awk -v s="$1" '
		/^ *\[ *[0-9]+\] / { name = $2; next }
		name == s && /COMPRESSED/ { c = 1; next }
		name == s && c { split($1, w, ","); print w[1]; exit }
		END { if (!c) print "-" }'
}
is ".debug_info is zlib-compressed" "$(ctype .debug_info)" ZLIB
debugs=$(readelf -SW "$T/copy" | sed -n 's/^ *\[ *[0-9]*\] \(\.debug_[a-z_]*\) .*/\1/p')
is "every .debug_* section is ($(echo $debugs | wc -w))" \
	"$(for d in $debugs; do ctype "$d"; done | sort -u)" ZLIB
ok ".eh_frame, .eh_frame_hdr, .dynsym, .dynstr, .symtab keep their bytes" \
	sh -c "readelf -SW '$T/copy' | grep -Eq '\] \.eh_frame +PROGBITS' &&
	       readelf -SW '$T/copy' | grep -Eq '\] \.eh_frame_hdr +PROGBITS' &&
	       readelf -SW '$T/copy' | grep -Eq '\] \.dynsym +DYNSYM' &&
	       readelf -SW '$T/copy' | grep -Eq '\] \.dynstr +STRTAB' &&
	       readelf -SW '$T/copy' | grep -Eq '\] \.symtab +SYMTAB'"
ok "the code and data do not (.text, .rodata, .data: NOBITS)" \
	sh -c "readelf -SW '$T/copy' | grep -Eq '\] \.text +NOBITS' &&
	       readelf -SW '$T/copy' | grep -Eq '\] \.rodata +NOBITS' &&
	       readelf -SW '$T/copy' | grep -Eq '\] \.data +NOBITS'"
is "the build ID is the binary's" "$("$SYM" buildid "$T/copy" | cut -d' ' -f1)" "$id"
ok "readelf has no complaint about the copy" \
	sh -c "! readelf -a '$T/copy' 2>&1 >/dev/null | grep -q ."

objdump -d --no-show-raw-insn "$exe" |
	sed -n 's/^ *\([0-9a-f][0-9a-f]*\):\t.*/0x\1/p' > "$T/addrs"
same "llvm-symbolizer -f -i -C" llvm-symbolizer --functions=linkage -i -C --obj
same "llvm-symbolizer --output-style=JSON" sh -c \
	'llvm-symbolizer --output-style=JSON --obj="$1" | sed "s|$1|FILE|g"' -
same "sym addr2line -f -i -C -a" "$SYM" addr2line --no-cache -f -i -C -a -e
same "eu-addr2line -f -i -C -a (libdw reads zlib)" eu-addr2line -f -i -C -a -e
is "the copy knows every address the binary knows (?? lines)" \
	"$(llvm-symbolizer --obj="$T/copy" < "$T/addrs" | grep -c '??')" \
	"$(llvm-symbolizer --obj="$exe" < "$T/addrs" | grep -c '??')"

# --- libdw fetches it from symd over debuginfod ---------------------------
export DEBUGINFOD_CACHE_PATH="$T/dcache"
got=$(DEBUGINFOD_URLS=$U debuginfod-find debuginfo "$id" 2>&1)
ok "debuginfod-find debuginfo gets the copy from symd" cmp "$got" "$T/copy"
cp "$stripped" "$T/app"
eu-addr2line -e "$exe" -f -i -C -a < "$T/addrs" > "$T/want"
DEBUGINFOD_URLS=$U eu-addr2line -e "$T/app" -f -i -C -a < "$T/addrs" > "$T/got" 2>&1
ok "eu-addr2line on the stripped binary, DWARF from symd: the same output" \
	cmp "$T/want" "$T/got"

# --- zstd, none, --executable ---------------------------------------------
up --force --compress=zstd "$exe"
fetch debuginfo "$T/copy"
is "--compress=zstd: .debug_info is zstd" "$rc $(ctype .debug_info)" "0 ZSTD"
same "--compress=zstd: sym addr2line" "$SYM" addr2line --no-cache -f -i -C -a -e
up --force --compress=none "$exe"
fetch debuginfo "$T/copy"
is "--compress=none: nothing compressed" \
	"$rc $(for d in $debugs; do ctype "$d"; done | sort -u)" "0 -"
same "--compress=none: llvm-symbolizer" llvm-symbolizer --functions=linkage -i -C --obj
up --compress=lz4 "$exe"
is "--compress=lz4: usage error" "$rc $(head -1 "$T/err")" \
	"2 sym upload: --compress: 'lz4' is not zlib, zstd or none"
up --executable "$exe"
fetch executable "$T/exe"
is "--executable: the copy is there, the binary goes too" "$rc $(cat "$T/out")" \
	"0 $id  $exe  debuginfo  already there, skipped
$id  $exe  executable  uploaded $size bytes"
ok "--executable: the server's executable is the binary" cmp "$T/exe" "$exe"

# --- Go: .gopclntab, and the data its inline trees live in ---------------
if command -v go > /dev/null 2>&1 &&
   "$SYM_ROOT/fixtures/build-go.sh" > "$T/go.log" 2>&1; then
	gob=$SYM_ROOT/fixtures/build/go/gofix-sw-bid
	gid=$("$SYM" buildid "$gob" | cut -d' ' -f1)
	up "$gob"
	sed 's/^/# /' "$T/err"
	curl -sS -o "$T/gocopy" "$U/buildid/$gid/debuginfo"
	objdump -d --no-show-raw-insn "$gob" |
		sed -n 's/^ *\([0-9a-f][0-9a-f]*\):\t.*/0x\1/p' |
		awk 'NR % 3 == 0' > "$T/goaddrs"
	"$SYM" addr2line --no-cache -f -i -a -e "$gob" < "$T/goaddrs" > "$T/want"
	"$SYM" addr2line --no-cache -f -i -a -e "$T/gocopy" < "$T/goaddrs" > "$T/got"
	ok "Go (-s -w, build ID): the copy, $(wc -l < "$T/goaddrs") addresses, inline chains: sym addr2line the same" \
		sh -c "[ $rc = 0 ] && grep -q '  debuginfo  uploaded' '$T/out' && cmp '$T/want' '$T/got'"
else
	skip "no go, or the Go fixture does not build"
fi

# --- real binaries: the bytes saved ---------------------------------------
# saved FILE: upload FILE; diagnostics with the sizes; the copy in
# $T/copy, compared with FILE by llvm-symbolizer on ADDRS.
measure() {
	up "$1"
	sed 's/^/# /' "$T/err"
	fid=$("$SYM" buildid "$1" | cut -d' ' -f1)
	curl -sS -o "$T/copy" "$U/buildid/$fid/debuginfo"
	python3 - "$1" > "$T/raddrs" <<'PY'
import subprocess, sys
out = subprocess.run(["nm", "--defined-only", sys.argv[1]], capture_output=True,
                     text=True).stdout
a = sorted({int(l.split()[0], 16) for l in out.splitlines()
            if len(l.split()) == 3 and l.split()[1] in "tTwW"})
for x in a[::5][:4000]:
    print(hex(x)); print(hex(x + 5))
PY
	llvm-symbolizer --functions=linkage -i --obj="$1" < "$T/raddrs" > "$T/want"
	llvm-symbolizer --functions=linkage -i --obj="$T/copy" < "$T/raddrs" > "$T/got"
}
py=/usr/bin/python3.11d
if [ -f "$py" ]; then
	measure "$py"
	ok "python3.11d: the copy is under half the binary" \
		test "$(($(stat -c %s "$T/copy") * 2))" -lt "$(stat -c %s "$py")"
	ok "python3.11d: llvm-symbolizer, $(wc -l < "$T/raddrs") addresses: the same" \
		cmp "$T/want" "$T/got"
else
	skip "no $py (python3.11-dbg)"
	skip "no $py (python3.11-dbg)"
fi
libc=/lib/x86_64-linux-gnu/libc.so.6
lid=$("$SYM" buildid "$libc" 2>/dev/null | cut -d' ' -f1)
ldbg=/usr/lib/debug/.build-id/$(echo "$lid" | cut -c1-2)/$(echo "$lid" | cut -c3-).debug
if [ -n "$lid" ] && [ -f "$ldbg" ]; then
	# Debian's debug file is zlib-compressed: decompressed, the join
	# is the unstripped libc a build makes.
	eu-unstrip -o "$T/libc.un" "$libc" "$ldbg" &&
		objcopy --decompress-debug-sections "$T/libc.un"
	measure "$T/libc.un"
	echo "# Debian's libc6-dbg debug file: $(stat -c %s "$ldbg") bytes"
	ok "libc: the copy is under half the unstripped libc" \
		test "$(($(stat -c %s "$T/copy") * 2))" -lt "$(stat -c %s "$T/libc.un")"
	ok "libc: llvm-symbolizer, $(wc -l < "$T/raddrs") addresses: the same" \
		cmp "$T/want" "$T/got"
else
	skip "no libc6-dbg debug file for $libc"
	skip "no libc6-dbg debug file for $libc"
fi
done_testing
