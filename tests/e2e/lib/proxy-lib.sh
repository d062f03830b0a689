# proxy-lib.sh - a real HAProxy in front of symd nodes, for the e2e tests
# (after lib.sh and symd-lib.sh).
#
#   start_symd_node NAME [SYMD ARGS]  a symd of its own store $T/NAME;
#                           sets NODE_PORT, NODE_PID; stderr $T/NAME.err
#   start_haproxy CFG       run HAProxy with CFG (docs/cluster/haproxy.cfg
#                           with bind and server lines rewritten, see
#                           haproxy_cfg) on a port the kernel picked: the
#                           socket is bound to port 0 first and handed to
#                           HAProxy as "fd@N" (HAProxy cannot bind port 0
#                           itself); sets PROXY_URL, PROXY_PID
#   haproxy_cfg OPTS PORT...  print the shipped configuration with the
#                           bind line made fd@, the server lines made
#                           one per PORT (node1, node2, ...), and the
#                           default-server line's check options made OPTS,
#                           and "timeout check 5s" in defaults: the tests
#                           check every 100 ms, and without it a check's
#                           whole timeout is that 100 ms, so a node slow to
#                           answer /healthz under load was taken out and
#                           its build IDs went to another node (t2200
#                           point 4 failed so at load 10: a build ID
#                           converted on two nodes); a dead node refuses
#                           at once and a draining one answers 503, so
#                           they are still seen within 100 ms
#   proxy_wait_up N         wait until HAProxy's stats say N servers UP
#   start_cluster ARGS...   nodes node1-node3 (start_symd_node ARGS; sets
#                           PID1-PID3, PORT1-PORT3) behind HAProxy checking
#                           every 100 ms (sets P); returns 1 when a node
#                           fails, 2 when HAProxy does
#   node_url N              http://127.0.0.1:$PORTN (start_cluster's nodes)
#   node_metric N KEY       node N's value of one /metrics series (0 if
#                           absent)
#   node_conv N             its symd_conversions_total{result="ok"}
#   proxy_all_right LABEL   one TAP point: every "BUILDID FILE" line of
#                           $T/ids asked through $P, every frame checked
#                           (symd_check.py compare-many, $T/want its cache)
#
# Everything started is killed at exit.
_proxy_pids=

_proxy_stop_all() {
	for _p in $_proxy_pids; do
		kill -9 "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	_proxy_pids=
}
at_exit _proxy_stop_all

start_symd_node() {
	_n=$1; shift
	rm -f "$T/$_n.out"
	: > "$T/$_n.out"
	"$SYMD" --listen 127.0.0.1:0 --store "$T/$_n" "$@" \
		> "$T/$_n.out" 2> "$T/$_n.err" &
	NODE_PID=$!
	_proxy_pids="$_proxy_pids $NODE_PID"
	NODE_PORT=
	_i=0
	while [ $_i -lt 400 ] && kill -0 "$NODE_PID" 2>/dev/null; do
		NODE_PORT=$(sed -n \
			's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' \
			"$T/$_n.out")
		[ -n "$NODE_PORT" ] && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	echo "# symd $_n did not start:" >&2
	sed 's/^/#   /' "$T/$_n.err" | tail -5 >&2
	return 1
}

haproxy_cfg() {
	_opts=$1; shift
	awk -v opts="$_opts" -v ports="$*" -v stats="$T/haproxy.sock" '
	/^    bind :/ { print "    bind fd@${SYMD_PROXY_FD}"; next }
	/^global/ { print; print "    stats socket " stats " mode 600 level admin"; next }
	/^defaults/ { print; print "    timeout check 5s"; next }
	/^    default-server / { print "    default-server " opts; next }
	/^    server / {
		if (!done) {
			n = split(ports, p, " ")
			for (i = 1; i <= n; i++)
				printf "    server node%d 127.0.0.1:%s\n", i, p[i]
			done = 1
		}
		next
	}
	{ print }' "$SYM_ROOT/docs/cluster/haproxy.cfg"
}

