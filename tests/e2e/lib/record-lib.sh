# record-lib.sh - shared by the sym record tests (t30*-record-*.sh); sourced
# after lib.sh.
#
#   need_perf              skip the whole test unless sym record can open
#                          perf events here (root, CAP_PERFMON or a low
#                          kernel.perf_event_paranoid)
#   prof_cc OUT SRC FLAGS  compile fixtures/src/SRC into $T/OUT with gcc
#   bpf_sigkill MODE       three TAP points: `sym record --MODE` (off-cpu,
#                          sched-delay, wall) killed with SIGKILL releases
#                          its BPF programs, leaves /sys/fs/bpf as it was,
#                          and the next run of MODE starts
#   check WHAT ARGS...     one TAP point from record_check.py WHAT ARGS
#                          (offcpu_check.py for truth, sampled, minmax,
#                          peer, delay, delayfp, wall, agree-*), its
#                          diagnostics kept; returns the checker's status
#   need_bpf_record OPTS...  skip the whole test unless root and `sym record
#                          -q OPTS -- true` runs (the BPF agent's modes:
#                          t3110-t3132), saying what it printed
#   need_kernel_record     skip unless root, kallsyms and perf allow kernel
#                          frames (t3092-t3094; below)
#   record_dd_kernel OUT   sym record -a and perf record -a at once over dd
#                          (t3092, t3093; below)
#   symd_kernel_points ... three TAP points: symd's kernel names against the
#                          snapshot's and perf's (t3093, t3094; below)
#   agglost ERR            the sum of the "lost A (hash collisions) + B +
#                          C + D" of --aggregate kernel's summary in ERR
#   nominal_point FOLD OUT one TAP point: each thread's sched-delay in FOLD
#                          50% +-5 points of its wall time (OUT: prof_spin's
#                          output), skipped when the kernel's run_delay
#                          share itself is outside (t3112, t3121)
#   sigkill_agent OPTS...  run `sym record -q OPTS -o $T/k.raw -- sleep 60`,
#                          SIGKILL it once its BPF programs are loaded,
#                          and one TAP point: they are released (t3120)
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

# need_kernel_record: skip unless kernel frames can be recorded and named
# here, by sym record and by perf: root (kallsyms hides its addresses
# otherwise), addresses not hidden by kernel.kptr_restrict, and perf
# events open to both (t3092, t3093, t3094).
need_bpf_record() {
	[ "$(id -u)" = 0 ] || plan_skip "not root: BPF needs root here"
	"$SYM" record -q "$@" -o "$T/.probe.raw" -- true > "$T/.probe.err" 2>&1 ||
		plan_skip "sym record $* cannot run: $(head -1 "$T/.probe.err")"
}

need_kernel_record() {
	[ "$(id -u)" = 0 ] || plan_skip "not root: /proc/kallsyms hides its addresses"
	awk '$2 ~ /^[tT]$/ && $1 !~ /^0+$/ { f = 1; exit } END { exit !f }' \
		/proc/kallsyms || plan_skip "/proc/kallsyms hides its addresses (kernel.kptr_restrict)"
	need_perf
	perf record -q -N -B -e cpu-clock -o "$T/probe.data" -- true \
		> "$T/probe.err" 2>&1 ||
		plan_skip "perf record cannot sample here: $(head -1 "$T/probe.err")"
}

