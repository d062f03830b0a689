#!/bin/bash
# t3131-record-offcpu-python.sh - sym record --off-cpu on a program
# nobody here wrote: Debian's /usr/bin/python3.11 (not a pyenv shim on
# PATH) running fixtures/src/prof_offcpu.py, which sleeps (time.sleep),
# waits on a pipe its forked child answers, and computes, and measures
# each part itself.  The main thread's off-CPU profile names time.sleep's
# C path (time_sleep -> pysleep -> __clock_nanosleep) and the pipe read's
# (os_read_impl -> _Py_read -> read -> __libc_read), each in whole stacks
# from _start through Py_BytesMain, with shares and totals checked
# against the script's own times (offcpu_check.py python); the child's
# sleeps are in the same C path.  Symbols come from Debian's
# python3.11-dbg (its debug file, found by build ID).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
PY=/usr/bin/python3.11
[ -x "$PY" ] || plan_skip "no $PY (Debian's python3.11)"
need_bpf_record --off-cpu
b=$(readelf -n "$PY" | sed -n 's/.*Build ID: *//p' | head -1)
[ -r "/usr/lib/debug/.build-id/${b:0:2}/${b:2}.debug" ] ||
	plan_skip "no debug file for $PY (python3.11-dbg)"
plan 4

"$SYM" record --off-cpu -o "$T/py.raw" -- \
	"$PY" "$SYM_ROOT/fixtures/src/prof_offcpu.py" 100 20000 \
	> "$T/py.out" 2> "$T/py.err"
is "record exits 0" "$?" 0
sed 's/^/# /' "$T/py.err" "$T/py.out"
"$SYM" fold -q --tid --value off-cpu "$T/py.raw" > "$T/py.fold"
check python "$T/py.fold" "$T/py.out"

# The main thread's two heaviest stacks, whole (printed for the record).
tid=$(awk '$1 == "rounds" { print $4 }' "$T/py.out")
grep "^[^;]*/$tid;" "$T/py.fold" | sort -t' ' -k2 -n -r | head -3 |
	sed 's/^/# /'
ok "the child's sleeps: time_sleep;pysleep;__clock_nanosleep from _start" \
	awk -v tid="$tid" '{ split($1, f, ";"); split(f[1], p, "/") }
	p[2] != tid && /;_start;.*;Py_BytesMain;.*;time_sleep;pysleep_\[i\];__clock_nanosleep;/ {
		n += $NF } END { exit !(n > 0.3e9) }' "$T/py.fold"
is "nothing lost" "$(awk '$1 == "lost" { print $2 }' "$T/py.raw")" 0

done_testing
