# workloads-lib.sh - Debian's own programs as profiling workloads (issue
# 16: "proven on programs nobody here wrote"), shared by the sym record
# tests (t306x), the sym run tests and tests/bench/record-bench.sh;
# sourced after lib.sh (or by a script that sets $T, $SYM_ROOT and $SYM).
#
#   WORKLOADS               the workload names: python xz sort gzip zstd
#   wl_inputs               make the fixed inputs, once per worktree: they
#                           are generated (a seeded PRNG, no download) into
#                           fixtures/build/workloads/ under a lock, and
#                           $WL is set to that directory
#   wl_have NAME            0 when NAME's program is installed, else 1
#                           with the reason in $wl_why
#   wl_exe NAME             the real path of NAME's main executable
#   wl_desc NAME            NAME's command line, for messages
#   wl_run NAME OUT [PREFIX...]
#                           run NAME's command after PREFIX (a profiler and
#                           its options, up to and including its "--" if it
#                           takes one): stdin from /dev/null or the input,
#                           stdout to OUT, stderr to OUT.err, and the exit
#                           status of the whole command line to OUT.rc;
#                           returns 0 whatever the command did
#   wl_same DESC BASE OUT   one TAP point: OUT, OUT.err and OUT.rc are
#                           byte-identical to BASE, BASE.err and BASE.rc
#                           (a profiler must not change what the program
#                           prints or how it exits; give it -q)
#   wl_check WHAT ARGS...   one TAP point from workloads_check.py WHAT ARGS
#                           (see its docstring), its diagnostics kept
#   wl_perf NAME DATA TXT [PERF-RECORD-OPTS...]
#                           perf record --call-graph dwarf of NAME into DATA
#                           and `perf script --no-inline` of it into TXT;
#                           returns perf's failure (see $T/.perf.err)
#   wl_perf_script DATA TXT `perf script --no-inline` of DATA into TXT;
#                           returns 1, the reason in $T/.perf.err, when
#                           perf lost samples (see WL_PERF_MMAP)
#   WL_PERF_MMAP            perf record's options for its ring buffer: 16 MiB
#                           a CPU.  perf's default (perf_event_mlock_kb,
#                           516 KiB) holds 64 ms of --call-graph dwarf
#                           samples (8 KiB each at 999 Hz); on a loaded
#                           machine perf is off its CPU longer than that
#                           and loses samples in bursts, which skews its
#                           shares of whatever ran meanwhile (sort's
#                           __libc_read: 3.75% against our 7.21% in one
#                           make check).  16 MiB holds 2 s.
#   wl_shares RAW           one TAP point: workloads_check.py shares of RAW
#                           against $T/perf.txt, or a skip saying why not
#
# The workloads (about 2 s of CPU each on the 2-core VM they were tuned on;
# the inputs are fixed, so every run does the same work):
#   python  /usr/bin/python3.11 fixtures/src/wl_cpu.py  (not `python3.11`
#           from PATH, which may be a pyenv shim)
#   xz      xz -9 -c on 1.5 MB of pseudo-random text (words of a fixed
#           4096-word vocabulary)
#   sort    sort --parallel=1 of 2,000,000 lines of 8 random letters: one
#           thread, since with two the split of the work between them
#           changes from run to run (main thread 56% to 64% of the
#           samples), more than sampling does, which a comparison of
#           shares between two runs cannot tell from an error
#   gzip    gzip -9 -c on 3 MB of 4-letter pseudo-random text (long hash
#           chains: -9's slow case)
#   zstd    zstd -q -T2 -19 -c on 3 MB of the word text: two worker threads
#           besides the main one
# Every command writes its result to stdout; programs run with LC_ALL=C
# (lib.sh's).

WORKLOADS="python xz sort gzip zstd"
WL_PERF_MMAP="--mmap-pages=16M"
WL_VERSION=1

wl_inputs() {
	WL=$SYM_ROOT/fixtures/build/workloads
	mkdir -p "$WL" || return 1
	(
		flock 9
		if [ "$(cat "$WL/.version" 2>/dev/null)" != "$WL_VERSION" ]; then
			python3 "$SYM_ROOT/tests/e2e/lib/workloads_check.py" inputs \
				"$WL" && echo "$WL_VERSION" > "$WL/.version"
		fi
	) 9> "$WL/.lock"
	[ "$(cat "$WL/.version" 2>/dev/null)" = "$WL_VERSION" ]
}

