# attack-lib.sh - hostile clients against the running symd, with probes
# (sourced after lib.sh and symd-lib.sh; tests t202x, issue 24).
#
#   under DESC RSS_MAX_KB BUILDID ADDR MODE N SECONDS [ARG]
#        run tests/e2e/lib/symd_attack.py (see its help for the modes)
#        against $SYMD_PORT/$SYMD_PID, print its figures as TAP comments,
#        and give 4 TAP points: /healthz and a warm symbolize of ADDR
#        answered within 1 s every time (and more than 5 times), and
#        symd's peak RSS stayed under RSS_MAX_KB; a 4th: no sample of
#        symd's loop lateness probe (/metrics,
#        symd_loop_lateness_own_seconds) was over LATE_MAX during it
#   fixture_debug NAME   build fixture NAME; set exe, id (its build ID)
#                        and dbg (its separate debug file); false if it
#                        cannot be built
#   upload_warm ADDR     start symd (with a token and the options given
#                        after ADDR), upload $dbg and symbolize ADDR once
#                        so its table is warm; 1 TAP point
#   field NAME     a figure of the last attack's report
#   gauge_settles NAME   wait up to 10 s for the /metrics gauge NAME to
#                        read 0 (a budget given back in full)
#
# The bounds are generous on purpose: a warm answer takes milliseconds,
# a stalled loop seconds, whatever the CPU.

ATTACK="python3 $SYM_ROOT/tests/e2e/lib/symd_attack.py"

fixture_debug() {
	exe=$(fixture "$1") || return 1
	id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
	dbg="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$id" |
		cut -c1-2)/$(echo "$id" | cut -c3-).debug"
}

upload_warm() {
	_addr=$1
	shift
	echo secret-token > "$T/token"
	start_symd --upload-token-file "$T/token" --quiet "$@" || exit 1
	is "upload" "$(http_status -X PUT -H 'Authorization: Bearer secret-token' \
		--data-binary @"$dbg" "$SYMD_URL/v1/debuginfo/$id")" 201
	symd_curl -o /dev/null -d "{\"addresses\":[\"$_addr\"],\"wait_ms\":10000}" \
		"$SYMD_URL/v1/symbolize/$id"
}

field() { sed -n "s/^$1 //p" "$T/att.out"; }

# _probes KIND: what the probes of KIND measured, for the point's name (a
# failure's line is what the CI log keeps)
_probes() {
	echo "$(field "$1"_n) probes, $(field "$1"_fail) failed," \
		"p99 $(field "$1"_p99_ms) ms, max $(field "$1"_max_ms) ms"
}

# _probes_ok KIND: every probe of KIND answered, and within 1 s
_probes_ok() {
	[ "$(field "$1"_fail)" = 0 ] && [ "$(field "$1"_n)" -gt 5 ] &&
		awk "BEGIN{exit !($(field "$1"_max_ms) < 1000)}"
}

gauge_settles() {
	_i=0
	while [ $_i -lt 100 ]; do
		curl -s --max-time 2 "$SYMD_URL/metrics" |
			grep -q "^$1 0\$" && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	curl -s --max-time 2 "$SYMD_URL/metrics" | grep "^$1 "
	return 1
}

# _late_snap FILE: symd's lateness probe (own: less the waits for a
# CPU), as "LE CUMULATIVE" lines and "n COUNT"
_late_snap() {
	curl -s --max-time 5 "$SYMD_URL/metrics" | awk '
		/^symd_loop_lateness_own_seconds_bucket/ {
			match($0, /le="[^"]*"/)
			print substr($0, RSTART + 4, RLENGTH - 5), $2 }
		/^symd_loop_lateness_own_seconds_count/ { print "n", $2 }' > "$1"
}

# _late_n: the probe's samples during the last attack
_late_n() {
	awk 'NR == FNR { a[$1] = $2; next } { b[$1] = $2 }
		END { print b["n"] - a["n"] }' "$T/late.0" "$T/late.1"
}

# _late_over LE: its samples later than LE
_late_over() {
	awk -v le="$1" 'NR == FNR { a[$1] = $2; next } { b[$1] = $2 }
		END { print (b["n"] - a["n"]) - (b[le] - a[le]) }' \
		"$T/late.0" "$T/late.1"
}

# The bound on the loop's own lateness during an attack, in seconds (a
# bucket of the histogram).  Measured on a 2-core VM at loads of 3-7,
# over t2020's and t2021's attacks and 16 clients asking 50,000
# addresses each: the longest own lateness was 50-150 ms plain and
# 100-250 ms under ASan+UBSan; their waits for a CPU are not counted,
# so a loaded machine does not move it much.  Encoding a big answer in
# one step, as before issue 24, takes seconds.
LATE_MAX=0.5
LATE_MAX_ASAN=1

# _late_ok: the probe ran during the attack (10 samples at least: it is
# due every 25 ms) and none was later than $_lmax
_late_ok() {
	[ "$(_late_n)" -ge 10 ] && [ "$(_late_over "$_lmax")" = 0 ]
}

under() {
	_desc=$1 _rss=$2
	shift 2
	_late_snap "$T/late.0"
	$ATTACK "$SYMD_PORT" "$SYMD_PID" "$@" > "$T/att.out" 2>&1
	_late_snap "$T/late.1"
	sed 's/^/# /' "$T/att.out"
	echo "# loop lateness (own), samples $(_late_n): over 10 ms" \
		"$(_late_over 0.01), 25 ms $(_late_over 0.025), 50 ms" \
		"$(_late_over 0.05), 100 ms $(_late_over 0.1), 250 ms" \
		"$(_late_over 0.25), 500 ms $(_late_over 0.5), 1 s $(_late_over 1)"
	ok "$_desc: /healthz answers within 1 s every time ($(_probes healthz))" \
		_probes_ok healthz
	ok "$_desc: a warm symbolize answers within 1 s every time ($(_probes warm))" \
		_probes_ok warm
	_lmax=$LATE_MAX
	ldd "$SYMD" 2>/dev/null | grep -q libasan && _lmax=$LATE_MAX_ASAN
	ok "$_desc: no loop step over $_lmax s (the lateness probe)" _late_ok
	if ldd "$SYMD" 2>/dev/null | grep -q libasan; then
		# ASan keeps freed memory in quarantine (256 MB by default).
		skip "$_desc: peak RSS ($(field rss_peak_kb) kB) is not" \
			"meaningful under AddressSanitizer"
	else
		ok "$_desc: RSS stays under $((_rss / 1024)) MB" \
			[ "$(field rss_peak_kb)" -lt "$_rss" ]
	fi
}
