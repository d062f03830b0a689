#!/bin/bash
# t0240-bombs.sh - decompression bombs (issue 24, item 4): debug sections
# whose Elf64_Chdr honestly declares hundreds of MiB of zeros in a few
# KB of zstd or zlib.  sym addr2line must refuse each at once, with a
# message naming the limit and a non-zero status, at a peak RSS far
# below the bomb; so must whole files compressed as kernel modules are
# (.ko.xz, .ko.zst, .ko.gz), and a corrupt one is refused with a message; so must
# symd's conversion of an uploaded bomb
# (badconv, with the reason).  Each limit (per section, per file, ratio)
# is tried alone through $SYM_MAX_INFLATE_*, and the limits must not
# refuse honest zstd and zlib files.  The bombs are written from a small
# program by tests/e2e/lib/elf-bomb.py.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need gcc objcopy zstd xz gzip python3 curl
[ -x /usr/bin/time ] || plan_skip "/usr/bin/time not installed"
[ -x "$SYM" ] || plan_skip "$SYM not built"
plan 48

# Peak RSS allowed to a refused file, in KB: a small program costs
# about 5 MB; a bomb that is decompressed costs its size (256 MiB and up).
BUDGET_KB=65536
BOMB="python3 $SYM_ROOT/tests/e2e/lib/elf-bomb.py"

cd "$T" || exit 1
cat > m.c <<'C'
static int twice(int x) { return 2 * x; }
int main(int argc, char **argv) { (void)argv; return twice(argc); }
C
gcc -g -O1 -o m m.c || { echo "Bail out! cannot build m"; exit 1; }
addr=0x$(nm m | awk '$3 == "main" { print $1 }')
$BOMB m zstd.bomb zstd 512M &&
$BOMB m zstd3.bomb zstd 256M .debug_info .debug_abbrev .debug_str &&
$BOMB m zlib.bomb zlib 256M || { echo "Bail out! cannot write the bombs"; exit 1; }
echo "# bombs: zstd $(stat -c %s zstd.bomb) B, zstd x3 $(stat -c %s zstd3.bomb) B, zlib $(stat -c %s zlib.bomb) B"

# refused NAME FILE LIMIT [VAR=VALUE...]: sym addr2line on FILE with the
# environment given; three points: non-zero status, a message naming
# LIMIT, peak RSS under the budget.
refused() {
	_n=$1 _f=$2 _l=$3
	shift 3
	env "$@" SYM_STORE="$T/st.$_n" /usr/bin/time -o "$_n.time" -f %M \
		timeout 60 "$SYM" addr2line -e "$_f" "$addr" > "$_n.out" 2> "$_n.err"
	_rc=$?
	_kb=$(tail -1 "$_n.time")
	is "$_n: non-zero status" "$([ "$_rc" -ne 0 ] && [ "$_rc" -ne 124 ] && echo refused || echo "status $_rc")" refused
	if grep -q "over the $_l decompression limit" "$_n.err"; then
		_tap 0 "$_n: the message names the $_l limit"
	else
		_tap 1 "$_n: the message names the $_l limit"
		sed 's/^/#   /' "$_n.err" | head -5
	fi
	echo "# $_n: peak RSS $_kb KB"
	is "$_n: peak RSS under $BUDGET_KB KB" \
		"$([ "${_kb:-999999999}" -lt $BUDGET_KB ] && echo under || echo "$_kb KB")" under
}

# The defaults: 512 MiB from 16 KB is far over the ratio limit.
refused zstd-default zstd.bomb ratio
refused zlib-default zlib.bomb ratio
# Each limit alone, the others out of the way.
refused zstd-section zstd.bomb per-section \
	SYM_MAX_INFLATE_RATIO=100000000 SYM_MAX_INFLATE_SECTION=64M
refused zstd-file zstd3.bomb per-file \
	SYM_MAX_INFLATE_RATIO=100000000 SYM_MAX_INFLATE_FILE=300M
refused zlib-section zlib.bomb per-section \
	SYM_MAX_INFLATE_RATIO=100000000 SYM_MAX_INFLATE_SECTION=64M

# Whole files compressed as kernel modules are (.ko.xz, .ko.zst, .ko.gz):
# 256 MiB of zeros is over the ratio limit by default, and over a
# per-file limit of 32 MiB with the ratio out of the way.
head -c 256M /dev/zero | xz -0 -T1 > zero.ko.xz &&
head -c 256M /dev/zero | zstd -q > zero.ko.zst &&
head -c 256M /dev/zero | gzip -9 -n > zero.ko.gz ||
	{ echo "Bail out! cannot write the whole-file bombs"; exit 1; }
echo "# whole-file bombs: xz $(stat -c %s zero.ko.xz) B, zstd $(stat -c %s zero.ko.zst) B, gzip $(stat -c %s zero.ko.gz) B"
refused xz-whole zero.ko.xz ratio
refused zstd-whole zero.ko.zst ratio
refused gzip-whole zero.ko.gz ratio
refused xz-whole-file zero.ko.xz per-file \
	SYM_MAX_INFLATE_RATIO=100000000 SYM_MAX_INFLATE_FILE=32M
refused gzip-whole-file zero.ko.gz per-file \
	SYM_MAX_INFLATE_RATIO=100000000 SYM_MAX_INFLATE_FILE=32M