# _wl_argv NAME: NAME's command, one word a line (shells have no arrays),
# and last its stdin as "<FILE".
_wl_argv() {
	case $1 in
	python) printf '%s\n' /usr/bin/python3.11 \
			"$SYM_ROOT/fixtures/src/wl_cpu.py" "</dev/null" ;;
	xz)	printf '%s\n' xz -9 -c "<$WL/text1500k" ;;
	sort)	printf '%s\n' sort --parallel=1 "<$WL/lines2m" ;;
	gzip)	printf '%s\n' gzip -9 -c "<$WL/acgt3m" ;;
	zstd)	printf '%s\n' zstd -q -T2 -19 -c "<$WL/text3m" ;;
	*)	return 1 ;;
	esac
}

wl_have() {
	wl_why=
	_p=$(_wl_argv "$1" | head -1) || { wl_why="no workload '$1'"; return 1; }
	if ! command -v "$_p" > /dev/null 2>&1; then
		wl_why="$_p is not installed"
		return 1
	fi
	return 0
}

wl_exe() {
	readlink -f "$(command -v "$(_wl_argv "$1" | head -1)")"
}

wl_desc() {
	_wl_argv "$1" | sed "s|^<$WL/|<|; s|^$SYM_ROOT/||" | tr '\n' ' ' |
		sed 's/ $//'
}

wl_run() {
	_name=$1 _out=$2; shift 2
	_in=$(_wl_argv "$_name" | tail -1)
	_in=${_in#<}
	# The command's words after the prefix, without the input: split at
	# newlines only, and not globbed.
	_ifs=$IFS
	IFS='
'
	set -f
	set -- "$@" $(_wl_argv "$_name" | sed '$d')
	set +f
	IFS=$_ifs
	"$@" < "$_in" > "$_out" 2> "$_out.err"
	echo $? > "$_out.rc"
	return 0
}

wl_same() {
	_d=$1
	if cmp -s "$2" "$3" && cmp -s "$2.err" "$3.err" &&
	   cmp -s "$2.rc" "$3.rc"; then
		_tap 0 "$_d"
	else
		_tap 1 "$_d"
		for _s in "" .err .rc; do
			cmp "$2$_s" "$3$_s" 2>&1 | sed 's/^/#   /'
		done
		sed 's/^/#   stderr: /' "$3.err" | head -5
	fi
}

wl_check() {
	_what=$1; shift
	SYM="$SYM" python3 "$SYM_ROOT/tests/e2e/lib/workloads_check.py" "$_what" \
		"$@" > "$T/.wlcheck.out" 2>&1
	_rc=$?
	_tap "$_rc" "workloads_check $_what $(basename -- "$1")"
	sed 's/^\([^#]\)/# \1/' "$T/.wlcheck.out"
	# prove shows stderr only: keep a failure's reasons readable there.
	[ "$_rc" = 0 ] || sed 's/^/workloads_check: /' "$T/.wlcheck.out" >&2
	return "$_rc"
}

wl_perf() {
	_name=$1 _data=$2 _txt=$3; shift 3
	# shellcheck disable=SC2086 # WL_PIN is words (symprof-lib.sh)
	wl_run "$_name" "$T/.perf.out" $WL_PIN perf record -q -e cpu-clock \
		--call-graph dwarf $WL_PERF_MMAP -o "$_data" "$@" --
	if [ "$(cat "$T/.perf.out.rc")" != 0 ]; then
		cp "$T/.perf.out.err" "$T/.perf.err"
		return 1
	fi
	wl_perf_script "$_data" "$_txt"
}

# wl_shares RAW: the shares point of a workload test against perf's
# $T/perf.txt, skipped when perf is not here ($have_perf) or failed
# ($perf_ok, the reason in $T/.perf.err).
wl_shares() {
	if [ "$have_perf" = 0 ]; then
		skip "no perf (Debian package linux-perf)"
	elif [ "$perf_ok" = 0 ]; then
		skip "perf record failed: $(head -1 "$T/.perf.err")"
	else
		wl_check shares "$1" "$T/perf.txt"
	fi
}

# wl_perf_script DATA TXT: perf's stacks as workloads_check.py reads them,
# unless perf lost samples: its shares are then not the program's.
wl_perf_script() {
	_lost=$(perf report -i "$1" --stats 2> /dev/null |
		sed -n 's/^ *LOST_SAMPLES events: *\([0-9]*\).*/\1/p' | tail -1)
	if [ -n "$_lost" ] && [ "$_lost" != 0 ]; then
		echo "perf lost $_lost samples (its ring buffer overran while it was off its CPU)" \
			> "$T/.perf.err"
		return 1
	fi
	perf script --no-inline -F comm,pid,tid,ip,dso -i "$1" > "$2" 2> "$T/.perf.err"
}
