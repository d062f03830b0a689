#!/bin/bash
# t0243-bombs-dwz-dwo.sh - decompression bombs in the files libsym reads
# beside the debug file (issue 24, item 4): the dwz alt file (dwz -m)
# and the .dwo file of a split-DWARF unit, which libdw opens and
# decompresses whole by itself.  Each is made a bomb by
# tests/e2e/lib/elf-bomb.py (a section whose Elf64_Chdr honestly
# declares hundreds of MiB of zeros).  sym addr2line must refuse it at
# once with the message naming the limit and the file, a non-zero
# status, and a small peak RSS; the alt file and the .dwo files count
# with the debug file under one per-file limit.  The honest builds,
# plain and zlib-compressed, still answer as llvm-symbolizer does.
. "$(dirname "$0")/lib/lib.sh"
need gcc objcopy dwz zstd python3 llvm-symbolizer
[ -x /usr/bin/time ] || plan_skip "/usr/bin/time not installed"
[ -x "$SYM" ] || plan_skip "$SYM not built"
plan 28

# Peak RSS allowed to a refused file, in KB (as t0240): a small program
# costs about 5 MB; a bomb that is decompressed costs its size.  The
# alt-file case decompresses 40 MiB of its debug file, which is allowed,
# before it refuses the alt file's 40 MiB: its budget is the peak of the
# same lookup in the honest files (measured below: 4 MB here, ~25 MB
# under ASan's shadow and quarantine) + 40 MiB + half the bomb.
BUDGET_KB=65536
BOMB="python3 $SYM_ROOT/tests/e2e/lib/elf-bomb.py"

cd "$T" || exit 1
cat > h.h <<'C'
struct point { int x, y; long z; const char *name; };
struct shape { struct point a, b, c; double area; struct shape *next; };
static inline int px(const struct point *p) { return p->x + p->y; }
C
for f in a:twice:2:b b:thrice:3:c; do
	IFS=: read -r n fn k m <<EOF
$f
EOF
	cat > $n.c <<C
#include "h.h"
#include <stdio.h>
__attribute__((noinline)) static int $fn(struct shape *s) { return $k * px(&s->$m) + px(&s->a); }
int main(int argc, char **argv) { struct shape s = { { argc, 2, 3, argv[0] } }; printf("%d\n", $fn(&s)); return 0; }
C
done
# dwz/: a and b share their types in the alt file dwz/alt.debug, named
# relative to them; orig is a before dwz.  split/: a with its .dwo
# ($DWO: gcc names it a.dwo or a-a.dwo).
mkdir dwz split && gcc -g -O2 -o dwz/a a.c && gcc -g -O2 -o dwz/b b.c &&
	cp dwz/a orig && (cd dwz && dwz -m alt.debug -M alt.debug a b) &&
	(cd split && gcc -g -O2 -gsplit-dwarf -o a ../a.c) &&
	DWO=$(cd split && ls -- *.dwo) && [ -f "split/$DWO" ] || { echo "Bail out! cannot build the dwz and split-DWARF programs"; exit 1; }
readelf -S dwz/a | grep -q .gnu_debugaltlink ||
	{ echo "Bail out! dwz made no alt file reference"; exit 1; }
addr=0x$(nm dwz/a | awk '$3 ~ /^twice/ { print $1 }')
saddr=0x$(nm split/a | awk '$3 ~ /^twice/ { print $1 }')

