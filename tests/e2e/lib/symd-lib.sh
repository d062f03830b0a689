# symd-lib.sh - start and stop a real symd for the e2e tests (sourced after
# lib.sh).
#
#   start_symd [ARGS...]    bin/symd on 127.0.0.1 (a free port) with the
#                           store $T/symd-store; sets SYMD_URL, SYMD_PORT,
#                           SYMD_PID; stderr goes to $T/symd.err
#   stop_symd [SIG]         send SIG (TERM) and wait; sets SYMD_STATUS
#   symd_curl ARGS...       curl -sS against it, --max-time 30
#
# The daemon is killed at exit whatever happens.

SYMD=${SYMD:-$SYM_ROOT/bin/symd}
SYMD_PID=
at_exit '[ -n "$SYMD_PID" ] && kill -9 "$SYMD_PID" 2>/dev/null'

start_symd() {
	rm -f "$T/symd.out"
	"$SYMD" --listen 127.0.0.1:0 --store "$T/symd-store" "$@" \
		> "$T/symd.out" 2>> "$T/symd.err" &
	SYMD_PID=$!
	# Up to 60 s while it lives: it says "listening" within 0.1 s on
	# an idle machine; this bounds a hung symd, it times nothing.
	_i=0
	while [ $_i -lt 1200 ]; do
		SYMD_PORT=$(sed -n 's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' \
			"$T/symd.out" 2>/dev/null)
		[ -n "$SYMD_PORT" ] && break
		kill -0 "$SYMD_PID" 2>/dev/null || break
		sleep 0.05
		_i=$((_i + 1))
	done
	if [ -z "$SYMD_PORT" ]; then
		echo "# symd did not start:" && sed 's/^/#   /' "$T/symd.err"
		return 1
	fi
	SYMD_URL=http://127.0.0.1:$SYMD_PORT
}

stop_symd() {
	kill -"${1:-TERM}" "$SYMD_PID" 2>/dev/null
	wait "$SYMD_PID" 2>/dev/null
	SYMD_STATUS=$?
	SYMD_PID=
}

symd_curl() {
	curl -sS --max-time 30 "$@"
}

# http_status ARGS...: the HTTP status of a curl request.
http_status() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$@"
}
