# symprof-lib.sh - what the t4000-symprof-* tests share (sourced after
# lib.sh, not run).
#
#   sp_build NAME        compile fixtures/src/NAME.{c,cc} into $T/NAME
#                        (-O2 -g -fno-omit-frame-pointer); symprof_dlopen
#                        also gets $T/libsymprof_dso.so next to it;
#                        symprof_unwind is built without frame pointers
#                        and gets $T/libsymprof_nocfi.so, without CFI
#   sp_run ARGS...       timeout $SP_TIMEOUT $SYM run ARGS...
#   $RAWCHECK            build/tests/raw-check (libsym's reader), built on
#                        demand
#   sp_check DESC RAW... one TAP point: every file parses and is coherent
#   sp_same TAG "OPTS" NAME ARGS...
#                        two TAP points: $T/NAME ARGS prints the same
#                        stdout and stderr (libsymprof's own notices
#                        aside) and exits 0 with and without `sym run OPTS`
#                        (profile $T/NAME.TAG.raw), and the profile parses
#                        and is coherent
#   sp_py CMD ARGS...    tests/e2e/lib/symprof_check.py CMD ARGS..., its output
#                        as TAP diagnostics; returns its status
#   sp_val CMD ARGS...   symprof_check.py's answer on stdout (tidsamples,
#                        inmap, header)
#   sp_hdr RAW KEY       the value of one header line
#   symprof_workload NAME
#                        the whole test of one of Debian's programs
#                        (workloads-lib.sh) under sym run (t401x)

need cc c++ nm timeout python3 taskset
[ -r "$SYM_ROOT/lib/libsymprof.so" ] || plan_skip "no lib/libsymprof.so; run make"
SP_TIMEOUT=${SP_TIMEOUT:-120}
SP_CFLAGS="-O2 -g -fno-omit-frame-pointer"
RAWCHECK=$SYM_ROOT/build/tests/raw-check
if [ ! -x "$RAWCHECK" ]; then
	make -C "$SYM_ROOT" --no-print-directory build/tests/raw-check >&2 ||
		plan_skip "cannot build $RAWCHECK"
fi

sp_build() {
	_src=$SYM_ROOT/fixtures/src
	case $1 in
	symprof_exc)
		c++ $SP_CFLAGS -pthread -o "$T/$1" "$_src/$1.cc" ;;
	symprof_dlopen)
		cc $SP_CFLAGS -fPIC -shared -o "$T/libsymprof_dso.so" \
			"$_src/symprof_dso.c" &&
		cc $SP_CFLAGS -Wl,--enable-new-dtags,-rpath,'$ORIGIN' \
			-o "$T/$1" "$_src/$1.c" ;;
	symprof_unwind)
		# Without frame pointers, as Debian builds; its library
		# without any CFI (no .eh_frame, not even the linker's).
		cc -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables \
			-fno-unwind-tables -fPIC -shared -nostartfiles \
			-Wl,--no-ld-generated-unwind-info \
			-o "$T/libsymprof_nocfi.so" "$_src/symprof_nocfi.c" &&
		cc -O2 -g -fomit-frame-pointer -o "$T/$1" "$_src/$1.c" \
			-L"$T" -lsymprof_nocfi \
			-Wl,--enable-new-dtags,-rpath,'$ORIGIN' ;;
	*)
		cc $SP_CFLAGS -pthread -o "$T/$1" "$_src/$1.c" ;;
	esac
}

sp_run() {
	timeout "$SP_TIMEOUT" "$SYM" run "$@"
}

sp_check() {
	_d=$1; shift
	if "$RAWCHECK" "$@" > "$T/.rawcheck" 2>&1; then
		_tap 0 "$_d"
		sed 's/^/# /' "$T/.rawcheck"
	else
		_tap 1 "$_d"
		# (on stderr too, which a plain prove run shows: the reason
		# must reach a CI log)
		sed 's/^/# /' "$T/.rawcheck" | tee -a /dev/stderr
	fi
}

# (a failing check's lines go to stderr too, so that `make check`'s
# prove, which shows a failed test's stderr but not its comments, keeps
# them in the log)
sp_py() {
	python3 "$SYM_ROOT/tests/e2e/lib/symprof_check.py" "$@" > "$T/.sppy" 2>&1
	_rc=$?
	sed 's/^\([^#]\)/# \1/' "$T/.sppy"
	[ "$_rc" = 0 ] || sed "s/^/symprof_check.py $1: /" "$T/.sppy" >&2
	return $_rc
}

