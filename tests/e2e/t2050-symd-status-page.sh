#!/bin/sh
# symd's status page, GET /, and its data, GET /v1/status: a real symd on
# 127.0.0.1 with a store that holds a fixture's table.  The JSON has the
# store's figures, the stored build ID as ok, the queues, the upstreams
# and their failures (one answers 500), the last requests (with a path
# full of markup, kept as sent) and is valid JSON whatever a client sent; the page is one self-contained HTML file.  Then
# in headless Chromium over the DevTools protocol
# (tests/e2e/lib/status_page_check.py): the page loads with no console
# error and no failed request, shows the store's size and the build ID as
# ok and the upstream's failure, shows the markup path as text, and its
# form gives the frames
# `sym addr2line -f -i` gives for a fixture address with an inline chain,
# an error next to each bad line (not sent), and the server's answer for
# a build ID the upstreams fail on.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
need curl python3 objdump

exe=$(fixture gcc-O2-d4-c) || plan_skip "cannot build the fixtures"
id=$("$SYM" buildid "$exe" | cut -d' ' -f1)
"$SYM" store --store "$T/symd-store" add "$exe" > /dev/null ||
	plan_skip "sym store add failed"

# An address whose answer has an inline chain (3 frames or more), and
# those frames as the page prints them: "FUNCTION FILE:LINE:COLUMN".
objdump -d "$exe" | awk '/^ *[0-9a-f]+:/ { sub(":", "", $1); print "0x" $1 }' |
	head -2000 > "$T/addrs"
"$SYM" addr2line -f -i --output-style=JSON -e "$exe" < "$T/addrs" |
python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip().rstrip(",").lstrip("[").rstrip("]")
    if not line:
        continue
    r = json.loads(line)
    if len(r["Symbol"]) >= 3:
        print(r["Address"])
        for s in r["Symbol"]:
            print("%s %s:%d:%d" % (s["FunctionName"], s["FileName"],
                                   s["Line"], s["Column"]))
        break
' > "$T/want"
addr=$(head -n 1 "$T/want")
tail -n +2 "$T/want" > "$T/frames"
[ -n "$addr" ] || plan_skip "no address with an inline chain in $exe"

# Two upstreams: one answers 500 to everything, one 404.
start_stub_debuginfod || exit 1
up500=$STUB_URL/mode=500
start_symd --debuginfod-urls "$up500 $STUB_URL/tag=b" || exit 1
U=$SYMD_URL

# --- GET / and GET /v1/status -------------------------------------------
is "GET /: 200, text/html" \
	"$(curl -s -o "$T/page.html" -w '%{http_code} %{content_type}' "$U/")" \
	"200 text/html; charset=utf-8"
# No external asset: no src= or href= but the inline "data:," icon, and
# the only URLs fetched are the server's own, relative.
is "the page loads nothing from elsewhere" \
	"$(grep -oE '(src|href)="[^"]*"|https?://[^ "]*' "$T/page.html" | sort -u)" \
	'href="data:,"'
is "HEAD /v1/status: 200" "$(http_status -I "$U/v1/status")" 200
is "POST /v1/status: 405" "$(http_status -X POST "$U/v1/status")" 405

# A request whose path is markup (sent raw: curl would encode it), and
# one with bytes that are not UTF-8.
bad='/buildid/<script>alert(1)</script><img/src=x/onerror=alert(2)>/debuginfo'
python3 - "$SYMD_PORT" "$bad" <<'EOF'
import socket, sys
for path in (sys.argv[2].encode(), b"/x/\xff\xfe"):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while s.recv(4096):
        pass
    s.close()
EOF

# A build ID no upstream serves: the 500 is an upstream failure.
symd_curl -X POST -d '{"modules":[{"build_id":"0011223344",
	"addresses":["0x1"]}],"wait_ms":20000}' "$U/v1/symbolize" > "$T/sym.json"
is "an upstream's 500 makes an error" \
	"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["modules"][0]["status"])' < "$T/sym.json")" \
	error

symd_curl "$U/v1/status" > "$T/status.json"
got=$(python3 - "$T/status.json" "$id" "$bad" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
st = d["store"]
print("tables=%d bytes>0=%s" % (st["tables"], st["bytes"] > 0))
print(" ".join("%s:%s" % (e["build_id"], e["state"]) for e in d["stored"]))
print(" ".join(sorted(d["build_ids"]["states"])))
print(d["queues"]["max"] > 0 and "running" in d["queues"])
paths = [r["path"] for r in d["requests"]]
print(sys.argv[3] in paths, "/x/\ufffd\ufffd" in paths)
r = d["requests"][0]
print(sorted(r))
print(" ".join("%s=%d" % (u["url"], u["recent_failures"])
               for u in d["upstreams"]))
f = d["upstream_failures"][0]
print(f["upstream"], f["build_id"], "HTTP 500" in f["error"])
e = d["build_ids"]["states"]["error"]["recent"]
print(e[0]["build_id"], "HTTP 500" in e[0]["error"])
EOF
)
is "GET /v1/status: the store, the states, the queues, the requests" \
	"$got" "tables=1 bytes>0=True
0011223344:error $id:ok
error missing ok pending
True
True True
['client', 'duration_ms', 'method', 'path', 'status', 'time']
$up500=1 $STUB_URL/tag=b=0
$up500 0011223344 True
0011223344 True"

# --- in a real browser --------------------------------------------------
if command -v chromium > /dev/null 2>&1; then
	TMPDIR=$T tap_points "browser" python3 \
		"$SYM_ROOT/tests/e2e/lib/status_page_check.py" \
		"$U" "$id" "$addr" "$T/frames" "$bad" "$up500"
else
	skip "chromium not installed (tools/scripts/install-deps.sh installs it)"
fi

stop_symd
is "symd stops cleanly" "$SYMD_STATUS" 0
plan "$_tap_n"
done_testing
