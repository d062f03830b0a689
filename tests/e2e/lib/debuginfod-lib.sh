# debuginfod-lib.sh - upstream servers for end-to-end tests (sourced after
# lib.sh, not run).
#
#   . "$(dirname "$0")/lib/lib.sh"
#   . "$(dirname "$0")/lib/debuginfod-lib.sh"
#   need debuginfod curl python3
#
#   start_debuginfod DIR [ID[/KIND]]...
#        a real debuginfod indexing DIR on a free port; waits until each
#        ID answers 200 (KIND: debuginfo, the default, or executable, or
#        section/NAME); without IDs, until it answers at all.  Sets
#        DEBUGINFOD_PID, DEBUGINFOD_PORT and DEBUGINFOD_URL
#        (http://127.0.0.1:PORT).  Log: $T/debuginfod-PORT.log.
#   start_stub_debuginfod [ARGS...]
#        tests/e2e/lib/stub-debuginfod.py ARGS (faults: a file with the wrong
#        build ID, 404, 500, an empty reply, delays; see the script).
#        Sets STUB_PID, STUB_PORT and STUB_URL.
#   stop_server PID      kill it now (SIGKILL) and reap it
#   free_port            print a TCP port nothing listens on
#
# Every server started here is killed when the test exits, before lib.sh
# removes $T.  Works in bash and dash.  Debian's debuginfod 0.188 has no listen-address flag and
# binds every interface: send it traffic on 127.0.0.1 only.  It is
# started without DEBUGINFOD_URLS: a server that inherits it federates to
# itself and hangs for minutes on every miss.  It is stopped with
# SIGKILL: on SIGTERM it takes seconds, and its database is scratch.

# shellcheck disable=SC2034  # the variables are set for the sourcing test
DEBUGINFOD_STUB=${DEBUGINFOD_STUB:-$SYM_ROOT/tests/e2e/lib/stub-debuginfod.py}
_dbgd_pids=
_dbgd_n=0

_dbgd_stop_all() {
	for _p in $_dbgd_pids; do
		kill -9 "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	_dbgd_pids=
}

# Stop the servers at exit, before $T goes (lib.sh's at_exit).
at_exit _dbgd_stop_all

free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

stop_server() {
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	_dbgd_pids=$(echo " $_dbgd_pids " | sed "s/ $1 / /")
}

# _dbgd_status URL: the HTTP status of GET URL, 000 when nothing answers.
_dbgd_status() {
	curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" 2>/dev/null
}

start_debuginfod() {
	_dir=$1; shift
	# The probed port may be taken before debuginfod binds it: retry.
	for _try in 1 2 3; do
		DEBUGINFOD_PORT=$(free_port) || return 1
		DEBUGINFOD_URL=http://127.0.0.1:$DEBUGINFOD_PORT
		_log=$T/debuginfod-$DEBUGINFOD_PORT.log
		env -u DEBUGINFOD_URLS debuginfod -F -p "$DEBUGINFOD_PORT" \
			-d "$T/debuginfod-$DEBUGINFOD_PORT.sqlite" -t 0 -g 0 \
			"$_dir" > "$_log" 2>&1 &
		DEBUGINFOD_PID=$!
		_dbgd_pids="$_dbgd_pids $DEBUGINFOD_PID"
		# It answers after ~0.2 s and indexes a small tree in ~1.2 s.
		_i=0
		while [ $_i -lt 200 ] && kill -0 "$DEBUGINFOD_PID" 2>/dev/null
		do
			_ready=1
			if [ $# = 0 ]; then
				[ "$(_dbgd_status "$DEBUGINFOD_URL/metrics")" = 200 ] ||
					_ready=
			fi
			for _q; do
				case $_q in
				*/*) _u=$DEBUGINFOD_URL/buildid/$_q ;;
				*) _u=$DEBUGINFOD_URL/buildid/$_q/debuginfo ;;
				esac
				[ "$(_dbgd_status "$_u")" = 200 ] || { _ready=; break; }
			done
			[ -n "$_ready" ] && return 0
			sleep 0.1
			_i=$((_i + 1))
		done
		stop_server "$DEBUGINFOD_PID"
	done
	echo "# debuginfod did not come up; its log:" >&2
	sed 's/^/#   /' "$_log" | tail -20 >&2
	return 1
}

start_stub_debuginfod() {
	_dbgd_n=$((_dbgd_n + 1))
	_out=$T/stub-$_dbgd_n
	: > "$_out"	# before the background job's own redirection
	python3 "$DEBUGINFOD_STUB" "$@" > "$_out" 2> "$_out.err" &
	STUB_PID=$!
	_dbgd_pids="$_dbgd_pids $STUB_PID"
	_i=0
	# It prints its port, a whole line, once it listens.
	while [ $_i -lt 200 ] && kill -0 "$STUB_PID" 2>/dev/null; do
		if [ "$(wc -l < "$_out")" -ge 1 ]; then
			STUB_PORT=$(head -n 1 "$_out")
			STUB_URL=http://127.0.0.1:$STUB_PORT
			return 0
		fi
		sleep 0.05
		_i=$((_i + 1))
	done
	echo "# stub-debuginfod did not come up:" >&2
	sed 's/^/#   /' "$_out.err" >&2
	stop_server "$STUB_PID"
	return 1
}
