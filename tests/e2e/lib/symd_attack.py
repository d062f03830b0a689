#!/usr/bin/env python3
"""symd_attack.py - hostile clients against a running symd, with probes,
for the t202x tests (issue 24, items 2 and 3).

  symd_attack.py PORT PID BUILDID ADDR MODE N SECONDS [ARG]
      open N connections doing MODE for SECONDS while a probe thread
      asks GET /healthz and a warm POST /v1/symbolize/BUILDID of ADDR
      every 0.2 s (each with a 2 s client timeout), and sample the RSS
      of PID every 0.1 s.  Modes:
        trickle   POST /v1/symbolize, Content-Length ARG (8000000),
                  then one body byte a second
        loris     the request line and headers, one byte a second
        fill      POST /v1/symbolize, Content-Length ARG, send ARG - 1
                  bytes as fast as symd takes them, then nothing
        bigans    ARG is COUNT:DEEP: POST COUNT copies of the address
                  DEEP (one request per connection, a big answer) and
                  read the answer 4 KiB a second
      Prints one "key value" line per figure:
        opened, closed (connections symd ended during the run),
        healthz_n/_fail/_max_ms/_p99_ms, warm_n/_fail/_max_ms/_p99_ms,
        rss_start_kb, rss_peak_kb, statuses (first status line seen per
        attacking connection, counted).

Only the standard library.  Sockets are non-blocking and served by one
selector loop, so 1,100 connections cost one thread.
"""
import errno
import json
import os
import resource
import selectors
import socket
import struct
import sys
import threading
import time
import urllib.request


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def pct(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


class Probe(threading.Thread):
    def __init__(self, port, build_id, addr, stop):
        super().__init__(daemon=True)
        self.base = "http://127.0.0.1:%d" % port
        self.build_id, self.addr, self.stop = build_id, addr, stop
        self.res = {"healthz": [], "warm": []}
        self.fail = {"healthz": 0, "warm": 0}
        self.why = []

    def one(self, kind):
        if kind == "healthz":
            req = urllib.request.Request(self.base + "/healthz")
        else:
            body = json.dumps({"addresses": [self.addr]}).encode()
            req = urllib.request.Request(
                self.base + "/v1/symbolize/" + self.build_id, data=body,
                headers={"Content-Type": "application/json"})
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=2) as r:
                data = r.read()
                if r.status != 200 or (kind == "warm" and
                                       b'"status":"ok"' not in data):
                    raise OSError("status %d %r" % (r.status, data[:80]))
        except Exception as e:      # timeouts, resets, HTTP errors
            self.fail[kind] += 1
            if len(self.why) < 5:
                self.why.append("%s: %s" % (kind, e))
            return
        self.res[kind].append((time.monotonic() - t0) * 1000.0)

    def run(self):
        while not self.stop.is_set():
            self.one("healthz")
            self.one("warm")
            time.sleep(0.2)


class Conn:
    def __init__(self, s):
        self.s, self.out, self.off = s, b"", 0
        self.left = 0            # body bytes still to trickle
        self.status = None
        self.closed = False
        self.inbuf = b""


def attack(port, mode, n, secs, arg, build_id, addr, sel, conns):
    if mode == "loris":
        head = (b"POST /v1/symbolize HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nX-Pad: " +
                b"a" * 200 + b"\r\n\r\n")
    elif mode == "bigans":
        count, deep = arg.split(":")
        body = json.dumps({"addresses": [deep] * int(count),
                           "wait_ms": 0}).encode()
        head = (b"POST /v1/symbolize/%s HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: %d\r\n\r\n" % (build_id.encode(),
                                                 len(body))) + body
    else:
        head = (b"POST /v1/symbolize HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % int(arg))
    fill = head + b" " * (int(arg) - 1) if mode == "fill" else b""
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        err = s.connect_ex(("127.0.0.1", port))
        if err not in (0, errno.EINPROGRESS):
            s.close()
            continue
        c = Conn(s)
        if mode == "loris":
            c.out, c.left = b"", len(head)
            c.head = head
        elif mode == "fill":
            c.out = fill         # one shared copy
        else:
            c.out = head
        conns.append(c)
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, c)


