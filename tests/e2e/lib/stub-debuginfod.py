#!/usr/bin/env python3
"""stub-debuginfod.py - a fake debuginfod server for fault injection.

A real debuginfod cannot be made to misbehave, so the tests that need an
upstream to serve the wrong file, stall, fail or hang up use this stub:

  stub-debuginfod.py [--file F] [--mode ok|close|STATUS] [--delay S]
                     [--trickle S] [--size N] [--log F]

  --file F     served for every GET /buildid/<hex>/{debuginfo,executable}
               and /buildid/<hex>/section/<name>, whatever the build ID
               (so it can serve a file with the wrong build ID)
  --mode       ok: serve the file (404 without --file); close: read the
               request, then close the connection without answering;
               an HTTP status (404, 500, 503, ...): answer that
  --delay S    sleep S seconds (float) before answering anything
  --trickle S  send the body in 8 pieces, S seconds apart (a slow
               transfer rather than a slow server)
  --size N     announce N in X-DEBUGINFOD-SIZE instead of the true size
  --log F      append one line per request ("GET /buildid/...") to F

One process serves every fault: leading "/key=value" path segments
override the options for that request, so an upstream URL such as
http://127.0.0.1:PORT/mode=500 or .../delay=3/tag=a (the client appends
/buildid/...) picks the behaviour.  Keys: mode, delay, trickle, size,
sections (the mode of section requests only: sections=503 is a server
without section support), and tag (ignored: it tells requests apart in
the log).

It listens on 127.0.0.1, port 0, prints the port on stdout on its own
line, then serves until killed (SIGTERM).  Each request gets its own
thread, so a delayed answer never blocks the next request.  Other paths
get 404.  Python 3 standard library only.
"""

import argparse
import os
import re
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATH_RE = re.compile(r"^/buildid/[0-9a-fA-F]+/"
                     r"(debuginfo|executable|section/[^/]+)$")
KEYS = {"mode": str, "sections": str, "delay": float, "trickle": float,
        "size": int, "tag": str}


def check_mode(m):
    if m in ("ok", "close") or (m.isdigit() and 200 <= int(m) <= 599):
        return m
    raise ValueError(m)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "stub-debuginfod/1"

    def log_message(self, fmt, *args):
        # Quiet: stderr of a test stays readable.  --log records requests.
        pass

    def _options(self):
        """The options of this request, and the path after them."""
        o = {k: getattr(self.server.opts, k, None) for k in KEYS}
        parts = self.path.split("/")
        i = 1
        while i < len(parts) and "=" in parts[i]:
            k, v = parts[i].split("=", 1)
            if k not in KEYS:
                break
            o[k] = KEYS[k](v)
            i += 1
        path = "/" + "/".join(parts[i:])
        if o["sections"] and "/section/" in path:
            o["mode"] = o["sections"]
        check_mode(o["mode"])
        return o, path

    def _answer(self, body):
        opts = self.server.opts
        if opts.log:
            with open(opts.log, "a") as f:
                f.write("%s %s\n" % (self.command, self.path))
        try:
            o, path = self._options()
        except ValueError:
            self._status(400, b"bad option\n", body)
            return
        if o["delay"]:
            time.sleep(o["delay"])
        if o["mode"] == "close":
            # Drop the connection with nothing sent: the client sees an
            # empty reply, which is neither a 404 nor a 5xx.
            self.close_connection = True
            self.connection.close()
            return
        if o["mode"] not in ("ok", "404"):
            self._status(int(o["mode"]), b"injected fault\n", body)
            return
        data = self.server.data
        if o["mode"] == "404" or data is None or not PATH_RE.match(path):
            self._status(404, b"not found\n", body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        size = len(data) if o["size"] is None else o["size"]
        self.send_header("X-DEBUGINFOD-SIZE", str(size))
        self.send_header("X-DEBUGINFOD-FILE", os.path.basename(opts.file))
        self.end_headers()
        if not body:
            return
        if o["trickle"]:
            step = max(1, (len(data) + 7) // 8)
            for i in range(0, len(data), step):
                self.wfile.write(data[i:i + step])
                self.wfile.flush()
                time.sleep(o["trickle"])
        else:
            self.wfile.write(data)

    def _status(self, code, text, body):
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if body:
            self.wfile.write(text)

    def do_GET(self):
        try:
            self._answer(True)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (cancelled): not our problem

    def do_HEAD(self):
        try:
            self._answer(False)
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    ap = argparse.ArgumentParser(description="fault-injecting debuginfod stub")
    ap.add_argument("--file")
    ap.add_argument("--mode", type=check_mode, default="ok")
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--trickle", type=float, default=0.0)
    ap.add_argument("--size", type=int)
    ap.add_argument("--log")
    opts = ap.parse_args()
    opts.tag = None
    opts.sections = None

    data = None
    if opts.file:
        with open(opts.file, "rb") as f:
            data = f.read()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.opts = opts
    srv.data = data
    # SIGTERM: leave serve_forever() through SystemExit.
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
