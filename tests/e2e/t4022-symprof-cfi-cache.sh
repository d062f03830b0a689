#!/bin/sh
# libsymprof's step cache (tools/symprof/cficache.c; docs/symprof.md,
# "The step cache"): the stacks are the same with it and without it.
# With the test knob SYMPROF_CFI_CACHE=check the drain unwinds every
# record twice, through the cache and then with sp_cfi_find() and
# sp_cfi_step() at every frame as before, and counts the records whose
# frames, flags or final registers differ in any way.  On Debian's own
# programs (python3.11 in cpu mode and in alloc mode, sort's libc
# qsort/strcoll), and across dlopen and dlclose (symprof_dlopen: the
# library loaded and unloaded three times, each change of the mapping
# table invalidating the cache): every record checked, none differs,
# and the cache did serve (hits).  SYMPROF_CFI_CACHE=0 turns it off (the
# file says so; the stacks stay whole); a bad value is refused with a
# message, the program unchanged; SYMPROF_UNWIND_MEMO=0 turns the memo
# off (the file says so).  The unwind memo (unwmemo.c) is checked
# the same way: in check mode each record the memo finds is unwound in
# full too, and its stack compared with the memo's.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
. "$SYM_ROOT/tests/e2e/lib/workloads-lib.sh"
wl_have python || plan_skip "$wl_why"
wl_have sort || plan_skip "$wl_why"
wl_inputs || { echo "Bail out! cannot make the workloads' inputs"; exit 1; }
plan 31

# note RAW KEY: a number from the comment lines (KEY as written there).
note() {
	grep '^# libsymprof: ' "$1" |
		sed -n "s/.*[ :]$2 \([0-9][0-9]*\).*/\1/p" | head -1
}

# checked NAME RAW: three points: every record with a stack was unwound
# both ways, none differs, the cache served.
checked() {
	_r=$2
	grep '^# libsymprof: ' "$_r" | sed 's/^/# /'
	_s=$(sp_hdr "$_r" samples)
	_c=$(note "$_r" "stacks")
	_o=$(note "$_r" "off the thread stack")
	is "$1: every record with a stack unwound both ways (of $_s)" \
		"$_c" "$((_s - _o))"
	ok "$1: more than 100 of them" test "${_c:-0}" -gt 100
	is "$1: no frame, flag or register differs with the cache" \
		"$(note "$_r" differ)" 0
	is "$1: every stack the unwind memo found is the full unwind's" \
		"$(note "$_r" wrong)" 0
}

# python3.11, cpu mode at 999 Hz, the knob on check.
wl_run python "$T/py.base"
SYMPROF_CFI_CACHE=check wl_run python "$T/py" "$SYM" run -F 999 \
	-o "$T/py.raw" --
wl_same "python3.11 ($(wl_desc python)): output and status unchanged" \
	"$T/py.base" "$T/py"
checked "python3.11, cpu mode" "$T/py.raw"
# Misses are first lookups of a pc (python3.11's hot code has about 900
# of them), hits the rest: 1,200 samples of 12 frames gave 17 hits a miss.
ok "python3.11: the cache served most lookups (hits > 2 x misses)" \
	test "$(note "$T/py.raw" hits)" -gt "$(( $(note "$T/py.raw" misses) * 2 ))"

# python3.11, alloc mode, its allocations through malloc.
PYTHONMALLOC=malloc SYMPROF_CFI_CACHE=check wl_run python "$T/pya" \
	"$SYM" run --mode alloc --rate 65536 -o "$T/pya.raw" --
wl_same "python3.11 in alloc mode: output and status unchanged" \
	"$T/py.base" "$T/pya"
checked "python3.11, alloc mode" "$T/pya.raw"
ok "python3.11, alloc mode: the unwind memo found stacks" \
	test "$(note "$T/pya.raw" "unwound again")" -gt 0

# sort: libc's qsort, msort and strcoll.
wl_run sort "$T/sort.base"
SYMPROF_CFI_CACHE=check wl_run sort "$T/sort" "$SYM" run -F 999 \
	-o "$T/sort.raw" --
wl_same "sort: output and status unchanged" "$T/sort.base" "$T/sort"
checked "sort" "$T/sort.raw"

# dlopen and dlclose, three rounds.
sp_build symprof_dlopen || echo "# cannot build symprof_dlopen"
"$T/symprof_dlopen" 300 > "$T/dl.plain" 2>&1
SYMPROF_CFI_CACHE=check sp_run -F 999 -o "$T/dl.raw" -- \
	"$T/symprof_dlopen" 300 > "$T/dl.out" 2>&1
is "symprof_dlopen: output and status unchanged" \
	"$? $(cat "$T/dl.out")" "0 $(cat "$T/dl.plain")"
checked "symprof_dlopen" "$T/dl.raw"
ok "symprof_dlopen: the mapping table's changes invalidated the cache" \
	test "$(note "$T/dl.raw" invalidations)" -ge 2
n=$(sp_val inmap "$T/dl.raw" /libsymprof_dso.so "$T/libsymprof_dso.so" \
	dso_spin)
echo "# symprof_dlopen: $n samples in dso_spin"
ok "symprof_dlopen: samples in the dlopened library's dso_spin" \
	test "${n:-0}" -gt 0

# Off: the file says so, and the stacks are whole as before.
SYMPROF_CFI_CACHE=0 wl_run python "$T/pyoff" "$SYM" run -F 999 \
	-o "$T/pyoff.raw" --
wl_same "python3.11, cache off: output and status unchanged" \
	"$T/py.base" "$T/pyoff"
ok "cache off: the file says so" \
	grep -q '^# libsymprof: CFI step cache off (SYMPROF_CFI_CACHE=0)$' \
	"$T/pyoff.raw"
wl_check complete "$T/pyoff.raw"

# The memo off: the file says so, the stacks are whole.
SYMPROF_UNWIND_MEMO=0 wl_run python "$T/pynomemo" "$SYM" run -F 999 \
	-o "$T/pynomemo.raw" --
ok "unwind memo off: the file says so" \
	grep -q '^# libsymprof: unwind memo off (SYMPROF_UNWIND_MEMO=0)$' \
	"$T/pynomemo.raw"
wl_check complete "$T/pynomemo.raw"

# A bad value: refused, the program unchanged, no profile.
env LD_PRELOAD="$SYM_ROOT/lib/libsymprof.so" SYMPROF_OUT="$T/bad.raw" \
	SYMPROF_CFI_CACHE=yes echo hi > "$T/bad.out" 2> "$T/bad.err"
is "SYMPROF_CFI_CACHE=yes: the program runs unchanged, no profile" \
	"$? $(cat "$T/bad.out") $(ls "$T/bad.raw" 2> /dev/null)" "0 hi "
ok "SYMPROF_CFI_CACHE=yes: a message says why there is no profile" \
	grep -q "SYMPROF_CFI_CACHE='yes' is not 0, 1 or check; not profiling" \
	"$T/bad.err"