# Honest compressed files answer as the plain one does.
objcopy --compress-debug-sections=zstd m m.zst &&
objcopy --compress-debug-sections=zlib m m.zlib &&
objcopy --compress-debug-sections=zlib-gnu m m.zdebug
# GNU's older .zdebug_* sections, which libdw inflates itself, are
# checked too (here against a limit below their honest size).
refused zdebug-section m.zdebug per-section SYM_MAX_INFLATE_SECTION=100
want=$(SYM_STORE="$T/st.plain" "$SYM" addr2line -f -e m "$addr" 2>&1)
is "an honest zstd file answers as the plain one" \
	"$(SYM_STORE="$T/st.zst" "$SYM" addr2line -f -e m.zst "$addr" 2>&1)" "$want"
is "an honest zlib file answers as the plain one" \
	"$(SYM_STORE="$T/st.zlib" "$SYM" addr2line -f -e m.zlib "$addr" 2>&1)" "$want"
is "an honest .zdebug file answers as the plain one" \
	"$(SYM_STORE="$T/st.zdebug" "$SYM" addr2line -f -e m.zdebug "$addr" 2>&1)" "$want"
xz -c m > m.xz && zstd -q -c m > m.zst1 && gzip -n -c m > m.gz
is "an honest file compressed whole (xz, zstd, gzip) answers as the plain one" \
	"$(SYM_STORE="$T/st.xz" "$SYM" addr2line -f -e m.xz "$addr" 2>&1)
$(SYM_STORE="$T/st.zst1" "$SYM" addr2line -f -e m.zst1 "$addr" 2>&1)
$(SYM_STORE="$T/st.gz" "$SYM" addr2line -f -e m.gz "$addr" 2>&1)" \
	"$want
$want
$want"
printf '\3757zXZ\0 not xz' > bad.xz
SYM_STORE="$T/st.bad" "$SYM" addr2line -e bad.xz "$addr" > bad.out 2> bad.err
is "a corrupt xz file: status 1 and the message" "$? $(cat bad.err)" \
	"1 sym addr2line: 'bad.xz': cannot decompress a section or the file (corrupt or truncated)"
# gzip: a bad CRC, an ISIZE that lies (smaller than the output: the
# buffer is made of its size, so the output cannot overrun it), a second
# member after the first, and a stream cut short before its trailer are
# all refused as corrupt.  A file cut anywhere has 4 arbitrary bytes for
# its ISIZE: refused either way (as corrupt, or over a limit when those
# bytes say more than the limits allow).
python3 - m.gz <<'PY'
import struct, sys
g = open(sys.argv[1], 'rb').read()
crc, isize = struct.unpack('<II', g[-8:])
open('crc.gz', 'wb').write(g[:-8] + struct.pack('<II', crc ^ 1, isize))
open('lie.gz', 'wb').write(g[:-8] + struct.pack('<II', crc, 4096))
open('two.gz', 'wb').write(g + g)
open('cut.gz', 'wb').write(g[:len(g) // 2] + g[-8:])
open('short.gz', 'wb').write(g[:len(g) // 2])
PY
for f in crc lie two cut; do
	SYM_STORE="$T/st.$f" "$SYM" addr2line -e $f.gz "$addr" > $f.out 2> $f.err
	is "a gzip file, $f: status 1 and the message" "$? $(cat $f.err)" \
		"1 sym addr2line: '$f.gz': cannot decompress a section or the file (corrupt or truncated)"
done
SYM_STORE="$T/st.short" "$SYM" addr2line -e short.gz "$addr" > short.out 2> short.err
is "a gzip file cut anywhere: status 1 and a message" \
	"$? $(grep -c -E "'short.gz': (cannot decompress|compressed section over)" short.err)" "1 1"

# symd: an uploaded bomb is badconv, with the reason, and symd stays
# small and keeps serving.
echo secret > "$T/token"
start_symd --upload-token-file "$T/token" --workers 1 || exit 1
id=$("$SYM" buildid zstd.bomb | cut -d' ' -f1)
is "symd: the bomb is accepted for conversion" \
	"$(http_status -X PUT -H 'Authorization: Bearer secret' \
		--data-binary @zstd.bomb "$SYMD_URL/v1/debuginfo/$id")" 201
body=$(symd_curl -X POST -d "{\"addresses\":[\"$addr\"],\"wait_ms\":10000}" \
	"$SYMD_URL/v1/symbolize/$id")
echo "# symd: $body"
case $body in
*'"status":"error","error":"conversion failed: compressed section over the decompression limits"'*)
	_tap 0 "symd: the conversion failed, with the reason" ;;
*) _tap 1 "symd: the conversion failed, with the reason"; echo "#   got: $body" ;;
esac
is "symd: counted as badconv (bad input, not a system error)" \
	"$(symd_curl "$SYMD_URL/metrics" | grep '^symd_conversions_total{result="badconv"}')" \
	'symd_conversions_total{result="badconv"} 1'
kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$SYMD_PID/status")
echo "# symd: peak RSS $kb KB"
is "symd: peak RSS under $BUDGET_KB KB" \
	"$([ "${kb:-999999999}" -lt $BUDGET_KB ] && echo under || echo "$kb KB")" under
is "symd: still healthy" "$(http_status "$SYMD_URL/healthz")" 200
stop_symd

done_testing