sp_val() {
	python3 "$SYM_ROOT/tests/e2e/lib/symprof_check.py" "$@"
}

sp_hdr() {
	sed -n "s/^$2 //p" "$1"
}

# symprof_workload NAME: the test of one of workloads-lib.sh's programs
# under sym run, libsymprof's defaults but -F 999 (per-thread CPU timers
# expire on the kernel tick: about 250 samples a second of CPU here): its
# output and exit status unchanged, whole stacks (workloads_check.py
# complete: >= 99% reach _start, __libc_start_main or the thread's start,
# every other one flagged) and the top-10 function shares, self and
# total, against perf record --call-graph dwarf (workloads_check.py
# shares, 99.9% family-wise).  As in record-lib.sh's record_workload(),
# the run without a profiler and perf's run go on beside ours, so that
# the three share the machine's load second by second; and perf's run and
# ours share one CPU (WL_PIN, taskset), time-sliced: this VM's two vCPUs
# differ in speed by up to 60%, and not alike for every kind of code, so
# two runs on two CPUs differed by 7 to 12 points in one function's share
# (sort's memcmp 47% against perf's 60%, python3.11's
# _PyEval_EvalFrameDefault 52% against 45%: z 4.2 in two CI runs of a
# quiet machine), more than sampling explains.
symprof_workload() {
	. "$SYM_ROOT/tests/e2e/lib/workloads-lib.sh"
	wl_have "$1" || plan_skip "$wl_why"
	wl_inputs || { echo "Bail out! cannot make the workloads' inputs"; exit 1; }
	export SYM_STORE="$WL/store"
	plan 3
	have_perf=0
	command -v perf > /dev/null 2>&1 && have_perf=1
	wl_run "$1" "$T/base" &
	base_pid=$!
	_cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
	WL_PIN="taskset -c $_cpu"
	if [ $have_perf = 1 ]; then
		wl_perf "$1" "$T/perf.data" "$T/perf.txt" -F 999 &
		perf_pid=$!
	fi
	# shellcheck disable=SC2086 # WL_PIN is words
	wl_run "$1" "$T/run" $WL_PIN "$SYM" run -F 999 -o "$T/run.raw" --
	wait $base_pid
	perf_ok=1
	[ $have_perf = 1 ] && { wait $perf_pid || perf_ok=0; }
	wl_same "$1: output and exit status unchanged under sym run ($(wl_desc "$1"))" \
		"$T/base" "$T/run"
	echo "# $(grep '^# libsymprof: signal' "$T/run.raw")"
	wl_check complete "$T/run.raw"
	wl_shares "$T/run.raw"
}

sp_same() {
	_m=$1 _o=$2 _n=$3; shift 3
	"$T/$_n" "$@" > "$T/$_n.plain" 2> "$T/$_n.plain.err"
	_p=$?
	# shellcheck disable=SC2086 # OPTS are words
	sp_run $_o -o "$T/$_n.$_m.raw" -- "$T/$_n" "$@" \
		> "$T/$_n.$_m.out" 2> "$T/$_n.$_m.err"
	_q=$?
	grep -v '^libsymprof: ' "$T/$_n.$_m.err" > "$T/$_n.$_m.err2"
	if [ "$_p $_q" = "0 0" ] && cmp -s "$T/$_n.plain" "$T/$_n.$_m.out" &&
	   cmp -s "$T/$_n.plain.err" "$T/$_n.$_m.err2"; then
		_tap 0 "$_n ($_m): same output and status as without the profiler"
	else
		_tap 1 "$_n ($_m): same output and status as without the profiler"
		echo "#   status $_p without, $_q with"
		diff "$T/$_n.plain" "$T/$_n.$_m.out" | sed 's/^/#   /' | head -20
		diff "$T/$_n.plain.err" "$T/$_n.$_m.err2" | sed 's/^/#   /' | head -20
	fi
	sed 's/^/# stderr: /' "$T/$_n.$_m.err" | grep 'libsymprof: '
	sp_check "$_n ($_m): the profile parses and is coherent" "$T/$_n.$_m.raw"
}
