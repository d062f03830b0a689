# attack-lib.sh - hostile clients against the running symd, with probes
# (sourced after lib.sh and symd-lib.sh; tests t202x, issue 24).
#
#   under DESC RSS_MAX_KB BUILDID ADDR MODE N SECONDS [ARG]
#        run tests/e2e/lib/symd_attack.py (see its help for the modes)
#        against $SYMD_PORT/$SYMD_PID, print its figures as TAP comments,
#        and give 3 TAP points: /healthz and a warm symbolize of ADDR
#        answered within 1 s every time (and more than 5 times), and
#        symd's peak RSS stayed under RSS_MAX_KB
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

under() {
	_desc=$1 _rss=$2
	shift 2
	$ATTACK "$SYMD_PORT" "$SYMD_PID" "$@" > "$T/att.out" 2>&1
	sed 's/^/# /' "$T/att.out"
	ok "$_desc: /healthz answers within 1 s every time" _probes_ok healthz
	ok "$_desc: a warm symbolize answers within 1 s every time" \
		_probes_ok warm
	if ldd "$SYMD" 2>/dev/null | grep -q libasan; then
		# ASan keeps freed memory in quarantine (256 MB by default).
		skip "$_desc: peak RSS ($(field rss_peak_kb) kB) is not" \
			"meaningful under AddressSanitizer"
	else
		ok "$_desc: RSS stays under $((_rss / 1024)) MB" \
			[ "$(field rss_peak_kb)" -lt "$_rss" ]
	fi
}