start_haproxy() {
	: > "$T/haproxy.port"
	python3 -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(511)
os.set_inheritable(s.fileno(), True)
os.environ["SYMD_PROXY_FD"] = str(s.fileno())
with open(sys.argv[2], "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.execvp("haproxy", ["haproxy", "-db", "-f", sys.argv[1]])
' "$1" "$T/haproxy.port" > "$T/haproxy.log" 2>&1 &
	PROXY_PID=$!
	_proxy_pids="$_proxy_pids $PROXY_PID"
	_proxy_ready haproxy "$PROXY_PID" "$T/haproxy.sock" || return 1
	PROXY_URL=$_url
}

# _proxy_ready NAME PID FILE: wait until NAME (started as PID, its log
# $T/NAME.log) has written its port to $T/NAME.port and FILE exists
# (its admin socket, its pid file); sets _url.
_proxy_ready() {
	_i=0
	while [ $_i -lt 200 ] && kill -0 "$2" 2>/dev/null; do
		_p=$(cat "$T/$1.port")
		if [ -n "$_p" ] && [ -e "$3" ]; then
			_url=http://127.0.0.1:$_p
			return 0
		fi
		sleep 0.05
		_i=$((_i + 1))
	done
	echo "# $1 did not start:" >&2
	sed 's/^/#   /' "$T/$1.log" | tail -5 >&2
	return 1
}

# haproxy_cmd CMD: a command on HAProxy's admin socket.
haproxy_cmd() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall((sys.argv[2] + "\n").encode())
out = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    out += b
sys.stdout.write(out.decode())
' "$T/haproxy.sock" "$1"
}

# proxy_up: how many of the backend's servers HAProxy has UP.
proxy_up() {
	haproxy_cmd "show stat" | awk -F, '$1 == "symd_nodes" &&
		$2 ~ /^node/ && $18 == "UP" { n++ } END { print n + 0 }'
}

# proxy_wait_up N: until N servers are UP (health checks run every
# 100 ms in the tests; 30 s is a bound, not a race).
proxy_wait_up() {
	_i=0
	while [ $_i -lt 600 ]; do
		[ "$(proxy_up)" = "$1" ] && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}

# nginx_cfg NODE-PORT...: the shipped docs/cluster/nginx.conf with its
# listen line on 127.0.0.1:@PORT@ (start_nginx fills the port in), one
# server line per node, and its pid file in $T.
nginx_cfg() {
	awk -v pid="$T/nginx.pid" -v ports="$*" '
	/^pid / { print "pid " pid ";"; next }
	/^        listen / { print "        listen 127.0.0.1:@PORT@;"; next }
	/^        server [0-9]/ {
		if (!done) {
			n = split(ports, p, " ")
			for (i = 1; i <= n; i++)
				printf "        server 127.0.0.1:%s max_fails=1 fail_timeout=5s;\n", p[i]
			done = 1
		}
		next
	}
	{ print }' "$SYM_ROOT/docs/cluster/nginx.conf"
}

# start_nginx NODE-PORT...: nginx with nginx_cfg on a port the kernel
# picked: the socket is bound first and handed over the way nginx hands
# its sockets to a new binary (the NGINX variable), so nginx takes it
# instead of binding; sets NGINX_URL, NGINX_PID.
start_nginx() {
	: > "$T/nginx.port"
	nginx_cfg "$@" > "$T/nginx.in"
	python3 -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(511)
port = s.getsockname()[1]
os.set_inheritable(s.fileno(), True)
base = sys.argv[1]
with open(base + ".conf", "w") as f:
    f.write(open(base + ".in").read().replace("@PORT@", str(port)))
os.environ["NGINX"] = "%d;" % s.fileno()
with open(base + ".port", "w") as f:
    f.write("%d\n" % port)
os.execvp("nginx", ["nginx", "-g", "daemon off;", "-p",
                    os.path.dirname(base), "-c", base + ".conf"])
' "$T/nginx" > "$T/nginx.log" 2>&1 &
	NGINX_PID=$!
	_proxy_pids="$_proxy_pids $NGINX_PID"
	_proxy_ready nginx "$NGINX_PID" "$T/nginx.pid" || return 1
	NGINX_URL=$_url
}

start_cluster() {
	_ports=
	for _cn in 1 2 3; do	# (start_symd_node sets _n)
		start_symd_node node$_cn "$@" || return 1
		eval "PID$_cn=$NODE_PID PORT$_cn=$NODE_PORT"
		_ports="$_ports $NODE_PORT"
	done
	# shellcheck disable=SC2086
	haproxy_cfg "check inter 100ms fall 1 rise 1" $_ports > "$T/haproxy.cfg"
	start_haproxy "$T/haproxy.cfg" || return 2
	proxy_wait_up 3 || { echo "# HAProxy never saw 3 nodes up" >&2; return 1; }
	P=$PROXY_URL
}

node_url() { eval "echo http://127.0.0.1:\$PORT$1"; }

node_metric() {
	curl -s --max-time 30 "$(node_url "$1")/metrics" |
		awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }'
}

node_conv() { node_metric "$1" 'symd_conversions_total{result="ok"}'; }

proxy_all_right() {
	SYMD_CHECK_ROUTE=id python3 "$SYM_ROOT/tests/e2e/lib/symd_check.py" \
		compare-many "$P" "$T/ids" "$T/want" 100 > "$T/cmp" 2>&1
	_st=$?
	sed 's/^/# /' "$T/cmp"
	is "$1: all $(wc -l < "$T/ids") build IDs answered right through the proxy" \
		"$_st" 0
}
