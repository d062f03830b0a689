# record-lib.sh - shared by the sym record tests (t30*-record-*.sh); sourced
# after lib.sh.
#
#   need_perf              skip the whole test unless sym record can open
#                          perf events here (root, CAP_PERFMON or a low
#                          kernel.perf_event_paranoid)
#   prof_cc OUT SRC FLAGS  compile fixtures/src/SRC into $T/OUT with gcc
#   check WHAT ARGS...     one TAP point from record_check.py WHAT ARGS,
#                          its diagnostics kept
#
# Workloads run a few seconds at most; samples are taken at 999 Hz so that
# the 99.9% intervals are narrow enough to mean something.

need gcc python3 readelf nm
[ -x "$SYM" ] || plan_skip "$SYM not built"

need_perf() {
	if ! "$SYM" record -q -o "$T/.probe.raw" -- true > "$T/.probe.err" 2>&1
	then
		plan_skip "sym record cannot sample here: $(head -1 "$T/.probe.err")"
	fi
}

prof_cc() {
	_out=$1 _src=$2; shift 2
	gcc "$@" -o "$T/$_out" "$SYM_ROOT/fixtures/src/$_src" || {
		echo "Bail out! cannot compile $_src"
		exit 1
	}
}

check() {
	_what=$1; shift
	python3 "$SYM_ROOT/tests/e2e/lib/record_check.py" "$_what" "$@" \
		> "$T/.check.out" 2>&1
	_rc=$?
	_tap "$_rc" "record_check $_what $(basename -- "$1") ${2:+$(basename -- "$2")}"
	sed 's/^\([^#]\)/# \1/' "$T/.check.out"
	# prove shows stderr only: a failure's reasons go there too, so that
	# a rare failure in a full make check can be read from its log.
	[ "$_rc" = 0 ] || sed 's/^/record_check: /' "$T/.check.out" >&2
}
