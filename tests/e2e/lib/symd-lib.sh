# symd-lib.sh - start and stop a real symd for the e2e tests (sourced after
# lib.sh).
#
#   start_symd [ARGS...]    bin/symd on 127.0.0.1 (a free port) with the
#                           store $T/symd-store; sets SYMD_URL, SYMD_PORT,
#                           SYMD_PID; stderr goes to $T/symd.err
#   symd_port OUT PID       the port symd PID printed to OUT (empty: it
#                           died first)
#   stop_symd [SIG]         send SIG (TERM) and wait; sets SYMD_STATUS
#   symd_curl ARGS...       curl -sS against it, --max-time 30
#
# The daemon is killed at exit whatever happens.

SYMD=${SYMD:-$SYM_ROOT/bin/symd}
SYMD_PID=
at_exit '[ -n "$SYMD_PID" ] && kill -9 "$SYMD_PID" 2>/dev/null'

# symd_port OUT PID: the port a symd (PID) says it listens on in its
# stdout file OUT, read off its line; empty when it died first.  Up to
# 60 s while it lives: it says "listening" within 0.1 s on an idle
# machine; this bounds a hung symd, it times nothing.  OUT must not hold
# an older symd's line (the job's redirection empties it in the child,
# maybe after a first read): empty or remove it before the start.
symd_port() {
	_i=0
	_port=
	while [ $_i -lt 1200 ]; do
		_port=$(sed -n 's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' \
			"$1" 2>/dev/null)
		[ -n "$_port" ] && break
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
		_i=$((_i + 1))
	done
	echo "$_port"
}

start_symd() {
	rm -f "$T/symd.out"
	"$SYMD" --listen 127.0.0.1:0 --store "$T/symd-store" "$@" \
		> "$T/symd.out" 2>> "$T/symd.err" &
	SYMD_PID=$!
	SYMD_PORT=$(symd_port "$T/symd.out" "$SYMD_PID")
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