def read_one(c, sel):
    """Read up to 4 KiB; True when the connection is over."""
    try:
        d = c.s.recv(4096)
    except BlockingIOError:
        return False
    except OSError:
        d = b""
    if d == b"":
        c.closed = True
        if sel:
            sel.unregister(c.s)
        c.s.close()
        return True
    if c.status is None:
        c.inbuf += d
        if b"\r\n" in c.inbuf:
            c.status = c.inbuf.split(b"\r\n")[0].decode(errors="replace")
    return False


def run(port, pid, build_id, addr, mode, n, secs, arg):
    sel = selectors.DefaultSelector()
    conns = []
    stop = threading.Event()
    rss0 = rss_kb(pid)
    peak = [rss0]

    def sampler():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kb(pid))
            time.sleep(0.1)
    threading.Thread(target=sampler, daemon=True).start()
    attack(port, mode, n, secs, arg, build_id, addr, sel, conns)
    probe = Probe(port, build_id, addr, stop)
    probe.start()
    end = time.monotonic() + secs
    tick = time.monotonic()
    while time.monotonic() < end:
        now = time.monotonic()
        slow = now >= tick
        if slow:
            tick = now + 1.0
        for key, ev in sel.select(timeout=0.05):
            c = key.data
            if ev & selectors.EVENT_READ:
                if read_one(c, sel):
                    continue
            if ev & selectors.EVENT_WRITE and c.out:
                try:
                    k = c.s.send(memoryview(c.out)[c.off:c.off + (1 << 20)])
                    c.off += k
                    if c.off == len(c.out):
                        c.out, c.off = b"", 0
                except BlockingIOError:
                    pass
                except OSError:
                    c.out, c.off = b"", 0
            if not c.out and not c.closed and mode == "bigans":
                sel.unregister(c.s)      # read 4 KiB a second below
                c.reader = True
            elif not c.out and not c.closed:
                sel.modify(c.s, selectors.EVENT_READ, c)
        if slow:
            for c in conns:
                if c.closed or c.out:
                    continue
                if getattr(c, "reader", False):
                    read_one(c, None)
                    continue
                try:
                    if mode == "trickle":
                        c.s.send(b" ")
                    elif mode == "loris" and c.left:
                        i = len(c.head) - c.left
                        c.s.send(c.head[i:i + 1])
                        c.left -= 1
                except OSError:
                    pass
    stop.set()
    probe.join(5)
    peak[0] = max(peak[0], rss_kb(pid))
    statuses = {}
    for c in conns:
        k = (c.status or ("closed" if c.closed else "none")).replace(" ", "_")
        statuses[k] = statuses.get(k, 0) + 1
    for c in conns:             # reset: symd drops what it still builds
        if not c.closed:
            c.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                           struct.pack("ii", 1, 0))
            c.s.close()
    print("opened %d" % len(conns))
    print("closed %d" % sum(1 for c in conns if c.closed))
    for k in ("healthz", "warm"):
        xs = probe.res[k]
        print("%s_n %d" % (k, len(xs)))
        print("%s_fail %d" % (k, probe.fail[k]))
        print("%s_max_ms %.1f" % (k, max(xs) if xs else 0.0))
        print("%s_p99_ms %.1f" % (k, pct(xs, 0.99)))
    print("rss_start_kb %d" % rss0)
    print("rss_peak_kb %d" % peak[0])
    print("statuses %s" % ",".join("%s:%d" % kv for kv in
                                    sorted(statuses.items())))
    for w in probe.why:
        print("# probe failure: %s" % w)
    return 0


def main():
    if len(sys.argv) < 8:
        print(__doc__)
        return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 4096)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    port, pid = int(sys.argv[1]), int(sys.argv[2])
    arg = sys.argv[8] if len(sys.argv) > 8 else "8000000"
    return run(port, pid, sys.argv[3], sys.argv[4], sys.argv[5],
               int(sys.argv[6]), float(sys.argv[7]), arg)


if __name__ == "__main__":
    sys.exit(main())