# symd_kernel_points SNAPSHOT LOCAL ALONE TEXT: three TAP points (t3093,
# t3094), after record_dd_kernel: `sym symbolize --server` of ALONE (a
# profile of kernel build ID $FAKE, no snapshot beside it) names every
# kernel frame from kallsyms, as SNAPSHOT names LOCAL here, frame by
# frame; and perf.data's kernel addresses (TEXT: this boot's _text) get
# perf's names from symd.  Needs $CHECK (kernel_check.py) and $SYMD_URL.
symd_kernel_points() {
	"$SYM" symbolize -q --kallsyms "$1" "$2" -o local.sym
	$CHECK kernel-locs local.sym > local.k
	"$SYM" symbolize -v --server "$SYMD_URL" "$3" -o srv.sym 2> srv.err
	$CHECK kernel-locs srv.sym > srv.k
	grep kallsyms srv.err | sed 's/^/# /'
	ok "symd names every kernel frame ($(wc -l < local.k) distinct), from kallsyms" \
		grep -Eq '^ +[0-9]+ +100\.0% .* kallsyms +\[kernel\.kallsyms\] \(00112233\)$' srv.err
	run_compare "symd's kernel names are the local snapshot's, frame by frame" \
		cat srv.k < local.k
	perf script -i perf.data -F ip,sym,dso > perf.txt 2> /dev/null
	$CHECK perf-addrs perf.txt p.raw "$FAKE" "$4"
	"$SYM" symbolize -q --server "$SYMD_URL" p.raw -o p.sym
	ok "perf's kernel addresses get perf's kallsyms names from symd" \
		$CHECK compare-names p.sym p.raw.perf
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
	_checker=record_check.py
	case $_what in
	truth|kshares|collide|sampled|minmax|peer|delay|delayfp|wall|wallshares|python|agree-*) _checker=offcpu_check.py ;;
	esac
	python3 "$SYM_ROOT/tests/e2e/lib/$_checker" "$_what" "$@" \
		> "$T/.check.out" 2>&1
	_rc=$?
	_tap "$_rc" "record_check $_what $(basename -- "$1") ${2:+$(basename -- "$2")}"
	sed 's/^\([^#]\)/# \1/' "$T/.check.out"
	# prove shows stderr only: a failure's reasons go there too, so that
	# a rare failure in a full make check can be read from its log.
	[ "$_rc" = 0 ] || sed 's/^/record_check: /' "$T/.check.out" >&2
	return "$_rc"
}

# unseen ERR: "N K L" of --off-cpu's summary in ERR: switch-ins the
# kernel did not trace, those ended by sched_info, those lost ("0 0 0"
# without the line).
unseen() {
	awk '/switch-ins the kernel did not trace/ { n = $4
		s = $0; sub(/.*\): /, "", s); split(s, a, " ")
		k = a[1]; l = a[9] }
	END { print n + 0, k + 0, l + 0 }' "$1"
}

agglost() {
	awk '/aggregated in BPF/ { s = $0; sub(/.*; lost /, "", s)
	n = split(s, a, " "); t = 0
	for (i = 1; i <= n; i++) if (a[i] ~ /^[0-9]+$/ && (i == 1 || a[i - 1] == "+")) t += a[i]
	print t }' "$1"
}

nominal_point() {
	python3 "$SYM_ROOT/tests/e2e/lib/offcpu_check.py" nominal "$1" "$2" \
		> "$T/.nominal.out"
	_rc=$?
	sed 's/^/# /; s/^# # /# /' "$T/.nominal.out"
	if [ "$_rc" = 77 ]; then
		skip "50% +-5 of wall time: the machine's load moved the kernel's run_delay share"
	else
		is "each thread's delay 50% +-5 points of its wall time" "$_rc" 0
	fi
}

# record_workload NAME: the test of one of workloads-lib.sh's programs
# (t306x) under the default `sym record` at 999 Hz: its output and exit
# status unchanged, whole stacks (workloads_check.py complete) and the
# top-10 function shares against perf record --call-graph dwarf
# (workloads_check.py shares).  perf runs under sym record with the
# program under it, so the two sample one execution: on a shared machine
# the load changes from one second to the next, and with it the relative
# speed of the program's parts (memory-bound against compute-bound code),
# so that even runs side by side differed in more than sampling (sort's
# memcmp 42% under sym record, 51% under perf, z -4.8, in a make check
# -j2).  The run without a profiler goes on beside it.
# The programs' tables go into one store, fixtures/build/workloads/store,
# kept between tests and runs: converting python3.11's and libc's debug
# files again in every test would cost more than the workloads.
record_workload() {
	. "$SYM_ROOT/tests/e2e/lib/workloads-lib.sh"
	need_perf
	wl_have "$1" || plan_skip "$wl_why"
	wl_inputs || { echo "Bail out! cannot make the workloads' inputs"; exit 1; }
	export SYM_STORE="$WL/store"
	plan 4
	have_perf=0 perf_ok=0
	command -v perf > /dev/null 2>&1 && have_perf=1
	wl_run "$1" "$T/base" &
	base_pid=$!
	if [ $have_perf = 1 ]; then
		# perf under sym record, the program under perf: both sample
		# one execution (workloads_check.py leaves perf's own
		# process out of ours).
		wl_run "$1" "$T/rec" "$SYM" record -q -F 999 -o "$T/rec.raw" -- \
			perf record -q -e cpu-clock --call-graph dwarf -F 999 \
			$WL_PERF_MMAP -o "$T/perf.data" --
		perf_ok=1
		if [ ! -s "$T/perf.data" ]; then
			echo "no $T/perf.data" > "$T/.perf.err"
			perf_ok=0
		elif ! wl_perf_script "$T/perf.data" "$T/perf.txt"; then
			perf_ok=0
		fi
	else
		wl_run "$1" "$T/rec" "$SYM" record -q -F 999 -o "$T/rec.raw" --
	fi
	wait $base_pid
	wl_same "$1: output and exit status unchanged under sym record ($(wl_desc "$1"))" \
		"$T/base" "$T/rec"
	ok "$1: the profile says mode dwarf" grep -qx "mode dwarf" "$T/rec.raw"
	wl_check complete "$T/rec.raw"
	wl_shares "$T/rec.raw"
}

