# core-lib.sh - helpers of the `sym stack` tests (t0250-t0254), sourced
# after lib.sh.
#
#   core_setup              root only: core_pattern set to $T/cores/core.%p
#                           (restored at exit), under a lock that the
#                           other core tests wait for; skips otherwise
#   make_core CMD...        run CMD (which must die dumping core) with
#                           ulimit -c unlimited; prints the core's path
#   sleep_core              sets $exe to sleep and $core to a core of it
#                           killed with SIGSEGV; exits the test if none
#   peer_points NAME CORE EXE [TODO_EU] [TODO_GDB]   four TAP points: sym stack succeeds, and its
#                           frames agree with eu-stack -i -s --core and
#                           gdb's `thread apply all bt` (whole paths:
#                           filename-display absolute) on >= 99% of the
#                           frames both show (tests/e2e/lib/stack-compare.py)
#   agree_point DESC FILE [TODO]  one TAP point from stack-compare.py's
#                           output FILE: agree/compared >= 99%
#
# The figures go to the TAP output as diagnostics, with the differing
# frames; docs/crash.md explains the ones that remain.

core_setup() {
	[ "$(id -u)" = 0 ] || plan_skip "not root: cannot set core_pattern"
	# core_pattern is one for the whole machine and make check runs two
	# tests at once: the tests that set it take turns, or one's cores
	# land in the other's directory (t0252 lost its last core so in a
	# .ci/run).  The lock goes with this shell's fd 9.
	command -v flock > /dev/null || plan_skip "no flock (util-linux)"
	exec 9> "${TMPDIR:-/tmp}/sym-test-core-pattern.lock"
	if ! flock -w 600 9; then
		echo "Bail out! core_pattern still locked after 600 s"
		exit 1
	fi
	_cp_old=$(cat /proc/sys/kernel/core_pattern) ||
		plan_skip "cannot read core_pattern"
	mkdir -p "$T/cores"
	chmod 1777 "$T/cores"
	echo "$T/cores/core.%p" > /proc/sys/kernel/core_pattern 2>/dev/null ||
		plan_skip "cannot write core_pattern"
	# Restore it on every exit, even an interrupted one.
	printf '%s\n' "$_cp_old" > "$T/.core_pattern"
	at_exit "cat '$T/.core_pattern' > /proc/sys/kernel/core_pattern"
}

make_core() {
	rm -f "$T"/cores/core.*
	# The shell's "Segmentation fault (core dumped)" goes to the file
	# too: the inner sh is the one that reports it.
	sh -c 'ulimit -c unlimited; "$@"; exit 0' sh "$@" > "$T/.core.out" 2>&1
	for _i in 1 2 3 4 5 6 7 8 9 10; do
		_c=$(ls "$T"/cores/core.* 2>/dev/null | head -1)
		[ -n "$_c" ] && break
		sleep 0.5
	done
	[ -n "$_c" ] || return 1
	echo "$_c"
}

agree_point() {
	_sum=$(head -1 "$2")
	_a=$(echo "$_sum" | sed -n 's/.*agree=\([0-9]*\).*/\1/p')
	_c=$(echo "$_sum" | sed -n 's/.*compared=\([0-9]*\).*/\1/p')
	echo "# $1: $_sum"
	if [ -n "$_c" ] && [ "$_c" -gt 0 ] && [ $((_a * 100)) -ge $((_c * 99)) ]
	then
		_tap 0 "$1"
	elif [ -n "$3" ]; then
		_tap_todo 1 "$1" "$3"
	else
		_tap 1 "$1"
	fi
	sed -n '2,40s/^/#   /p' "$2"
}

peer_points() {
	_name=$1 _core=$2 _exe=$3
	ok "$_name: sym stack -i --core runs" \
		"$SYM" stack -i --core "$_core" --executable "$_exe"
	"$SYM" stack -i --core "$_core" --executable "$_exe" \
		> "$T/$_name.sym" 2> "$T/$_name.sym.err"
	ok "$_name: every thread has frames" \
		test "$(grep -c '^TID' "$T/$_name.sym")" -ge 1
	eu-stack -i -s --core "$_core" -e "$_exe" > "$T/$_name.eu" 2>&1
	gdb -batch -nx -ex 'set pagination off' \
		-ex 'set filename-display absolute' -ex 'thread apply all bt' \
		"$_exe" "$_core" > "$T/$_name.gdb" 2>&1
	python3 "$SYM_ROOT/tests/e2e/lib/stack-compare.py" "$T/$_name.sym" \
		"$T/$_name.eu" eu "$_exe" > "$T/$_name.cmp-eu"
	python3 "$SYM_ROOT/tests/e2e/lib/stack-compare.py" "$T/$_name.sym" \
		"$T/$_name.gdb" gdb "$_exe" > "$T/$_name.cmp-gdb"
	agree_point "$_name: agrees with eu-stack -i -s --core" \
		"$T/$_name.cmp-eu" "$4"
	agree_point "$_name: agrees with gdb thread apply all bt" \
		"$T/$_name.cmp-gdb" "$5"
}

sleep_core() {
	exe=$(command -v sleep)
	core=$(make_core sh -c "$exe 100 & p=\$!; sleep 0.3; kill -SEGV \$p
		wait \$p")
	[ -n "$core" ] || { echo "# no core written"; cat "$T/.core.out"
		exit 1; }
}