# copy DIR FROM: a new directory DIR with the programs of FROM.
copy() { mkdir "$1" && cp "$2"/* "$1"/; }
copy alt-zlib dwz && $BOMB dwz/alt.debug alt-zlib/alt.debug zlib 256M .debug_str &&
copy alt-zstd dwz && $BOMB dwz/alt.debug alt-zstd/alt.debug zstd 512M .debug_str &&
# 40 MiB in the debug file, 40 in the alt file: each under a 60 MiB
# per-file limit, not both.
copy alt-file dwz && $BOMB dwz/a alt-file/a zlib 40M .debug_str &&
	$BOMB dwz/alt.debug alt-file/alt.debug zlib 40M .debug_str &&
copy dwo-zlib split && $BOMB split/$DWO dwo-zlib/$DWO zlib 256M .debug_str.dwo &&
copy dwo-zstd split && $BOMB split/$DWO dwo-zstd/$DWO zstd 512M .debug_str.dwo &&
copy dwo-file split && $BOMB split/$DWO dwo-file/$DWO zlib 30M \
	.debug_str.dwo .debug_line.dwo .debug_abbrev.dwo ||
	{ echo "Bail out! cannot write the bombs"; exit 1; }
echo "# bombs: alt zlib $(stat -c %s alt-zlib/alt.debug) B, .dwo zlib $(stat -c %s dwo-zlib/$DWO) B, .dwo zstd $(stat -c %s dwo-zstd/$DWO) B"

# refused NAME FILE ADDR LIMIT WHO [VAR=VALUE...]: sym addr2line on FILE
# with the environment given; three points: non-zero status, a message
# naming LIMIT and the file WHO, peak RSS under the budget.
refused() {
	_n=$1 _f=$2 _a=$3 _l=$4 _w=$5
	shift 5
	env "$@" SYM_STORE="$T/st.$_n" /usr/bin/time -o "$_n.time" -f %M \
		timeout 60 "$SYM" addr2line -e "$_f" "$_a" > "$_n.out" 2> "$_n.err"
	_rc=$?
	_kb=$(tail -1 "$_n.time")
	is "$_n: non-zero status" "$([ "$_rc" -ne 0 ] && [ "$_rc" -ne 124 ] && echo refused || echo "status $_rc")" refused
	if grep -q "of '[^']*$_w' declares .* over the $_l decompression limit" "$_n.err"; then
		_tap 0 "$_n: the message names the $_l limit and $_w"
	else
		_tap 1 "$_n: the message names the $_l limit and $_w"
		sed 's/^/#   /' "$_n.err" | head -5
	fi
	echo "# $_n: peak RSS $_kb KB"
	is "$_n: peak RSS under ${BUDGET:-$BUDGET_KB} KB" \
		"$([ "${_kb:-999999999}" -lt "${BUDGET:-$BUDGET_KB}" ] && echo under || echo "$_kb KB")" under
}

SYM_STORE="$T/st.base" /usr/bin/time -o base.time -f %M \
	"$SYM" addr2line -e dwz/a "$addr" > /dev/null 2>&1
BASE_KB=$(tail -1 base.time)
echo "# the honest lookup: peak RSS $BASE_KB KB"

refused alt-zlib alt-zlib/a "$addr" ratio alt.debug
refused alt-zstd alt-zstd/a "$addr" ratio alt.debug
BUDGET=$((BASE_KB + 40 * 1024 + 20 * 1024)) \
refused alt-file alt-file/a "$addr" per-file alt.debug \
	SYM_MAX_INFLATE_RATIO=100000000 SYM_MAX_INFLATE_FILE=60M
refused dwo-zlib dwo-zlib/a "$saddr" ratio "$DWO"
refused dwo-zstd dwo-zstd/a "$saddr" ratio "$DWO"
refused dwo-section dwo-zlib/a "$saddr" per-section "$DWO" \
	SYM_MAX_INFLATE_RATIO=100000000 SYM_MAX_INFLATE_SECTION=64M
refused dwo-file dwo-file/a "$saddr" per-file "$DWO" \
	SYM_MAX_INFLATE_RATIO=100000000 SYM_MAX_INFLATE_FILE=60M

# Honest files answer.  llvm-symbolizer 14 does not follow dwz's
# references into the alt file, so the dwz build is compared with it
# reading the program before dwz.
oracle_point "dwz -m build answers as llvm-symbolizer on the build before dwz" \
	--oracle-obj "$T/orig" "$T/dwz/a"
oracle_point "split-DWARF build answers as llvm-symbolizer" "$T/split/a"
copy dwz-z dwz && objcopy --compress-debug-sections=zlib dwz/alt.debug dwz-z/alt.debug &&
copy split-z split && objcopy --compress-debug-sections=zlib split/$DWO split-z/$DWO ||
	{ echo "Bail out! objcopy failed"; exit 1; }
readelf -S split-z/$DWO | grep -A1 '\.debug_info\.dwo' | grep -q C ||
	{ echo "Bail out! the .dwo was not compressed"; exit 1; }
is "a zlib alt file answers as the plain one" \
	"$(SYM_STORE="$T/st.dz" "$SYM" addr2line -f -i -e dwz-z/a "$addr" 2>&1)" \
	"$(SYM_STORE="$T/st.d" "$SYM" addr2line -f -i -e dwz/a "$addr" 2>&1)"
is "a zlib .dwo answers as the plain one" \
	"$(SYM_STORE="$T/st.sz" "$SYM" addr2line -f -i -e split-z/a "$saddr" 2>&1)" \
	"$(SYM_STORE="$T/st.s" "$SYM" addr2line -f -i -e split/a "$saddr" 2>&1)"
# ... and the split unit was read: its inline frame is there.
is "the split unit is read (its inlined px)" \
	"$(SYM_STORE="$T/st.s2" "$SYM" addr2line -f -i -e split/a "$saddr" 2>&1 | head -1)" px
# The .dwo counts with its debug file: with a per-file limit between
# the .dwo's honest size and nothing, it is refused.
SYM_MAX_INFLATE_FILE=100 SYM_STORE="$T/st.s3" "$SYM" addr2line -e split-z/a "$saddr" > /dev/null 2> s3.err
is "an honest zlib .dwo counts in the per-file limit" \
	"$(grep -c "$DWO' declares .* over the per-file decompression limit" s3.err)" 1

# A .dwo path naming a FIFO (an uploaded file can name any path): refused
# at once, where libdw's open() of it would wait for a writer forever.
mkdir split-fifo && cp split/a split-fifo/ && mkfifo "split-fifo/$DWO"
timeout 60 "$SYM" addr2line --no-cache -e split-fifo/a "$saddr" > /dev/null 2> fifo.err
rc=$?
ok "a .dwo that is a FIFO: refused at once, naming it (status $rc)" \
	sh -c "[ $rc != 0 ] && [ $rc != 124 ] &&
	       grep -q \"split DWARF file, which is not a regular file\" fifo.err"

done_testing