# kill_agent WANT OPTS...: start `sym record -q OPTS -- sleep 60`, wait
# until WANT of its BPF programs are attached (read from its
# /proc/PID/fdinfo, prog_id), SIGKILL it, and wait for them to go; sets
# _ids (the programs seen) and _left (those still loaded).
kill_agent() {
	_want=$1
	shift
	"$SYM" record -q "$@" -- sleep 60 &
	_agent=$!
	for _i in $(seq 300); do
		_ids=$(sed -n 's/^prog_id:\t*//p' /proc/"$_agent"/fdinfo/* \
			2>/dev/null | sort -u)
		[ "$(echo "$_ids" | grep -c .)" -ge "$_want" ] && break
		sleep 0.1
	done
	pkill -P "$_agent" -x sleep
	# (the shell's own "Killed" notice is not the test's output)
	exec 3>&2 2> /dev/null
	kill -9 "$_agent"
	wait "$_agent"
	exec 2>&3 3>&-
	for _i in $(seq 100); do
		_left=
		for _id in $_ids; do
			bpftool prog show id "$_id" > /dev/null 2>&1 &&
				_left="$_left $_id"
		done
		[ -z "$_left" ] && break
		sleep 0.1
	done
}

# bpf_sigkill MODE: see the header (--sched-delay has 3 programs, the
# others 1; and with a command, as here, the filter's 3:
# sched_process_exec, _fork and _exit).
bpf_sigkill() {
	_m=$1 _w=4
	[ "$_m" = sched-delay ] && _w=6
	_pins=$(find /sys/fs/bpf 2>/dev/null | sort)
	kill_agent "$_w" --"$_m" -o "$T/.killed.raw"
	ok "--$_m, SIGKILL: its $_w programs ($(echo $_ids)) are released" \
		test "$(echo "$_ids" | grep -c .)" = "$_w" -a -z "$_left"
	is "--$_m, SIGKILL: nothing pinned in /sys/fs/bpf" \
		"$(find /sys/fs/bpf 2>/dev/null | sort)" "$_pins"
	"$SYM" record -q --"$_m" -o "$T/.again.raw" -- sleep 0.1
	is "--$_m: the next run starts clean" "$?" 0
}

# record_dd_kernel OUT: dd does 512-byte syscalls for about 2 s while
# `sym record -a` writes OUT (and OUT.kallsyms) and `perf record -a`
# writes perf.data in the current folder, both sampling at 999 Hz with
# kernel callchains; sets REC_STATUS and PERF_STATUS (t3092, t3093).
# perf -N -B: no build-ID cache and no build-ID pass, where perf 6.1
# fails an assertion (util/build-id.c:1010) now and then in CI.
record_dd_kernel() {
	dd if=/dev/zero of=/dev/null bs=512 count=100000000 2> /dev/null &
	_dd=$!
	at_exit "kill $_dd 2> /dev/null"
	perf record -q -N -B -e cpu-clock -F 999 -g -a -o perf.data -- sleep 2 \
		> perf.err 2>&1 &
	_perf=$!
	"$SYM" record -q -a -F 999 -g fp -d 2 -o "$1"
	REC_STATUS=$?
	wait $_perf
	PERF_STATUS=$?
	kill $_dd 2> /dev/null
	wait $_dd 2> /dev/null
}

# sigkill_agent OPTS...: SIGKILL of `sym record OPTS` (t3120).
sigkill_agent() {
	kill_agent 1 "$@" -o "$T/k.raw"
	ok "SIGKILL: its programs ($(echo $_ids)) are released" \
		test -n "$_ids" -a -z "$_left"
}
